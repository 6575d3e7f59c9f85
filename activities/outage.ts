import { ApplicationFailure } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { isDatabaseUnavailable } from '../db/errors.js';
import { DATABASE_UNAVAILABLE } from '../jobs/contract.js';

/**
 * Every activity of every queue: a failure because PostgreSQL cannot be reached becomes DATABASE_UNAVAILABLE, not
 * retried by the activity's own policy, so an outage costs none of a step's attempts (a recipe phase's
 * QUEUE_RETRY_ATTEMPTS, a bookkeeping write's ten). The workflow waits for the database and runs the step again
 * (workflows/activities.ts). Other failures pass through as they are.
 */
export const databaseOutageInterceptor: ActivityInterceptorsFactory = () => ({
  inbound: {
    async execute(input, next) {
      try {
        return await next(input);
      } catch (err) {
        if (!isDatabaseUnavailable(err)) throw err;
        throw ApplicationFailure.create({
          message: `PostgreSQL cannot be reached: ${(err as Error).message}`,
          type: DATABASE_UNAVAILABLE,
          nonRetryable: true,
        });
      }
    },
  },
});
