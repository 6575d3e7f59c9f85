import { describe, expect, it } from 'vitest';
import type { Config } from '../../../core/config.js';
import { NO_CONVENTIONS } from '../../../docindex/embeddings/conventions.js';
import type { EmbeddingProvider } from '../../../docindex/embeddings/provider.js';
import { QueryVectors } from '../../../docindex/search/query-vectors.js';
import { queryVector } from '../../../docindex/search/search.js';

/**
 * The vectors of questions asked lately (docindex/search/query-vectors.ts): a question asked again, or while it is
 * being embedded, is embedded once; a failure is tried again; the least recently asked leave first; each provider
 * (one per profile and settings) has its own.
 */
function provider(fail?: (text: string) => boolean, oneCallAtATime = true) {
  const asked: string[] = [];
  const calls: string[][] = [];
  let release: () => void = () => undefined;
  let gate = Promise.resolve();
  const p: EmbeddingProvider = {
    profileId: 'p',
    model: 'm',
    dimensions: 2,
    conventions: { ...NO_CONVENTIONS, queryPrefix: 'query: ' },
    oneCallAtATime,
    async embed(texts) {
      asked.push(...texts);
      calls.push(texts);
      await gate;
      if (texts.some((t) => fail?.(t))) throw new Error('model away');
      return texts.map((t) => Float32Array.of(t.length, 1));
    },
    close: async () => undefined,
  };
  return {
    p,
    asked,
    calls,
    hold: () => {
      gate = new Promise((r) => (release = r));
      return () => release();
    },
  };
}

describe('QueryVectors', () => {
  it('embeds a question once, with its prefix, however often and however concurrently it is asked', async () => {
    const { p, asked, hold } = provider();
    const kept = new QueryVectors(p, 10);
    const release = hold();
    const waiting = [kept.get('router cache'), kept.get('router cache'), kept.get('router cache')];
    release();
    const [a, b, c] = await Promise.all(waiting);
    expect(asked).toEqual(['query: router cache']);
    expect(a).toBe(b);
    expect(c).toEqual(Float32Array.of('query: router cache'.length, 1));
    expect(await kept.get('router cache')).toBe(a);
    expect(asked).toHaveLength(1);
    await kept.get('Router cache'); // another text is another question
    expect(asked).toEqual(['query: router cache', 'query: Router cache']);
  });

  it('embeds the questions asked while the provider is busy together, in one call, and a failed call fails only its own', async () => {
    const { p, calls, hold } = provider((t) => t.endsWith('broken'));
    const kept = new QueryVectors(p, 10);
    let release = hold();
    const first = kept.get('a'); // the provider is idle: it goes at once, alone
    const next = ['b', 'c', 'b', 'd'].map((q) => kept.get(q));
    release();
    expect((await first)[0]).toBe('query: a'.length);
    const vectors = await Promise.all(next);
    expect(calls).toEqual([['query: a'], ['query: b', 'query: c', 'query: d']]);
    expect(vectors.map((v) => v[0])).toEqual([8, 8, 8, 8]);
    expect(vectors[0]).toBe(vectors[2]);
    // Nine waiting go in two calls (eight at most); a batch that fails fails its own questions only.
    release = hold();
    const busy = kept.get('e');
    const many = ['f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'broken'].map((q) => kept.get(q).then((v) => v[0], (e: Error) => e.message));
    release();
    await busy;
    expect(await Promise.all(many)).toEqual([8, 8, 8, 8, 8, 8, 8, 8, 'model away']);
    expect(calls.slice(2).map((c) => c.length)).toEqual([1, 8, 1]);
  });

  it('runs up to four calls side by side on a provider that can (a remote server), then batches', async () => {
    const { p, calls, hold } = provider(undefined, false);
    const kept = new QueryVectors(p, 10);
    const release = hold();
    const asked = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((q) => kept.get(q));
    expect(calls).toEqual([['query: a'], ['query: b'], ['query: c'], ['query: d']]); // none waited for another's round trip
    release();
    await Promise.all(asked);
    expect(calls.slice(4)).toEqual([['query: e', 'query: f', 'query: g']]);
  });

  it('keeps no failure: the next ask embeds again', async () => {
    let down = true;
    const { p, asked } = provider(() => down);
    const kept = new QueryVectors(p, 10);
    await expect(kept.get('q')).rejects.toThrow('model away');
    expect(kept.size).toBe(0);
    down = false;
    expect(await kept.get('q')).toEqual(Float32Array.of(8, 1));
    expect(asked).toEqual(['query: q', 'query: q']);
  });

  it('drops the least recently asked beyond its entries', async () => {
    const { p, asked } = provider();
    const kept = new QueryVectors(p, 2);
    for (const q of ['a', 'b', 'a', 'c']) await kept.get(q); // a was asked after b, so b goes
    expect(kept.size).toBe(2);
    asked.length = 0;
    await kept.get('a');
    await kept.get('c');
    expect(asked).toEqual([]);
    await kept.get('b');
    expect(asked).toEqual(['query: b']);
  });
});

describe('queryVector', () => {
  it('keeps vectors per provider, and none with SEARCH_QUERY_VECTORS=0', async () => {
    const on = { searchQueryVectors: 1000 } as Config;
    const one = provider();
    const other = provider();
    await queryVector(on, one.p, 'deploy token');
    await queryVector(on, one.p, 'deploy token');
    await queryVector(on, other.p, 'deploy token'); // another profile's model: its own vector
    expect(one.asked).toHaveLength(1);
    expect(other.asked).toHaveLength(1);
    const off = { searchQueryVectors: 0 } as Config;
    const third = provider();
    await queryVector(off, third.p, 'deploy token');
    await queryVector(off, third.p, 'deploy token');
    expect(third.asked).toHaveLength(2);
  });
});
