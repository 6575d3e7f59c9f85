/** What a ScopeCache holds: its size, and what to let go of when it is dropped. */
export interface Cached {
  readonly bytes: number;
  dispose(): void;
}

/** How long a first ask is remembered for `wanted`; at most ASKED_MAX keys are. */
const ADMIT_WINDOW_MS = 10 * 60_000;
const ASKED_MAX = 10_000;

/**
 * A process's in-memory structures built from one library scope (vector matrices, keyword indexes), keyed
 * `<scope>|<stamp>`: the stamp changes whenever a re-index changes the scope, and a newer stamp's entry drops the older
 * ones of its scope. Least recently used entries are dropped once the entries together exceed `maxBytes`; one bigger
 * than that is handed to its caller and not kept. Concurrent requests for a key share one load.
 */
export class ScopeCache<T extends Cached> {
  private readonly entries = new Map<string, T>();
  private readonly loading = new Map<string, Promise<T>>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  /** The entry if it is loaded, without waiting; undefined otherwise. */
  peek(key: string): T | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key); // re-insert: Map order is the recency order
      this.entries.set(key, hit);
    }
    return hit;
  }

  /**
   * Whether a key that is not loaded should be loaded now, for a caller that can do without it (keyword search
   * answers in SQL meanwhile): always while the cache is less than half full; after that only when the key was
   * asked for before, within ADMIT_WINDOW_MS. A query to a scope nobody asks for again then evicts nothing, and a
   * stream of queries over more scopes than fit does not load (and evict) on every one of them.
   */
  wanted(key: string, now = Date.now()): boolean {
    if (this.bytes < this.maxBytes / 2) return true;
    const seen = this.asked.get(key);
    this.asked.delete(key);
    if (seen !== undefined && now - seen < ADMIT_WINDOW_MS) return true;
    this.asked.set(key, now);
    if (this.asked.size > ASKED_MAX) this.asked.delete(this.asked.keys().next().value!);
    return false;
  }

  private readonly asked = new Map<string, number>();

  /** Whether a load of `key` is running. */
  isLoading(key: string): boolean {
    return this.loading.has(key);
  }

  /** How many loads are running. */
  get loads(): number {
    return this.loading.size;
  }

  /** Settles when the loads running now have (failed ones included). */
  async settled(): Promise<void> {
    await Promise.allSettled(this.loading.values());
  }

  async get(key: string, load: () => Promise<T>): Promise<T> {
    const hit = this.peek(key);
    if (hit) return hit;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = load().finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
      const loaded = await pending;
      // Older stamps of the same scope are dead weight.
      const scope = key.slice(0, key.lastIndexOf('|'));
      for (const [k, e] of this.entries) {
        if (k.slice(0, k.lastIndexOf('|')) === scope) this.drop(k, e);
      }
      if (loaded.bytes <= this.maxBytes) {
        this.entries.set(key, loaded);
        this.bytes += loaded.bytes;
        for (const [k, e] of this.entries) {
          if (this.bytes <= this.maxBytes) break;
          this.drop(k, e);
        }
      }
      return loaded;
    }
    return pending;
  }

  private drop(key: string, e: T): void {
    this.entries.delete(key);
    this.bytes -= e.bytes;
    e.dispose();
  }

  clear(): void {
    for (const [k, e] of this.entries) this.drop(k, e);
  }
}
