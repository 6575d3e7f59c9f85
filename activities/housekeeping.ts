import { runHousekeeping } from '../jobs/housekeeping.js';
import type { ActivityDeps } from './deps.js';

/** The hourly chores (jobs/housekeeping.ts), for the housekeeping schedule's workflow (workflows/housekeeping.ts). */
export function createHousekeepingActivities(deps: ActivityDeps) {
  return {
    housekeeping: () => runHousekeeping({ em: () => deps.orm.em.fork(), config: deps.config, log: deps.log, kinds: deps.jobs.kinds.all() }),
  };
}
export type HousekeepingActivities = ReturnType<typeof createHousekeepingActivities>;
