import { describe, expect, it } from 'vitest';
import { type Cached, ScopeCache } from '../../../docindex/search/scope-cache.js';

const entry = (bytes: number): Cached & { disposed: boolean } => ({ bytes, disposed: false, dispose() { this.disposed = true; } });

describe('a scope cache', () => {
  it('keeps the least recently used entries within its bytes, and hands back one bigger than that without keeping it', async () => {
    const cache = new ScopeCache<ReturnType<typeof entry>>(100);
    const a = await cache.get('a|1', async () => entry(40));
    await cache.get('b|1', async () => entry(40));
    cache.peek('a|1');
    const c = await cache.get('c|1', async () => entry(40)); // b, the least recently used, goes
    expect(cache.peek('b|1')).toBeUndefined();
    expect([cache.peek('a|1'), cache.peek('c|1')]).toEqual([a, c]);
    const big = await cache.get('d|1', async () => entry(200));
    expect(big.bytes).toBe(200);
    expect(cache.peek('d|1')).toBeUndefined();
    await cache.get('a|2', async () => entry(10)); // a newer stamp drops the older
    expect(cache.peek('a|1')).toBeUndefined();
    expect(a.disposed).toBe(true);
  });

  it('loads at the first ask while less than half full, and after that at the second ask within ten minutes', async () => {
    const cache = new ScopeCache<ReturnType<typeof entry>>(100);
    expect(cache.wanted('x|1', 0)).toBe(true);
    await cache.get('a|1', async () => entry(60));
    expect(cache.wanted('x|1', 1000)).toBe(false); // a one-off query evicts nothing
    expect(cache.wanted('x|1', 2000)).toBe(true); // asked again: loaded
    expect(cache.wanted('y|1', 0)).toBe(false);
    expect(cache.wanted('y|1', 11 * 60_000)).toBe(false); // too long after: a first ask again
    expect(cache.wanted('y|1', 12 * 60_000)).toBe(true);
  });
});
