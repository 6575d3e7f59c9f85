import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { PermanentError } from '../core/errors.js';
import type { Segment } from './transcripts/segments.js';
import { Job } from '../db/entities/job.js';
import { jobStopped } from '../jobs/ownership.js';
import { abs, attemptDir, begin, bindStep, rel, type TranscriptionDeps, withRunContext } from './activity-deps.js';
import { backendLabel, syncBackend } from './backends/index.js';
import { type ChunkTranscript, stitchChunks } from './backends/segments.js';
import type { SyncBackend } from './backends/types.js';
import { detectSilences, maxChunkSeconds, planChunks, readWavInfo, writeChunks } from './chunks.js';
import type { RunRef, StageNote, SyncBackendKind } from './contract.js';
import { TRANSCRIPTION_STATUSES } from './kind.js';
import { completeTranscript, type CompleteOutcome, countModelWait, loadTranscription, setStage } from './results.js';
import { retryLater } from '../activities/retry-later.js';
import { checkWorkFolder, mediaBounds } from './bounds.js';
import { runDir } from './paths.js';

/**
 * The steps of a transcription by a synchronous backend (ASR_BACKEND `openai`, `whisper-cpp`, `whisper-asr`;
 * transcription/sync-workflow.ts runs them): split the prepared audio into chunks under ASR_CHUNK_MAX_BYTES at
 * silences, send each chunk in a heartbeating activity (cancelling the job aborts the request in flight), keep
 * each chunk's segments in the run's work folder, then stitch them into the transcript.
 */
export interface SyncChunk {
  /** The chunk's audio and where its segments are kept, relative to DATA_DIR. */
  file: string;
  result: string;
  /** Seconds from the start of the whole audio, and the chunk's length. */
  start: number;
  seconds: number;
  bytes: number;
}

export type ChunkOutcome = { kind: 'done'; segments: number } | { kind: 'busy'; retryAfterMs: number };

/** The worker's backend, which must be the one the job was started for (the API and the workers share settings). */
function backendFor(d: TranscriptionDeps, kind: SyncBackendKind): SyncBackend {
  const t = d.config.transcription;
  if (t.asrBackend !== kind) {
    throw new PermanentError(
      `The job was started for ASR_BACKEND=${kind}, but this worker has ASR_BACKEND=${t.asrBackend}: give the API and the workers the same settings, then retry the job`,
    );
  }
  return syncBackend(t);
}

/**
 * The prepared audio as chunks of at most ASR_CHUNK_MAX_BYTES: the file itself when it fits, otherwise WAV files
 * cut at silences (ffmpeg `silencedetect`) in this attempt's own `chunks` folder, beside which their results are
 * kept.
 */
export async function splitAudio(
  d: TranscriptionDeps,
  input: RunRef & { audio: string; backend: SyncBackendKind; note?: StageNote },
): Promise<{ chunks: SyncChunk[]; label: string }> {
  const t = d.config.transcription;
  backendFor(d, input.backend);
  await begin(d, input, input.note);
  const source = abs(d, input.audio);
  const dir = attemptDir(d, input, 'chunks');
  await fs.mkdir(dir, { recursive: true });
  const info = await readWavInfo(source);
  const { size } = await fs.stat(source);
  const result = (i: number) => rel(d, path.join(dir, `chunk-${String(i).padStart(3, '0')}.json`));
  const label = backendLabel(t);
  if (size <= t.asrChunkMaxBytes) {
    return { chunks: [{ file: input.audio, result: result(0), start: 0, seconds: info.seconds, bytes: size }], label };
  }
  // The chunks are a second copy of the audio.
  const current = { step: 'chunks', folder: path.basename(dir) };
  await checkWorkFolder(runDir(d.config.dataDir, input.jobId, input.runId), mediaBounds(d.config.transcription), size, 'splitting the audio into chunks', current);
  const ffmpeg = await d.tools.getFfmpeg();
  // Waiting for an ffmpeg slot, or copying the chunks out, is not being stuck: heartbeats go on meanwhile.
  const silences = await withRunContext(t.mediaTimeoutMs, (ctx, p) =>
    d.ffmpegSlots.run(ctx.signal, () => detectSilences(ffmpeg, source, info.seconds, ctx), (turn) => p.waiting(turn)),
  );
  const plan = planChunks(info.seconds, silences, maxChunkSeconds(info, t.asrChunkMaxBytes));
  const written = await withRunContext(t.mediaTimeoutMs, (_ctx, p) => p.waiting(writeChunks(source, info, plan, dir)));
  return { chunks: written.map((c, i) => ({ file: rel(d, c.file), result: result(i), start: c.start, seconds: c.seconds, bytes: c.bytes })), label };
}

type ChunkInput = RunRef & { chunk: SyncChunk; index: number; count: number; backend: SyncBackendKind; note?: StageNote };

/**
 * One chunk to the backend (a fresh multipart body and file stream per attempt). Its segments are kept in the
 * chunk's result file; a chunk that already has one is not sent again. 503: `busy` (the job shows it is waiting
 * for the model) and the workflow sends it again after Retry-After; 429 and 5xx are retried by Temporal after
 * Retry-After; other 4xx fail the job.
 */
