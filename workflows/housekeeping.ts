import type { HousekeepingActivities } from '../activities/housekeeping.js';
import { proxyJobActivities } from './activities.js';
import { JOB_ACTIVITY_RETRY } from './retry-policy.js';

const { housekeeping } = proxyJobActivities<HousekeepingActivities>({ startToCloseTimeout: '30 minutes', heartbeatTimeout: '1 minute', retry: JOB_ACTIVITY_RETRY });

/**
 * The hourly chores (pruning old events, each job kind's tidying), started by the `housekeeping` Temporal Schedule
 * (jobs/housekeeping.ts) instead of a timer inside the API process. A chore that fails is logged and tried next hour.
 */
export async function housekeepingWorkflow(): Promise<{ failed: string[] }> {
  return housekeeping();
}
