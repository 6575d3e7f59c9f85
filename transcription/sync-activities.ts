import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../core/config.js';
import { PermanentError } from '../core/errors.js';
import type { Segment } from './transcripts/segments.js';
import { Job } from '../db/entities/job.js';
import { jobStopped } from '../jobs/ownership.js';
import type { Transcription } from './entities.js';
import type { Orm } from '../db/orm.js';
import type { Tools } from '../runtime/tools.js';
import { backendLabel, syncBackend } from './backends/index.js';
import type { SyncBackend } from './backends/types.js';
import type { SyncBackendKind } from './contract.js';
import { type ChunkTranscript, stitchChunks } from './backends/segments.js';
import { detectSilences, maxChunkSeconds, planChunks, readWavInfo, writeChunks } from './chunks.js';
import { TRANSCRIPTION_STATUSES } from './kind.js';
import type { RunContext, Semaphore } from './media.js';
import { completeTranscript, type CompleteOutcome, countModelWait, loadTranscription, setStage, type StoreDeps } from './results.js';
import type { Progress } from '../activities/heartbeat.js';
import { retryLater } from '../activities/retry-later.js';
import type { RunRef, StageNote } from './activities.js';

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

/** What the transcription activities share with these (transcription/activities.ts). */
export interface SyncActivityDeps {
  config: Config;
  orm: Orm;
  store: StoreDeps;
  tools: Tools;
  ffmpegSlots: Semaphore;
  /** Refuses a job this run no longer owns, reports the step's stage, answers the job's row. */
  begin(ref: RunRef, note?: StageNote): Promise<Transcription>;
  withRunContext<T>(timeoutMs: number, fn: (ctx: RunContext, p: Progress) => Promise<T>): Promise<T>;
  /** This attempt's own folder for a step (nothing another attempt or run does deletes it). */
  attemptDir(ref: RunRef, step: string): string;
  rel(file: string): string;
  abs(file: string): string;
}

