import fs from 'node:fs/promises';
import path from 'node:path';
import { PermanentError } from '../core/errors.js';
import { parseVtt } from './transcripts/vtt.js';
import type { AudioMode } from './transcripts/audio.js';
import { Job } from '../db/entities/job.js';
import { jobStopped, owns } from '../jobs/ownership.js';
import { removeWorkFolder } from '../jobs/work-folders.js';
import { Transcription, TranscriptionWebhook } from './entities.js';
import { cancelBackendJob, submitJob, waitForModel, type ModelWaitOutcome } from './asr-client.js';
import { abs, attemptDir, begin, bindStep, rel, transcriptionDeps, type TranscriptionDeps, withRunContext } from './activity-deps.js';
import type { RunRef, StageNote } from './contract.js';
import { TRANSCRIPTION_STATUSES } from './kind.js';
import { downloadAudio, fetchCaptions, prepareAudio, probeDuration } from './media.js';
import { checkWorkFolder, mediaBounds, mediaTooLong, WAV_BYTES_PER_SECOND } from './bounds.js';
import { playbackDir, runDir, uploadDir, workDir } from './paths.js';
import { writePlaybackCopy } from './playback.js';
import type { Tool } from '../core/tools.js';
import { completeTranscript, type CompleteOutcome, countModelWait, failJob, loadTranscription, markDelivery, setStage, updateForOwner } from './results.js';
import { callbackUrl, hashToken, newToken } from './tokens.js';
import { classifyWebhook } from './webhook-payload.js';
import type { ActivityDeps } from '../activities/deps.js';
import { syncTranscriptionActivities } from './sync-activities.js';

/**
 * The transcription pipeline's steps (transcription/workflow.ts runs them): each a function of the worker's
 * dependencies (transcription/activity-deps.ts) and its input, bound by `createTranscriptionActivities` at the end.
 */

export type SubmitResult = { kind: 'accepted'; asrJobId: string } | { kind: 'busy'; retryAfterMs: number };

function asrEndpoint(d: TranscriptionDeps): { baseUrl: string; apiKey: string | undefined } {
  const t = d.config.transcription;
  if (!t.asrBaseUrl) {
    throw new PermanentError('No transcription backend is configured (ASR_BASE_URL is not set), and this job needs one');
  }
  return { baseUrl: t.asrBaseUrl, apiKey: t.asrApiKey };
}

