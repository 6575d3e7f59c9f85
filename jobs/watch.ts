import type { EventHub } from './hub.js';

/**
 * Waits for something about a job: `probe` runs now, again whenever the job's stream has news, and every `pollMs`
 * as a fallback (a NOTIFY missed while the hub reconnects). Returns the value of the probe that said `done`, or of
 * the last one when the deadline passes or `signal` aborts.
 */
export async function watchJob<T>(
  hub: EventHub,
  jobId: string,
  probe: () => Promise<{ done: boolean; value: T }>,
  opts: { timeoutMs: number; pollMs: number; signal?: AbortSignal },
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let wake: () => void = () => undefined;
  const sub = await hub.subscribe(`job:${jobId}`, () => wake()).catch(() => undefined);
  const onAbort = () => wake();
  opts.signal?.addEventListener('abort', onAbort);
  try {
    for (;;) {
      const { done, value } = await probe();
      const left = deadline - Date.now();
      if (done || left <= 0 || opts.signal?.aborted) return value;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, opts.pollMs));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    sub?.close();
  }
}
