import { describe, expect, it } from 'vitest';
import { applyBudget, contextParams } from '../../../docindex/search/context.js';
import { context7LibraryId } from '../../../docindex/search/context7.js';
import { idfOf, rankCandidates, sharedStatistics, type KeywordCandidates } from '../../../docindex/search/keyword.js';
import { MAX_TERMS, parseQuery, splitIdentifiers } from '../../../docindex/search/keyword-plan.js';
import { joinSection, overlapLines } from '../../../docindex/search/neighbourhood.js';
import { fuse, fusionAlpha } from '../../../docindex/search/search.js';
import { ScanPool } from '../../../docindex/search/scan-pool.js';
import { Matrix, MatrixTooLargeError, normalise, topK, VectorCache } from '../../../docindex/search/vectors.js';

describe('search helpers', () => {
  it('splits identifiers like the SQL does', () => {
    expect(splitIdentifiers('useEffect snake_case Foo.bar HTTPServer')).toBe('use Effect snake case Foo bar HTTP Server');
  });

  it('parses web-search syntax and drops stop words', () => {
    expect(parseQuery('how do I use the "data cache" -legacy or router')).toEqual({ include: ['data cache', 'router'], exclude: ['legacy'] });
    expect(parseQuery('how to')).toEqual({ include: ['how', 'to'], exclude: [] });
    expect(parseQuery('!!! ---')).toEqual({ include: [], exclude: [] });
    // Repeats count once, and a query uses at most MAX_TERMS terms (each is ranked on its own in SQL).
    expect(parseQuery('Router router ROUTER cache')).toEqual({ include: ['ROUTER', 'cache'], exclude: [] });
    // A question's filler is no topic.
    expect(parseQuery('is there a way to set something like a timeout').include).toEqual(['set', 'like', 'timeout']);
    expect(parseQuery('I want to stream responses, possible?').include).toEqual(['stream', 'responses,']);
    expect(parseQuery(Array.from({ length: 500 }, (_, i) => `w${i}`).join(' ')).include).toHaveLength(MAX_TERMS);
  });

  it('searches for command-line options and negative numbers instead of excluding them', () => {
    expect(parseQuery('a named option like --name alice or -n alice')).toEqual({ include: ['named', 'option', 'like', '--name', 'alice', '-n'], exclude: [] });
    expect(parseQuery('how loud the logging is from -v, -vv or -vvv').include).toEqual(['loud', 'logging', '-v,', '-vv', '-vvv']);
    expect(parseQuery('parse -D KEY=VALUE pairs, rm -rf, indexOf returns -1')).toEqual({ include: ['parse', '-D', 'KEY=VALUE', 'pairs,', 'rm', '-rf,', 'indexOf', 'returns', '-1'], exclude: [] });
    // A longer word after one dash is still excluded, and dashes alone are no term.
    expect(parseQuery('router -legacy -deprecated --- -->')).toEqual({ include: ['router'], exclude: ['legacy', 'deprecated'] });
  });

  it('fuses by weighted reciprocal rank; alpha 0 and 1 are one list alone; ties by id', () => {
    const kw = [{ id: 'a', score: 3 }, { id: 'b', score: 2 }];
    const sem = [{ id: 'c', score: 0.9 }, { id: 'a', score: 0.8 }];
    expect(fuse(kw, sem, 0, 10).map((r) => r.id)).toEqual(['a', 'b']);
    expect(fuse(kw, sem, 1, 10).map((r) => r.id)).toEqual(['c', 'a']);
    expect(fuse(kw, sem, 0.5, 10).map((r) => r.id)).toEqual(['a', 'c', 'b']); // c is rank 1 of semantic, b rank 2 of keyword
    expect(fuse([{ id: 'y', score: 1 }], [{ id: 'x', score: 1 }], 0.5, 10).map((r) => r.id)).toEqual(['x', 'y']);
  });

  it('trusts the keyword list more for a query naming an identifier, and keeps alpha 0 and 1 one list alone', () => {
    expect(fusionAlpha(0.5, 'limit the size of request bodies')).toBe(0.5);
    expect(fusionAlpha(0.5, 'setErrorHandler custom error handler')).toBeCloseTo(0.3);
    expect(fusionAlpha(0, 'reply.send')).toBe(0);
    expect(fusionAlpha(1, 'reply.send')).toBe(1);
    // Keyword's second place now beats semantic's first (at 0.5 it did not: see the test above).
    const kw = [{ id: 'a', score: 3 }, { id: 'b', score: 2 }];
    const sem = [{ id: 'c', score: 0.9 }, { id: 'd', score: 0.8 }];
    expect(fuse(kw, sem, 0.5, 10).map((r) => r.id)).toEqual(['a', 'c', 'b', 'd']);
    expect(fuse(kw, sem, fusionAlpha(0.5, 'reply.send'), 10).map((r) => r.id)).toEqual(['a', 'b', 'c', 'd']);
  });

  it("keeps either list's clear winner above snippets both lists rank middling", () => {
    // 'top' is first in one list and absent from the other; m1..m20 are 30th to 49th in both.
    const list = (p: string, first?: string) => [
      ...(first ? [{ id: first, score: 9 }] : []),
      ...Array.from({ length: first ? 28 : 29 }, (_, i) => ({ id: `${p}${i}`, score: 1 })),
      ...Array.from({ length: 20 }, (_, i) => ({ id: `m${i + 1}`, score: 1 })),
    ];
    const rank = (ranked: { id: string }[], id: string) => ranked.findIndex((r) => r.id === id);
    for (const fused of [fuse(list('k', 'top'), list('s'), 0.5, 100), fuse(list('k'), list('s', 'top'), 0.5, 100)]) {
      // With k = 60 and no bonus, m1 scored 1/90 and top 0.5/61: the winner came after all twenty.
      expect(rank(fused, 'top')).toBeLessThan(rank(fused, 'm1'));
      expect(rank(fused, 'top')).toBeLessThan(2);
    }
  });

  it('joins a section: prose as it is, code fenced, the repeated lines of split parts once', () => {
    expect(overlapLines('a\nb\nc', 'b\nc\nd')).toBe(2);
    expect(overlapLines('a\nb', 'c\nd')).toBe(0);
    expect(overlapLines('a', 'a')).toBe(0); // a part is never all overlap
    const parts = [
      { type: 'info' as const, title: 'Setup (part 1/2)', content: 'One.\nTwo.\nThree.', language: null },
      { type: 'info' as const, title: 'Setup (part 2/2)', content: 'Two.\nThree.\nFour.', language: null },
      { type: 'code' as const, title: 'Run it', content: 'npm start', language: 'bash' },
      { type: 'info' as const, title: 'Other', content: 'Two.\nFive.', language: null },
    ];
    expect(joinSection(parts)).toBe('One.\nTwo.\nThree.\nFour.\n\n```bash\nnpm start\n```\n\nTwo.\nFive.');
  });

  it('applies the budget: the first is always kept, then while they fit', () => {
    const s = [{ tokenCount: 50 }, { tokenCount: 30 }, { tokenCount: 30 }];
    expect(applyBudget(s, undefined)).toHaveLength(3);
    expect(applyBudget(s, 10)).toHaveLength(1);
    expect(applyBudget(s, 80)).toHaveLength(2);
  });

  it('coerces context parameters as docs/documentation-index.md says', () => {
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
    // A scoped npm package is the one id with an @ inside; elsewhere @ still starts a version.
    expect(context7LibraryId('/npm/@types/node')).toBe('/npm/@types/node');
    expect(context7LibraryId('/npm/@types/node@20.1.0')).toBe('/npm/@types/node/20.1.0');
    expect(context7LibraryId('/npm/@types/node/20.1.0')).toBe('/npm/@types/node/20.1.0');
    expect(() => context7LibraryId('/a/@b/c')).toThrow(/libraryId/);
  });

  it('ranks vectors by cosine with ties by id, and bounds the cache by bytes', async () => {
    const rows = [new Float32Array([1, 0]), new Float32Array([0, 1]), new Float32Array([3, 0])];
    const m = new Matrix(['a', 'b', 'c'], 2, (i) => rows[i]!);
    expect((await topK(m, new Float32Array([2, 0]), 2)).map((r) => r.id)).toEqual(['a', 'c']);
    expect(await topK(m, new Float32Array([0, 5]), 1)).toEqual([{ id: 'b', score: 1, page: 1 }]);
    // Each result names its page (document), for evidence per page; rows without pages are pages of their own.
    const paged = new Matrix(['a', 'b', 'c'], 2, (i) => rows[i]!, undefined, Int32Array.from([0, 1, 0]));
    expect((await topK(paged, new Float32Array([2, 0]), 2)).map((r) => r.page)).toEqual([0, 0]);
    // Its size counts each page's document id (learned later, page-name-lookup.ts): two pages here, three above.
    expect(m.bytes - paged.bytes).toBe(68);
    const cache = new VectorCache(2.5 * m.bytes);
    await cache.get('s1|1', async () => m);
    await cache.get('s2|1', async () => m);
    await cache.get('s3|1', async () => m);
    expect(cache.size).toEqual({ entries: 2, bytes: 2 * m.bytes });
    await cache.get('s3|2', async () => m); // a new stamp replaces the old one of that scope
    expect(cache.size.entries).toBe(2);
  });
});

