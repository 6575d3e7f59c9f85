import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { PermanentError } from '../core/errors.js';
import { parseVtt } from './transcripts/vtt.js';
import type { AudioMode } from './transcripts/audio.js';
import { Job } from '../db/entities/job.js';
import { jobStopped, owns } from '../jobs/ownership.js';
import { removeWorkFolder } from '../jobs/work-folders.js';
import { Transcription, TranscriptionWebhook } from './entities.js';
import { outboundGuard } from '../outbound/guard.js';
import { Tools } from '../core/tools.js';
import { cancelBackendJob, submitJob, waitForModel, type ModelWaitOutcome } from './asr-client.js';
import { TRANSCRIPTION_STATUSES } from './kind.js';
import { downloadAudio, fetchCaptions, prepareAudio, type RunContext, Semaphore } from './media.js';
import { runDir, uploadDir, workDir } from './paths.js';
import {
  completeTranscript,
  type CompleteOutcome,
  countModelWait,
  failJob,
  loadTranscription,
  markDelivery,
  setStage,
  type StoreDeps,
  updateForOwner,
} from './results.js';
import { callbackUrl, hashToken, newToken } from './tokens.js';
import { classifyWebhook } from './webhook-payload.js';
import type { ActivityDeps } from '../activities/deps.js';
import { type Progress, withProgress } from '../activities/heartbeat.js';
import { syncTranscriptionActivities } from './sync-activities.js';

export interface RunRef {
  jobId: string;
  runId: string;
}

export type SubmitResult = { kind: 'accepted'; asrJobId: string } | { kind: 'busy'; retryAfterMs: number };

/** The stage a step reports when it starts (progress, stage name, detail): published as a `status` event. */
export interface StageNote {
  progress: number;
  stage: string;
  stageDetail: string | null;
}

function stopped(): never {
  return jobStopped();
}

/**
 * A media step's context (activities/heartbeat.ts): its heartbeats carry its progress (a tool's output, bytes
 * sent) with what a retried attempt resumes from (`checkpoint`), and a step that stops moving is stopped.
 */
function withRunContext<T>(timeoutMs: number, fn: (ctx: RunContext, p: Progress) => Promise<T>): Promise<T> {
  return withProgress((p) => {
    let saved: Record<string, unknown> = {};
    const ctx: RunContext = {
      signal: p.signal,
      timeoutMs,
      heartbeat: (detail) => p.moved({ ...saved, ...(detail !== undefined && { progress: detail }) }),
      checkpoint: (state) => p.moved((saved = { ...saved, ...state })),
      resumeFrom: (p.resumeFrom ?? undefined) as Record<string, unknown> | undefined,
    };
    return fn(ctx, p);
  });
}

/** Copies what an earlier attempt downloaded (`*.part`) into this attempt's folder, so yt-dlp continues it. */
async function resumeDownload(from: string | undefined, to: string): Promise<void> {
  if (!from || from === to) return;
  await fs.mkdir(to, { recursive: true });
  for (const name of await fs.readdir(from).catch(() => [] as string[])) {
    // A copy, not a move: that attempt may still be writing (it only appends, so the copy is a clean prefix).
    if (name.endsWith('.part')) await fs.copyFile(path.join(from, name), path.join(to, name)).catch(() => undefined);
  }
}

