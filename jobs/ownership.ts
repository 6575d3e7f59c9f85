import { ApplicationFailure } from '@temporalio/common';
import type { Job } from '../db/entities/job.js';
import { JOB_STOPPED } from './contract.js';

/**
 * The one ownership rule for every job kind (docs/jobs.md, "Ownership"): a job belongs to one workflow run, the one
 * recorded in `job.runId`, and only that run writes to it, only while the job is unfinished. A late attempt of an
 * older run (a timed-out activity still running, a run a retry replaced) changes nothing.
 */
export const owns = (job: Pick<Job, 'runId' | 'completedAt'>, runId: string): boolean => job.completedAt == null && job.runId === runId;

/**
 * How a run becomes the owner, at its start: only when it is the workflow's current run (`currentRunId`, asked of
 * Temporal) and the job names another run or none. That is a first start, a retry's new run (the API cleared the
 * job's run when it queued it again) or an operator's reset in the Temporal UI (the new run revives the job). An
 * older run is never the current one, so it can never take a job back.
 */
export const mayTakeOver = (job: Pick<Job, 'runId'>, runId: string, currentRunId: string | undefined): boolean =>
  job.runId !== runId && currentRunId === runId;

/** Stops an activity of a run that no longer owns its job; workflows read the type with `isJobStopped`. */
export function jobStopped(what = 'job'): never {
  throw ApplicationFailure.nonRetryable(
    `The ${what} is no longer run by this workflow run (it ended, was cancelled, or another run took it over)`,
    JOB_STOPPED,
  );
}
