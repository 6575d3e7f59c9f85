import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskQueue } from '../../core/config.js';
import { Job } from '../../db/entities/job.js';
import { slotsWorkflowId } from '../../jobs/slots.js';
import type { SlotsState } from '../../jobs/slot-contract.js';
import { api } from '../docindex/helpers.js';
import { releaseHolderSignal } from '../fixtures/workflows.js';
import { type AllFakes, startAllFakes } from '../support/fakes.js';
import { TestRepo } from '../support/git.js';
import type { Json } from '../support/http.js';
import { freePort } from '../../fakes/ports.js';
import { enqueue, recipeCaption, waitForItem } from '../support/recipes.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { smallWav, uploadJob, waitForJob } from '../support/transcription.js';
import { until } from '../support/until.js';
import { saveHistory } from './histories.js';

/**
 * `npm run record-histories` (not part of `npm test`): runs every workflow type through its endings (success,
 * failure, cancel, a retry's new run, the pools' continue-as-new) against the real stack and the fakes, and saves
 * each run's history to test/fixtures/histories for test/replay/replay.test.ts. Record again after a deliberate
 * change that the old histories cannot follow, once no workflow of the old shape is still running anywhere
 * (docs/jobs.md, "Replay tests").
 */
let stack: TestStack;
let dir: string;
let fakes: AllFakes;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-record-'));
  const port = await freePort();
  fakes = await startAllFakes();
  stack = await startTestStack({
    env: {
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      CPU_COUNT: '4',
      SLOT_CHECK_INTERVAL_MS: '1000',
      TRANSCRIPTION_HEARTBEAT_TIMEOUT_MS: '10000',
      ...fakes.env,
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  await fakes?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

/** Saves the run a job row names once its workflow has closed. */
async function saveJobRun(name: string, jobId: string): Promise<void> {
  const job = await stack.orm.em.fork().findOneOrFail(Job, { id: jobId });
  const handle = stack.temporal.workflow.getHandle(job.workflowId, job.runId!);
  await handle.result().catch(() => undefined);
  await saveHistory(name, handle);
}

/** A refresh that registers and indexes a new tag, and one of a library that is gone. */
async function recordRefreshes(libraryId: string, repo: TestRepo): Promise<void> {
  const c = stack.config;
  repo.tag('v1.0.0');
  const start = (id: string, lib: string) =>
    stack.temporal.workflow.start('refreshLibraryWorkflow', { taskQueue: taskQueue(c, 'indexing'), workflowId: `${c.taskQueuePrefix}refresh:${id}`, args: [{ libraryId: lib }] });
  const refreshed = await start('record', libraryId);
  const outcome = (await refreshed.result()) as { versions: { jobId: string }[] };
  expect(outcome.versions).toHaveLength(1);
  await until(async () => (await api(stack, 'GET', `/api/v1/jobs/${outcome.versions[0]!.jobId}`)).body.job.status, (s) => s === 'done', { timeoutMs: 60_000 });
  await saveHistory('refresh-success', refreshed);
  const gone = await start('record-gone', '/nobody/here');
  await gone.result();
  await saveHistory('refresh-library-gone', gone);
}

/** A translation's run, once its workflow has closed (its job row names the transcription job in `detail`). */
async function translationOf(jobId: string, language: string): Promise<Json> {
  return until(
    async () => ((await (await fetch(`${stack.url}/api/jobs/${jobId}`)).json()) as Json).translations.find((t: Json) => t.language === language),
    (t: Json | undefined) => Boolean(t && ['done', 'failed', 'cancelled'].includes(t.status)),
    { timeoutMs: 60_000 },
  );
}

describe('recording workflow histories', () => {
  it('records translations through their endings', { timeout: 300_000 }, async () => {
    const { asr, llm } = fakes;
    asr.setModel('ready');
    asr.autoCompleteMs = 200;
    const job = await uploadJob(stack.url, { bytes: smallWav(2), name: 'to-translate.wav' }, { mode: 'none' });
    const id = job.body.id as string;
    await waitForJob(stack.url, id, (j: Json) => j.status === 'done', 60_000);
    const ask = (language: string) => fetch(`${stack.url}/api/jobs/${id}/translations`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ language }) });

    await ask('de');
    await saveJobRun('translation-success', (await translationOf(id, 'de')).id);

    llm.fallback = { kind: 'transcript', misbehave: 'drop-line' };
    await ask('fr');
    const failed = await translationOf(id, 'fr');
    expect(failed.status).toBe('failed');
    await saveJobRun('translation-failure', failed.id);

    llm.fallback = { kind: 'read' };
    llm.delayMs = 30_000;
    await ask('es');
    await until(async () => llm.requests.filter((r) => r.body.messages[1]?.content.includes('Target language: es')).length, (n) => n > 0, { timeoutMs: 30_000 });
    await fetch(`${stack.url}/api/jobs/${id}/translations/es`, { method: 'DELETE' });
    await saveJobRun('translation-cancel', (await translationOf(id, 'es')).id);
    llm.delayMs = 0;

    await ask('fr');
    const retried = await translationOf(id, 'fr');
    expect(retried.status).toBe('done');
    await saveJobRun('translation-retry', retried.id);
  });

  it('records every workflow type through its endings', { timeout: 900_000 }, async () => {
    const { asr, llm, site } = fakes;
    const c = stack.config;
    // The pools start first, with a small history limit, so that they continue as new while the jobs run.
    const startPool = (pool: 'indexing' | 'recipes') =>
      stack.temporal.workflow.start('slotsWorkflow', {
        taskQueue: taskQueue(c, pool),
        workflowId: slotsWorkflowId(c, pool),
        args: [{ pool, limit: 0, holders: [], waiting: [], adopted: false, historyLimit: 60 } satisfies SlotsState],
      });
    const pools = { indexing: await startPool('indexing'), recipes: await startPool('recipes') };

    const ping = await stack.temporal.workflow.start('pingWorkflow', { taskQueue: taskQueue(c, 'indexing'), workflowId: `${c.taskQueuePrefix}healthz:record`, args: [taskQueue(c, 'indexing')] });
    await ping.result();
    await saveHistory('ping-success', ping);

    // Indexing: done; failed (its folder is gone); cancelled while it waits for a slot.
    // A page long enough to be a snippet, so the crawl writes it and swaps it in (docindex/pipeline.ts, OpenSwap).
    const readme = '# Recorded\n\nA library whose indexing is recorded. Each section of this page is read before the reference, and every example runs as written.\n';
    const repo = new TestRepo(path.join(dir, 'recorded-lib')).write({ 'README.md': readme });
    repo.commit();
    const indexed = await api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: repo.dir });
    await until(async () => (await api(stack, 'GET', `/api/v1/jobs/${indexed.body.job.id}`)).body.job.status, (s) => s === 'done', { timeoutMs: 60_000 });
    await saveJobRun('index-success', indexed.body.job.id);
    // A re-index that finds nothing changed: its last stages run as one activity (docindex/workflow.ts).
    const unchanged = await api(stack, 'POST', `/api/v1/libs/${encodeURIComponent(indexed.body.library.id)}/index`);
    await until(async () => (await api(stack, 'GET', `/api/v1/jobs/${unchanged.body.job.id}`)).body.job.status, (s) => s === 'done', { timeoutMs: 60_000 });
    await saveJobRun('index-unchanged', unchanged.body.job.id);

    // A refresh (docindex/refresh/): the library gained a tag, which its policy registers and indexes; a refresh of a
    // library that is gone. Then the hourly housekeeping.
    await recordRefreshes(indexed.body.library.id, repo);
    const housekeeping = await stack.temporal.workflow.start('housekeepingWorkflow', { taskQueue: taskQueue(c, 'indexing'), workflowId: `${c.taskQueuePrefix}housekeeping:record`, args: [] });
    await housekeeping.result();
    await saveHistory('housekeeping-success', housekeeping);

    const gone = path.join(dir, 'gone-lib');
    await fs.mkdir(gone);
    await fs.writeFile(path.join(gone, 'README.md'), '# Gone\n');
    const goneLib = await api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: gone, autoIndex: false });
    await fs.rm(gone, { recursive: true });
    const failing = await api(stack, 'POST', `/api/v1/libs/${encodeURIComponent(goneLib.body.library.id)}/index`);
    await until(async () => (await api(stack, 'GET', `/api/v1/jobs/${failing.body.job.id}`)).body.job.status, (s) => s === 'failed', { timeoutMs: 60_000 });
    await saveJobRun('index-failure', failing.body.job.id);

    await api(stack, 'PUT', '/api/v1/settings/indexing', { concurrency: 1 });
    const holder = await stack.temporal.workflow.start('slotHolderWorkflow', { taskQueue: taskQueue(c, 'indexing'), workflowId: `${c.taskQueuePrefix}holder:record`, args: ['indexing'] });
    const waiting = new TestRepo(path.join(dir, 'waiting-lib')).write({ 'README.md': '# Waiting\n' });
    waiting.commit();
    const queued = await api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: waiting.dir });
    await new Promise((r) => setTimeout(r, 2000));
    const queuedJob = await stack.orm.em.fork().findOneOrFail(Job, { id: queued.body.job.id });
    await stack.temporal.workflow.getHandle(queuedJob.workflowId).cancel();
    await saveJobRun('index-cancel', queuedJob.id);
    await holder.signal(releaseHolderSignal);

    // Transcription: done by the backend; failed by it; cancelled while transcribing; the failed one retried.
    asr.setModel('ready');
    asr.autoCompleteMs = 200;
    const done = await uploadJob(stack.url, { bytes: smallWav(2), name: 'recorded.wav' }, { mode: 'none' });
    expect((await waitForJob(stack.url, done.body.id, (j: Json) => j.status === 'done', 60_000)).status).toBe('done');
    await saveJobRun('transcription-success', done.body.id);

    asr.autoCompleteMs = undefined;
    const failed = await uploadJob(stack.url, { bytes: smallWav(2), name: 'failing.wav' }, { mode: 'none' });
    await asr.fail(await asr.waitForJob(failed.body.id, 60_000), 'the backend ran out of memory');
    await waitForJob(stack.url, failed.body.id, (j: Json) => j.status === 'failed', 60_000);
    await saveJobRun('transcription-failure', failed.body.id);

    const cancelled = await uploadJob(stack.url, { bytes: smallWav(2), name: 'cancelled.wav' }, { mode: 'none' });
    await asr.waitForJob(cancelled.body.id, 60_000);
    await waitForJob(stack.url, cancelled.body.id, (j: Json) => j.stage === 'transcribing', 60_000);
    await fetch(`${stack.url}/api/jobs/${cancelled.body.id}`, { method: 'DELETE' });
    await saveJobRun('transcription-cancel', cancelled.body.id);

    asr.autoCompleteMs = 200;
    expect((await fetch(`${stack.url}/api/jobs/${failed.body.id}/retry`, { method: 'POST' })).status).toBe(200);
    await waitForJob(stack.url, failed.body.id, (j: Json) => j.status === 'done', 60_000);
    await saveJobRun('transcription-retry', failed.body.id);

    // Recipes: success; error (no recipe in the post); unhealthy (the model keeps failing); cancelled; retried.
    const post = (name: string) => site.add(name, { title: `Recorded ${name}`, caption: recipeCaption(`Recorded ${name}`) });
    const ok = await enqueue(stack.url, post('ok'));
    await waitForItem(stack.url, ok.body.id, undefined, 60_000);
    await saveJobRun('recipe-success', ok.body.id);

    llm.script.push({ kind: 'not-recipe' });
    const error = await enqueue(stack.url, post('error'));
    await waitForItem(stack.url, error.body.id, undefined, 60_000);
    await saveJobRun('recipe-failure', error.body.id);

    llm.script.push(...Array.from({ length: 3 }, () => ({ kind: 'status' as const, status: 502 })));
    const unhealthy = await enqueue(stack.url, post('unhealthy'));
    await waitForItem(stack.url, unhealthy.body.id, undefined, 60_000);
    await saveJobRun('recipe-unhealthy', unhealthy.body.id);

    llm.delayMs = 2500;
    const slow = await enqueue(stack.url, post('cancelled'));
    await waitForItem(stack.url, slow.body.id, (i: Json) => i.status === 'in_progress', 60_000);
    await stack.temporal.workflow.getHandle((await stack.orm.em.fork().findOneOrFail(Job, { id: slow.body.id })).workflowId).cancel();
    await waitForItem(stack.url, slow.body.id, undefined, 60_000);
    await saveJobRun('recipe-cancel', slow.body.id);
    llm.delayMs = 0;

    expect((await fetch(`${stack.url}/api/queue/${error.body.id}/retry`, { method: 'POST' })).status).toBe(200);
    expect((await waitForItem(stack.url, error.body.id, undefined, 60_000)).status).toBe('success');
    await saveJobRun('recipe-retry', error.body.id);

    // The pools: the first run (it continued as new) and the one running now.
    for (const [pool, handle] of Object.entries(pools)) {
      const first = stack.temporal.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId);
      const description = await first.describe();
      expect(description.status.name, `the ${pool} pool continued as new`).toBe('CONTINUED_AS_NEW');
      await saveHistory(`slots-${pool}-continued-as-new`, first);
      await saveHistory(`slots-${pool}-running`, stack.temporal.workflow.getHandle(handle.workflowId));
    }
  });
});
