import { runHousekeeping } from '../jobs/housekeeping.js';
import type { ActivityDeps } from './deps.js';
import { alive } from './heartbeat.js';

/**
 * The hourly chores (jobs/housekeeping.ts), for the housekeeping schedule's workflow (workflows/housekeeping.ts), with
 * liveness heartbeats: a chore may take minutes, and a result the Temporal server could not take is run again within
 * the heartbeat timeout instead of holding the schedule (which skips runs meanwhile) for the 30-minute timeout.
 */
export function createHousekeepingActivities(deps: ActivityDeps) {
  return {
    housekeeping: () => alive(() => runHousekeeping({ em: () => deps.orm.em.fork(), config: deps.config, log: deps.log, kinds: deps.jobs.kinds.all() })),
  };
}
export type HousekeepingActivities = ReturnType<typeof createHousekeepingActivities>;
