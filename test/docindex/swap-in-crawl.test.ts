import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActivityDeps } from '../../activities/deps.js';
import { createLogger } from '../../core/log.js';
import { crawlAndParse, type IndexStep, OpenSwap, replaceSnippets, scopeLockKey, type StepContext, Stopwatch, SwapSlots } from '../../docindex/pipeline.js';
import { failureType, JOB_STOPPED } from '../../jobs/contract.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { until } from '../support/until.js';
import { api, waitForJob } from './helpers.js';

/**
 * The crawl that writes the staged files into the scope as it goes (docindex/pipeline.ts, `OpenSwap`): its writes are
 * one transaction, committed at the crawl's end for the job's owner only, so readers see the old snippets until then;
 * a crawl whose swap does not commit leaves the old snippets and its staged rows, which the next attempt resumes
 * from. The steps are called directly, as a job's owner; the test stops a crawl where it wants by holding a row it
 * is about to write.
 */
let stack: TestStack;
let tmp: string;
let dir: string;
let deps: ActivityDeps;
let libraryId: string;
let firstJobId: string;

/** Pages enough for several of the staging's batches of 100 files. */
const PAGES = 230;
const writePages = (edition: string) => {
  for (let i = 0; i < PAGES; i++) {
    fs.writeFileSync(path.join(dir, `page-${String(i).padStart(3, '0')}.md`), `# Page ${i}\n\nThe ${edition} edition of page ${i} explains how widget ${i} retries a request.\n`);
  }
};

const sql = async <T>(q: string, params: unknown[] = []) => (await stack.orm.em.fork().execute(q, params)) as T[];
const ctx = (): StepContext => ({ heartbeat: () => undefined, signal: new AbortController().signal, attempt: 1 });
/** What a reader sees of the library: its snippets' editions. */
const editions = async () =>
  (await sql<{ edition: string; n: number }>(
    `select substring(content from 'The (\\w+) edition') as edition, count(*)::int as n from snippet where repository_id = ? group by 1 order by 1`,
    [libraryId],
  )).map((r) => `${r.edition}:${r.n}`);
const staged = async (jobId: string) => (await sql<{ n: number }>('select count(*)::int as n from staged_document where job_id = ?', [jobId]))[0]!.n;
const outcome = (p: Promise<unknown>) => p.then(() => 'ok', (err: unknown) => failureType(err) ?? String(err));

async function ownedJob(runId: string): Promise<IndexStep> {
  const detail = { repositoryId: libraryId, versionId: null, totalFiles: 0, processedFiles: 0 };
  const { job } = await stack.jobs.create(stack.orm.em, { kind: 'index', workflowId: `swap-${Date.now()}`, status: 'running', stage: 'queued', detail });
  await stack.jobs.update(stack.orm.em, job.id, { runId });
  return { jobId: job.id, repositoryId: libraryId, versionId: null, heartbeatTimeoutMs: 10_000, runId, swapInCrawl: true };
}
const finished = (step: IndexStep) => stack.jobs.update(stack.orm.em, step.jobId, { status: 'done', completedAt: new Date() });

/** Holds the rows `query` selects (`for update`) until `release`, so a writer of one of them waits. */
async function hold(query: string, params: unknown[]): Promise<{ pid: number; release: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: stack.databaseUrl });
  await client.connect();
  await client.query('begin');
  const { rowCount } = await client.query(`${query} for update`, params);
  expect(rowCount).toBe(1);
  return {
    pid: (await client.query('select pg_backend_pid() as pid')).rows[0].pid as number,
    release: async () => {
      await client.query('rollback');
      await client.end();
    },
  };
}
/**
 * The last file, as if an earlier attempt had staged another content of it, held: the crawl waits to stage it again
 * (`stagingWaits`), its earlier batches staged.
 */
async function holdLastFile(step: IndexStep) {
  const last = `page-${PAGES - 1}.md`;
  await sql(`insert into staged_document (job_id, file_path, checksum, snippets, stat_only) values (?, ?, 'earlier', '[]', false)`, [step.jobId, last]);
  return hold('select 1 from staged_document where job_id = $1 and file_path = $2', [step.jobId, last]);
}
/** Until a session runs a statement starting with `statement` and waits for a lock. */
const waitingOnLock = (statement: string, what: string, timeoutMs = 60_000) =>
  until(
    async () => (await sql<{ n: number }>(`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and starts_with(query, ?)`, [statement]))[0]!.n,
    (n) => n > 0,
    { timeoutMs, intervalMs: 50, what },
  );
