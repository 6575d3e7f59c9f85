import type { Job } from '../../db/entities/job.js';
import { type JobKind, jobState } from '../../jobs/kinds.js';
import { TRANSCRIPTION_STATUSES } from '../kind.js';
import { EXTRA_KIND } from './contract.js';

/**
 * The jobs of translations and summaries: the transcription statuses, and one event, `extra`, on every change.
 * Their events go to their own streams and to `kind:transcription` (the job's `topics`), so `GET /api/jobs/events`
 * and the web page follow them: `jobId` is the transcription job's, `extraId` the translation's or summary's.
 */
export function extraEvent(job: Job): { event: string; data: Record<string, unknown> } {
  const d = job.detail as { transcriptionJobId?: string; task?: string; language?: string | null };
  // The job's public state (jobs/kinds.ts), its id as `extraId` and without its kind.
  const { jobId: extraId, kind: _kind, ...state } = jobState(job);
  return {
    event: 'extra',
    data: { jobId: d.transcriptionJobId ?? null, extraId, task: d.task ?? null, language: d.language ?? null, ...state },
  };
}

export const transcriptExtraKind: JobKind = {
  name: EXTRA_KIND,
  statuses: TRANSCRIPTION_STATUSES,
  stateEvent: (job) => extraEvent(job),
};