describe('keyword scores across libraries', () => {
  // Two terms; each candidate's scores per term are idf times a saturated tf of 1 here, so a score is the idfs it matched.
  const scope = (snippets: number, df: number[], matched: number[][]): KeywordCandidates => ({
    snippets,
    df,
    candidates: matched.map((m, i) => {
      const terms = m.map((on, t) => (on ? idfOf(snippets, df[t]!) : 0));
      return { id: `${snippets}-${i}`, documentId: `${snippets}-doc${i}`, terms, score: terms.reduce((a, b) => a + b, 0) };
    }),
    naming: { terms: ['resize', 'widget'], namesOf: () => [] },
  });

  it('weighs each term by its idf over every scope searched, as if they were one collection', () => {
    // "widget" is on every page of the first scope and on one of the second's; "resize" is rare in both.
    const widgets = scope(100, [2, 100], [[1, 1]]);
    const ledger = scope(100, [1, 1], [[1, 1]]);
    const shared = sharedStatistics([widgets, ledger]);
    expect(shared).toEqual({ snippets: 200, df: [3, 101] });
    // Alone, the ledger's page scores more: both words are rare there.
    expect(rankCandidates(ledger, 10)[0]!.score).toBeGreaterThan(rankCandidates(widgets, 10)[0]!.score);
    // On one scale, "widget" weighs the same in both, and the page that is about it is no longer behind.
    const [a, b] = [rankCandidates(widgets, 10, shared)[0]!, rankCandidates(ledger, 10, shared)[0]!];
    expect(a.score).toBeCloseTo(idfOf(200, 3) + idfOf(200, 101), 12);
    expect(b.score).toBeCloseTo(a.score, 12);
    // Without shared statistics a scope's own ranking is untouched.
    expect(rankCandidates(widgets, 10)).toEqual(rankCandidates(widgets, 10, sharedStatistics([widgets])));
    expect(rankCandidates(undefined, 10, shared)).toEqual([]);
  });
});

