import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../../core/log.js';
import { contextJson, contextParams, retrieveContext, type RetrievalDeps } from '../../../docindex/search/context.js';
import { refreshTermStatistics } from '../../../docindex/search/keyword.js';
import { type FakeRerank, startFakeRerank } from '../../../fakes/fake-rerank.js';
import { startTestStack, type TestStack } from '../../support/stack.js';

/**
 * The reranking stage inside retrieval (docindex/rerank/stage.ts, plugged into docindex/search/search.ts): the fake
 * server scores exact words, keyword search matches stems, so the two disagree on purpose and the test sees whose
 * order was answered.
 */
const LIB = '/rerank/lib';
const KEY = 'rk-context-secret-42';
let stack: TestStack;
let fake: FakeRerank;
let logged: { msg: string; fields?: Record<string, unknown> }[];

const log: Logger = {
  debug: () => {},
  info: () => {},
  warn: (msg, fields) => logged.push({ msg, ...(fields && { fields }) }),
  error: (msg, fields) => logged.push({ msg, ...(fields && { fields }) }),
  child: () => log,
};
const sql = (q: string, params: unknown[] = []) => stack.orm.em.fork().execute(q, params);

function deps(rerank: Partial<TestStack['config']['rerank']> = {}): RetrievalDeps {
  return { config: { ...stack.config, rerank: { ...stack.config.rerank, url: `${fake.url}/rerank`, apiKey: KEY, timeoutMs: 500, ...rerank } }, orm: stack.orm, log };
}
const ask = async (d: RetrievalDeps) => contextJson(await retrieveContext(d, contextParams({ libraryId: LIB, query: 'cache', searchMode: 'keyword' })));

beforeAll(async () => {
  stack = await startTestStack({ api: false, queues: [] });
  fake = await startFakeRerank({ apiKey: KEY });
  await sql(`insert into library (id, title, source, source_url, state, total_snippets, trust_score, last_indexed_at, created_at, updated_at) values (?, 'Rerank', 'local', '/rerank', 'indexed', 3, 5, now(), now(), now())`, [LIB]);
  await sql(`insert into library_document (id, repository_id, file_path, checksum, indexed_at) values ('rdoc', ?, 'README.md', 'x', now())`, [LIB]);
  const snippets: [string, string, string][] = [
    // Stems: keyword search's clear first; the word "cache" itself is not in it.
    ['stems', 'Caching', 'Caching: cached pages, caches of caching layers, cached and caching again.'],
    ['word', 'Storage', 'Responses are kept in memory by the server; the cache is cleared when the process restarts, and nothing else is kept between requests.'],
    ['other', 'Setup', 'Install the package, then start the server; cached builds are reused.'],
  ];
  for (const [id, title, content] of snippets) {
    await sql(
      `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
       values (?, 'rdoc', ?, null, 'info', ?, ?, null, 'Guide', 10, 0, now())`,
      [id, LIB, title, content],
    );
  }
  await refreshTermStatistics(stack.orm.em.fork(), { repositoryId: LIB, versionId: null });
});
afterAll(async () => {
  await fake?.close();
  await stack?.stop();
});
beforeEach(() => {
  logged = [];
  fake.requests.length = 0;
  fake.script.length = 0;
});

describe('reranking in retrieveContext', () => {
  it('is off without RERANK_URL: no request, the search order, reranked false', async () => {
    const body = await ask(deps({ url: undefined }));
    expect(body.snippets[0]!.id).toBe('stems');
    expect(body.reranked).toBe(false);
    expect(fake.requests).toHaveLength(0);
  });

  it("answers in the server's order, says so, and keeps the search mode and descending scores", async () => {
    const before = await ask(deps({ url: undefined }));
    const body = await ask(deps());
    expect(body.snippets.map((s) => s.id)).toEqual(['word', ...before.snippets.map((s) => s.id).filter((id) => id !== 'word')]);
    expect(body.reranked).toBe(true);
    expect(body.searchMode).toBe('keyword');
    expect(body.snippets.map((s) => s.score)).toEqual(before.snippets.map((s) => s.score));
    const [req] = fake.requests;
    expect(req!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req!.body.query).toBe('cache');
    expect(req!.body.documents).toHaveLength(before.snippets.length);
    expect(req!.body.documents!.find((d) => d.includes('cache is cleared'))).toMatch(/^Guide\nStorage\n/);
    expect(JSON.stringify(body)).not.toContain(KEY);
  });

  it('sends only RERANK_CANDIDATES results; the rest follow in their own order', async () => {
    const before = await ask(deps({ url: undefined }));
    const body = await ask(deps({ candidates: 2 }));
    expect(fake.requests[0]!.body.documents).toHaveLength(2);
    expect(body.snippets.slice(2).map((s) => s.id)).toEqual(before.snippets.slice(2).map((s) => s.id));
  });

  it.each([
    ['an error status', { status: 503, body: JSON.stringify({ message: `overloaded; your token ${KEY}` }) }, /answered 503/],
    ['a malformed answer', { status: 200, body: '{"results": "soon"}' }, /neither/],
    ['no answer in time', { delayMs: 2000 }, /no answer within 500 ms/],
  ])('keeps the search order on %s, logs why, and never the key', async (_, scripted, reason) => {
    fake.script.push(scripted);
    const t0 = Date.now();
    const body = await ask(deps());
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(body.snippets[0]!.id).toBe('stems');
    expect(body.reranked).toBe(false);
    expect(logged).toHaveLength(1);
    expect(logged[0]!.msg).toMatch(/reranking failed/);
    expect(String(logged[0]!.fields?.error)).toMatch(reason);
    expect(JSON.stringify(logged)).not.toContain(KEY);
    expect(JSON.stringify(body)).not.toContain(KEY);
  });
});