const stagingWaits = () => waitingOnLock('insert into staged_document', 'the crawl waiting to stage its last batch');
/** The library's rules row, which a swap writes last, just before its commit. */
const holdRules = () => hold('select 1 from library_rules where repository_id = $1', [libraryId]);
const swapWaiting = () => waitingOnLock('insert into library_rules', 'the swap waiting to store the rules, its files written');

beforeAll(async () => {
  stack = await startTestStack();
  deps = { config: stack.config, orm: stack.orm, jobs: stack.jobs, log: createLogger('silent'), temporal: stack.temporal };
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-swap-in-crawl-'));
  dir = path.join(tmp, 'swap-lib');
  fs.mkdirSync(dir);
  writePages('first');
  const res = await api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: dir });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  libraryId = res.body.library.id;
  firstJobId = res.body.job.id;
  expect((await waitForJob(stack, firstJobId)).status).toBe('done');
});
afterAll(async () => {
  await stack?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('a crawl that swaps as it goes', () => {
  it('is what an indexing job runs: the swap is part of the crawl, with no step of its own', async () => {
    const [row] = await sql<{ workflow_id: string }>('select workflow_id from job where id = ?', [firstJobId]);
    const history = await stack.temporal.workflow.getHandle(row!.workflow_id).fetchHistory();
    const steps = history.events!.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    expect(steps.filter((s) => !['requestSlot', 'startJob', 'finishJob'].includes(s))).toEqual(['crawlAndParse', 'embedSnippets', 'updateStatistics']);
    expect(await editions()).toEqual([`first:${PAGES}`]);
    expect(await sql('select file_path from staged_document')).toEqual([]);
  });

  it('writes every file before its commit, which readers do not see; a crawl that cannot commit leaves the old snippets and its staged rows', async () => {
    writePages('second');
    const step = await ownedJob('r');
    const rules = await holdRules();
    const crawl = outcome(crawlAndParse(deps, step, ctx()));
    try {
      await swapWaiting();
      // Every file is written in the swap's transaction; nothing of it shows yet, and the staged rows stay.
      expect(await editions()).toEqual([`first:${PAGES}`]);
      expect(await staged(step.jobId)).toBe(PAGES);
      // Another run takes the job over before the commit: the swap is rolled back.
      await stack.jobs.update(stack.orm.em, step.jobId, { runId: 'other' });
    } finally {
      await rules.release();
    }
    expect(await crawl).toBe(JOB_STOPPED);
    expect(await editions()).toEqual([`first:${PAGES}`]);
    expect(await staged(step.jobId)).toBe(PAGES);

    // The owner's next attempt resumes from the staged rows: nothing to parse, so nothing written while crawling,
    // and the swap is `replaceSnippets`' as before.
    await stack.jobs.update(stack.orm.em, step.jobId, { runId: 'r' });
    const resumed = await crawlAndParse(deps, step, ctx());
    expect(resumed.written).toBeUndefined();
    expect(resumed.changedFiles).toBe(PAGES);
    expect(await editions()).toEqual([`first:${PAGES}`]);
    expect(await replaceSnippets(deps, step, resumed)).toMatchObject({ documentsWritten: PAGES, snippetsWritten: PAGES });
    expect(await editions()).toEqual([`second:${PAGES}`]);
    await finished(step);
  });

  it('writes the first batches while the crawl stages the last, and commits at its end, with nothing left for replaceSnippets', async () => {
    writePages('third');
    const step = await ownedJob('r');
    const row = await holdLastFile(step);
    const crawl = crawlAndParse(deps, step, ctx());
    try {
      await stagingWaits();
      // The swap has begun meanwhile: it holds the scope's lock in a transaction that has written, waiting for more
      // (the test's own transaction, which holds the row, aside).
      await until(
        async () =>
          (await sql<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity where datname = current_database() and state = 'idle in transaction' and backend_xid is not null and pid <> ?`,
            [row.pid],
          ))[0]!.n,
        (n) => n === 1,
        { timeoutMs: 60_000, intervalMs: 50, what: 'the swap having written the first batches' },
      );
      expect((await sql<{ free: boolean }>('select pg_try_advisory_xact_lock(hashtext(?)) as free', [scopeLockKey(step)]))[0]!.free).toBe(false);
      expect(await editions()).toEqual([`second:${PAGES}`]);
    } finally {
      await row.release();
    }
    const done = await crawl;
    expect(done.written).toEqual({ documentsWritten: PAGES, documentsRemoved: 0, snippetsWritten: PAGES });
    expect(done.timings).toHaveProperty('swap.snippets');
    expect(await editions()).toEqual([`third:${PAGES}`]);
    expect(await staged(step.jobId)).toBe(0);
    expect(await replaceSnippets(deps, step, done)).toMatchObject({ documentsWritten: 0, documentsRemoved: 0, snippetsWritten: 0 });
    expect(await editions()).toEqual([`third:${PAGES}`]);
    await finished(step);
  });

  it('is ended by PostgreSQL when it sits idle for ten heartbeat timeouts (a frozen worker), and the retry resumes', async () => {
    writePages('fourth');
    // A heartbeat timeout of 100 ms: the swap may sit idle for a second.
    const step = { ...(await ownedJob('r')), heartbeatTimeoutMs: 100 };
    const row = await holdLastFile(step);
    const crawl = outcome(crawlAndParse(deps, step, ctx()));
    const swapOpen = async () =>
      (await sql<{ n: number }>('select count(*)::int as n from pg_try_advisory_xact_lock(hashtext(?)) as free where not free', [scopeLockKey(step)]))[0]!.n;
    try {
      await stagingWaits();
      // The swap's transaction, idle while the crawl waits, is ended and lets go of the scope.
      await until(swapOpen, (n) => n === 0, { timeoutMs: 30_000, intervalMs: 100, what: 'PostgreSQL ending the idle swap' });
    } finally {
      await row.release();
    }
    expect(await crawl).not.toBe('ok');
    expect(await editions()).toEqual([`third:${PAGES}`]);
    expect(await staged(step.jobId)).toBe(PAGES);

    const resumed = await crawlAndParse(deps, { ...step, heartbeatTimeoutMs: 10_000 }, ctx());
    expect(resumed.written).toBeUndefined();
    expect(await replaceSnippets(deps, step, resumed)).toMatchObject({ documentsWritten: PAGES, snippetsWritten: PAGES });
    expect(await editions()).toEqual([`fourth:${PAGES}`]);
    await finished(step);
  });

  it('is begun by a crawl only while the process has a slot for it, so open swaps cannot take every connection', async () => {
    const slots = new SwapSlots(1);
    const stepped = async () => {
      const step = await ownedJob('r');
      await sql(`insert into staged_document (job_id, file_path, checksum, snippets, stat_only) values (?, 'page-000.md', 'x', '[]', false)`, [step.jobId]);
      return { step, swap: new OpenSwap(deps, step, new Stopwatch(), slots) };
    };
    const transactions = async () =>
      (await sql<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = current_database() and backend_xid is not null`))[0]!.n;
    const rules = { rules: [], previousVersions: [] };
    const a = await stepped();
    const b = await stepped();
    a.swap.write(['page-000.md'], Promise.resolve(true));
    b.swap.write(['page-000.md'], Promise.resolve(true));
    // `a` took the slot and began; `b` found none, wrote nothing, and leaves its swap to replaceSnippets.
    expect(await b.swap.commit(rules, () => undefined)).toBeUndefined();
    await until(transactions, (n) => n === 1, { what: 'the first swap begun' });
    await a.swap.close();
    expect(await transactions()).toBe(0);
    // Given back when `a` rolled back: the next one begins, and commits.
    const c = await stepped();
    c.swap.write(['page-000.md'], Promise.resolve(true));
    expect(await c.swap.commit(rules, () => undefined)).toEqual({ documentsWritten: 1, documentsRemoved: 0, snippetsWritten: 0 });
    await c.swap.close();
    for (const { step } of [a, b, c]) await finished(step);
    expect(await sql('select file_path from staged_document where job_id = ?', [b.step.jobId])).toEqual([{ file_path: 'page-000.md' }]);
  });

  // Last: the library goes.
  it('lets the library be deleted while it runs: the delete waits for its commit, and its crawl goes on meanwhile', async () => {
    writePages('fifth');
    const step = await ownedJob('r');
    const row = await holdLastFile(step);
    const crawl = outcome(crawlAndParse(deps, step, ctx()));
    let deleted: Promise<{ status: number; body: unknown }> | undefined;
    try {
      await stagingWaits();
      deleted = api(stack, 'DELETE', `/api/v1/libs/${encodeURIComponent(libraryId)}`);
      await waitingOnLock('delete from "library"', 'the delete waiting for the swap', 30_000);
    } finally {
      await row.release();
    }
    // Had the delete taken the job's rows first, the crawl's next write of its job would wait for the delete, which
    // waits for the swap, which waits for the crawl, until PostgreSQL ended the idle swap (100 s here).
    expect(await crawl).toBe('ok');
    expect((await deleted!).status).toBe(200);
    expect(await editions()).toEqual([]);
    expect(await sql('select id from library_document')).toEqual([]);
    expect(await sql('select job_id from staged_document')).toEqual([]);
  });
});