/** The proxy yt-dlp connects through, once the guard has let the user's URL through. */
async function videoProxy(d: TranscriptionDeps, url: string): Promise<string> {
  await d.guard.checkUrl(url, 'The video URL');
  return d.guard.proxyUrl();
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


/**
 * Captions first: a non-empty caption file finishes the job with `transcript_source` `captions`. Also takes the
 * video's title when the client gave none.
 */
export async function findCaptions(
  d: TranscriptionDeps,
  input: RunRef & { note?: StageNote },
): Promise<CompleteOutcome | { result: 'none'; reason: string }> {
  const ref = { jobId: input.jobId, runId: input.runId };
  const row = await begin(d, ref, input.note);
  const proxy = await videoProxy(d, row.sourceUrl!);
  const ytdlp = await d.tools.getYtDlp();
  const dir = attemptDir(d, ref, 'captions');
  const captions = await withRunContext(d.config.transcription.mediaTimeoutMs, (ctx) => fetchCaptions(ytdlp, row.sourceUrl!, dir, { ...ctx, proxy }));
  if (captions.title && !row.titleFromUser && captions.title !== row.title) {
    const title = captions.title.slice(0, 300);
    if (!(await updateForOwner(d.store, ref, (tx) => tx.nativeUpdate(Transcription, { jobId: ref.jobId }, { title })))) jobStopped();
  }
  if (captions.vtt === undefined) {
    return { result: 'none', reason: captions.problem ? `the captions could not be read: ${captions.problem}` : 'the video has no captions' };
  }
  const cues = parseVtt(captions.vtt);
  if (!cues.length) return { result: 'none', reason: 'the captions are empty' };
  await setStage(d.store, { ...ref, progress: 90, stage: 'finalizing', stageDetail: `Writing the transcript from ${captions.language} captions` });
  return completeTranscript(d.store, { ...ref, source: 'captions', segments: cues });
}

/** The media to transcribe: downloaded for a URL, the persisted upload otherwise. Answers a path in DATA_DIR. */
export async function acquireMedia(d: TranscriptionDeps, input: RunRef & { note?: StageNote }): Promise<{ file: string; bytes: number }> {
  const ref = { jobId: input.jobId, runId: input.runId };
  const row = await begin(d, ref, input.note);
  if (row.sourceKind === 'url') {
    const proxy = await videoProxy(d, row.sourceUrl!);
    const ytdlp = await d.tools.getYtDlp();
    const dir = attemptDir(d, ref, 'download');
    const file = await withRunContext(d.config.transcription.mediaTimeoutMs, async (ctx) => {
      // Resumed from the earlier attempt's partial file, when its heartbeats said where it was.
      const earlier = ctx.resumeFrom?.downloadDir;
      await resumeDownload(typeof earlier === 'string' ? abs(d, earlier) : undefined, dir);
      ctx.checkpoint?.({ downloadDir: rel(d, dir) });
      return downloadAudio(ytdlp, row.sourceUrl!, dir, { ...ctx, proxy, bounds: mediaBounds(d.config.transcription) });
    });
    await checkWorkFolder(runDir(d.config.dataDir, ref.jobId, ref.runId), mediaBounds(d.config.transcription), 0, 'the download');
    return { file: rel(d, file), bytes: (await fs.stat(file)).size };
  }
  const file = path.join(uploadDir(d.config.dataDir, ref.jobId), row.uploadStoredName ?? '');
  const st = await fs.stat(file).catch(() => undefined);
  if (!row.uploadStoredName || !st?.isFile()) throw new PermanentError('The uploaded file is no longer there; upload it again');
  return { file: rel(d, file), bytes: st.size };
}

/**
 * ffmpeg: 16 kHz mono WAV through the job's processing mode (auto measures first). The bounds first
 * (transcription/bounds.ts): the media's length from its header (over TRANSCRIPTION_MAX_DURATION_SECONDS: fails at
 * once), and the WAV it will make beside what the work folder holds (over TRANSCRIPTION_WORK_MAX_BYTES: fails at
 * once); media whose header gives no length is converted up to just past the bound and refused if it gets there.
 */
export async function convertAudio(
  d: TranscriptionDeps,
  input: RunRef & { media: string; mode: AudioMode; note?: StageNote },
): Promise<{ file: string; bytes: number; mode: string; reason: string }> {
  await begin(d, input, input.note);
  const ffmpeg = await d.tools.getFfmpeg();
  const bounds = mediaBounds(d.config.transcription);
  const work = runDir(d.config.dataDir, input.jobId, input.runId);
  const output = path.join(attemptDir(d, input, 'audio'), 'audio.wav');
  const current = { step: 'audio', folder: path.basename(path.dirname(output)) };
  const prepared = await withRunContext(d.config.transcription.mediaTimeoutMs, async (ctx, p) => {
    const seconds = await probeDuration(ffmpeg, abs(d, input.media), ctx);
    if (seconds !== undefined && seconds > bounds.maxDurationSeconds) throw mediaTooLong(seconds, bounds, 'ffprobe read it from the file');
    const wavBytes = Math.ceil(Math.min(seconds ?? bounds.maxDurationSeconds, bounds.maxDurationSeconds) * WAV_BYTES_PER_SECOND) + 44;
    // The media itself counts when it was downloaded into the folder (an upload lives in DATA_DIR/uploads).
    await checkWorkFolder(work, bounds, seconds === undefined ? 0 : wavBytes, 'the converted audio', current);
    return d.ffmpegSlots.run(ctx.signal, () => prepareAudio(ffmpeg, abs(d, input.media), output, input.mode, ctx, bounds.maxDurationSeconds + 1), (turn) => p.waiting(turn));
  });
  if ((prepared.bytes - 44) / WAV_BYTES_PER_SECOND > bounds.maxDurationSeconds) {
    await fs.rm(prepared.file, { force: true });
    throw mediaTooLong(undefined, bounds, 'measured while converting: the file did not say');
  }
  await checkWorkFolder(work, bounds, 0, 'the converted audio', current);
  await keepPlaybackCopy(d, input, ffmpeg, prepared.file);
  const applied = { appliedMode: prepared.mode, modeReason: prepared.reason };
  if (!(await updateForOwner(d.store, input, (tx) => tx.nativeUpdate(Transcription, { jobId: input.jobId }, applied)))) jobStopped();
  return { file: rel(d, prepared.file), bytes: prepared.bytes, mode: prepared.mode, reason: prepared.reason };
}

/**
 * The compressed copy the web page plays a segment from (transcription/playback.ts), made from the converted audio;
 * outside the work folder, so it stays with the job. A nicety: a failure is logged, the job goes on.
 */
async function keepPlaybackCopy(d: TranscriptionDeps, ref: RunRef, ffmpeg: Tool, wav: string): Promise<void> {
  try {
    await withRunContext(d.config.transcription.mediaTimeoutMs, (ctx, p) =>
      d.ffmpegSlots.run(ctx.signal, () => writePlaybackCopy(ffmpeg, wav, playbackDir(d.config.dataDir, ref.jobId), ctx), (turn) => p.waiting(turn)),
    );
  } catch (err) {
    d.log.warn('could not keep a playback copy of the audio', { jobId: ref.jobId, error: (err as Error).message });
  }
}

/**
 * One submission, with a fresh webhook token (its hash stored first, so a fast backend's call is recognised) and
 * a fresh multipart body and file stream. 503: `busy` with the Retry-After delay.
 *
 * Idempotent: once an attempt has recorded its backend job, a later attempt of the step answers that job instead
 * of submitting again. Temporal runs the step again when an attempt's completion could not reach it (the server,
 * or its database, away) even though the job was submitted and recorded; submitting again would rotate the token,
 * so the first job's result would be refused as stale and the audio transcribed twice. A retry of the job clears
 * the recorded job first (service.ts).
 */
export async function submitAudio(d: TranscriptionDeps, input: RunRef & { audio: string; note?: StageNote }): Promise<SubmitResult> {
  const endpoint = asrEndpoint(d);
  const submitted = (r: Transcription) => !!(r.asrJobId && r.submittedAt);
  // An earlier attempt's submission keeps the stage it reported (`transcribing`), not this step's.
  const row = await begin(d, input, (r) => (submitted(r) ? undefined : input.note));
  if (submitted(row)) {
    d.log.info('the backend job was already submitted by an earlier attempt', { jobId: input.jobId, asrJobId: row.asrJobId });
    return { kind: 'accepted', asrJobId: row.asrJobId! };
  }
  const token = newToken();
  // Only the owner's token counts: a late attempt of a replaced run must not unseat the current submission's.
  if (!(await updateForOwner(d.store, input, (tx) => tx.nativeUpdate(Transcription, { jobId: input.jobId }, { callbackTokenHash: hashToken(token) })))) jobStopped();
  const outcome = await withRunContext(d.config.transcription.mediaTimeoutMs, (ctx) =>
    submitJob(endpoint, {
      file: abs(d, input.audio),
      fileName: `${input.jobId}.wav`,
      contentType: 'audio/wav',
      callbackUrl: callbackUrl(d.config.publicBaseUrl, input.jobId, token),
      externalId: input.jobId,
      signal: ctx.signal,
      onProgress: (sent) => ctx.heartbeat(`${sent} bytes sent`),
    }),
  );
  if (outcome.kind === 'busy') {
    if (!(await countModelWait(d.store, input))) jobStopped();
    return outcome;
  }
  // The backend's id and the `transcribing` stage in one transaction: what the job shows is always consistent.
  // Answered even when this run no longer owns the job: the workflow then knows the backend job to cancel.
  await d.jobs.updateAsOwner(
    d.orm.em.fork(),
    input,
    (job) => ({ progress: Math.max(job.progress, 50), stage: 'transcribing', stageDetail: `The backend is transcribing (job ${outcome.asrJobId})` }),
    {
      within: async (tx) => {
        await tx.nativeUpdate(Transcription, { jobId: input.jobId }, { asrJobId: outcome.asrJobId, submittedAt: new Date() });
      },
    },
  );
  return outcome;
}

/** Follows the backend's model events until `ready`, or says why it stopped (the workflow then waits Retry-After). */
export async function awaitModel(
  d: TranscriptionDeps,
  input: RunRef & { maxWaitMs: number; note?: StageNote },
): Promise<{ outcome: ModelWaitOutcome; waitedMs: number }> {
  const endpoint = asrEndpoint(d);
  await begin(d, input, input.note);
  const t0 = Date.now();
  // Waiting, not working: heartbeats go on while the backend loads its model, up to maxWaitMs.
  const outcome = await withRunContext(input.maxWaitMs, (ctx, p) =>
    p.waiting(waitForModel(endpoint, { maxWaitMs: input.maxWaitMs, signal: ctx.signal, onMessage: (m) => ctx.heartbeat(m.data.slice(0, 200)) })),
  );
  return { outcome, waitedMs: Date.now() - t0 };
}

/**
 * Handles a webhook call the workflow matched to its submission: a backend failure fails the job; a result
 * finishes it (status processing at 90 first). Idempotent: a retried attempt after success changes nothing.
 */
export async function applyWebhook(
  d: TranscriptionDeps,
  input: RunRef & { deliveryId: string },
): Promise<CompleteOutcome | { result: 'failed'; error: string } | { result: 'ignored'; reason: string }> {
  const em = d.orm.em.fork();
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
    await markDelivery(d.orm.em, input.deliveryId, 'ignored', reason);
    return { result: 'stopped', reason };
  }
  const payload = delivery.payload ?? {};
  const meaning = classifyWebhook(payload);
  if (!meaning || meaning.kind === 'model-lifecycle' || meaning.kind === 'progress') {
    await markDelivery(d.orm.em, input.deliveryId, 'ignored', 'not a finished job');
    return { result: 'ignored', reason: 'not a finished job' };
  }
  if (meaning.kind === 'failed') {
    await failJob(d.store, { jobId: input.jobId, runId: input.runId, error: meaning.error, deliveryId: input.deliveryId, deliveryOutcome: 'applied' });
    return { result: 'failed', error: meaning.error };
  }
  await setStage(d.store, { ...input, progress: 90, stage: 'finalizing', stageDetail: 'Writing the transcript' });
  return completeTranscript(d.store, { ...input, source: 'asr', segments: payload.segments, deliveryId: input.deliveryId });
}

