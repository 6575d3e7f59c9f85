/**
 * Calls shared by the items that wait for them. An item asked for while `maxCalls` calls are under way waits, and the
 * waiting items then go together, up to `maxBatch` a call: a worker that runs one call at a time answers a few items in
 * little more than the time of one, where a queue of single calls would make the last item wait for all (the vector
 * scan's passes, vectors.ts; a local model's runs, query-vectors.ts). An item asked for with fewer calls under way goes
 * at once. A call that fails fails its own items only.
 */
export class SharedCalls<I, O> {
  private readonly waiting: { item: I; resolve(out: O): void; reject(err: Error): void }[] = [];
  private calls = 0;

  constructor(
    /** One call: an answer per item, in order. */
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly maxBatch: number,
    private readonly maxCalls = 1,
  ) {}

  get(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.start();
    });
  }

  /** Sends the waiting items while fewer than maxCalls calls are under way. */
  private start(): void {
    while (this.waiting.length && this.calls < this.maxCalls) {
      const batch = this.waiting.splice(0, this.maxBatch);
      this.calls++;
      void this.call(batch).finally(() => {
        this.calls--;
        this.start();
      });
    }
  }

  private async call(batch: SharedCalls<I, O>['waiting']): Promise<void> {
    try {
      const out = await this.run(batch.map((w) => w.item));
      batch.forEach((w, i) => w.resolve(out[i]!));
    } catch (err) {
      for (const w of batch) w.reject(err as Error);
    }
  }
}
