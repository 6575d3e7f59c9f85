import type { RetryPolicy } from '@temporalio/common';

/**
 * The one retry policy family. Activity retries are unlimited by default (docs/jobs.md, "Activities"), so every proxy
 * names one of these.
 */

/** Bookkeeping writes to Postgres: retried briefly, they only fail while the database is down. */
export const JOB_ACTIVITY_RETRY: RetryPolicy = {
  initialInterval: '500 milliseconds',
  backoffCoefficient: 2,
  maximumInterval: '10 seconds',
  maximumAttempts: 10,
};

/**
 * Calls to third-party services (git hosts, ASR, LLM, recipe managers): longer backoff, bounded attempts. The first
 * backoff (1 s by default, doubling up to a minute) is an input where a setting chooses it (docs/jobs.md, "Workflow code").
 */
export function externalCallRetry(maximumAttempts: number, opts: { initialIntervalMs?: number } = {}): RetryPolicy {
  const initial = opts.initialIntervalMs ?? 1000;
  return {
    initialInterval: initial,
    backoffCoefficient: 2,
    maximumInterval: Math.max(initial, 60_000),
    maximumAttempts,
    nonRetryableErrorTypes: ['PermanentError'],
  };
}