/** A webhook call whose handling failed: the job fails with the error, and the caller is answered 500. */
export async function failWebhook(d: TranscriptionDeps, input: RunRef & { deliveryId: string; error: string }): Promise<void> {
  await failJob(d.store, { jobId: input.jobId, runId: input.runId, error: input.error, deliveryId: input.deliveryId, deliveryOutcome: 'error' });
}

/** Webhook calls that change nothing: stale (another submission), replayed, or arriving after the end. */
export async function ignoreWebhooks(d: TranscriptionDeps, input: { deliveryIds: string[]; reason: string }): Promise<void> {
  for (const id of input.deliveryIds) await markDelivery(d.orm.em, id, 'ignored', input.reason);
}

/** `DELETE /jobs/:id` at the backend: best effort, never fails. */
export async function cancelBackend(d: TranscriptionDeps, input: { jobId: string; asrJobId: string }): Promise<{ ok: boolean; detail: string }> {
  const t = d.config.transcription;
  if (!t.asrBaseUrl) return { ok: false, detail: 'no backend configured' };
  const result = await cancelBackendJob({ baseUrl: t.asrBaseUrl, apiKey: t.asrApiKey }, input.asrJobId);
  d.log.info('asked the transcription backend to cancel', { jobId: input.jobId, asrJobId: input.asrJobId, result: result.detail });
  return result;
}

