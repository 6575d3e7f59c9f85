import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git, TestRepo, WIDGET_GUIDE } from '../support/git.js';
import { SseClient } from '../support/sse.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { api, enc, expectError, snippetsOf, waitForJob } from './helpers.js';

let stack: TestStack;
let tmp: string;
let repo: TestRepo;

const README = `# Widget Kit

Widget Kit renders widgets in the browser and on the server.

## Installation

Install it with npm:

\`\`\`bash
npm install widget-kit
\`\`\`
`;
beforeAll(async () => {
  stack = await startTestStack();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-local-'));
  repo = new TestRepo(path.join(tmp, 'widget-kit'));
  repo.write({
    'README.md': README,
    'docs/guide.md': WIDGET_GUIDE,
    'docs/legacy-api.md': '# Legacy\n\nThe old API that nobody should use any more, kept for reference only.\n',
    'CHANGELOG.md': '# Changelog\n\n## 1.0.0\n\nEverything changed in this release, as it always does.\n',
    'gristmill.json': JSON.stringify({ excludeFiles: ['docs/legacy*'], rules: ['Always call render once per root element.'], previousVersions: [{ tag: 'v0.9.0', title: 'Old' }, { tag: 'v0.1.0' }] }),
  });
  repo.commit('first');
  repo.tag('v0.9.0');
  repo.tag('v1.0.0');
});
afterAll(async () => {
  await stack?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function readmeSnippetIds(): Promise<string[]> {
  const rows: { id: string }[] = await stack.orm.em
    .fork()
    .execute(`select s.id from snippet s join library_document d on d.id = s.document_id where d.file_path = 'README.md' and d.version_id is null order by s.id`);
  return rows.map((r) => r.id);
}

describe('a local library', () => {
  let libraryId: string;

  it('is registered and indexed through the API, Temporal and Postgres', async () => {
    const res = await api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: repo.dir, description: 'Widgets everywhere' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    libraryId = res.body.library.id;
    expect(libraryId).toBe('/local/widget-kit');
    expect(res.body.library).toMatchObject({ title: 'widget-kit', source: 'local', sourceUrl: repo.dir, state: 'pending', totalSnippets: 0, lastIndexedAt: null });
    expect(res.body.job).toMatchObject({ repositoryId: libraryId, versionId: null, status: 'queued', progress: 0, stage: 'queued' });

    const job = await waitForJob(stack, res.body.job.id);
    expect(job, JSON.stringify(job)).toMatchObject({ status: 'done', progress: 100, error: null, totalFiles: 2, processedFiles: 2 });
    // The config named a tag that does not exist: a warning, not a doomed version.
    const events: { d: string }[] = await stack.orm.em.fork().execute(`select data->>'stageDetail' as d from job_event where stream = ? and event = 'progress'`, [`job:${job.id}`]);
    expect(events.map((e) => e.d).join(' ')).toContain('previousVersions: no tag v0.1.0; not registered');
    expect(job.startedAt).not.toBeNull();
    expect(job.completedAt).not.toBeNull();

    const lib = (await api(stack, 'GET', `/api/v1/libs/${enc(libraryId)}`)).body;
    expect(lib.state).toBe('indexed');
    expect(lib.totalSnippets).toBeGreaterThanOrEqual(4);
    expect(lib.lastIndexedAt).not.toBeNull();
    expect(lib.trustScore).toBeGreaterThan(0);
    // previousVersions in the config registered a version.
    expect(lib.versions).toEqual(['v0.9.0']);
    // The folder is a repository: its checked-out commit is the index's.
    const [row] = (await stack.orm.em.fork().execute('select last_commit from library where id = ?', [libraryId])) as { last_commit: string | null }[];
    expect(row!.last_commit).toBe(git(repo.dir, 'rev-parse', 'HEAD'));

    const snippets = await snippetsOf(stack, libraryId);
    const files = [...new Set(snippets.map((s) => s.file_path))];
    // excludeFiles and Context7's default excludes (CHANGELOG) applied; the config file itself is not a document.
    expect(files).toEqual(['README.md', 'docs/guide.md']);
    expect(snippets).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'code', content: expect.stringContaining('npm install widget-kit') }),
        expect.objectContaining({ type: 'info', breadcrumb: expect.stringContaining('Rendering') }),
      ]),
    );
    const rules = await stack.orm.em.fork().execute('select version_id, rules from library_rules where repository_id = ?', [libraryId]);
    expect(rules).toEqual([{ version_id: null, rules: ['Always call render once per root element.'] }]);
  });

  it('lists it with its versions, embeddings and indexed versions', async () => {
    const { body } = await api(stack, 'GET', '/api/v1/libs');
    expect(body).toMatchObject({ total: 1, limit: 50, offset: 0 });
    expect(body.libraries[0]).toMatchObject({ id: libraryId, versions: ['v0.9.0'], embeddingCount: 0, indexedVersions: ['main'] });
    expect((await api(stack, 'GET', '/api/v1/libs?state=pending')).body.total).toBe(0);
    expect((await api(stack, 'GET', '/api/v1/libs?limit=500')).body.limit).toBe(200);
  });

  it('re-indexes incrementally: unchanged files keep their snippets, changed and deleted ones are replaced', async () => {
    const before = await snippetsOf(stack, libraryId);
    const readmeIds = await readmeSnippetIds();
    // Two dozen sections about "gadgets": enough snippets for the word to be common, so it has a stored frequency.
    const sections = Array.from({ length: 24 }, (_, i) => `## Gadget ${i}\n\nGadget number ${i} plugs into a widget tree, and this sentence says so at length.\n`);
    const termRow = async (lexeme: string) =>
      (await stack.orm.em.fork().execute(`select snippets from search_term where repository_id = ? and version_id is null and lexeme = ?`, [libraryId, lexeme])) as { snippets: number }[];
    expect(await termRow('gadget')).toEqual([]);
    repo.write({
      'docs/guide.md': WIDGET_GUIDE.replace('mount a widget tree', 'mount a whole widget tree'),
      'docs/extra.md': `# Extra\n\nMore words about widgets, enough of them to count as a snippet.\n\n${sections.join('\n')}`,
    });
    const res = await api(stack, 'POST', `/api/v1/libs/${enc(libraryId)}/index`);
    expect(res.status).toBe(201);
    expect(res.body.versionJobs).toHaveLength(1); // v0.9.0, registered from the config
    const job = await waitForJob(stack, res.body.job.id);
    expect(job.status).toBe('done');
    expect(job.stageDetail ?? '').not.toContain('undefined');
    const after = await snippetsOf(stack, libraryId);
    expect(after.some((s) => s.content.includes('mount a whole widget tree'))).toBe(true);
    expect(after.some((s) => s.content.includes('mount a widget tree'))).toBe(false);
    expect(after.some((s) => s.file_path === 'docs/extra.md')).toBe(true);
    expect(after.length).toBeGreaterThan(before.length);
    const readmeIdsAfter = await readmeSnippetIds();
    expect(readmeIdsAfter).toEqual(readmeIds);
    // The run stored, with its snippets, how many hold the word (keyword search's df; docindex/search/keyword.ts).
    const gadgets = after.filter((s) => /gadget/i.test(`${s.title} ${s.breadcrumb} ${s.content}`)).length;
    expect(gadgets).toBeGreaterThanOrEqual(24);
    expect(await termRow('gadget')).toEqual([{ snippets: gadgets }]);

    repo.write({ 'docs/extra.md': null });
    const again = await api(stack, 'POST', `/api/v1/libs/${enc(libraryId)}/index`);
    expect((await waitForJob(stack, again.body.job.id)).status).toBe('done');
    expect((await snippetsOf(stack, libraryId)).some((s) => s.file_path === 'docs/extra.md')).toBe(false);
    expect(await termRow('gadget')).toEqual([]); // rewritten with the snippets, not kept from the last run
  });

  it('re-indexes with nothing changed in two activities, the crawl and one that finishes, and still finishes', async () => {
    const before = await snippetsOf(stack, libraryId);
    const indexedAt = async () =>
      ((await stack.orm.em.fork().execute(`select last_indexed_at from library where id = ?`, [libraryId])) as { last_indexed_at: string }[])[0]!.last_indexed_at;
    const lastIndexed = await indexedAt();
    const res = await api(stack, 'POST', `/api/v1/libs/${enc(libraryId)}/index`);
    expect((await waitForJob(stack, res.body.job.id)).status).toBe('done');
    const [row] = (await stack.orm.em.fork().execute('select workflow_id from job where id = ?', [res.body.job.id])) as { workflow_id: string }[];
    const history = await stack.temporal.workflow.getHandle(row!.workflow_id).fetchHistory();
    const steps = history.events!.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    // docindex/workflow.ts: replaceSnippets, embedSnippets and updateStatistics run as one activity here.
    expect(steps.filter((s) => !['requestSlot', 'startJob', 'finishJob'].includes(s))).toEqual(['crawlAndParse', 'finishUnchanged']);
    expect(await snippetsOf(stack, libraryId)).toEqual(before);
    expect(new Date(await indexedAt()).getTime()).toBeGreaterThan(new Date(lastIndexed).getTime());
  });

  it('indexes a version at its tag without touching the working tree', async () => {
    repo.write({ 'README.md': README.replace('Widget Kit', 'Widget Kit 2') });
    repo.commit('second');
    const status = git(repo.dir, 'status', '--porcelain');
    const head = git(repo.dir, 'rev-parse', 'HEAD');

    const res = await api(stack, 'POST', `/api/v1/libs/${enc(libraryId)}/versions`, { tag: 'v1.0.0', title: 'One' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.version).toMatchObject({ id: `${libraryId}/v1.0.0`, tag: 'v1.0.0', title: 'One', state: 'pending' });
    expect(res.body.job.versionId).toBe(`${libraryId}/v1.0.0`);
    const job = await waitForJob(stack, res.body.job.id);
    expect(job.status).toBe('done');

    const versionSnippets = await snippetsOf(stack, libraryId, `${libraryId}/v1.0.0`);
    expect(versionSnippets.some((s) => s.content.includes('# Widget Kit 2') || s.breadcrumb?.includes('Widget Kit 2'))).toBe(false);
    expect(versionSnippets.length).toBeGreaterThan(0);
    const { versions } = (await api(stack, 'GET', `/api/v1/libs/${enc(libraryId)}/versions`)).body;
    expect(versions.find((v: { tag: string }) => v.tag === 'v1.0.0')).toMatchObject({ state: 'indexed', commitHash: git(repo.dir, 'rev-parse', 'v1.0.0^{commit}') });
    // The user's repository is as it was.
    expect(git(repo.dir, 'status', '--porcelain')).toBe(status);
    expect(git(repo.dir, 'rev-parse', 'HEAD')).toBe(head);
    // The version's rules went to its own row.
    const rows = await stack.orm.em.fork().execute('select version_id from library_rules where repository_id = ? order by version_id nulls first', [libraryId]);
    expect(rows).toEqual([{ version_id: null }, { version_id: `${libraryId}/v0.9.0` }, { version_id: `${libraryId}/v1.0.0` }]);
  });

  it('discovers the tags of a local repository', async () => {
    const res = await api(stack, 'POST', `/api/v1/libs/${enc(libraryId)}/versions/discover`);
    expect(res.body).toEqual({ tags: ['v0.9.0', 'v1.0.0'] });
  });

  it('streams a job: the state first, then its events, closing when it is done', async () => {
    const { body } = await api(stack, 'POST', `/api/v1/libs/${enc(libraryId)}/versions/v1.0.0/index`);
    // Last-Event-ID 0: everything from the start, whenever this client connects.
    const client = await SseClient.open(`${stack.url}/api/v1/jobs/${body.job.id}/stream`, { 'Last-Event-ID': '0' });
    await client.waitFor((c) => c.ended, 30_000);
    const messages = client.events.map((e) => JSON.parse(e.data!));
    expect(messages[0]).toMatchObject({ jobId: body.job.id, repositoryId: libraryId, event: 'state', data: { id: body.job.id } });
    expect(messages.some((m) => m.event === 'progress' && typeof m.data.stage === 'string' && typeof m.data.progress === 'number')).toBe(true);
    expect(messages.at(-1)).toMatchObject({ event: 'status', data: { status: 'done' } });
    for (const f of client.events) expect(f.id).toMatch(/^\d+$/);

    // A finished job's stream ends right after its state.
    const done = await SseClient.open(`${stack.url}/api/v1/jobs/${body.job.id}/stream`);
    await done.waitFor((c) => c.ended);
    expect(done.events).toHaveLength(1);
  });

  it('answers bad input with the right status and code', async () => {
    expectError(await api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: repo.dir }), 409, 'LIBRARY_EXISTS');
    expectError(await api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: 'relative/path' }), 400, 'INVALID_SOURCE_URL');
    expectError(await api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: path.join(tmp, 'missing') }), 400, 'INVALID_SOURCE_URL');
    expectError(await api(stack, 'POST', '/api/v1/libs', { source: 'svn', sourceUrl: 'x' }), 400, 'VALIDATION_ERROR');
    expectError(await api(stack, 'POST', '/api/v1/libs', { source: 'git-host', sourceUrl: 'not a url' }), 400, 'INVALID_SOURCE_URL');
    expectError(await api(stack, 'GET', `/api/v1/libs/${enc('/no/such')}`), 404, 'LIBRARY_NOT_FOUND');
    expectError(await api(stack, 'POST', `/api/v1/libs/${enc(libraryId)}/versions`, { tag: 'v9.9.9' }), 400, 'TAG_NOT_FOUND');
    expectError(await api(stack, 'POST', `/api/v1/libs/${enc(libraryId)}/versions`, { tag: 'v1.0.0' }), 409, 'VERSION_EXISTS');
    expectError(await api(stack, 'POST', `/api/v1/libs/${enc(libraryId)}/versions`, { tag: 'bad tag' }), 400, 'INVALID_TAG');
    expectError(await api(stack, 'DELETE', `/api/v1/libs/${enc(libraryId)}/versions/nope`), 404, 'VERSION_NOT_FOUND');
    expectError(await api(stack, 'GET', '/api/v1/jobs/nope'), 404, 'JOB_NOT_FOUND');
    expectError(await api(stack, 'PATCH', `/api/v1/libs/${enc(libraryId)}`, {}), 400, 'VALIDATION_ERROR');
    expectError(await api(stack, 'GET', '/api/v1/libs?state=sleeping'), 400, 'VALIDATION_ERROR');
    expectError(await api(stack, 'PUT', '/api/v1/settings/indexing', { concurrency: 'two' }), 400, 'VALIDATION_ERROR');
  });

  it('updates title, description and branch', async () => {
    const res = await api(stack, 'PATCH', `/api/v1/libs/${enc(libraryId)}`, { title: 'Widget Kit', description: null });
    expect(res.status).toBe(200);
    expect(res.body.library).toMatchObject({ title: 'Widget Kit', description: null });
  });

  it('lists jobs with filters and a lenient limit', async () => {
    const all = (await api(stack, 'GET', `/api/v1/jobs?repositoryId=${enc(libraryId)}`)).body;
    expect(all.total).toBeGreaterThanOrEqual(5);
    expect(all.jobs.every((j: { repositoryId: string }) => j.repositoryId === libraryId)).toBe(true);
    expect((await api(stack, 'GET', '/api/v1/jobs?limit=abc')).body.jobs.length).toBeLessThanOrEqual(20);
    expect((await api(stack, 'GET', '/api/v1/jobs?limit=2')).body.jobs).toHaveLength(2);
    expect((await api(stack, 'GET', '/api/v1/jobs?status=failed')).body.total).toBe(0);
    expect((await api(stack, 'GET', '/api/v1/jobs?status=done')).body.total).toBe(all.total);
  });

  it('deletes a version, then the library, leaving nothing behind', async () => {
    const v = await api(stack, 'DELETE', `/api/v1/libs/${enc(libraryId)}/versions/v1.0.0`);
    expect(v.body).toMatchObject({ id: `${libraryId}/v1.0.0`, deleted: true });
    expect(await snippetsOf(stack, libraryId, `${libraryId}/v1.0.0`)).toEqual([]);

    const res = await api(stack, 'DELETE', `/api/v1/libs/${enc(libraryId)}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: libraryId, deleted: true });
    const count = async (sql: string) => ((await stack.orm.em.fork().execute(`select count(*)::int as n from ${sql}`)) as { n: number }[])[0]!.n;
    for (const table of ['library', 'library_version', 'library_document', 'snippet', 'search_term', 'library_rules', 'staged_document']) {
      expect(await count(table), table).toBe(0);
    }
    expect(await count(`job where kind = 'index'`)).toBe(0);
    expect(await count(`job_event where stream like 'repo:%' or stream like 'job:%' or stream = 'kind:index'`)).toBe(0);
    expectError(await api(stack, 'GET', `/api/v1/libs/${enc(libraryId)}`), 404, 'LIBRARY_NOT_FOUND');
  });
});
