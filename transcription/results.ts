import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../core/errors.js';
import { dedupeSegments } from './transcripts/dedupe.js';
import { numbered } from './transcripts/segments.js';
import { renderTranscript, TRANSCRIPT_FORMATS, type TranscriptFormat } from './transcripts/writers.js';
import type { Config } from '../core/config.js';
import { subtitleRules } from './configuration.js';
import { Transcription, TranscriptionWebhook } from './entities.js';
import { owns } from '../jobs/ownership.js';
import type { JobPatch, JobStore } from '../jobs/store.js';
import { backendIdentity } from './backends/index.js';
import { TRANSCRIPTION_STATUSES } from './kind.js';
import { outputDir } from './paths.js';

/** The result files in a job's output directory. */
export const resultFileName = (format: TranscriptFormat) => `transcript.${format}`;

export interface StoreDeps {
  config: Config;
  jobs: JobStore;
  em: () => EntityManager;
}

export async function loadTranscription(em: EntityManager, jobId: string): Promise<Transcription> {
  const row = await em.fork().findOne(Transcription, { jobId });
  if (!row) throw new NotFoundError(`Job ${jobId} not found`, 'JOB_NOT_FOUND');
  return row;
}

/** Moves a running job's stage and progress, published as a `status` event. No-op for a job this run does not own. */
export async function setStage(
  d: StoreDeps,
  input: { jobId: string; runId: string; progress?: number; stage: string; stageDetail?: string | null },
): Promise<boolean> {
  const { changed } = await d.jobs.update(d.em(), input.jobId, (job) => {
    if (!owns(job, input.runId)) return null;
    const patch: JobPatch = { stage: input.stage, stageDetail: input.stageDetail ?? null };
    if (input.progress !== undefined) patch.progress = Math.max(job.progress, Math.min(100, Math.round(input.progress)));
    return patch;
  });
  return changed;
}

/**
 * Writes a job's own row (`write`, in the transaction) for the run that owns the job only, under the job's lock
 * (jobs/ownership.ts): false, and nothing written, when the run no longer owns it.
 */
export async function updateForOwner(d: StoreDeps, ref: { jobId: string; runId: string }, write: (tx: EntityManager) => Promise<unknown>): Promise<boolean> {
  const { changed } = await d.jobs.updateAsOwner(d.em(), ref, {}, {
    silent: true,
    within: async (tx) => {
      await write(tx);
    },
  });
  return changed;
}

/** The backend answered 503 (its model loading or busy): counted on the job, if this run still owns it. */
export function countModelWait(d: StoreDeps, ref: { jobId: string; runId: string }): Promise<boolean> {
  return updateForOwner(d, ref, (tx) => tx.execute('update "transcription" set "model_waits" = "model_waits" + 1 where "job_id" = ?', [ref.jobId]));
}

/** `stopped`: the job was cancelled or finished otherwise meanwhile; nothing was stored. */
export type CompleteOutcome = { result: 'done'; title: string; segmentCount: number } | { result: 'stopped'; reason: string };

/**
 * Finishes a job with its transcript, atomically: rolling echoes removed, the four files written, `segmentsJson`,
 * `outputDir` and `transcript_source` stored (for `asr`, with the configured backend kind and model), the job
 * `done` at 100, and (for a webhook) the call marked applied: all in one transaction under the job's lock. A job
 * that was cancelled (or finished otherwise) meanwhile gets nothing: its files are not kept, nothing is stored.
 */