export async function transcribeChunk(d: TranscriptionDeps, input: ChunkInput): Promise<ChunkOutcome> {
  const t = d.config.transcription;
  const backend = backendFor(d, input.backend);
  await begin(d, input, input.note);
  const resultFile = abs(d, input.chunk.result);
  const kept = await readChunkResult(resultFile, input.chunk);
  if (kept) return { kind: 'done', segments: kept.segments.length };
  const name = input.count > 1 ? `${input.jobId}-${input.index + 1}.wav` : `${input.jobId}.wav`;
  let outcome;
  try {
    // The server answers only when the chunk is transcribed: waiting, not stalled (the request has its own timeout).
    outcome = await withRunContext(t.mediaTimeoutMs, (ctx, p) =>
      p.waiting(backend.transcribe({ path: abs(d, input.chunk.file), name, seconds: input.chunk.seconds }, { signal: ctx.signal, timeoutMs: t.mediaTimeoutMs })),
    );
  } catch (err) {
    // Temporal's next attempt waits for the server's Retry-After, at most as long as a model wait.
    throw retryLater(err, t.modelWaitMaxMs);
  }
  if (outcome.kind === 'busy') {
    await showBusy(d, input, outcome.retryAfterMs);
    return outcome;
  }
  const transcript: KeptTranscript = { start: input.chunk.start, seconds: input.chunk.seconds, bytes: input.chunk.bytes, segments: outcome.segments };
  // A name of this attempt's own: an earlier attempt still finishing must not write into this one's file.
  const part = `${resultFile}.${randomBytes(4).toString('hex')}.part`;
  await fs.writeFile(part, JSON.stringify(transcript));
  await fs.rename(part, resultFile);
  return { kind: 'done', segments: outcome.segments.length };
}

/** The backend answered 503: counted on the job, whose stage says when the chunk is sent again. */
async function showBusy(d: TranscriptionDeps, input: ChunkInput, retryAfterMs: number): Promise<void> {
  if (!(await countModelWait(d.store, input))) jobStopped();
  const which = input.count > 1 ? `chunk ${input.index + 1} of ${input.count}` : 'the audio';
  const seconds = Math.round(Math.min(retryAfterMs, d.config.transcription.modelWaitMaxMs) / 1000);
  const shown = await setStage(d.store, {
    ...input,
    stage: 'waiting-for-model',
    stageDetail: `The backend is loading its model or busy (503); sending ${which} again in ${seconds} s`,
  });
  if (!shown) jobStopped();
}

/** Every chunk's segments, moved to their place in the whole audio, become the transcript: the job is done. */
export async function finishChunks(d: TranscriptionDeps, input: RunRef & { chunks: SyncChunk[]; note?: StageNote }): Promise<CompleteOutcome> {
  const job = await d.orm.em.fork().findOne(Job, { id: input.jobId });
  if (job?.status === TRANSCRIPTION_STATUSES.done && job.runId === input.runId) {
    // An earlier attempt finished the job and its answer was lost: the same answer.
    const row = await loadTranscription(d.orm.em, input.jobId);
    return { result: 'done', title: row.title, segmentCount: row.segmentCount ?? 0 };
  }
  await begin(d, input, input.note);
  const parts: ChunkTranscript[] = [];
  for (const chunk of input.chunks) {
    const part = await readChunkResult(abs(d, chunk.result), chunk);
    if (!part) throw new PermanentError(`The transcript of a chunk is missing from the work folder (${chunk.result}); retry the job`);
    parts.push(part);
  }
  return completeTranscript(d.store, { ...input, source: 'asr', segments: stitchChunks(parts) });
}

/** The synchronous backends' activities, under the names transcription/sync-workflow.ts calls. */
export function syncTranscriptionActivities(d: TranscriptionDeps) {
  return {
    transcriptionSplitAudio: bindStep(d, splitAudio),
    transcriptionTranscribeChunk: bindStep(d, transcribeChunk),
    transcriptionFinishChunks: bindStep(d, finishChunks),
  };
}

/** A chunk's segments as kept, with the chunk they are for. */
interface KeptTranscript extends ChunkTranscript {
  seconds: number;
  bytes: number;
}

/**
 * The segments kept for `chunk`; undefined when there are none, or the file does not describe this chunk (damaged,
 * or written for another cut of the audio), so the chunk is sent again rather than trusted.
 */
async function readChunkResult(file: string, chunk: Pick<SyncChunk, 'start' | 'seconds' | 'bytes'>): Promise<ChunkTranscript | undefined> {
  let kept: Partial<KeptTranscript>;
  try {
    kept = JSON.parse(await fs.readFile(file, 'utf8')) as Partial<KeptTranscript>;
  } catch {
    return undefined;
  }
  if (kept.start !== chunk.start || kept.seconds !== chunk.seconds || kept.bytes !== chunk.bytes || !Array.isArray(kept.segments)) return undefined;
  return { start: kept.start, segments: kept.segments as Segment[] };
}
