import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActivityDeps } from '../../activities/deps.js';
import { createLogger } from '../../core/log.js';
import { crawlAndParse, documentId, type IndexStep, replaceSnippets, snippetId, Staging, type StepContext } from '../../docindex/pipeline.js';
import type { ParsedSnippet } from '../../docindex/parse/index.js';
import { StagedVectors } from '../../docindex/staged-vectors.js';
import { TestRepo } from '../support/git.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { api, waitForJob } from './helpers.js';
import { referenceVector, TRICKY_SNIPPETS } from './search-vector-reference.js';

/**
 * The swap's snippets (docindex/pipeline.ts, `swapStaged`) are inserted by PostgreSQL from the staged rows, with
 * the keyword vectors computed while the files were staged (docindex/staged-vectors.ts): the same ids the Node
 * functions give, and the same vectors `snippet_search_vector` gives, however a vector came to be.
 */
let stack: TestStack;
let tmp: string;
let deps: ActivityDeps;
let repo: TestRepo;
let libraryId: string;

const em = () => stack.orm.em.fork();
const sql = <T>(q: string, params: unknown[] = []) => em().execute(q, params) as Promise<T[]>;
const ctx = (): StepContext => ({ heartbeat: () => undefined, signal: new AbortController().signal, attempt: 1 });
/** Snippets whose stored vector is not what `snippet_search_vector` gives for them. */
const wrongVectors = async () =>
  (await sql<{ n: number }>(`select count(*)::int as n from snippet where repository_id = ? and search_vector is distinct from snippet_search_vector(title, breadcrumb, content)`, [libraryId]))[0]!.n;

