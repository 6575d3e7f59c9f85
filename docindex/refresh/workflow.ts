import type { RefreshActivities, RefreshInput, RefreshOutcome, RefreshPlan } from './activities.js';
import { proxyJobActivities } from '../../workflows/activities.js';
import { externalCallRetry, JOB_ACTIVITY_RETRY } from '../../workflows/retry-policy.js';

// Both steps heartbeat: one whose result the Temporal server could not take runs again within a minute, not after its
// start-to-close timeout (docs/jobs.md, "Heartbeats and progress").
// Reading the source asks a git host (or a registry, a site): a few attempts with backoff.
const { planRefresh } = proxyJobActivities<RefreshActivities>({ startToCloseTimeout: '10 minutes', heartbeatTimeout: '1 minute', retry: externalCallRetry(3) });
// Registering versions and starting jobs: bookkeeping, safe to repeat.
const { applyRefresh } = proxyJobActivities<RefreshActivities>({ startToCloseTimeout: '5 minutes', heartbeatTimeout: '1 minute', retry: JOB_ACTIVITY_RETRY });

/**
 * A library's refresh, started by its schedule (`refresh:<libraryId>`, docindex/refresh/schedules.ts) on the
 * indexing queue: look at the source, then index what moved and register the new versions the policy wants. The
 * indexing itself runs in its own jobs; this run ends once they are started.
 */
export async function refreshLibraryWorkflow(input: RefreshInput): Promise<RefreshPlan & RefreshOutcome> {
  const plan = await planRefresh(input);
  const outcome = await applyRefresh(plan);
  return { ...plan, ...outcome };
}