describe('the vector scan', () => {
  const rand = (seed: number, len: number) => Float32Array.from({ length: len }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233));
  const idOf = (i: number) => `r${String(i).padStart(5, '0')}`;

  it('scores like a plain dot product for any dimension, best first, ties by id', async () => {
    for (const dims of [1, 7, 8, 9, 384, 1000]) {
      const rows = Array.from({ length: 37 }, (_, i) => rand(i + dims, dims));
      rows[20] = rows[3]!; // a tie: the lower id first
      const m = new Matrix(rows.map((_, i) => idOf(i)), dims, (i) => rows[i]!);
      const q = rand(-1, dims);
      const want = rows
        .map((row, i) => ({ id: idOf(i), score: normalise(row).reduce((s, v, j) => s + v * normalise(q)[j]!, 0) }))
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
      const got = await topK(m, q, 37);
      expect(got.map((r) => r.id)).toEqual(want.map((r) => r.id));
      got.forEach((r, i) => expect(r.score).toBeCloseTo(want[i]!.score, 5));
    }
  });

  it('refuses a matrix beyond what WebAssembly memory can address, before allocating it', () => {
    expect(() => new Matrix(['a', 'b'], 2 ** 29, () => new Float32Array(0))).toThrow(MatrixTooLargeError);
  });

  it('splits a large matrix between scan threads with the same answer as one thread', async () => {
    const dims = 384;
    const n = 3000; // over the threshold below which the calling thread scans alone
    const rows = Array.from({ length: n }, (_, i) => rand(i, dims));
    const pool = new ScanPool(2);
    try {
      const alone = new Matrix(rows.map((_, i) => idOf(i)), dims, (i) => rows[i]!);
      const split = new Matrix(rows.map((_, i) => idOf(i)), dims, (i) => rows[i]!, pool);
      for (const seed of [1, 2, 3]) {
        const q = rand(-seed, dims);
        const [a, b] = await Promise.all([topK(alone, q, 50), topK(split, q, 50)]);
        expect(b).toEqual(a);
        expect(b).toHaveLength(50);
      }
      // Concurrent queries on the threads each get their own answer.
      const qs = [4, 5, 6, 7].map((s) => rand(-s, dims));
      const together = await Promise.all(qs.map((q) => topK(split, q, 10)));
      for (const [i, q] of qs.entries()) expect(together[i]).toEqual(await topK(alone, q, 10));
    } finally {
      await pool.close();
    }
  });
});
