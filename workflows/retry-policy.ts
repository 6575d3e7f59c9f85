import type { RetryPolicy } from '@temporalio/common';

/**
 * The one retry policy family. Activity retries are unlimited by default (engineering note 3), so every proxy
 * names one of these.
 */

/** Bookkeeping writes to Postgres: retried briefly, they only fail while the database is down. */
export const JOB_ACTIVITY_RETRY: RetryPolicy = {
  initialInterval: '500 milliseconds',
  backoffCoefficient: 2,
  maximumInterval: '10 seconds',
  maximumAttempts: 10,
};

/** Calls to third-party services (git hosts, ASR, LLM, recipe managers): longer backoff, bounded attempts. */
export function externalCallRetry(maximumAttempts: number): RetryPolicy {
  return {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts,
    nonRetryableErrorTypes: ['PermanentError'],
  };
}