/**
 * The run's temporary files always go (its own folder only: a retry's new run may be working beside it); the
 * upload only once the job is done (a retry needs it otherwise).
 */
export async function cleanUp(d: TranscriptionDeps, input: { jobId: string; runId?: string }): Promise<{ removedUpload: boolean }> {
  const { dataDir } = d.config;
  if (input.runId) {
    await removeWorkFolder(runDir(dataDir, input.jobId, input.runId));
  } else {
    await fs.rm(workDir(dataDir, input.jobId), { recursive: true, force: true });
  }
  const job = await d.orm.em.fork().findOne(Job, { id: input.jobId });
  if (job?.status !== TRANSCRIPTION_STATUSES.done) return { removedUpload: false };
  await fs.rm(uploadDir(dataDir, input.jobId), { recursive: true, force: true });
  return { removedUpload: true };
}

/** The activities a transcription worker registers, under the names the workflows call. */
export function createTranscriptionActivities(deps: ActivityDeps) {
  const d = transcriptionDeps(deps);
  return {
    transcriptionCaptions: bindStep(d, findCaptions),
    transcriptionAcquireMedia: bindStep(d, acquireMedia),
    transcriptionPrepareAudio: bindStep(d, convertAudio),
    transcriptionSubmit: bindStep(d, submitAudio),
    transcriptionWaitForModel: bindStep(d, awaitModel),
    transcriptionApplyWebhook: bindStep(d, applyWebhook),
    transcriptionFailWebhook: bindStep(d, failWebhook),
    transcriptionIgnoreWebhooks: bindStep(d, ignoreWebhooks),
    transcriptionCancelBackend: bindStep(d, cancelBackend),
    transcriptionCleanup: bindStep(d, cleanUp),
    /** Synchronous backends (ASR_BACKEND openai, whisper-cpp, whisper-asr): transcription/sync-activities.ts. */
    ...syncTranscriptionActivities(d),
  };
}
export type TranscriptionActivities = ReturnType<typeof createTranscriptionActivities>;
