import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../../core/log.js';
import { isSealed } from '../../../core/secrets.js';
import { contextJson, contextParams, retrieveContext } from '../../../docindex/search/context.js';
import { refreshTermStatistics } from '../../../docindex/search/keyword.js';
import { type FakeRerank, startFakeRerank } from '../../../fakes/fake-rerank.js';
import { buildTinyCrossEncoder } from '../../../fakes/tiny-cross-encoder.js';
import { api, enc, expectError } from '../helpers.js';
import { startTestStack, type TestStack } from '../../support/stack.js';

/**
 * Rerank profiles (docindex/rerank/profiles.ts, routes in docindex/routes/rerank-profiles.ts) and the stage reading the
 * active one in a real search: the tiny cross-encoder (fakes/tiny-cross-encoder.ts) scores exact words, keyword search
 * matches stems, so the two disagree on purpose and the test sees whose order was answered.
 */
const LIB = '/rerank/profiles';
const KEY = 'rk-profile-secret-77';
let tmp: string;
let model: string;
let broken: string;
let stack: TestStack;
let fake: FakeRerank;
const bodies: string[] = [];

async function call(method: string, p: string, body?: unknown) {
  const res = await api(stack, method, p, body);
  bodies.push(JSON.stringify(res.body ?? null));
  return res;
}
const sql = (q: string, params: unknown[] = []) => stack.orm.em.fork().execute(q, params);
const ask = async () => (await call('GET', `/api/v1/context?libraryId=${enc(LIB)}&query=routes&searchMode=keyword`)).body;
const clear = () => sql('delete from rerank_profile');

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-rerank-profiles-'));
  model = (await buildTinyCrossEncoder(tmp)).path;
  broken = (await buildTinyCrossEncoder(path.join(tmp, 'broken'), { broken: true })).path;
  fake = await startFakeRerank({ apiKey: KEY });
  stack = await startTestStack({ queues: [] });
  await sql(`insert into library (id, title, source, source_url, state, total_snippets, trust_score, last_indexed_at, created_at, updated_at) values (?, 'Rerank', 'local', '/rerank', 'indexed', 3, 5, now(), now(), now())`, [LIB]);
  await sql(`insert into library_document (id, repository_id, file_path, checksum, indexed_at) values ('pdoc', ?, 'README.md', 'x', now())`, [LIB]);
  const snippets: [string, string, string][] = [
    // Stems: keyword search's clear first; the word "routes" itself is not in it, which the model reads.
    ['stems', 'Routing', 'Routing: routing a route, routing and a route again.'],
    ['word', 'Pages', 'Pages are served by the server; routes are read when the server starts.'],
    ['other', 'Setup', 'Install the package, then start the server and its routing.'],
  ];
  for (const [id, title, content] of snippets) {
    await sql(
      `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
       values (?, 'pdoc', ?, null, 'info', ?, ?, null, 'Guide', 10, 0, now())`,
      [id, LIB, title, content],
    );
  }
  await refreshTermStatistics(stack.orm.em.fork(), { repositoryId: LIB, versionId: null });
});
afterAll(async () => {
  await stack?.stop();
  await fake?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});
beforeEach(async () => {
  fake.requests.length = 0;
});

