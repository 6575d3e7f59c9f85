import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvents } from '../../jobs/events.js';
import { api } from '../docindex/helpers.js';
import { type AllFakes, startAllFakes } from '../support/fakes.js';
import { writeFfmpegWrapper } from '../support/ffmpeg-wrapper.js';
import type { Json } from '../support/http.js';
import { freePort } from '../../fakes/ports.js';
import { enqueue, recipeCaption, waitForItem } from '../support/recipes.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { getJob, smallWav, uploadJob, waitForJob } from '../support/transcription.js';
import { until } from '../support/until.js';
import { killWorker, startWorkerProcess } from '../support/worker-process.js';

/**
 * Fault: a worker SIGKILLed mid-crawl, mid-conversion and mid-upload, then another started. Every job completes
 * once: the crawl resumes from what the dead attempt staged, the conversion from its measurement (both named in its
 * heartbeats), and the upload finds the recipe the dead attempt created instead of creating a second one. The API
 * runs here without workers; each worker is its own `npm run worker` process.
 */
const HEARTBEAT_MS = '3000';
let stack: TestStack;
let dir: string;
let fakes: AllFakes;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-kill-'));
  const port = await freePort();
  fakes = await startAllFakes();
  stack = await startTestStack({
    queues: [],
    env: {
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      CPU_COUNT: '4',
      INDEXING_HEARTBEAT_TIMEOUT_MS: HEARTBEAT_MS,
      TRANSCRIPTION_HEARTBEAT_TIMEOUT_MS: HEARTBEAT_MS,
      ...fakes.env,
    },
  });
});
afterAll(async () => {
  await Promise.all(workers.map(killWorker));
  await stack?.stop();
  await fakes?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

async function worker(queue: string, env: Record<string, string> = {}) {
  const w = await startWorkerProcess(stack, [queue], { ...fakes.env, ...env });
  workers.push(w);
  return w;
}

/** How many times a job's stream says it ended, and with what. */
async function endings(jobId: string, event: string, ended: (data: Json) => boolean): Promise<number> {
  return (await readEvents(stack.orm.em.fork(), `job:${jobId}`, 0)).filter((e) => e.event === event && ended(e.data)).length;
}

describe('a worker killed mid-crawl', () => {
  it('has the crawl resumed by another worker from what it staged, and the job done once', { timeout: 300_000 }, async () => {
    const folder = path.join(dir, 'big-docs');
    const FILES = 4000;
    await fs.mkdir(path.join(folder, 'docs'), { recursive: true });
    for (let i = 0; i < FILES; i++) {
      await fs.writeFile(path.join(folder, 'docs', `page-${i}.md`), `# Page ${i}\n\nPage ${i} explains one thing, in a few words, about the library.\n`);
    }
    const a = await worker('indexing');
    const added = await api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: folder });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const jobId = added.body.job.id as string;
    const staged = async () => Number(((await stack.orm.em.fork().execute('select count(*) as n from staged_document where job_id = ?', [jobId])) as { n: string }[])[0]!.n);
    await until(staged, (n) => n > 0, { timeoutMs: 120_000, intervalMs: 50, what: 'files staged by the first worker' });
    await killWorker(a);
    const stagedByTheDead = await staged();
    expect(stagedByTheDead).toBeLessThan(FILES);

    await worker('indexing');
    const job = (await until(async () => (await api(stack, 'GET', `/api/v1/jobs/${jobId}`)).body.job as Json, (j) => ['done', 'failed'].includes(j.status), { timeoutMs: 240_000, what: 'the job finishing' }));
    expect(job.status, JSON.stringify(job)).toBe('done');
    // Resumed: the crawl's summary says the dead attempt's files were not parsed again.
    const details = (await readEvents(stack.orm.em.fork(), `job:${jobId}`, 0)).map((e) => String(e.data.stageDetail ?? ''));
    expect(details.find((d) => /changed/.test(d) && /parsed before/.test(d)), details.join('\n')).toMatch(/^4000 changed \([1-9]\d* parsed before\)/);
    const rows = (await stack.orm.em.fork().execute('select count(*) as n from library_document where repository_id = ?', [added.body.library.id])) as { n: string }[];
    expect(Number(rows[0]!.n)).toBe(FILES);
    expect(await endings(jobId, 'status', (d) => d.status === 'done')).toBe(1);
    console.log(`worker killed mid-crawl figures: ${JSON.stringify({ queued: 1, completed: 1, lost: 0, duplicated: 0, filesStagedBeforeTheKill: stagedByTheDead, files: FILES })}`);
  });
});

