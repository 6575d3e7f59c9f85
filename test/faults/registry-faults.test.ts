import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvents } from '../../jobs/events.js';
import { forgetRegistryEndpoints } from '../../docindex/sources/registries/index.js';
import { FakeRegistries } from '../../fakes/fake-registries.js';
import { api, snippetsOf, waitForJob } from '../docindex/helpers.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { until } from '../support/until.js';
import { killWorker, startWorkerProcess } from '../support/worker-process.js';

/**
 * Faults of a package source: a registry that hangs while a package is downloaded, and a worker SIGKILLed in the
 * middle of a download. The API runs here without workers; each worker is its own `npm run worker` process, whose
 * npm configuration points at the fake registry as the API's does.
 */
const HEARTBEAT_MS = '3000';
let stack: TestStack;
let reg: FakeRegistries;
const workers: ChildProcess[] = [];
const saved = { ...process.env };
let registryEnv: Record<string, string>;

const README = (name: string) => `# ${name}\n\n${name} keeps its documentation in this README: call \`${name}.start()\` once, then use it anywhere.\n`;

beforeAll(async () => {
  reg = await FakeRegistries.start();
  registryEnv = reg.npmEnv();
  Object.assign(process.env, registryEnv);
  forgetRegistryEndpoints();
  stack = await startTestStack({ queues: [], env: { INDEXING_HEARTBEAT_TIMEOUT_MS: HEARTBEAT_MS } });
});
afterAll(async () => {
  await Promise.all(workers.map(killWorker));
  await stack?.stop();
  await reg?.close();
  process.env = saved;
  forgetRegistryEndpoints();
});

async function worker() {
  const w = await startWorkerProcess(stack, ['indexing'], { ...registryEnv, INDEXING_HEARTBEAT_TIMEOUT_MS: HEARTBEAT_MS });
  workers.push(w);
  return w;
}

const jobEndings = async (jobId: string) => (await readEvents(stack.orm.em.fork(), `job:${jobId}`, 0)).filter((e) => e.event === 'status' && (e.data.status === 'done' || e.data.status === 'failed')).length;

describe('a package download', () => {
  it('survives its worker being killed mid-download: another worker downloads it again and the job is done once', { timeout: 180_000 }, async () => {
    await reg.publish('npm', 'killed-mid-download', '1.0.0', { 'README.md': README('killed-mid-download') });
    // The archive does not answer until the fault is cleared: the first worker is inside the download when it dies.
    reg.hang('/npm/killed-mid-download/-/');
    const a = await worker();
    const added = await api(stack, 'POST', '/api/v1/libs', { source: 'npm', sourceUrl: 'killed-mid-download' });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const jobId = added.body.job.id as string;
    await until(() => Promise.resolve(reg.hitsUnder('/npm/killed-mid-download/-/')), (n) => n > 0, { timeoutMs: 60_000, what: 'the download started' });
    await killWorker(a);
    reg.clearFaults();
    await worker();
    const job = await waitForJob(stack, jobId, 120_000);
    expect(job.status, JSON.stringify(job)).toBe('done');
    expect((await snippetsOf(stack, '/npm/killed-mid-download')).map((s) => s.content).join('\n')).toContain('killed-mid-download.start()');
    expect(await jobEndings(jobId)).toBe(1);
  });

  it('fails with a clear error when the registry never sends the archive, and keeps serving other jobs', { timeout: 240_000 }, async () => {
    await reg.publish('npm', 'never-sent', '1.0.0', { 'README.md': README('never-sent') });
    await reg.publish('npm', 'sent-fine', '1.0.0', { 'README.md': README('sent-fine') });
    reg.hang('/npm/never-sent/-/');
    const stuck = await api(stack, 'POST', '/api/v1/libs', { source: 'npm', sourceUrl: 'never-sent' });
    const fine = await api(stack, 'POST', '/api/v1/libs', { source: 'npm', sourceUrl: 'sent-fine' });
    expect((await waitForJob(stack, fine.body.job.id, 120_000)).status).toBe('done');
    const job = await waitForJob(stack, stuck.body.job.id, 200_000);
    expect(job.status).toBe('failed');
    // Each attempt was stopped for making no progress, and the job says so instead of hanging.
    expect(job.error).toMatch(/no progress|heartbeat|timed out|did not answer/i);
    reg.clearFaults();
  });
});
