import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretBox } from '../../../core/secrets.js';
import { apiKeyContext } from '../../../docindex/entities/embedding-profile.js';
import { api, enc, expectError, waitForJob } from '../helpers.js';
import { type FakeEmbeddings, startFakeEmbeddings } from '../../../fakes/fake-embeddings.js';
import { TestRepo } from '../../support/git.js';
import { startTestStack, type TestStack } from '../../support/stack.js';
import { buildTinyModel } from '../../../fakes/tiny-model.js';

const KEY = 'sk-live-embedding-key-987654321';
let tmp: string;
let stack: TestStack;
let fake: FakeEmbeddings;
let repo: TestRepo;
const bodies: string[] = [];

async function call(method: string, p: string, body?: unknown) {
  const res = await api(stack, method, p, body);
  bodies.push(JSON.stringify(res.body));
  return res;
}
const count = async (sql: string, params: unknown[] = []) =>
  ((await stack.orm.em.fork().execute(`select count(*)::int as n from ${sql}`, params)) as { n: number }[])[0]!.n;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-profiles-'));
  const model = await buildTinyModel(tmp);
  fake = await startFakeEmbeddings({ dimensions: 8, apiKey: KEY });
  // The default local profile is made from EMBEDDING_MODEL_PATH at first start.
  stack = await startTestStack({ env: { EMBEDDING_MODEL_PATH: model.path } });
  repo = new TestRepo(path.join(tmp, 'router-kit'));
  repo.write({
    'README.md': '# Router Kit\n\nRouter Kit maps routes to pages.\n\n## Installation\n\nInstall it and configure the router once at startup.\n\n```bash\nnpm install router-kit\n```\n',
    'docs/caching.md': '# Caching\n\nResponses are cached in memory; the cache is cleared when the server restarts.\n',
  });
  repo.commit();
});
afterAll(async () => {
  await stack?.stop();
  await fake?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('embedding profiles', () => {
  it('creates the default local profile at first start, active when its model is there', async () => {
    const { body } = await call('GET', '/api/v1/settings/embedding');
    expect(body.activeProfileId).toBe('default-local');
    expect(body.profiles).toEqual([
      expect.objectContaining({ id: 'default-local', provider: 'local-transformers', model: 'tiny-bert', dimensions: null, default: true, enabled: true, active: true }),
    ]);
    expect(body.presets.map((p: { id: string }) => p.id)).toEqual(['openai', 'local-server', 'azure']);
  });

  it('indexes with the local model: every snippet gets an embedding, unchanged files are not embedded again', async () => {
    const res = await call('POST', '/api/v1/libs', { source: 'local', sourceUrl: repo.dir });
    const job = await waitForJob(stack, res.body.job.id);
    expect(job.status, JSON.stringify(job)).toBe('done');
    const snippets = await count('snippet');
    expect(snippets).toBeGreaterThan(0);
    expect(await count(`snippet_embedding where profile_id = 'default-local'`)).toBe(snippets);
    const [row] = (await stack.orm.em.fork().execute(`select dimensions, length(embedding) as bytes from snippet_embedding limit 1`)) as { dimensions: number; bytes: number }[];
    expect(row).toEqual({ dimensions: 32, bytes: 32 * 4 }); // float32 blobs
    expect((await call('GET', '/api/v1/libs')).body.libraries[0].embeddingCount).toBe(snippets);

    const first: { snippet_id: string }[] = await stack.orm.em.fork().execute(`select snippet_id, created_at from snippet_embedding order by snippet_id`);
    repo.write({ 'docs/caching.md': '# Caching\n\nResponses are cached on disk now; the cache survives restarts of the server.\n' });
    const again = await call('POST', `/api/v1/libs/${enc('/local/router-kit')}/index`);
    expect((await waitForJob(stack, again.body.job.id)).status).toBe('done');
    const after: { id: string }[] = await stack.orm.em.fork().execute(`select s.id, e.created_at from snippet s join snippet_embedding e on e.snippet_id = s.id join library_document d on d.id = s.document_id where d.file_path = 'README.md' order by s.id`);
    const kept = first.filter((r) => after.some((a) => a.id === r.snippet_id));
    expect(kept.length).toBe(after.length); // README's embeddings are the very same rows
    expect(await count(`snippet_embedding`)).toBe(await count('snippet'));
  });

  it('saves a remote profile with its key masked in every response', async () => {
    const res = await call('PUT', '/api/v1/settings/embedding', {
      profile: { id: 'remote', name: 'Fake OpenAI', provider: 'remote-compatible', model: 'text-embedding-3-small', config: { baseUrl: `${fake.url}/v1`, apiKey: KEY } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.profile).toMatchObject({ id: 'remote', default: false, active: false, config: { baseUrl: `${fake.url}/v1`, apiKey: '********' } });
    expect(res.body.reembedJobs).toBe(0);
    // Stored sealed (core/secrets.ts), for this profile and address.
    const [stored] = (await stack.orm.em.fork().execute(`select config->>'apiKey' as key from embedding_profile where id = 'remote'`)) as { key: string }[];
    expect(stored!.key).toMatch(/^gmsec:v1:/);
    expect(secretBox(stack.config).open(stored!.key, apiKeyContext('remote', `${fake.url}/v1`))).toBe(KEY);
    // Sending the mask back keeps the key.
    await call('PUT', '/api/v1/settings/embedding', { profile: { id: 'remote', provider: 'remote-compatible', model: 'text-embedding-3-small', config: { apiKey: '********', batchSize: 4 } } });
    const [kept] = (await stack.orm.em.fork().execute(`select config->>'apiKey' as key from embedding_profile where id = 'remote'`)) as { key: string }[];
    expect(kept!.key).toBe(stored!.key);
  });

  it('tests a connection: dimensions and latency, or the provider error as 502', async () => {
    const ok = await call('POST', '/api/v1/settings/embedding/test', { profileId: 'remote' });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ ok: true, model: 'text-embedding-3-small', dimensions: 8 });
    expect(ok.body.latencyMs).toBeGreaterThanOrEqual(0);
    const local = await call('POST', '/api/v1/settings/embedding/test', {});
    expect(local.body).toMatchObject({ ok: true, dimensions: 32 });
    const bad = await call('POST', '/api/v1/settings/embedding/test', {
      profile: { provider: 'remote-compatible', model: 'x', config: { baseUrl: `${fake.url}/v1`, apiKey: 'sk-not-the-right-key-1' } },
    });
    expectError(bad, 502, 'EMBEDDING_PROVIDER_ERROR');
    expect(bad.body.error).toContain('401');
    expect(JSON.stringify(bad.body)).not.toContain('sk-not-the-right-key-1');
    // An overloaded server fails the test at its first answer, not after the retries indexing would make.
    const before = fake.requests.length;
    fake.script.push({ status: 503, retryAfter: '5' }, { status: 503, retryAfter: '5' });
    const busy = await call('POST', '/api/v1/settings/embedding/test', { profileId: 'remote' });
    expectError(busy, 502, 'EMBEDDING_PROVIDER_ERROR');
    expect(busy.body.error).toContain('503');
    expect(fake.requests.length - before).toBe(1);
    fake.script.length = 0;
  });

  it('switching the active profile embeds the indexed libraries for it through indexing jobs', async () => {
    const res = await call('PUT', '/api/v1/settings/embedding', { profile: { id: 'remote', provider: 'remote-compatible', default: true } });
    expect(res.body.activeProfileId).toBe('remote');
    expect(res.body.reembedJobs).toBe(1);
    const { body } = await call('GET', `/api/v1/jobs?repositoryId=${enc('/local/router-kit')}&limit=1`);
    expect((await waitForJob(stack, body.jobs[0].id)).status).toBe('done');
    expect(await count(`snippet_embedding where profile_id = 'remote'`)).toBe(await count('snippet'));
    expect(await count(`snippet_embedding where profile_id = 'default-local'`)).toBe(await count('snippet')); // kept
    expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('a changed prefix embeds the active profile again: snippets with the passage prefix, queries with the query prefix', async () => {
    const before = fake.requests.length;
    const res = await call('PUT', '/api/v1/settings/embedding', {
      profile: { id: 'remote', provider: 'remote-compatible', config: { passagePrefix: 'passage: ', queryPrefix: 'query: ' } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.profile.config).toMatchObject({ passagePrefix: 'passage: ', queryPrefix: 'query: ' });
    expect(res.body.reembedJobs).toBe(1);
    const { body } = await call('GET', `/api/v1/jobs?repositoryId=${enc('/local/router-kit')}&limit=1`);
    expect((await waitForJob(stack, body.jobs[0].id)).status).toBe('done');
    const inputs = fake.requests.slice(before).flatMap((r) => r.body.input);
    const snippets = await count('snippet');
    expect(inputs).toHaveLength(snippets); // every snippet again: the old vectors were made without the prefix
    expect(inputs.every((t) => t.startsWith('passage: '))).toBe(true);
    expect(await count(`snippet_embedding where profile_id = 'remote'`)).toBe(snippets);

    const params = new URLSearchParams({ libraryId: '/local/router-kit', query: 'how do I install it', searchMode: 'semantic' });
    const found = await call('GET', `/api/v1/context?${params}`);
    expect(found.body.searchMode).toBe('semantic');
    expect(fake.requests.at(-1)!.body.input).toEqual(['query: how do I install it']);

    // Settings that do not change the vectors embed nothing again; a bad override is refused.
    const same = await call('PUT', '/api/v1/settings/embedding', { profile: { id: 'remote', provider: 'remote-compatible', config: { batchSize: 8 } } });
    expect(same.body.reembedJobs).toBe(0);
    expect(await count(`snippet_embedding where profile_id = 'remote'`)).toBe(snippets);
    expectError(await call('PUT', '/api/v1/settings/embedding', { profile: { id: 'remote', provider: 'remote-compatible', config: { pooling: 'cls' } } }), 400, 'INVALID_PROFILE');
    expectError(await call('PUT', '/api/v1/settings/embedding', { profile: { id: 'remote', provider: 'remote-compatible', config: { queryPrefix: 'x'.repeat(201) } } }), 400, 'VALIDATION_ERROR');
  });

  it('reports embedding progress after every batch, on the job and its event stream', async () => {
    const big = new TestRepo(path.join(tmp, 'many-sections'));
    big.write({ 'docs/guide.md': Array.from({ length: 70 }, (_, i) => `## Topic ${i}\n\nTopic ${i} explains one part of the many-sections guide in a sentence.\n`).join('\n') });
    big.commit();
    const res = await call('POST', '/api/v1/libs', { source: 'local', sourceUrl: big.dir });
    const job = await waitForJob(stack, res.body.job.id);
    expect(job.status, JSON.stringify(job)).toBe('done');
    expect(await count(`snippet where repository_id = '/local/many-sections'`)).toBe(70);
    expect(job).toMatchObject({ snippetsToEmbed: 70, embeddedSnippets: 70 });
    const events: { data: { stage: string; stageDetail: string; progress: number; snippetsToEmbed?: number; embeddedSnippets?: number } }[] = await stack.orm.em
      .fork()
      .execute(`select data from job_event where stream = ? and event = 'progress' order by seq`, [`job:${job.id}`]);
    const embedding = events.map((e) => e.data).filter((d) => d.stage === 'embedding');
    expect(embedding.map((d) => d.embeddedSnippets)).toEqual([0, 32, 64, 70]); // batches of 32
    expect(embedding.every((d) => d.snippetsToEmbed === 70)).toBe(true);
    expect(embedding.at(-1)).toMatchObject({ progress: 95, stageDetail: '70 of 70 snippets embedded with text-embedding-3-small' });
    for (let i = 1; i < embedding.length; i++) expect(embedding[i]!.progress).toBeGreaterThanOrEqual(embedding[i - 1]!.progress);
  });

  it('fails the job with a clear error when the provider fails, writing no embeddings', async () => {
    await call('PUT', '/api/v1/settings/embedding', { profile: { id: 'broken', name: 'Broken', provider: 'remote-compatible', model: 'm', default: true, config: { baseUrl: `${fake.url}/v1`, apiKey: 'sk-revoked-key-55555' } } });
    const { body } = await call('GET', `/api/v1/jobs?repositoryId=${enc('/local/router-kit')}&limit=1`);
    const job = await waitForJob(stack, body.jobs[0].id);
    expect(job.status).toBe('failed');
    expect(job.stage).toBe('embedding');
    expect(job.error).toContain('rejected the API key (401)');
    expect(job.error).not.toContain('sk-revoked-key-55555');
    expect(await count(`snippet_embedding where profile_id = 'broken'`)).toBe(0);
    // The library keeps serving what it had.
    expect((await call('GET', `/api/v1/libs/${enc('/local/router-kit')}`)).body.state).toBe('indexed');
  });

  it('keyword-only: a `none` profile makes nothing embed', async () => {
    const res = await call('PUT', '/api/v1/settings/embedding', { profile: { id: 'keywords', name: 'Keyword only', provider: 'none', default: true } });
    expect(res.body.activeProfileId).toBe('keywords');
    expect(res.body.reembedJobs).toBe(0);
    const again = await call('POST', `/api/v1/libs/${enc('/local/router-kit')}/index`);
    const job = await waitForJob(stack, again.body.job.id);
    expect(job.status).toBe('done');
  });

  it('rejects bad profiles with a stable code', async () => {
    expectError(await call('PUT', '/api/v1/settings/embedding', { profile: { provider: 'remote-compatible', model: 'm', config: { baseUrl: 'ftp://x' } } }), 400, 'INVALID_PROFILE');
    expectError(await call('PUT', '/api/v1/settings/embedding', { profile: { provider: 'quantum' } }), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', '/api/v1/settings/embedding/test', { profileId: 'nope' }), 404, 'PROFILE_NOT_FOUND');
  });

  it('never returns a secret', () => {
    for (const b of bodies) {
      expect(b).not.toContain(KEY);
      expect(b).not.toContain('sk-revoked-key-55555');
    }
  });
});
