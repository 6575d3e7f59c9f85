import { WorkflowNotFoundError } from '@temporalio/client';
import { NotFoundError } from '../core/errors.js';
import { owns } from '../jobs/ownership.js';
import type { JobOutcome, JobStore } from '../jobs/store.js';
import type { ActivityDeps } from './deps.js';

/** A job deleted with its library (or item) has nothing left to record: bookkeeping for it is a no-op. */
async function ifStillThere(write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
}

/** The run Temporal runs now under `workflowId` (the latest one); undefined when there is none. */
async function currentRunId(temporal: ActivityDeps['temporal'], workflowId: string): Promise<string | undefined> {
  try {
    return (await temporal.workflow.getHandle(workflowId).describe()).runId;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

/**
 * The run takes its job (JobStore.start), Temporal asked which run is current: what the `startJob` activity does, and
 * what a first step that starts its job itself does (an index's crawl, docindex/pipeline.ts) with its own stage.
 */
export function startRun(
  { orm, jobs, temporal }: Pick<ActivityDeps, 'orm' | 'jobs' | 'temporal'>,
  ref: { jobId: string; runId: string },
  also?: Parameters<JobStore['start']>[3],
): Promise<boolean> {
  return jobs.start(orm.em, ref, (workflowId) => currentRunId(temporal, workflowId), also);
}

/**
 * The bookkeeping activities every service's workflow uses, through workflows/job-lifecycle.ts. Every write follows
 * the ownership rule (jobs/ownership.ts): only the run that owns a job writes to it.
 */
export function createJobActivities({ orm, jobs, temporal }: ActivityDeps) {
  return {
    /**
     * The run takes its job: it already owns it (the API recorded it at start), or it is the workflow's current run
     * and the job names another run or none (a first start, a retry, a reset). Anything else is a run that lost its
     * job (cancelled before it started, or replaced): it stops with JOB_STOPPED and writes nothing.
     */
    async startJob({ jobId, runId }: { jobId: string; runId: string }): Promise<void> {
      await ifStillThere(() => startRun({ orm, jobs, temporal }, { jobId, runId }));
    },

    async reportProgress(input: {
      jobId: string;
      runId: string;
      progress?: number;
      stage?: string;
      stageDetail?: string | null;
    }): Promise<void> {
      const progress =
        input.progress === undefined ? undefined : Math.max(0, Math.min(100, Math.round(input.progress)));
      await ifStillThere(() => jobs.update(
        orm.em,
        input.jobId,
        (job) => {
          if (!owns(job, input.runId)) return null;
          return {
            ...(progress !== undefined && { progress }),
            ...(input.stage !== undefined && { stage: input.stage }),
            ...(input.stageDetail !== undefined && { stageDetail: input.stageDetail }),
          };
        },
        {
          silent: true,
          extra: (job) => [
            {
              event: 'progress',
              data: { jobId: job.id, stage: job.stage ?? null, stageDetail: job.stageDetail ?? null, progress: job.progress },
            },
          ],
        },
      ));
    },

    /** The ending, once (JobStore.finish). */
    async finishJob(input: { jobId: string; runId: string; outcome: JobOutcome; error?: string }): Promise<void> {
      await ifStillThere(() => jobs.finish(orm.em, input));
    },
  };
}
export type JobActivities = ReturnType<typeof createJobActivities>;
