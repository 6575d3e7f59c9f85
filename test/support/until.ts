/**
 * Polls `read` until `done` holds, and returns that value; after `timeoutMs` it fails, naming `what` and the last
 * value read. Every "wait for a job, an item, an event" helper of the tests is this loop.
 */
export async function until<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${opts.what ?? 'condition'} not met in time; last value ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
  }
}