describe('a worker killed mid-conversion', () => {
  it('has the conversion finished by another worker without measuring again, and the transcript kept', { timeout: 300_000 }, async () => {
    // ffmpeg behind a wrapper that records each run and makes the first conversion a long one (it prints progress).
    const ffmpeg = await writeFfmpegWrapper(path.join(dir, 'ffmpeg-bin'), 'long');
    await ffmpeg.arm();
    const { asr } = fakes;
    asr.setModel('ready');
    asr.autoCompleteMs = 200;
    const a = await worker('transcription', { FFMPEG_PATH: ffmpeg.path });
    const created = await uploadJob(stack.url, { bytes: smallWav(3), name: 'kill-me.wav' }, { mode: 'auto' });
    expect(created.status).toBe(201);
    const jobId = created.body.id as string;
    await until(() => ffmpeg.misbehaving(), Boolean, { timeoutMs: 120_000, what: 'the conversion running' });
    await new Promise((r) => setTimeout(r, 3000)); // its heartbeats (with the measurement) have reached Temporal
    await killWorker(a);

    await worker('transcription', { FFMPEG_PATH: ffmpeg.path });
    const done = await waitForJob(stack.url, jobId, (j) => ['done', 'failed'].includes(j.status), 180_000);
    expect(done.status, JSON.stringify(done)).toBe('done');
    expect(done.segments.length).toBeGreaterThan(0);
    const runs = await ffmpeg.runs();
    expect(runs.filter((r) => r.analysis)).toHaveLength(1); // measured once: the retry resumed from it
    expect(runs.filter((r) => r.conversion)).toHaveLength(2);
    expect(asr.jobs.filter((j) => j.externalId === jobId)).toHaveLength(1);
    const file = await fetch(`${stack.url}/api/jobs/${jobId}/files/txt`);
    expect(file.status).toBe(200);
    expect(await endings(jobId, 'done', () => true)).toBe(1);
    expect((await getJob(stack.url, jobId)).runs).toBe(1);
    console.log(`worker killed mid-conversion figures: ${JSON.stringify({ queued: 1, completed: 1, lost: 0, duplicated: 0, measurements: 1, conversions: 2 })}`);
  });
});

describe('a worker killed mid-upload', () => {
  it('has the recipe the dead attempt created linked, not created again', { timeout: 300_000 }, async () => {
    const { manager, site } = fakes;
    manager.answerCreatesAfterMs = 60_000; // created at once, answered never (the worker dies first)
    const a = await worker('recipes');
    const urls = Array.from({ length: 3 }, (_, i) => site.add(`killed-${i}`, { title: `Killed dish ${i}`, caption: recipeCaption(`Killed dish ${i}`) }));
    const ids = (await Promise.all(urls.map((u) => enqueue(stack.url, u)))).map((c) => c.body.id as string);
    await until(async () => manager.created.length, (n) => n >= 1, { timeoutMs: 120_000, intervalMs: 50, what: 'a recipe created' });
    await killWorker(a);
    manager.answerCreatesAfterMs = 0;

    await worker('recipes');
    const items = await Promise.all(ids.map((id) => waitForItem(stack.url, id, undefined, 180_000)));
    expect(items.map((i) => i.status)).toEqual(['success', 'success', 'success']);
    const names = manager.created.map((c) => String(c.recipe.name));
    expect(names).toHaveLength(3);
    expect(new Set(names).size).toBe(3);
    const links = items.map((i) => i.results.recipeManagerUrl as string);
    expect(new Set(links).size).toBe(3);
    console.log(`worker killed mid-upload figures: ${JSON.stringify({ queued: 3, completed: 3, lost: 0, duplicated: names.length - new Set(names).size, createRequests: manager.createRequests.length })}`);
  });
});
