import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_DOCUMENT_CHARS, parseScores, RerankError, rerankScores } from '../../../docindex/rerank/remote.js';
import { reorder } from '../../../docindex/rerank/stage.js';
import { type FakeRerank, startFakeRerank } from '../../../fakes/fake-rerank.js';

/** The remote call (docindex/rerank/remote.ts) against a fake server speaking both published shapes. */
const KEY = 'rk-secret-0123456789';
let fake: FakeRerank;
const settings = (o: Partial<Parameters<typeof rerankScores>[0]> = {}) => ({ url: `${fake.url}/v1/rerank`, api: 'cohere' as const, model: 'bge-reranker', apiKey: KEY, timeoutMs: 2000, ...o });
const DOCS = ['the router renders pages', 'configure the cache of the server', 'cache the server responses with configure'];

beforeAll(async () => {
  fake = await startFakeRerank({ apiKey: KEY });
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.requests.length = 0;
  fake.script.length = 0;
});

describe('rerankScores', () => {
  it('sends the Cohere-style request with the key as a Bearer token and reads scores back by index', async () => {
    const scores = await rerankScores(settings(), 'configure server cache', DOCS);
    expect(scores).toEqual([0, 1, 1]);
    const [req] = fake.requests;
    expect(req!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req!.body).toEqual({ model: 'bge-reranker', query: 'configure server cache', documents: DOCS, top_n: 3 });
  });

  it("speaks Text Embeddings Inference's shape: `texts` in, a bare list of { index, score } out", async () => {
    const scores = await rerankScores(settings({ api: 'tei', url: `${fake.url}/rerank` }), 'router pages', DOCS);
    expect(scores).toEqual([1, 0, 0]);
    expect(fake.requests[0]!.body).toEqual({ query: 'router pages', texts: DOCS, truncate: true });
  });

  it('cuts long documents before sending them', async () => {
    await rerankScores(settings(), 'x', ['x'.repeat(MAX_DOCUMENT_CHARS * 3), 'y']);
    expect(fake.requests[0]!.body.documents![0]).toHaveLength(MAX_DOCUMENT_CHARS);
  });

  it('turns an error status into a RerankError that never repeats the key', async () => {
    fake.script.push({ status: 500, body: JSON.stringify({ message: `model crashed reading Bearer ${KEY}` }) });
    const err = await rerankScores(settings(), 'q', DOCS).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RerankError);
    expect((err as Error).message).toMatch(/answered 500: model crashed/);
    expect((err as Error).message).not.toContain(KEY);
  });

  it('refuses a wrong key as an error (401), not as scores', async () => {
    await expect(rerankScores(settings({ apiKey: 'wrong-key-123' }), 'q', DOCS)).rejects.toThrow(/answered 401/);
  });

  it('gives up after timeoutMs', async () => {
    fake.script.push({ delayMs: 1000 });
    const t0 = Date.now();
    await expect(rerankScores(settings({ timeoutMs: 100 }), 'q', DOCS)).rejects.toThrow(/no answer within 100 ms/);
    expect(Date.now() - t0).toBeLessThan(900);
  });

  it('refuses an unreachable server as a RerankError', async () => {
    await expect(rerankScores(settings({ url: 'http://127.0.0.1:1/rerank' }), 'q', DOCS)).rejects.toThrow(/could not be reached/);
  });

  it.each([
    ['not JSON', '<html>busy</html>', /not JSON/],
    ['neither shape', '{"data": []}', /neither/],
    ['an index out of range', '{"results": [{"index": 7, "relevance_score": 1}]}', /valid index/],
    ['a score that is not a number', '[{"index": 0, "score": "high"}]', /valid index/],
    ['fewer scores than documents', '{"results": [{"index": 0, "relevance_score": 0.5}]}', /scored 1 of 3/],
  ])('refuses an answer with %s', async (_, body, message) => {
    fake.script.push({ status: 200, body });
    await expect(rerankScores(settings(), 'q', DOCS)).rejects.toThrow(message);
  });
});

describe('parseScores', () => {
  it('reads results in any order, by their index', () => {
    expect(parseScores('{"results":[{"index":2,"relevance_score":0.9},{"index":0,"relevance_score":0.1},{"index":1,"relevance_score":0.5}]}', 3)).toEqual([0.1, 0.5, 0.9]);
  });
});

describe('reorder', () => {
  const head = [
    { id: 'a', score: 0.9 },
    { id: 'b', score: 0.5 },
    { id: 'c', score: 0.2 },
  ];
  it("takes the server's order at weight 1, keeping the search's descending scores", () => {
    expect(reorder(head, [0.1, 0.3, 0.8], 1)).toEqual([
      { id: 'c', score: 0.9 },
      { id: 'b', score: 0.5 },
      { id: 'a', score: 0.2 },
    ]);
  });
  it("keeps the search's order at weight 0, and on ties", () => {
    expect(reorder(head, [0.1, 0.3, 0.8], 0).map((r) => r.id)).toEqual(['a', 'b', 'c']);
    expect(reorder(head, [0.5, 0.5, 0.5], 1).map((r) => r.id)).toEqual(['a', 'b', 'c']);
  });
  it("blends at weight 0.5: the server's winner moves up, but not past the search's first, which the server put second", () => {
    const four = [...head, { id: 'd', score: 0.1 }];
    expect(reorder(four, [0.8, 0.6, 0.4, 0.9], 0.5).map((r) => r.id)).toEqual(['a', 'd', 'b', 'c']);
  });
});