export function syncTranscriptionActivities(d: SyncActivityDeps) {
  const t = d.config.transcription;

  /** The worker's backend, which must be the one the job was started for (the API and the workers share settings). */
  function backendFor(kind: SyncBackendKind): SyncBackend {
    if (t.asrBackend !== kind) {
      throw new PermanentError(
        `The job was started for ASR_BACKEND=${kind}, but this worker has ASR_BACKEND=${t.asrBackend}: give the API and the workers the same settings, then retry the job`,
      );
    }
    return syncBackend(t);
  }

  return {
    /**
     * The prepared audio as chunks of at most ASR_CHUNK_MAX_BYTES: the file itself when it fits, otherwise WAV files
     * cut at silences (ffmpeg `silencedetect`) in this attempt's own `chunks` folder, beside which their results
     * are kept.
     */
    async transcriptionSplitAudio(
      input: RunRef & { audio: string; backend: SyncBackendKind; note?: StageNote },
    ): Promise<{ chunks: SyncChunk[]; label: string }> {
      backendFor(input.backend);
      await d.begin(input, input.note);
      const source = d.abs(input.audio);
      const dir = d.attemptDir(input, 'chunks');
      await fs.mkdir(dir, { recursive: true });
      const info = await readWavInfo(source);
      const { size } = await fs.stat(source);
      const result = (i: number) => d.rel(path.join(dir, `chunk-${String(i).padStart(3, '0')}.json`));
      const label = backendLabel(t);
      if (size <= t.asrChunkMaxBytes) {
        return { chunks: [{ file: input.audio, result: result(0), start: 0, seconds: info.seconds, bytes: size }], label };
      }
      const ffmpeg = await d.tools.getFfmpeg();
      // Waiting for an ffmpeg slot, or copying the chunks out, is not being stuck: heartbeats go on meanwhile.
      const silences = await d.withRunContext(t.mediaTimeoutMs, (ctx, p) =>
        d.ffmpegSlots.run(ctx.signal, () => detectSilences(ffmpeg, source, info.seconds, ctx), (turn) => p.waiting(turn)),
      );
      const plan = planChunks(info.seconds, silences, maxChunkSeconds(info, t.asrChunkMaxBytes));
      const written = await d.withRunContext(t.mediaTimeoutMs, (_ctx, p) => p.waiting(writeChunks(source, info, plan, dir)));
      return { chunks: written.map((c, i) => ({ file: d.rel(c.file), result: result(i), start: c.start, seconds: c.seconds, bytes: c.bytes })), label };
    },

    /**
     * One chunk to the backend (a fresh multipart body and file stream per attempt). Its segments are kept in the
     * chunk's result file; a chunk that already has one is not sent again. 503: `busy` (the job shows it is
     * waiting for the model) and the workflow sends it again after Retry-After; 429 and 5xx are retried by
     * Temporal after Retry-After; other 4xx fail the job.
     */
    async transcriptionTranscribeChunk(
      input: RunRef & { chunk: SyncChunk; index: number; count: number; backend: SyncBackendKind; note?: StageNote },
    ): Promise<ChunkOutcome> {
      const backend = backendFor(input.backend);
      await d.begin(input, input.note);
      const resultFile = d.abs(input.chunk.result);
      const kept = await readChunkResult(resultFile, input.chunk);
      if (kept) return { kind: 'done', segments: kept.segments.length };
      const name = input.count > 1 ? `${input.jobId}-${input.index + 1}.wav` : `${input.jobId}.wav`;
      let outcome;
      try {
        // The server answers only when the chunk is transcribed: waiting, not stalled (the request has its own timeout).
        outcome = await d.withRunContext(t.mediaTimeoutMs, (ctx, p) =>
          p.waiting(backend.transcribe({ path: d.abs(input.chunk.file), name, seconds: input.chunk.seconds }, { signal: ctx.signal, timeoutMs: t.mediaTimeoutMs })),
        );
      } catch (err) {
        // Temporal's next attempt waits for the server's Retry-After, at most as long as a model wait.
        throw retryLater(err, t.modelWaitMaxMs);
      }
      if (outcome.kind === 'busy') {
        if (!(await countModelWait(d.store, input))) jobStopped();
        const which = input.count > 1 ? `chunk ${input.index + 1} of ${input.count}` : 'the audio';
        const shown = await setStage(d.store, {
          ...input,
          stage: 'waiting-for-model',
          stageDetail: `The backend is loading its model or busy (503); sending ${which} again in ${Math.round(Math.min(outcome.retryAfterMs, t.modelWaitMaxMs) / 1000)} s`,
        });
        if (!shown) jobStopped();
        return outcome;
      }
      const transcript: KeptTranscript = { start: input.chunk.start, seconds: input.chunk.seconds, bytes: input.chunk.bytes, segments: outcome.segments };
      // A name of this attempt's own: an earlier attempt still finishing must not write into this one's file.
      const part = `${resultFile}.${randomBytes(4).toString('hex')}.part`;
      await fs.writeFile(part, JSON.stringify(transcript));
      await fs.rename(part, resultFile);
      return { kind: 'done', segments: outcome.segments.length };
    },

    /** Every chunk's segments, moved to their place in the whole audio, become the transcript: the job is done. */
    async transcriptionFinishChunks(input: RunRef & { chunks: SyncChunk[]; note?: StageNote }): Promise<CompleteOutcome> {
      const job = await d.orm.em.fork().findOne(Job, { id: input.jobId });
      if (job?.status === TRANSCRIPTION_STATUSES.done && job.runId === input.runId) {
        // An earlier attempt finished the job and its answer was lost: the same answer.
        const row = await loadTranscription(d.orm.em, input.jobId);
        return { result: 'done', title: row.title, segmentCount: row.segmentCount ?? 0 };
      }
      await d.begin(input, input.note);
      const parts: ChunkTranscript[] = [];
      for (const chunk of input.chunks) {
        const part = await readChunkResult(d.abs(chunk.result), chunk);
        if (!part) throw new PermanentError(`The transcript of a chunk is missing from the work folder (${chunk.result}); retry the job`);
        parts.push(part);
      }
      return completeTranscript(d.store, { ...input, source: 'asr', segments: stitchChunks(parts) });
    },
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