/** The transcription pipeline's steps (transcription/workflow.ts runs them). */
export function createTranscriptionActivities(deps: ActivityDeps) {
  const { config, orm, jobs, log } = deps;
  const t = config.transcription;
  const tools = new Tools(log.child('tools'), { ffmpegPath: t.ffmpegPath, ytdlpPath: t.ytdlpPath });
  const store: StoreDeps = { config, jobs, em: () => orm.em.fork() };
  const ffmpegSlots = new Semaphore(t.ffmpegConcurrency);
  const asr = () => {
    if (!t.asrBaseUrl) {
      throw new PermanentError('No transcription backend is configured (ASR_BASE_URL is not set), and this job needs one');
    }
    return { baseUrl: t.asrBaseUrl, apiKey: t.asrApiKey };
  };
  /** A URL job's address is a user's: refused before yt-dlp runs, and yt-dlp connects through the guard's proxy. */
  const guard = outboundGuard(config);
  const videoProxy = async (url: string) => {
    await guard.checkUrl(url, 'The video URL');
    return guard.proxyUrl();
  };
  const rel = (file: string) => path.relative(config.dataDir, file);
  const abs = (file: string) => path.resolve(config.dataDir, file);
  /**
   * This attempt's own folder, under its run's (transcription/paths.ts): nothing another attempt or run does can
   * delete the files this one works on (docs/jobs.md, "Work folders").
   */
  const attemptDir = (ref: RunRef, step: string) => path.join(runDir(config.dataDir, ref.jobId, ref.runId), `${step}-${Context.current().info.attempt}`);

  /**
   * Refuses to go on for a job this run no longer owns (cancelled, or retried), then reports the step's stage.
   * Answers the job's row.
   */
  async function begin(ref: RunRef, note?: StageNote): Promise<Transcription> {
    const em = orm.em.fork();
    const job = await em.findOne(Job, { id: ref.jobId });
    if (!job || !owns(job, ref.runId)) stopped();
    if (note && (job.stage !== note.stage || job.stageDetail !== note.stageDetail || job.progress < note.progress)) {
      if (!(await setStage(store, { ...ref, ...note }))) stopped();
    }
    return loadTranscription(em, ref.jobId);
  }

  return {
    /**
     * Captions first: a non-empty caption file finishes the job with `transcript_source` `captions`. Also takes
     * the video's title when the client gave none.
     */
    async transcriptionCaptions(input: RunRef & { note?: StageNote }): Promise<CompleteOutcome | { result: 'none'; reason: string }> {
      const ref = { jobId: input.jobId, runId: input.runId };
      const row = await begin(ref, input.note);
      const proxy = await videoProxy(row.sourceUrl!);
      const ytdlp = await tools.getYtDlp();
      const dir = attemptDir(ref, 'captions');
      const captions = await withRunContext(t.mediaTimeoutMs, (ctx) => fetchCaptions(ytdlp, row.sourceUrl!, dir, { ...ctx, proxy }));
      if (captions.title && !row.titleFromUser && captions.title !== row.title) {
        const title = captions.title.slice(0, 300);
        if (!(await updateForOwner(store, ref, (tx) => tx.nativeUpdate(Transcription, { jobId: ref.jobId }, { title })))) stopped();
      }
      if (captions.vtt === undefined) {
        return { result: 'none', reason: captions.problem ? `the captions could not be read: ${captions.problem}` : 'the video has no captions' };
      }
      const cues = parseVtt(captions.vtt);
      if (!cues.length) return { result: 'none', reason: 'the captions are empty' };
      await setStage(store, { ...ref, progress: 90, stage: 'finalizing', stageDetail: `Writing the transcript from ${captions.language} captions` });
      return completeTranscript(store, { ...ref, source: 'captions', segments: cues });
    },

    /** The media to transcribe: downloaded for a URL, the persisted upload otherwise. Answers a path in DATA_DIR. */
    async transcriptionAcquireMedia(input: RunRef & { note?: StageNote }): Promise<{ file: string; bytes: number }> {
      const ref = { jobId: input.jobId, runId: input.runId };
      const row = await begin(ref, input.note);
      if (row.sourceKind === 'url') {
        const proxy = await videoProxy(row.sourceUrl!);
        const ytdlp = await tools.getYtDlp();
        const dir = attemptDir(ref, 'download');
        const file = await withRunContext(t.mediaTimeoutMs, async (ctx) => {
          // Resumed from the earlier attempt's partial file, when its heartbeats said where it was.
          const earlier = ctx.resumeFrom?.downloadDir;
          await resumeDownload(typeof earlier === 'string' ? abs(earlier) : undefined, dir);
          ctx.checkpoint?.({ downloadDir: rel(dir) });
          return downloadAudio(ytdlp, row.sourceUrl!, dir, { ...ctx, proxy });
        });
        return { file: rel(file), bytes: (await fs.stat(file)).size };
      }
      const file = path.join(uploadDir(config.dataDir, ref.jobId), row.uploadStoredName ?? '');
      const st = await fs.stat(file).catch(() => undefined);
      if (!row.uploadStoredName || !st?.isFile()) throw new PermanentError('The uploaded file is no longer there; upload it again');
      return { file: rel(file), bytes: st.size };
    },

    /** ffmpeg: 16 kHz mono WAV through the job's processing mode (auto measures first). */
    async transcriptionPrepareAudio(
      input: RunRef & { media: string; mode: AudioMode; note?: StageNote },
    ): Promise<{ file: string; bytes: number; mode: string; reason: string }> {
      await begin(input, input.note);
      const ffmpeg = await tools.getFfmpeg();
      const output = path.join(attemptDir(input, 'audio'), 'audio.wav');
      const prepared = await withRunContext(t.mediaTimeoutMs, (ctx, p) =>
        ffmpegSlots.run(ctx.signal, () => prepareAudio(ffmpeg, abs(input.media), output, input.mode, ctx), (turn) => p.waiting(turn)),
      );
      const applied = { appliedMode: prepared.mode, modeReason: prepared.reason };
      if (!(await updateForOwner(store, input, (tx) => tx.nativeUpdate(Transcription, { jobId: input.jobId }, applied)))) stopped();
      return { file: rel(prepared.file), bytes: prepared.bytes, mode: prepared.mode, reason: prepared.reason };
    },

    /**
     * One submission, with a fresh webhook token (its hash stored first, so a fast backend's call is recognised)
     * and a fresh multipart body and file stream. 503: `busy` with the Retry-After delay.
     */
    async transcriptionSubmit(input: RunRef & { audio: string; note?: StageNote }): Promise<SubmitResult> {
      const endpoint = asr();
      await begin(input, input.note);
      const token = newToken();
      // Only the owner's token counts: a late attempt of a replaced run must not unseat the current submission's.
      if (!(await updateForOwner(store, input, (tx) => tx.nativeUpdate(Transcription, { jobId: input.jobId }, { callbackTokenHash: hashToken(token) })))) stopped();
      const outcome = await withRunContext(t.mediaTimeoutMs, (ctx) =>
        submitJob(endpoint, {
          file: abs(input.audio),
          fileName: `${input.jobId}.wav`,
          contentType: 'audio/wav',
          callbackUrl: callbackUrl(config.publicBaseUrl, input.jobId, token),
          externalId: input.jobId,
          signal: ctx.signal,
          onProgress: (sent) => ctx.heartbeat(`${sent} bytes sent`),
        }),
      );
      const em = orm.em.fork();
      if (outcome.kind === 'busy') {
        if (!(await countModelWait(store, input))) stopped();
        return outcome;
      }
      // The backend's id and the `transcribing` stage in one transaction: what the job shows is always consistent.
      // Answered even when this run no longer owns the job: the workflow then knows the backend job to cancel.
      await jobs.update(
        em,
        input.jobId,
        (job) => (owns(job, input.runId) ? { progress: Math.max(job.progress, 50), stage: 'transcribing', stageDetail: `The backend is transcribing (job ${outcome.asrJobId})` } : null),
        {
          within: async (tx) => {
            await tx.nativeUpdate(Transcription, { jobId: input.jobId }, { asrJobId: outcome.asrJobId, submittedAt: new Date() });
          },
        },
      );
      return outcome;
    },

    /** Follows the backend's model events until `ready`, or says why it stopped (the workflow then waits Retry-After). */
    async transcriptionWaitForModel(input: RunRef & { maxWaitMs: number; note?: StageNote }): Promise<{ outcome: ModelWaitOutcome; waitedMs: number }> {
      const endpoint = asr();
      await begin(input, input.note);
      const t0 = Date.now();
      // Waiting, not working: heartbeats go on while the backend loads its model, up to maxWaitMs.
      const outcome = await withRunContext(input.maxWaitMs, (ctx, p) =>
        p.waiting(waitForModel(endpoint, { maxWaitMs: input.maxWaitMs, signal: ctx.signal, onMessage: (m) => ctx.heartbeat(m.data.slice(0, 200)) })),
      );
      return { outcome, waitedMs: Date.now() - t0 };
    },

    /**
     * Handles a webhook call the workflow matched to its submission: a backend failure fails the job; a result
     * finishes it (status processing at 90 first). Idempotent: a retried attempt after success changes nothing.
     */
    async transcriptionApplyWebhook(
      input: RunRef & { deliveryId: string },
    ): Promise<CompleteOutcome | { result: 'failed'; error: string } | { result: 'ignored'; reason: string }> {
      const em = orm.em.fork();
      const delivery = await em.findOne(TranscriptionWebhook, { id: input.deliveryId });
      if (!delivery) return { result: 'ignored', reason: 'unknown webhook call' };
      const job = await em.findOne(Job, { id: input.jobId });
      if (delivery.outcome !== 'pending') {
        // An earlier attempt got this far: report what it did.
        if (job?.status === TRANSCRIPTION_STATUSES.done) {
          const row = await loadTranscription(em, input.jobId);
          return { result: 'done', title: row.title, segmentCount: row.segmentCount ?? 0 };
        }
        if (job?.status === TRANSCRIPTION_STATUSES.failed && delivery.outcome === 'applied') return { result: 'failed', error: job.error ?? 'Failed' };
        return { result: 'ignored', reason: delivery.detail ?? 'already handled' };
      }
      if (!job || !owns(job, input.runId)) {
        const reason = job?.status === TRANSCRIPTION_STATUSES.cancelled ? 'the job was cancelled' : 'the job is no longer running';
        await markDelivery(orm.em, input.deliveryId, 'ignored', reason);
        return { result: 'stopped', reason };
      }
      const payload = delivery.payload ?? {};
      const meaning = classifyWebhook(payload);
      if (!meaning || meaning.kind === 'model-lifecycle' || meaning.kind === 'progress') {
        await markDelivery(orm.em, input.deliveryId, 'ignored', 'not a finished job');
        return { result: 'ignored', reason: 'not a finished job' };
      }
      if (meaning.kind === 'failed') {
        await failJob(store, { jobId: input.jobId, runId: input.runId, error: meaning.error, deliveryId: input.deliveryId, deliveryOutcome: 'applied' });
        return { result: 'failed', error: meaning.error };
      }
      await setStage(store, { ...input, progress: 90, stage: 'finalizing', stageDetail: 'Writing the transcript' });
      return completeTranscript(store, { ...input, source: 'asr', segments: payload.segments, deliveryId: input.deliveryId });
    },

    /** A webhook call whose handling failed: the job fails with the error, and the caller is answered 500. */
    async transcriptionFailWebhook(input: RunRef & { deliveryId: string; error: string }): Promise<void> {
      await failJob(store, { jobId: input.jobId, runId: input.runId, error: input.error, deliveryId: input.deliveryId, deliveryOutcome: 'error' });
    },

    /** Webhook calls that change nothing: stale (another submission), replayed, or arriving after the end. */
    async transcriptionIgnoreWebhooks(input: { deliveryIds: string[]; reason: string }): Promise<void> {
      for (const id of input.deliveryIds) await markDelivery(orm.em, id, 'ignored', input.reason);
    },

    /** `DELETE /jobs/:id` at the backend: best effort, never fails. */
    async transcriptionCancelBackend(input: { jobId: string; asrJobId: string }): Promise<{ ok: boolean; detail: string }> {
      if (!t.asrBaseUrl) return { ok: false, detail: 'no backend configured' };
      const result = await cancelBackendJob({ baseUrl: t.asrBaseUrl, apiKey: t.asrApiKey }, input.asrJobId);
      log.info('asked the transcription backend to cancel', { jobId: input.jobId, asrJobId: input.asrJobId, result: result.detail });
      return result;
    },

    /**
     * The run's temporary files always go (its own folder only: a retry's new run may be working beside it); the
     * upload only once the job is done (a retry needs it otherwise).
     */
    async transcriptionCleanup(input: { jobId: string; runId?: string }): Promise<{ removedUpload: boolean }> {
      if (input.runId) {
        await removeWorkFolder(runDir(config.dataDir, input.jobId, input.runId));
      } else {
        await fs.rm(workDir(config.dataDir, input.jobId), { recursive: true, force: true });
      }
      const job = await orm.em.fork().findOne(Job, { id: input.jobId });
      if (job?.status !== TRANSCRIPTION_STATUSES.done) return { removedUpload: false };
      await fs.rm(uploadDir(config.dataDir, input.jobId), { recursive: true, force: true });
      return { removedUpload: true };
    },

    /** Synchronous backends (ASR_BACKEND openai, whisper-cpp, whisper-asr): transcription/sync-activities.ts. */
    ...syncTranscriptionActivities({ config, orm, store, tools, ffmpegSlots, begin, withRunContext, attemptDir, rel, abs }),
  };
}
export type TranscriptionActivities = ReturnType<typeof createTranscriptionActivities>;
