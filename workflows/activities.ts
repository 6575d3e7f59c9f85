import {
  type ActivityInterfaceFor,
  type ActivityOptions,
  type LocalActivityInterfaceFor,
  type LocalActivityOptions,
  proxyActivities,
  proxyLocalActivities,
  sleep,
} from '@temporalio/workflow';
import { DATABASE_UNAVAILABLE, failureType } from '../jobs/contract.js';

/**
 * Activity proxies for job workflows: Temporal's, plus one rule for every step of every service. A step that failed
 * because PostgreSQL could not be reached (DATABASE_UNAVAILABLE, activities/outage.ts) is not a failure of the step:
 * it runs again once the database is back, after a growing wait (about 1 s doubling to 30 s), with all of its own
 * attempts. After DATABASE_WAIT_MAX_MS of waiting the failure goes through as any other.
 */
export function proxyJobActivities<A>(options: ActivityOptions): ActivityInterfaceFor<A> {
  return untilDatabase(proxyActivities<A>(options));
}

export function proxyLocalJobActivities<A>(options: LocalActivityOptions): LocalActivityInterfaceFor<A> {
  return untilDatabase(proxyLocalActivities<A>(options));
}

/** How long a job waits for PostgreSQL in all before the step fails. */
export const DATABASE_WAIT_MAX_MS = 30 * 60_000;

function untilDatabase<T extends object>(activities: T): T {
  return new Proxy(activities, {
    get(target, name) {
      const fn = Reflect.get(target, name) as unknown;
      if (typeof fn !== 'function') return fn;
      return async (...args: unknown[]) => {
        let waited = 0;
        for (let delay = 1000; ; delay = Math.min(delay * 2, 30_000)) {
          try {
            return await (fn as (...a: unknown[]) => Promise<unknown>)(...args);
          } catch (err) {
            if (failureType(err) !== DATABASE_UNAVAILABLE || waited >= DATABASE_WAIT_MAX_MS) throw err;
            // Jittered (Math.random is seeded per run in workflow code, so replays agree): when the database comes
            // back, the jobs that waited for it do not all ask at the same moment.
            const wait = Math.round(delay * (0.5 + Math.random()));
            await sleep(wait);
            waited += wait;
          }
        }
      };
    },
  });
}
