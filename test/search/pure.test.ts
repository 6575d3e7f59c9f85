import { describe, expect, it } from 'vitest';
import { applyBudget, contextParams } from '../../search/context.js';
import { context7LibraryId } from '../../search/context7.js';
import { parseQuery, splitIdentifiers } from '../../search/keyword.js';
import { fuse } from '../../search/search.js';
import { Matrix, normalise, topK, VectorCache } from '../../search/vectors.js';

describe('search helpers', () => {
  it('splits identifiers like the SQL does', () => {
    expect(splitIdentifiers('useEffect snake_case Foo.bar HTTPServer')).toBe('use Effect snake case Foo bar HTTP Server');
  });

  it('parses web-search syntax and drops stop words', () => {
    expect(parseQuery('how do I use the "data cache" -legacy or router')).toEqual({ include: ['data cache', 'router'], exclude: ['legacy'] });
    expect(parseQuery('how to')).toEqual({ include: ['how', 'to'], exclude: [] });
    expect(parseQuery('!!! ---')).toEqual({ include: [], exclude: [] });
  });

  it('fuses by weighted reciprocal rank; alpha 0 and 1 are one list alone; ties by id', () => {
    const kw = [{ id: 'a', score: 3 }, { id: 'b', score: 2 }];
    const sem = [{ id: 'c', score: 0.9 }, { id: 'a', score: 0.8 }];
    expect(fuse(kw, sem, 0, 10).map((r) => r.id)).toEqual(['a', 'b']);
    expect(fuse(kw, sem, 1, 10).map((r) => r.id)).toEqual(['c', 'a']);
    expect(fuse(kw, sem, 0.5, 10).map((r) => r.id)).toEqual(['a', 'c', 'b']); // c is rank 1 of semantic, b rank 2 of keyword
    expect(fuse([{ id: 'y', score: 1 }], [{ id: 'x', score: 1 }], 0.5, 10).map((r) => r.id)).toEqual(['x', 'y']);
  });

  it('applies the budget: the first is always kept, then while they fit', () => {
    const s = [{ tokenCount: 50 }, { tokenCount: 30 }, { tokenCount: 30 }];
    expect(applyBudget(s, undefined)).toHaveLength(3);
    expect(applyBudget(s, 10)).toHaveLength(1);
    expect(applyBudget(s, 80)).toHaveLength(2);
  });

  it('coerces context parameters as spec 1 says', () => {
    expect(contextParams({ libraryId: '/a/b', query: 'q' })).toEqual({ libraryId: '/a/b', query: 'q', type: 'json', tokens: 10000, tokensGiven: false, searchMode: 'auto', alpha: 0.5 });
    expect(contextParams({ type: 'TXT', tokens: '0', searchMode: 'x', alpha: '2' })).toMatchObject({ type: 'txt', tokens: 10000, tokensGiven: true, searchMode: 'auto', alpha: 1 });
    expect(contextParams({ type: 'xml', tokens: 'abc', alpha: '-1', searchMode: 'Semantic' })).toMatchObject({ type: 'json', tokens: 10000, alpha: 0, searchMode: 'semantic' });
    expect(contextParams({ alpha: 'x', tokens: '250' })).toMatchObject({ alpha: 0.5, tokens: 250 });
    expect(contextParams({}, { type: 'txt' }).type).toBe('txt');
  });

  it("accepts Context7's library id forms", () => {
    expect(context7LibraryId('/a/b')).toBe('/a/b');
    expect(context7LibraryId('/a/b@v1.2')).toBe('/a/b/v1.2');
    expect(context7LibraryId('/a/b/v1.2')).toBe('/a/b/v1.2');
    expect(() => context7LibraryId('a/b')).toThrow(/libraryId/);
  });

  it('ranks vectors by cosine with ties by id, and bounds the cache by bytes', async () => {
    const rows = [new Float32Array([1, 0]), new Float32Array([0, 1]), new Float32Array([3, 0])];
    const m = new Matrix(['a', 'b', 'c'], 2, (i) => rows[i]!);
    expect(topK(m, new Float32Array([2, 0]), 2).map((r) => r.id)).toEqual(['a', 'c']);
    expect(topK(m, new Float32Array([0, 5]), 1)).toEqual([{ id: 'b', score: 1 }]);
    const cache = new VectorCache(2.5 * m.bytes);
    await cache.get('s1|1', async () => m);
    await cache.get('s2|1', async () => m);
    await cache.get('s3|1', async () => m);
    expect(cache.size).toEqual({ entries: 2, bytes: 2 * m.bytes });
    await cache.get('s3|2', async () => m); // a new stamp replaces the old one of that scope
    expect(cache.size.entries).toBe(2);
  });
});

describe('the SIMD scoring kernel', () => {
  it('scores every row exactly like a plain dot product, for any dimension', () => {
    for (const dims of [1, 7, 8, 9, 384, 1000]) {
      const n = 37;
      const rand = (len: number) => Float32Array.from({ length: len }, (_, i) => Math.sin(i * 12.9898 + dims * 78.233 + len));
      const rows = Array.from({ length: n }, (_, i) => rand(dims + i * 0).map((v, j) => v + Math.cos(i * j + 1)));
      const m = new Matrix(rows.map((_, i) => `r${String(i).padStart(2, '0')}`), dims, (i) => rows[i]!);
      const q = normalise(rand(dims));
      const scores = Array.from(m.score(q));
      rows.forEach((row, i) => {
        const unit = normalise(row);
        const want = unit.reduce((s, v, j) => s + v * q[j]!, 0);
        expect(scores[i]).toBeCloseTo(want, 5);
      });
      const best = topK(m, q, 5);
      const order = rows.map((_, i) => ({ id: `r${String(i).padStart(2, '0')}`, s: scores[i]! })).sort((a, b) => b.s - a.s || (a.id < b.id ? -1 : 1));
      expect(best.map((r) => r.id)).toEqual(order.slice(0, 5).map((r) => r.id));
    }
  });
});