export async function completeTranscript(
  d: StoreDeps,
  input: { jobId: string; runId: string; source: 'captions' | 'asr'; segments: unknown; deliveryId?: string },
): Promise<CompleteOutcome> {
  const row = await loadTranscription(d.em(), input.jobId);
  const segments = dedupeSegments(input.segments);
  const files = renderTranscript(segments, {
    title: row.title,
    transcriptSource: input.source,
    sourceUrl: row.sourceUrl ?? null,
    createdAt: new Date(),
    subtitles: subtitleRules(d.config.transcription),
  });
  const finalDir = outputDir(d.config.dataDir, input.jobId);
  const asr = input.source === 'asr' ? backendIdentity(d.config.transcription) : { backend: null, model: null };
  // Written beside the final directory, then renamed into place inside the transaction.
  const staging = await stageFiles(finalDir, files);
  try {
    let reason = 'the job is no longer running';
    const { changed } = await d.jobs.update(
      d.em(),
      input.jobId,
      (job) => {
        if (!owns(job, input.runId)) {
          reason = job.status === TRANSCRIPTION_STATUSES.cancelled ? 'the job was cancelled' : `the job is ${job.status}`;
          return null;
        }
        return { status: TRANSCRIPTION_STATUSES.done, progress: 100, stage: 'done', stageDetail: null, error: null, completedAt: new Date() };
      },
      {
        within: async (tx) => {
          await tx.nativeUpdate(
            Transcription,
            { jobId: input.jobId },
            {
              transcriptSource: input.source,
              asrBackend: asr.backend,
              asrModel: asr.model,
              segmentsJson: JSON.stringify(numbered(segments)),
              segmentCount: segments.length,
              outputDir: finalDir,
            },
          );
          if (input.deliveryId) {
            await tx.nativeUpdate(TranscriptionWebhook, { id: input.deliveryId }, { outcome: 'applied', handledAt: new Date(), payload: null });
          }
          // Last: a failure here rolls everything back; a failed commit after it leaves files a retry overwrites.
          await fs.rm(finalDir, { recursive: true, force: true });
          await fs.rename(staging, finalDir);
        },
      },
    );
    if (!changed) {
      if (input.deliveryId) await markDelivery(d.em(), input.deliveryId, 'ignored', reason);
      return { result: 'stopped', reason };
    }
    return { result: 'done', title: row.title, segmentCount: segments.length };
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

/** The result files written beside `finalDir`, in a staging folder of their own, renamed into place by the caller. */
export async function stageFiles(finalDir: string, files: Record<TranscriptFormat, string>): Promise<string> {
  const staging = `${finalDir}.${randomBytes(4).toString('hex')}.staging`;
  await fs.mkdir(staging, { recursive: true });
  for (const format of TRANSCRIPT_FORMATS) await fs.writeFile(path.join(staging, resultFileName(format)), files[format]);
  return staging;
}

/** Fails a running job, and records the webhook call that caused it, in one transaction. */
export async function failJob(
  d: StoreDeps,
  input: { jobId: string; runId?: string; error: string; deliveryId?: string; deliveryOutcome?: 'applied' | 'error' },
): Promise<boolean> {
  const { changed } = await d.jobs.update(
    d.em(),
    input.jobId,
    (job) => {
      // Without a run (the API failing a job it could not hand a result to), any unfinished job; else its owner only.
      if (input.runId === undefined ? job.completedAt != null : !owns(job, input.runId)) return null;
      return { status: TRANSCRIPTION_STATUSES.failed, error: input.error, completedAt: new Date() };
    },
    {
      within: async (tx) => {
        if (input.deliveryId) {
          await tx.nativeUpdate(
            TranscriptionWebhook,
            { id: input.deliveryId },
            { outcome: input.deliveryOutcome ?? 'error', detail: input.error, handledAt: new Date(), payload: null },
          );
        }
      },
    },
  );
  if (!changed && input.deliveryId) await markDelivery(d.em(), input.deliveryId, 'ignored', 'the job is no longer running');
  return changed;
}

export async function markDelivery(em: EntityManager, id: string, outcome: 'applied' | 'ignored' | 'error', detail: string): Promise<void> {
  await em.fork().nativeUpdate(TranscriptionWebhook, { id, outcome: 'pending' }, { outcome, detail, handledAt: new Date(), payload: null });
}
