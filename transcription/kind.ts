import type { EntityManager } from '@mikro-orm/postgresql';
import type { Job } from '../db/entities/job.js';
import { appendEvent } from '../jobs/events.js';
import { type JobKind, jobState } from '../jobs/kinds.js';
import { jobStreams } from '../jobs/store.js';
import { sweepTranscriptionFiles } from './sweep.js';
import { TRANSCRIPTION_KIND } from './contract.js';

export { TRANSCRIPTION_KIND };

export const TRANSCRIPTION_STATUSES = {
  queued: 'pending',
  running: 'processing',
  done: 'done',
  failed: 'failed',
  cancelled: 'cancelled',
} as const;
export type TranscriptionStatus = (typeof TRANSCRIPTION_STATUSES)[keyof typeof TRANSCRIPTION_STATUSES];
export const TRANSCRIPTION_STATUS_LIST: TranscriptionStatus[] = ['pending', 'processing', 'done', 'failed', 'cancelled'];

/** The spec's `status` event: `status` and `progress`, with the stage the job is in. */
export function statusEvent(job: Job): { event: string; data: Record<string, unknown> } {
  return { event: 'status', data: jobState(job) };
}

export const errorEvent = (job: Job) => ({ event: 'error', data: { jobId: job.id, message: job.error ?? 'Failed' } });
export const doneEvent = (job: Job) => ({ event: 'done', data: { jobId: job.id, status: job.status } });

/**
 * The events of a job that ends, in order: `status` (the final state), `error` (failed jobs: its message), and
 * `done` (every ending; `status` says which), which is always the last event of a run, so clients close on it.
 * The store writes one "state event" per change, after `onChange`; for a finished job that event is `done`, and
 * `onChange` writes the final `status` and `error` before it, in the same transaction. Whoever ends the job (its
 * workflow, the webhook, a cancel request, the reconciler) produces the same sequence.
 */
export const transcriptionKind: JobKind = {
  name: TRANSCRIPTION_KIND,
  statuses: TRANSCRIPTION_STATUSES,
  stateEvent: (job) => (job.completedAt ? doneEvent(job) : statusEvent(job)),
  housekeeping: async ({ em, config, log }) => {
    await sweepTranscriptionFiles(em, config.dataDir, log);
  },
  onChange: async (tx: EntityManager, job: Job, before: Pick<Job, 'status' | 'completedAt'>) => {
    if (!job.completedAt || (before.completedAt && before.status === job.status)) return;
    const streams = jobStreams(job);
    const status = statusEvent(job);
    await appendEvent(tx, streams, status.event, status.data);
    if (job.status === TRANSCRIPTION_STATUSES.failed) {
      const error = errorEvent(job);
      await appendEvent(tx, streams, error.event, error.data);
    }
  },
};

/** The events that describe a job as it is now: what an event stream sends first. */
export function currentStateEvents(job: Job): { event: string; data: Record<string, unknown> }[] {
  if (!job.completedAt) return [statusEvent(job)];
  return [statusEvent(job), ...(job.status === TRANSCRIPTION_STATUSES.failed ? [errorEvent(job)] : []), doneEvent(job)];
}
