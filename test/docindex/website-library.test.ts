import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../db/entities/job.js';
import { indexJobKind } from '../../docindex/kind.js';
import { FakeDocsSite } from '../../fakes/fake-docs-site.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { api, enc, expectError, snippetsOf, waitForJob } from './helpers.js';

/** A documentation site as a library, end to end: registered, read into snippets, and refreshed by what changed. */
let stack: TestStack;
let site: FakeDocsSite;
const LIB = () => `/websites/127_0_0_1_${new URL(site.url).port}_docs`;

beforeAll(async () => {
  site = await FakeDocsSite.start({ slowMs: 50 });
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
  await site?.close();
});

const text = async () => (await snippetsOf(stack, LIB())).map((s) => s.content).join('\n');

describe('a website library', () => {
  it('is read from its sitemap into snippets, without navigation or boilerplate', async () => {
    const res = await api(stack, 'POST', '/api/v1/libs', { source: 'website', sourceUrl: `${site.url}/docs/` });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.library).toMatchObject({ id: LIB(), source: 'website', sourceUrl: `${site.url}/docs/` });
    const job = await waitForJob(stack, res.body.job.id);
    expect(job.status, JSON.stringify(job)).toBe('done');
    const snippets = await snippetsOf(stack, LIB());
    const all = snippets.map((s) => s.content).join('\n');
    expect(all).toContain('npm install fakelib --save-exact');
    expect(all).toContain('temperature: 230');
    expect(all).not.toMatch(/Edit this page|Copyright FakeLib|robots.txt says no/);
    const ctx = await api(stack, 'GET', `/api/v1/context?${new URLSearchParams({ libraryId: LIB(), query: 'oven temperature yaml' })}`);
    expect(ctx.body.snippets[0].content).toContain('temperature');
  });

  it('refreshes by fetching again only the page that changed', async () => {
    site.resetCounts();
    site.setPage(
      '/docs/api',
      '<html><head><title>API</title></head><body><main><h1>API reference</h1><p>New in this release: <code>proof(dough, minutes)</code> lets the dough rise before it is baked, for as long as it is told.</p></main></body></html>',
    );
    const res = await api(stack, 'POST', `/api/v1/libs/${enc(LIB())}/index`);
    expect((await waitForJob(stack, res.body.job.id)).status).toBe('done');
    expect(site.count('/docs/api', 200)).toBe(1);
    expect(site.count('/docs/getting-started', 304)).toBe(1);
    expect(site.count('/docs/getting-started', 200)).toBe(0);
    expect(site.count('/docs/guide/config', 200)).toBe(0);
    expect(await text()).toContain('proof(dough, minutes)');
  });

  it('stays served while it is indexed again: its state stays indexed, and only a first index answers 503', async () => {
    const em = stack.orm.em.fork();
    // The running job of a re-index, as the job store hands it to the kind.
    const job: Pick<Job, 'detail' | 'status' | 'completedAt'> = { detail: { repositoryId: LIB(), versionId: null }, status: 'running', completedAt: null };
    await em.transactional((tx) => indexJobKind.onChange!(tx, job as Job, { status: 'queued', completedAt: null }));
    expect(((await em.fork().execute('select state from library where id = ?', [LIB()])) as { state: string }[])[0]!.state).toBe('indexed');
    const ctx = await api(stack, 'GET', `/api/v1/context?${new URLSearchParams({ libraryId: LIB(), query: 'oven' })}`);
    expect(ctx.status).toBe(200);
  });

  it('refuses a site at an address the outbound guard refuses, and versions', async () => {
    expectError(await api(stack, 'POST', '/api/v1/libs', { source: 'website', sourceUrl: 'http://169.254.169.254/docs/' }), 400, 'ADDRESS_NOT_ALLOWED');
    expectError(await api(stack, 'POST', '/api/v1/libs', { source: 'website', sourceUrl: 'file:///etc/passwd' }), 400, 'INVALID_SOURCE_URL');
    expectError(await api(stack, 'POST', `/api/v1/libs/${enc(LIB())}/versions`, { tag: 'v1' }), 400, 'VERSIONS_NOT_SUPPORTED');
  });
});
