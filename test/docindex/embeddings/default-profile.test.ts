import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, waitForJob } from '../helpers.js';
import { type FakeHub, startFakeHub } from '../../../fakes/fake-hub.js';
import { TestRepo } from '../../support/git.js';
import { startTestStack, type TestStack } from '../../support/stack.js';
import { buildTinyModel } from '../../../fakes/tiny-model.js';

/**
 * Semantic search by default: the profile made at first start downloads its model on first use (here from a fake
 * hub on 127.0.0.1), and an install that cannot download falls back to keyword search instead of failing.
 */
let tmp: string;
let hub: FakeHub;
let repo: TestRepo;
const stacks: TestStack[] = [];

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-default-profile-'));
  const model = await buildTinyModel(tmp);
  hub = await startFakeHub({ 'acme/tiny-hub': model.path });
  repo = new TestRepo(path.join(tmp, 'router-kit'));
  repo.write({
    'README.md': '# Router Kit\n\nRouter Kit maps routes to pages and renders each page with its components.\n',
    'docs/caching.md': '# Caching\n\nResponses are cached in memory; the cache is cleared when the server restarts.\n',
  });
  repo.commit();
});
afterAll(async () => {
  for (const s of stacks) await s.stop();
  await hub?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function stack(env: Record<string, string>): Promise<TestStack> {
  const s = await startTestStack({ env: { EMBEDDING_ALLOW_DOWNLOADS: 'true', EMBEDDING_DEFAULT_MODEL: 'acme/tiny-hub', EMBEDDING_CACHE_DIR: path.join(tmp, `cache-${stacks.length}`), ...env } });
  stacks.push(s);
  return s;
}

describe('the default local profile', () => {
  it('is active at first start and downloads its model on first use, with progress on the job', async () => {
    const s = await stack({ EMBEDDING_MODEL_HOST: hub.url });
    expect((await api(s, 'GET', '/api/v1/settings/embedding')).body.activeProfileId).toBe('default-local');
    const res = await api(s, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: repo.dir });
    const job = await waitForJob(s, res.body.job.id, 120_000);
    expect(job.status, JSON.stringify(job)).toBe('done');
    expect(hub.downloads.some((u) => u.startsWith('/acme/tiny-hub/resolve/main/onnx/model.onnx'))).toBe(true);
    const details = ((await s.orm.em.fork().execute(`select data->>'stageDetail' as d from job_event where stream = ? and event = 'progress' order by seq`, [`job:${job.id}`])) as { d: string }[]).map((r) => r.d);
    const downloading = details.filter((d) => d?.startsWith('downloading the embedding model acme/tiny-hub: '));
    expect(downloading.length).toBeGreaterThan(0);
    expect(downloading.at(-1)).toMatch(/: 100% of \d+ MB$/);
    const [{ n }] = (await s.orm.em.fork().execute(`select count(*)::int as n from snippet_embedding where profile_id = 'default-local'`)) as [{ n: number }];
    expect(n).toBeGreaterThan(0);
    const ctx = await api(s, 'GET', `/api/v1/context?libraryId=${encodeURIComponent('/local/router-kit')}&query=cache`);
    expect(ctx.body.searchMode).toBe('hybrid');
  });

  it('falls back to keyword search when the model cannot be downloaded: the job succeeds, the profile is disabled', async () => {
    const s = await stack({ EMBEDDING_MODEL_HOST: 'http://127.0.0.1:9/' });
    const before = hub.downloads.length;
    expect((await api(s, 'GET', '/api/v1/settings/embedding')).body.activeProfileId).toBe('default-local');
    const res = await api(s, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: repo.dir });
    const job = await waitForJob(s, res.body.job.id, 120_000);
    expect(job.status, JSON.stringify(job)).toBe('done');
    expect(job.stageDetail).toBeTruthy();
    const settings = (await api(s, 'GET', '/api/v1/settings/embedding')).body;
    expect(settings.activeProfileId).toBeNull();
    expect(settings.profiles[0]).toMatchObject({ id: 'default-local', enabled: false });
    const ctx = await api(s, 'GET', `/api/v1/context?libraryId=${encodeURIComponent('/local/router-kit')}&query=cache`);
    expect(ctx.status).toBe(200);
    expect(ctx.body.searchMode).toBe('keyword');
    expect(ctx.body.snippets[0].filePath).toBe('docs/caching.md');
    expect(hub.downloads.length).toBe(before);
    // Indexing again does not try again: the profile stays off until the user turns it back on.
    const again = await api(s, 'POST', `/api/v1/libs/${encodeURIComponent('/local/router-kit')}/index`);
    expect((await waitForJob(s, again.body.job.id, 120_000)).status).toBe('done');
  });
});
