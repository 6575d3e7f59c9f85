import { Context } from '@temporalio/activity';

/** A step that made no progress for its heartbeat timeout: hung (a git, ffmpeg or HTTP call that never returns). */
export class StalledError extends Error {
  constructor(ms: number) {
    super(`No progress for ${Math.round(ms / 1000)} s: the step seems hung, so it was stopped (it is tried again)`);
    this.name = 'StalledError';
  }
}

/** What a long step reports while it works (docs/jobs.md, "Heartbeats"). */
export interface Progress {
  /** Aborted when the activity is cancelled, or when the step has not moved for its heartbeat timeout. */
  readonly signal: AbortSignal;
  /** This attempt's number (1 for the first). */
  readonly attempt: number;
  /** What the previous attempt last reported, to resume from; undefined on a first attempt. */
  readonly resumeFrom: unknown;
  /** The step moved on: `details` (files parsed, bytes converted, bytes sent) go to Temporal with a heartbeat. */
  moved(details?: unknown): void;
  /** Awaits something that takes long without moving (a model loading): heartbeats go on meanwhile. */
  waiting<T>(work: Promise<T>): Promise<T>;
}

/**
 * Runs a long step with heartbeats that prove work moves, not just that the process lives. Every `moved()` call is a
 * heartbeat carrying its details (Temporal sends the latest at most every 80% of the heartbeat timeout). A step that
 * stops moving sends nothing: Temporal times the attempt out after the activity's heartbeat timeout and runs it on
 * another worker (a killed or frozen worker), and here the step's signal aborts after the same time without a move,
 * so a hung tool is killed and its request ended instead of holding the worker (StalledError, retried).
 */
export async function withProgress<T>(fn: (p: Progress) => Promise<T>): Promise<T> {
  const c = Context.current();
  const timeoutMs = c.info.heartbeatTimeoutMs ?? 0;
  const stalled = new AbortController();
  const signal = AbortSignal.any([c.cancellationSignal, stalled.signal]);
  let details: unknown = undefined;
  let lastMove = Date.now();
  let waits = 0;
  const timer = timeoutMs
    ? setInterval(() => {
        if (waits > 0) c.heartbeat(details);
        else if (Date.now() - lastMove >= timeoutMs) stalled.abort(new StalledError(Date.now() - lastMove));
      }, Math.max(200, timeoutMs / 4))
    : undefined;
  const progress: Progress = {
    signal,
    attempt: c.info.attempt,
    resumeFrom: c.info.heartbeatDetails,
    moved(d) {
      if (d !== undefined) details = d;
      lastMove = Date.now();
      c.heartbeat(details);
    },
    async waiting(work) {
      waits++;
      c.heartbeat(details);
      try {
        return await work;
      } finally {
        waits--;
        lastMove = Date.now();
      }
    },
  };
  try {
    return await fn(progress);
  } catch (err) {
    // The tool or request saw only "aborted": say why.
    if (stalled.signal.aborted && !c.cancellationSignal.aborted) throw stalled.signal.reason as Error;
    throw err;
  } finally {
    clearInterval(timer);
  }
}

/**
 * Runs a step that has no progress to show (a swap in PostgreSQL, a provider that bounds its own requests) with
 * liveness heartbeats while this worker lives: a killed worker, or a result the Temporal server could not take (it
 * was down as the step ended), is noticed within the heartbeat timeout, not the start-to-close timeout
 * (docs/jobs.md, "Heartbeats and progress").
 */
export function alive<T>(fn: (p: Progress) => Promise<T>): Promise<T> {
  return withProgress((p) => p.waiting(fn(p)));
}
