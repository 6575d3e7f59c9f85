import { ApplicationFailure } from '@temporalio/activity';
import { RecoverableError } from '../core/errors.js';

/**
 * A recoverable failure whose server said how long to wait (Retry-After) becomes a Temporal failure whose next
 * attempt waits that long, at most `maxMs`; anything else is thrown as it is (and retried by the policy's backoff).
 */
export function retryLater(err: unknown, maxMs: number): unknown {
  if (err instanceof RecoverableError && err.retryAfterMs !== undefined) {
    return ApplicationFailure.create({
      message: err.message,
      type: 'RecoverableError',
      nextRetryDelay: Math.min(Math.max(0, err.retryAfterMs), maxMs),
    });
  }
  return err;
}
