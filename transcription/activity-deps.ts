import path from 'node:path';
import { Context } from '@temporalio/activity';
import type { ActivityDeps } from '../activities/deps.js';
import { type Progress, withProgress } from '../activities/heartbeat.js';
import { Job } from '../db/entities/job.js';
import { jobStopped, owns } from '../jobs/ownership.js';
import { type OutboundGuard, outboundGuard } from '../outbound/guard.js';
import { Tools } from '../core/tools.js';
import type { RunRef, StageNote } from './contract.js';
import type { Transcription } from './entities.js';
import { type RunContext, Semaphore } from './media.js';
import { runDir } from './paths.js';
import { loadTranscription, setStage, type StoreDeps } from './results.js';

/**
 * What the transcription steps (transcription/activities.ts, sync-activities.ts) are given, and the helpers they
 * share. The steps are plain functions of these dependencies and their input; the activity factories only bind
 * them (Temporal's activities-dependency-injection sample).
 */
export interface TranscriptionDeps extends Pick<ActivityDeps, 'config' | 'orm' | 'jobs' | 'log'> {
  store: StoreDeps;
  tools: Tools;
  /** Bounds the CPU-bound ffmpeg runs of this worker process (transcription/media.ts). */
  ffmpegSlots: Semaphore;
  /** A URL job's address is a user's: refused before yt-dlp runs, and yt-dlp connects through the guard's proxy. */
  guard: OutboundGuard;
}

/** Built once per worker: the tools, the ffmpeg slots and the guard are shared by every activity it runs. */
export function transcriptionDeps({ config, orm, jobs, log }: ActivityDeps): TranscriptionDeps {
  const t = config.transcription;
  return {
    config,
    orm,
    jobs,
    log,
    store: { config, jobs, em: () => orm.em.fork() },
    tools: new Tools(log.child('tools'), { ffmpegPath: t.ffmpegPath, ytdlpPath: t.ytdlpPath }),
    ffmpegSlots: new Semaphore(t.ffmpegConcurrency),
    guard: outboundGuard(config),
  };
}

/**
 * Refuses to go on for a job this run no longer owns (cancelled, or retried), then reports the step's stage (`note`,
 * or what it answers for the job's row: a step that finds its work already done reports none). Answers the job's row.
 */
export async function begin(d: TranscriptionDeps, ref: RunRef, note?: StageNote | ((row: Transcription) => StageNote | undefined)): Promise<Transcription> {
  const em = d.orm.em.fork();
  const job = await em.findOne(Job, { id: ref.jobId });
  if (!job || !owns(job, ref.runId)) jobStopped();
  const row = await loadTranscription(em, ref.jobId);
  const stage = typeof note === 'function' ? note(row) : note;
  if (stage && (job.stage !== stage.stage || job.stageDetail !== stage.stageDetail || job.progress < stage.progress)) {
    if (!(await setStage(d.store, { ...ref, ...stage }))) jobStopped();
  }
  return row;
}

/**
 * A media step's context (activities/heartbeat.ts): its heartbeats carry its progress (a tool's output, bytes
 * sent) with what a retried attempt resumes from (`checkpoint`), and a step that stops moving is stopped.
 */
export function withRunContext<T>(timeoutMs: number, fn: (ctx: RunContext, p: Progress) => Promise<T>): Promise<T> {
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

/** What the path helpers need of the dependencies. */
type DataDir = { config: { dataDir: string } };

/**
 * This attempt's own folder, under its run's (transcription/paths.ts): nothing another attempt or run does can
 * delete the files this one works on (docs/jobs.md, "Work folders").
 */
export function attemptDir(d: DataDir, ref: RunRef, step: string): string {
  return path.join(runDir(d.config.dataDir, ref.jobId, ref.runId), `${step}-${Context.current().info.attempt}`);
}

/** Files travel between steps (their inputs and answers) as paths relative to DATA_DIR. */
export const rel = (d: DataDir, file: string) => path.relative(d.config.dataDir, file);
export const abs = (d: DataDir, file: string) => path.resolve(d.config.dataDir, file);

/** A step with its dependencies bound: the activity function a factory hands to Temporal. */
export function bindStep<I, O>(d: TranscriptionDeps, step: (d: TranscriptionDeps, input: I) => Promise<O>): (input: I) => Promise<O> {
  return (input) => step(d, input);
}
