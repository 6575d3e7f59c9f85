import { ApplicationFailure, CancellationScope, isCancellation, workflowInfo } from '@temporalio/workflow';
import type { JobActivities } from '../activities/jobs.js';
import { isJobStopped } from '../jobs/contract.js';
import { proxyJobActivities } from './activities.js';
import { JOB_ACTIVITY_RETRY } from './retry-policy.js';
import { withSlot } from './slots.js';

const jobs = proxyJobActivities<JobActivities>({
  startToCloseTimeout: '30 seconds',
  retry: JOB_ACTIVITY_RETRY,
});

/**
 * Runs a job's pipeline and records how it ended, whatever happens: done on success; cancelled when an operator or
 * the API cancels the workflow (recorded by the workflow itself, in a scope that cancellation cannot interrupt);
 * failed with the error otherwise. Terminations and timeouts bypass this code; the reconciler records those.
 * With `slot`, the job stays queued until its concurrency pool has room.
 *
 * `startedByPipeline` says the pipeline's first step takes the job itself (JobStore.start, with its own first stage
 * in the same write), so no `startJob` step comes before it.
 *
 * `recorded` says the pipeline has already written the job's ending itself (with its results, or a status of its
 * own such as the recipe queue's `unhealthy`, inside its slot): then nothing more is written, so nothing writes to
 * a job after it looks finished, when a retry may already have put it back in the queue. A run that no longer owns
 * its job (JOB_STOPPED, jobs/ownership.ts) writes nothing either: the failure ends the run as it is.
 */
export async function runJob<T>(
  jobId: string,
  pipeline: () => Promise<T>,
  opts: { slot?: string; recorded?: () => boolean; startedByPipeline?: boolean } = {},
): Promise<T> {
  const run = async () => {
    if (!opts.startedByPipeline) await jobs.startJob({ jobId, runId: workflowInfo().runId });
    return pipeline();
  };
  const finish = () => jobs.finishJob({ jobId, runId: workflowInfo().runId, outcome: 'done' });
  // Last, as the slot goes back: a job that looks done has nothing left to do but close its workflow.
  const last = () => (opts.recorded?.() ? undefined : finish);
  try {
    if (opts.slot) return await withSlot(opts.slot, run, last);
    const result = await run();
    await last()?.();
    return result;
  } catch (err) {
    if (isJobStopped(err)) throw err;
    const cancelled = isCancellation(err);
    if (!opts.recorded?.()) {
      await CancellationScope.nonCancellable(() =>
        jobs.finishJob({
          jobId,
          runId: workflowInfo().runId,
          outcome: cancelled ? 'cancelled' : 'failed',
          error: cancelled ? 'Cancelled' : failureMessage(err),
        }),
      );
    }
    if (cancelled || err instanceof ApplicationFailure) throw err;
    // Anything else would fail the workflow task and retry it forever (docs/jobs.md, "Workflow code").
    throw ApplicationFailure.nonRetryable(failureMessage(err), 'JobFailed');
  }
}

/** The innermost message of a Temporal failure chain: "Activity task failed" says nothing to a user. */
export function failureMessage(err: unknown): string {
  let e: unknown = err;
  while (e && typeof e === 'object' && 'cause' in e && (e as { cause?: unknown }).cause) e = (e as { cause: unknown }).cause;
  return e instanceof Error ? e.message : String(e);
}

/** Progress reporting for pipelines: stage and percentage, published to the job's streams. */
export function reportProgress(
  jobId: string,
  update: { progress?: number; stage?: string; stageDetail?: string | null },
): Promise<void> {
  return jobs.reportProgress({ jobId, runId: workflowInfo().runId, ...update });
}