describe('rerank profiles', () => {
  it('creates, reads, updates and deletes a remote profile; the API key is sealed, masked and never answered', async () => {
    await clear();
    const created = await call('POST', '/api/v1/rerank-profiles', { name: 'TEI', provider: 'remote', model: 'bge-reranker', config: { url: `${fake.url}/rerank`, api: 'tei', apiKey: KEY, candidates: 20 } });
    expect(created.status).toBe(201);
    const { id } = created.body.profile;
    expect(created.body.profile).toMatchObject({ name: 'TEI', provider: 'remote', model: 'bge-reranker', active: false, config: { url: `${fake.url}/rerank`, api: 'tei', apiKey: '********', candidates: 20 } });
    const [row] = (await sql('select config from rerank_profile where id = ?', [id])) as { config: { apiKey: string } }[];
    expect(isSealed(row!.config.apiKey)).toBe(true);
    expect(JSON.stringify(row)).not.toContain(KEY);

    // Sent back masked, the key is kept; a new address without it again is refused; empty removes it.
    const renamed = await call('PUT', `/api/v1/rerank-profiles/${id}`, { name: 'TEI local', config: { apiKey: '********' } });
    expect(renamed.body.profile).toMatchObject({ name: 'TEI local', config: { apiKey: '********', api: 'tei' } });
    expectError(await call('PUT', `/api/v1/rerank-profiles/${id}`, { config: { url: 'http://127.0.0.1:1/rerank' } }), 400, 'API_KEY_REQUIRED');
    const list = await call('GET', '/api/v1/rerank-profiles');
    expect(list.body).toMatchObject({ activeProfileId: null, settingsUrl: null, profiles: [{ id, name: 'TEI local' }] });
    expect((await call('GET', `/api/v1/rerank-profiles/${id}`)).body.profile.config.apiKey).toBe('********');
    const removed = await call('PUT', `/api/v1/rerank-profiles/${id}`, { config: { apiKey: '' } });
    expect(removed.body.profile.config).not.toHaveProperty('apiKey');

    expect((await call('DELETE', `/api/v1/rerank-profiles/${id}`)).status).toBe(204);
    expectError(await call('GET', `/api/v1/rerank-profiles/${id}`), 404, 'RERANK_PROFILE_NOT_FOUND');
    expectError(await call('PUT', `/api/v1/rerank-profiles/${id}`, { name: 'x' }), 404, 'RERANK_PROFILE_NOT_FOUND');
    expect(bodies.join('\n')).not.toContain(KEY);
  });

  it.each([
    ['a remote profile without a url', { provider: 'remote' }, 'INVALID_RERANK_PROFILE'],
    ['a url that is not http(s)', { provider: 'remote', config: { url: 'file:///etc/passwd' } }, 'INVALID_RERANK_PROFILE'],
    ['a local profile without a model or modelPath', { provider: 'local-transformers' }, 'INVALID_RERANK_PROFILE'],
    ['a relative modelPath', { provider: 'local-transformers', config: { modelPath: '../models/x' } }, 'INVALID_RERANK_PROFILE'],
    ['no provider', { name: 'x' }, 'INVALID_RERANK_PROFILE'],
    ['an unknown provider', { provider: 'gpu-cluster', model: 'x' }, 'VALIDATION_ERROR'],
    ['candidates out of range', { provider: 'local-transformers', model: 'x', config: { candidates: 10_000 } }, 'VALIDATION_ERROR'],
    ['a weight over 1', { provider: 'local-transformers', model: 'x', config: { weight: 2 } }, 'VALIDATION_ERROR'],
    ['an unknown config key', { provider: 'local-transformers', model: 'x', config: { command: 'rm -rf /' } }, 'VALIDATION_ERROR'],
  ])('refuses %s with 400 and a stable code, saving nothing', async (_, body, code) => {
    await clear();
    expectError(await call('POST', '/api/v1/rerank-profiles', body), 400, code);
    expect((await call('GET', '/api/v1/rerank-profiles')).body.profiles).toEqual([]);
  });

  it('reranks a real search with the active local cross-encoder, one profile active at a time', async () => {
    await clear();
    const before = await ask();
    expect(before.snippets[0].id).toBe('stems');
    expect(before.reranked).toBe(false);

    const remote = await call('POST', '/api/v1/rerank-profiles', { provider: 'remote', config: { url: `${fake.url}/rerank`, apiKey: KEY }, active: true });
    const local = await call('POST', '/api/v1/rerank-profiles', { name: 'tiny', provider: 'local-transformers', model: 'tiny-cross-encoder', config: { modelPath: model, weight: 1, timeoutMs: 30_000 }, active: true });
    const list = await call('GET', '/api/v1/rerank-profiles');
    expect(list.body.activeProfileId).toBe(local.body.profile.id);
    expect(list.body.profiles.find((p: { id: string }) => p.id === remote.body.profile.id).active).toBe(false);

    const body = await ask();
    expect(body.reranked).toBe(true);
    expect(body.snippets[0].id).toBe('word');
    expect(body.snippets.map((s: { id: string }) => s.id).sort()).toEqual(before.snippets.map((s: { id: string }) => s.id).sort());
    expect(body.snippets.map((s: { score: number }) => s.score)).toEqual(before.snippets.map((s: { score: number }) => s.score));
    expect(fake.requests).toHaveLength(0);

    // The remote one made active again is asked, with its key opened for its address.
    await call('PUT', `/api/v1/rerank-profiles/${remote.body.profile.id}`, { active: true });
    expect((await ask()).reranked).toBe(true);
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);

    // None active: no reranking (RERANK_URL is not set here).
    await call('PUT', `/api/v1/rerank-profiles/${remote.body.profile.id}`, { active: false });
    const off = await ask();
    expect(off.reranked).toBe(false);
    expect(off.snippets[0].id).toBe('stems');
  });

  it('keeps the search order and logs why when the active model fails', async () => {
    await clear();
    await call('POST', '/api/v1/rerank-profiles', { provider: 'local-transformers', model: 'broken', config: { modelPath: broken }, active: true });
    const logged: string[] = [];
    const log: Logger = { debug: () => {}, info: () => {}, warn: (msg, f) => logged.push(`${msg} ${JSON.stringify(f)}`), error: () => {}, child: () => log };
    const body = contextJson(await retrieveContext({ config: stack.config, orm: stack.orm, log }, contextParams({ libraryId: LIB, query: 'routes', searchMode: 'keyword' })));
    expect(body.reranked).toBe(false);
    expect(body.snippets[0]!.id).toBe('stems');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/reranking failed.*local rerank model failed/);
  });
});
