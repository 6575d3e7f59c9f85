import { NotFoundError } from '../core/errors.js';
import type { Job } from '../db/entities/job.js';
import type { ActivityDeps } from './deps.js';

export type JobOutcome = 'done' | 'failed' | 'cancelled';

/**
 * An activity of the workflow run `runId` may write to its job while the job is unfinished, or when `runId` is a
 * newer run than the one that last wrote it (an operator reset the workflow in the Temporal UI: the job runs
 * again). A stale attempt of the same run after the job finished changes nothing, so retries stay idempotent.
 */
function mayWrite(job: Job, runId: string): boolean {
  return job.completedAt == null || job.runId !== runId;
}

/** A job deleted with its library (or item) has nothing left to record: bookkeeping for it is a no-op. */
async function ifStillThere(write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
}

/** The bookkeeping activities every service's workflow uses, through workflows/job-lifecycle.ts. */
export function createJobActivities({ orm, jobs }: ActivityDeps) {
  return {
    async startJob({ jobId, runId }: { jobId: string; runId: string }): Promise<void> {
      await ifStillThere(() => jobs.update(orm.em, jobId, (job) => {
        if (!mayWrite(job, runId) || (job.runId === runId && job.startedAt)) return null;
        return {
          status: jobs.kind(job).statuses.running,
          startedAt: job.startedAt ?? new Date(),
          completedAt: null,
          error: null,
          runId,
        };
      }));
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
          if (!mayWrite(job, input.runId)) return null;
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

    async finishJob(input: { jobId: string; runId: string; outcome: JobOutcome; error?: string }): Promise<void> {
      await ifStillThere(() => jobs.update(orm.em, input.jobId, (job) => {
        if (!mayWrite(job, input.runId)) return null;
        return {
          status: jobs.kind(job).statuses[input.outcome],
          progress: input.outcome === 'done' ? 100 : job.progress,
          error: input.outcome === 'done' ? null : (input.error ?? null),
          completedAt: new Date(),
          runId: input.runId,
        };
      }));
    },
  };
}
export type JobActivities = ReturnType<typeof createJobActivities>;
