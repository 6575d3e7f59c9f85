import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskQueue } from '../../core/config.js';
import { slotsState } from '../../jobs/slots.js';
import { releaseHolderSignal } from '../fixtures/workflows.js';
import { type GitHost, startGitHost, TestRepo } from '../support/git.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { startWorkerProcess } from '../support/worker-process.js';
import { api, enc, waitForJob, waitForStatus } from './helpers.js';

const ENV = { CPU_COUNT: '4', INDEXING_HEARTBEAT_TIMEOUT_MS: '3000' };
let stack: TestStack;
let tmp: string;
const repos: TestRepo[] = [];

function localRepo(name: string): TestRepo {
  const repo = new TestRepo(path.join(tmp, name));
  repo.write({ 'README.md': `# ${name}\n\nThis library is called ${name} and it has documentation worth indexing.\n` });
  repo.commit();
  repos.push(repo);
  return repo;
}

async function holdSlot(s: TestStack, id: string) {
  const handle = await s.temporal.workflow.start('slotHolderWorkflow', {
    taskQueue: taskQueue(s.config, 'indexing'),
    workflowId: `${s.config.taskQueuePrefix}holder:${id}`,
    args: ['indexing'],
  });
  const deadline = Date.now() + 15_000;
  while (!(await slotsState(s.temporal, s.config, 'indexing'))?.holders.some((h) => h.workflowId === handle.workflowId)) {
    if (Date.now() > deadline) throw new Error('the holder never got a slot');
    await new Promise((r) => setTimeout(r, 100));
  }
  return handle;
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-conc-'));
  stack = await startTestStack({ env: ENV });
});
afterAll(async () => {
  await stack?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('indexing concurrency', () => {
  it('reads and clamps the setting to 1..max(CPUs-1, 1)', async () => {
    expect((await api(stack, 'GET', '/api/v1/settings/indexing')).body).toEqual({ concurrency: 2 });
    expect((await api(stack, 'PUT', '/api/v1/settings/indexing', { concurrency: 99 })).body).toEqual({ concurrency: 3 });
    expect((await api(stack, 'PUT', '/api/v1/settings/indexing', { concurrency: 0 })).body).toEqual({ concurrency: 1 });
    const [row] = (await stack.orm.em.fork().execute(`select value from setting where key = 'indexing.concurrency'`)) as { value: unknown }[];
    expect(row!.value).toEqual({ value: 1 });
  });

  it('keeps jobs beyond the limit queued, and a raised limit starts them without a restart', async () => {
    await api(stack, 'PUT', '/api/v1/settings/indexing', { concurrency: 1 });
    const holder = await holdSlot(stack, 'a');
    const added = await api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: localRepo('waiting-lib').dir });
    const jobId = added.body.job.id;

    // Concurrent index requests join the one active job.
    const again = await Promise.all([1, 2, 3].map(() => api(stack, 'POST', `/api/v1/libs/${enc(added.body.library.id)}/index`)));
    for (const r of again) {
      expect(r.status).toBe(200);
      expect(r.body.job.id).toBe(jobId);
    }

    await new Promise((r) => setTimeout(r, 1500));
    const queued = (await api(stack, 'GET', `/api/v1/jobs/${jobId}`)).body.job;
    expect(queued).toMatchObject({ status: 'queued', stage: 'queued', startedAt: null });
    expect((await slotsState(stack.temporal, stack.config, 'indexing'))!.waiting).toHaveLength(1);

    expect((await api(stack, 'PUT', '/api/v1/settings/indexing', { concurrency: 2 })).body).toEqual({ concurrency: 2 });
    expect((await waitForJob(stack, jobId)).status).toBe('done');
    await holder.signal(releaseHolderSignal);
  });

  it('runs queued jobs after a restart', async () => {
    await api(stack, 'PUT', '/api/v1/settings/indexing', { concurrency: 1 });
    const holder = await holdSlot(stack, 'b');
    const added = await api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: localRepo('restart-lib').dir });
    await new Promise((r) => setTimeout(r, 1000));
    expect((await api(stack, 'GET', `/api/v1/jobs/${added.body.job.id}`)).body.job.status).toBe('queued');

    // The whole process goes away; a new one starts on the same database and task queues.
    const { databaseUrl, config } = stack;
    await stack.stop();
    stack = await startTestStack({ env: { ...ENV, DATABASE_URL: databaseUrl, TASK_QUEUE_PREFIX: config.taskQueuePrefix } });
    expect((await api(stack, 'GET', `/api/v1/jobs/${added.body.job.id}`)).body.job.status).toBe('queued');

    await stack.temporal.workflow.getHandle(holder.workflowId).signal(releaseHolderSignal);
    expect((await waitForJob(stack, added.body.job.id)).status).toBe('done');
  });
});

describe('a worker killed mid-job', () => {
  let host: GitHost;
  let worker: ChildProcess | undefined;
  let apiOnly: TestStack;
  afterAll(async () => {
    worker?.kill('SIGKILL');
    await apiOnly?.stop();
    await host?.close();
  });

  it('has its job finished by another worker', { timeout: 120_000 }, async () => {
    const repo = localRepo('remote-lib');
    repo.publish(path.join(tmp, 'host'), 'acme', 'remote-lib');
    host = await startGitHost(path.join(tmp, 'host'), 'token-for-kill-test');
    // An API process with no workers, and a worker process for the indexing queue beside it.
    apiOnly = await startTestStack({ env: ENV, queues: [] });
    worker = await startWorkerProcess(apiOnly, ['indexing'], ENV);

    const added = await api(apiOnly, 'POST', '/api/v1/libs', { source: 'git-host', sourceUrl: `${host.url}/acme/remote-lib.git`, gitHostToken: 'token-for-kill-test', autoIndex: false });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const release = host.stall(); // the clone hangs: the job is mid-crawl
    const seen = host.requests.length;
    const { body } = await api(apiOnly, 'POST', `/api/v1/libs/${enc('/acme/remote-lib')}/index`);
    await waitForStatus(apiOnly, body.job.id, 'running');
    while (host.requests.length === seen) await new Promise((r) => setTimeout(r, 50)); // the clone reached the host

    worker.kill('SIGKILL');
    await new Promise((r) => worker!.once('exit', r));
    release();

    // A fresh worker takes over once the dead one's heartbeats stop (sharing DATA_DIR, where the key that opens the
    // stored token is).
    const second = await startTestStack({ api: false, queues: ['indexing'], env: { ...ENV, DATABASE_URL: apiOnly.databaseUrl, TASK_QUEUE_PREFIX: apiOnly.config.taskQueuePrefix, DATA_DIR: apiOnly.dataDir } });
    try {
      const job = await waitForJob(apiOnly, body.job.id, 60_000);
      expect(job.status, JSON.stringify(job)).toBe('done');
      expect((await api(apiOnly, 'GET', `/api/v1/libs/${enc('/acme/remote-lib')}`)).body.state).toBe('indexed');
    } finally {
      await second.stop();
    }
  });
});
