import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActivityDeps } from '../../activities/deps.js';
import { createLogger } from '../../core/log.js';
import { Job } from '../../db/entities/job.js';
import { CrawlTally, crawlAndParse, type IndexStep, replaceSnippets, Staging, type StepContext } from '../../docindex/pipeline.js';
import { failureType, JOB_STOPPED } from '../../jobs/contract.js';
import { TestRepo } from '../support/git.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { api, snippetsOf, waitForJob } from './helpers.js';

/**
 * The indexing steps write for the job's owner only (jobs/ownership.ts): a late attempt of a run that lost the job
 * stages nothing, drops nothing and swaps nothing in. The steps are called directly, with a run id of our choosing.
 */
let stack: TestStack;
let tmp: string;
let deps: ActivityDeps;
let libraryId: string;

beforeAll(async () => {
  stack = await startTestStack();
  deps = { config: stack.config, orm: stack.orm, jobs: stack.jobs, log: createLogger('silent'), temporal: stack.temporal };
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-pipeline-'));
  const repo = new TestRepo(path.join(tmp, 'owned-lib'));
  repo.write({ 'README.md': '# Owned\n\nA library whose index only its job owner may change.\n', 'docs/guide.md': '# Guide\n\nRead the guide before the reference.\n' });
  repo.commit('first');
  const res = await api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: repo.dir });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  libraryId = res.body.library.id;
  expect((await waitForJob(stack, res.body.job.id)).status).toBe('done');
  fs.rmSync(path.join(repo.dir, 'docs'), { recursive: true }); // the next crawl has a deleted file to stage
});
afterAll(async () => {
  await stack?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const em = () => stack.orm.em.fork();
const ctx = (): StepContext => ({ heartbeat: () => undefined, signal: new AbortController().signal, attempt: 1 });
const outcome = (p: Promise<unknown>) => p.then(() => 'resolved', (err: unknown) => failureType(err) ?? String(err));
const documents = async () =>
  ((await em().execute('select file_path from library_document where repository_id = ? order by file_path', [libraryId])) as { file_path: string }[]).map((r) => r.file_path);
/** Files staged with content or deleted (the files just indexed also have their stats staged alone: `stat_only`). */
const stagedRows = async (jobId: string) =>
  ((await em().execute('select file_path from staged_document where job_id = ? and not stat_only order by file_path', [jobId])) as { file_path: string }[]).map((r) => r.file_path);

/** An unfinished indexing job of the library, owned by run `current`. */
async function ownedJob(): Promise<{ job: Job; step: (runId: string) => IndexStep }> {
  const detail = { repositoryId: libraryId, versionId: null, totalFiles: 0, processedFiles: 0 };
  const { job } = await stack.jobs.create(stack.orm.em, { kind: 'index', workflowId: `owned-${Date.now()}`, status: 'running', stage: 'queued', detail });
  await stack.jobs.update(stack.orm.em, job.id, { runId: 'current' });
  return { job, step: (runId) => ({ jobId: job.id, repositoryId: libraryId, versionId: null, heartbeatTimeoutMs: 10_000, runId }) };
}

describe('the indexing steps of a run that no longer owns its job', () => {
  it('stage nothing and leave the job as it was', async () => {
    const { job, step } = await ownedJob();
    expect(await outcome(crawlAndParse(deps, step('stale'), ctx()))).toBe(JOB_STOPPED);
    expect(await stagedRows(job.id)).toEqual([]);
    expect(await em().findOneOrFail(Job, { id: job.id })).toMatchObject({ stage: 'queued', progress: 0, runId: 'current' });

    // The staging writer itself refuses, whatever it was given.
    const stale = new Staging(deps, step('stale'), new Map());
    await stale.deleted('README.md');
    expect(await outcome(stale.finish())).toBe(JOB_STOPPED);
    expect(await stagedRows(job.id)).toEqual([]);
  });

  it('neither drop what the owner staged nor swap it in', async () => {
    const { job, step } = await ownedJob();
    const crawl = await crawlAndParse(deps, step('current'), ctx());
    expect(crawl).toMatchObject({ totalFiles: 1, changedFiles: 0, unchangedFiles: 1, deletedFiles: 1 });
    expect(await stagedRows(job.id)).toEqual(['docs/guide.md']);

    // What an attempt that saw nothing would drop: its finish keeps nothing.
    expect(await outcome(new Staging(deps, step('stale'), new Map()).finish())).toBe(JOB_STOPPED);
    expect(await stagedRows(job.id)).toEqual(['docs/guide.md']);

    const before = await snippetsOf(stack, libraryId);
    expect(await documents()).toEqual(['README.md', 'docs/guide.md']);
    expect(await outcome(replaceSnippets(deps, step('stale'), crawl))).toBe(JOB_STOPPED);
    expect(await documents()).toEqual(['README.md', 'docs/guide.md']);
    expect(await snippetsOf(stack, libraryId)).toEqual(before);
    expect(await stagedRows(job.id)).toEqual(['docs/guide.md']);

    // The owner's swap goes through: the deleted file is gone.
    expect(await replaceSnippets(deps, step('current'), crawl)).toMatchObject({ documentsWritten: 0, documentsRemoved: 1 });
    expect(await documents()).toEqual(['README.md']);
    expect(await stagedRows(job.id)).toEqual([]);
    await stack.jobs.update(stack.orm.em, job.id, { status: 'done', completedAt: new Date() });
  });
});

describe('CrawlTally', () => {
  it('counts a file an earlier attempt staged as changed, and leaves skipped files out of those indexed', () => {
    const tally = new CrawlTally(10);
    for (const o of ['changed', 'reused', 'unchanged', 'unchanged', 'deleted', 'oversized', 'generated', 'generated'] as const) tally.count(o);
    expect(tally).toMatchObject({ changed: 2, reused: 1, unchanged: 2, deleted: 1, indexed: 7 });
    expect(tally.skippedWarnings()).toEqual(['1 binary or oversized files skipped', '2 generated files skipped']);
    expect(tally.summary(['a warning'])).toBe('2 changed (1 parsed before), 2 unchanged, 1 removed; a warning');
    tally.processed = 5;
    expect(tally.progress()).toEqual({ patch: { progress: 40, stageDetail: '5 of 10 files' }, counts: { processed: 5 } });
  });
});
