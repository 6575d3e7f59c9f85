import type { ActivityDeps } from './deps.js';
import { createHealthActivities } from './health.js';
import { createHousekeepingActivities } from './housekeeping.js';
import { createJobActivities } from './jobs.js';
import { createSlotActivities, type SlotPoolSpec } from './slots.js';

/**
 * The activities every task queue's worker registers, whatever service owns the queue: the health ping, job
 * bookkeeping, the concurrency slots and the hourly housekeeping. Each service adds its own per queue
 * (runtime/service.ts, `queues`).
 */
export function sharedActivities(deps: ActivityDeps, pools: readonly SlotPoolSpec[]) {
  return {
    ...createHealthActivities(),
    ...createJobActivities(deps),
    ...createSlotActivities(deps, pools),
    ...createHousekeepingActivities(deps),
  };
}