beforeAll(async () => {
  stack = await startTestStack();
  deps = { config: stack.config, orm: stack.orm, jobs: stack.jobs, log: createLogger('silent'), temporal: stack.temporal };
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-vectors-'));
  repo = new TestRepo(path.join(tmp, 'vectors-lib'));
  repo.write({
    'README.md': '# Überblick\n\nDie `connectionPool` hält Verbindungen offen. Emoji 🚀 and naïve café text, scaling connections.\n\n## 5. Deploy\n\nRun `deployAll()` before the HTTPServer starts.\n',
    'src/pool.ts': '/** Opens a pooled connection. */\nexport function openConnection(maxSize: number): Pool {\n  return new Pool({ maxSize });\n}\n',
  });
  repo.commit('first');
  const res = await api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: repo.dir });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  libraryId = res.body.library.id;
  expect((await waitForJob(stack, res.body.job.id)).status).toBe('done');
});
afterAll(async () => {
  await stack?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** An unfinished indexing job of the library, owned by run `r`. */
async function ownedJob(): Promise<IndexStep> {
  const detail = { repositoryId: libraryId, versionId: null, totalFiles: 0, processedFiles: 0 };
  const { job } = await stack.jobs.create(stack.orm.em, { kind: 'index', workflowId: `vectors-${Date.now()}`, status: 'running', stage: 'queued', detail });
  await stack.jobs.update(stack.orm.em, job.id, { runId: 'r' });
  return { jobId: job.id, repositoryId: libraryId, versionId: null, heartbeatTimeoutMs: 10_000, runId: 'r' };
}
const finished = (step: IndexStep) => stack.jobs.update(stack.orm.em, step.jobId, { status: 'done', completedAt: new Date() });

describe('the swap', () => {
  it('gives documents and snippets the ids documentId and snippetId give, non-ASCII text included', async () => {
    const rows = await sql<{ id: string; document_id: string; file_path: string; ordinal: number; content: string }>(
      `select s.id, s.document_id, d.file_path, s.ordinal, s.content from snippet s join library_document d on d.id = s.document_id where s.repository_id = ?`,
      [libraryId],
    );
    expect(rows.length).toBeGreaterThan(2);
    expect(rows.some((r) => /[^ -~\s]/.test(r.content))).toBe(true);
    for (const r of rows) {
      expect(r.document_id).toBe(documentId(libraryId, null, r.file_path));
      expect(r.id).toBe(snippetId(r.document_id, r));
    }
    expect(await wrongVectors()).toBe(0);
  });

  it('inserts the vectors computed while staging, and computes those missing', async () => {
    repo.write({ 'docs/more.md': '# Retries\n\nRetried activities are idempotent: each one writes its rows under the job lock, so a retry is safe.\n\n## Backoff\n\nThe backoff doubles after every failed attempt, up to a minute between two attempts.\n' });
    repo.commit('more');
    const step = await ownedJob();
    const crawl = await crawlAndParse(deps, step, ctx());
    expect(crawl).toMatchObject({ changedFiles: 1 });
    // Staged with one vector per snippet, each what the function gives for it.
    const [staged] = await sql<{ vectors: number; snippets: number; wrong: number }>(
      `select cardinality(vectors) as vectors, jsonb_array_length(snippets) as snippets,
              (select count(*)::int from rows from (jsonb_to_recordset(d.snippets) as (title text, breadcrumb text, content text)) with ordinality as s(title, breadcrumb, content, n)
               where d.vectors[s.n::int] is distinct from snippet_search_vector(s.title, s.breadcrumb, s.content)) as wrong
       from staged_document d where job_id = ? and not stat_only`,
      [step.jobId],
    );
    expect(staged).toEqual({ vectors: 2, snippets: 2, wrong: 0 });
    // The swap copies a staged vector as it is (here one marked so), and the trigger fills one that is missing.
    await sql(`update staged_document set vectors = array[to_tsvector('simple', 'marked'), null] where job_id = ?`, [step.jobId]);
    expect(await replaceSnippets(deps, step, crawl)).toMatchObject({ documentsWritten: 1, snippetsWritten: 2 });
    const swapped = await sql<{ ordinal: number; v: string; right: boolean }>(
      `select ordinal, search_vector::text as v, search_vector = snippet_search_vector(title, breadcrumb, content) as right
       from snippet s where document_id = ? order by ordinal`,
      [documentId(libraryId, null, 'docs/more.md')],
    );
    expect(swapped).toEqual([{ ordinal: 0, v: "'marked':1", right: false }, expect.objectContaining({ ordinal: 1, right: true })]);
    await sql(`update snippet set search_vector = snippet_search_vector(title, breadcrumb, content) where document_id = ?`, [documentId(libraryId, null, 'docs/more.md')]);
    await finished(step);
  });
});

describe('Staging', () => {
  const snippet = (content: string): ParsedSnippet => ({ type: 'info', title: 'T', content, language: null, breadcrumb: 'B', tokenCount: 3, ordinal: 0 });
  const stagedVector = async (jobId: string) =>
    (await sql<{ v: string }>(`select vectors[1]::text as v from staged_document where job_id = ? and file_path = 'x.md'`, [jobId]))[0]?.v;

  it('computes the vectors of a file staged again from its new snippets', async () => {
    const step = await ownedJob();
    const first = new Staging(deps, step, new Map());
    await first.changed('x.md', 'c1', [snippet('alpha')]);
    await first.finish();
    expect(await stagedVector(step.jobId)).toContain("'alpha'");
    const again = new Staging(deps, step, await Staging.earlierRows(em(), step.jobId));
    await again.changed('x.md', 'c2', [snippet('omega')]);
    await again.finish();
    const v = await stagedVector(step.jobId);
    expect(v).toContain("'omega'");
    expect(v).not.toContain("'alpha'");
    await finished(step);
  });

  it('computes each title and breadcrumb part once per batch, giving every snippet the vector the function gives', async () => {
    const step = await ownedJob();
    const staging = new Staging(deps, step, new Map());
    // Two files sharing titles and breadcrumbs (null, empty, numbered, long), each value in several snippets.
    const of = (s: (typeof TRICKY_SNIPPETS)[number], ordinal: number, codeWords?: string): ParsedSnippet & { codeWords?: string } => ({
      type: 'info', title: s.title, content: s.content, language: null, breadcrumb: s.breadcrumb, tokenCount: 3, ordinal, ...(codeWords !== undefined && { codeWords }),
    });
    const shared = TRICKY_SNIPPETS.map((s, i) => ({ ...s, breadcrumb: TRICKY_SNIPPETS[(i + 1) % TRICKY_SNIPPETS.length]!.breadcrumb }));
    await staging.changed('a.md', 'a', [...TRICKY_SNIPPETS, ...shared].map((s, i) => of(s, i)));
    await staging.changed('b.md', 'b', [...shared].reverse().map((s, i) => of({ ...s, content: `${s.content} more` }, i, 'connection Pool')));
    // The parts' calls counted, by a stand-in that counts and calls the real one.
    await sql(`create sequence part_calls`);
    for (const part of ['snippet_title_vector', 'snippet_breadcrumb_vector']) {
      await sql(`alter function ${part}(text) rename to ${part}_counted`);
      await sql(`create function ${part}(value text) returns tsvector language sql volatile as $$ select nextval('part_calls'); select ${part}_counted(value) $$`);
    }
    try {
      await staging.finish();
    } finally {
      for (const part of ['snippet_title_vector', 'snippet_breadcrumb_vector']) {
        await sql(`drop function ${part}(text)`);
        await sql(`alter function ${part}_counted(text) rename to ${part}`);
      }
    }
    // Five distinct titles (null and empty are one) and five breadcrumbs, against 18 snippets.
    const [calls] = await sql<{ n: number }>(`select last_value::int as n from part_calls`);
    await sql(`drop sequence part_calls`);
    expect(calls!.n).toBe(10);
    const rows = await sql<{ file_path: string; vectors: number; snippets: number; same: number }>(
      `select file_path, cardinality(vectors) as vectors, jsonb_array_length(snippets) as snippets,
              (select count(*)::int from rows from (jsonb_to_recordset(d.snippets) as (title text, breadcrumb text, content text, "codeWords" text))
                 with ordinality as s(title, breadcrumb, content, code_words, n)
               where tsvectorsend(d.vectors[s.n::int]) = tsvectorsend(${referenceVector('s.title', 's.breadcrumb', 's.content', 'coalesce(s.code_words, gristmill_identifier_words(s.content))')})) as same
       from staged_document d where job_id = '${step.jobId}' order by file_path`, // not bound: the expression's regular expression has a '?'
    );
    const n = TRICKY_SNIPPETS.length;
    expect(rows).toEqual([
      { file_path: 'a.md', vectors: 2 * n, snippets: 2 * n, same: 2 * n },
      { file_path: 'b.md', vectors: n, snippets: n, same: n },
    ]);
    await finished(step);
  });

  it('writes a batch while the crawl goes on, and throws its failure at the next flush', async () => {
    const step = await ownedJob();
    // Another run's attempt: its writes are refused, but only the batch's own write knows it.
    const stale = new Staging(deps, { ...step, runId: 'stale' }, new Map());
    for (let i = 0; i < 100; i++) await stale.changed(`f${i}.md`, `c${i}`, [snippet(`alpha ${i}`)]);
    await stale.settled();
    await expect(stale.finish()).rejects.toThrow(/no longer run by this workflow run/);
    expect(await sql<{ n: number }>(`select count(*)::int as n from staged_document where job_id = ?`, [step.jobId])).toEqual([{ n: 0 }]);
    // The owner's batches are all written, in order, with their content vectors.
    const owner = new Staging(deps, step, new Map());
    for (let i = 0; i < 250; i++) await owner.changed(`f${i}.md`, `c${i}`, [snippet(`alpha ${i}`)]);
    await owner.finish();
    const [row] = await sql<{ n: number; literals: number; wrong: number }>(
      `select count(*)::int as n, count(*) filter (where cardinality(content_vectors) = 1 and content_vectors[1] is not null)::int as literals,
              count(*) filter (where vectors[1] is distinct from snippet_search_vector('T', 'B', snippets->0->>'content'))::int as wrong
       from staged_document where job_id = ?`,
      [step.jobId],
    );
    expect(row).toEqual({ n: 250, literals: 250, wrong: 0 });
    await finished(step);
  });

  it('computes vectors for the job\'s owner only', async () => {
    const step = await ownedJob();
    const first = new Staging(deps, step, new Map());
    await first.changed('x.md', 'c1', [snippet('alpha')]);
    await first.finish();
    await sql(`update staged_document set vectors = null where job_id = ?`, [step.jobId]);
    const time = <T>(_part: string, work: () => Promise<T>) => work();
    await new StagedVectors(em, step.jobId, 'stale', time).finish();
    expect(await stagedVector(step.jobId)).toBeNull();
    await new StagedVectors(em, step.jobId, step.runId, time).finish();
    expect(await stagedVector(step.jobId)).toContain("'alpha'");
    await finished(step);
  });

  it('computes at the end the vectors of files an earlier attempt staged without them', async () => {
    const step = await ownedJob();
    const first = new Staging(deps, step, new Map());
    await first.changed('x.md', 'c1', [snippet('alpha')]);
    await first.finish();
    await sql(`update staged_document set vectors = null where job_id = ?`, [step.jobId]); // as if it had stopped before
    const retry = new Staging(deps, step, await Staging.earlierRows(em(), step.jobId));
    expect(retry.reusable('x.md', 'c1')).toBe(true);
    expect(await retry.changed('x.md', 'c1', null)).toBe('reused');
    await retry.finish();
    expect(await stagedVector(step.jobId)).toContain("'alpha'");
    await finished(step);
  });
});

describe('the snippet table', () => {
  it('computes the vector of a row written without one, and again when its text changes', async () => {
    const [doc] = await sql<{ id: string }>(`select id from library_document where repository_id = ? limit 1`, [libraryId]);
    await sql(
      `insert into snippet (id, document_id, repository_id, version_id, type, title, content, language, breadcrumb, token_count, ordinal, created_at)
       values ('by-hand', ?, ?, null, 'info', 'Scaling', 'Connections are pooled.', null, null, 4, 99, now())`,
      [doc!.id, libraryId],
    );
    const vector = async () => (await sql<{ v: string }>(`select search_vector::text as v from snippet where id = 'by-hand'`))[0]!.v;
    expect(await vector()).toContain("'connect'");
    await sql(`update snippet set content = 'Workers are restarted.' where id = 'by-hand'`);
    expect(await vector()).toContain("'restart'");
    expect(await vector()).not.toContain("'connect'");
    expect(await wrongVectors()).toBe(0);
    await sql(`delete from snippet where id = 'by-hand'`);
  });
});
