import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TASK_QUEUE_NAMES } from '../../runtime/services.js';
import { ConfigError } from '../../core/errors.js';
import { parseQueues } from '../../runtime/main.js';
import { json } from '../support/http.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { startWorkerProcess } from '../support/worker-process.js';

let api: TestStack;
let worker: ChildProcess;

beforeAll(async () => {
  // An API process with no workers of its own...
  api = await startTestStack({ queues: [], healthProbeTimeoutMs: 2000 });
  // ...and `npm run worker -- --queues indexing` beside it, attached to the same Temporal and PostgreSQL.
  worker = await startWorkerProcess(api, ['indexing']);
});
afterAll(async () => {
  if (worker && worker.exitCode === null) worker.kill('SIGKILL');
  await api?.stop();
});

describe('scaling out with worker processes', () => {
  it('serves a queue from a separate worker process, and reports the queues nobody polls', async () => {
    const res = await fetch(`${api.url}/healthz?deep=1`);
    const body = await json(res);
    expect(res.status).toBe(503);
    expect(body.status).toBe('error');
    expect(body.queues.indexing).toMatchObject({ ok: true, answeredBy: expect.stringMatching(/indexing@/) });
    expect(body.queues.indexing.answeredBy).toContain(`:${worker.pid}`);
    for (const q of ['transcription', 'recipes']) {
      expect(body.queues[q].ok).toBe(false);
      expect(body.queues[q].error).toContain('did not answer within 2000 ms');
    }
  });

  it('stops the worker process cleanly on SIGTERM', async () => {
    const exited = new Promise<number | null>((r) => worker.once('exit', (code) => r(code)));
    worker.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

describe('--queues', () => {
  it('takes a subset, all queues by default, and refuses unknown names', () => {
    expect(parseQueues([], TASK_QUEUE_NAMES, {})).toEqual(['indexing', 'transcription', 'recipes']);
    expect(parseQueues(['--queues', 'recipes,indexing'], TASK_QUEUE_NAMES, {})).toEqual(['recipes', 'indexing']);
    expect(parseQueues(['--queues=transcription'], TASK_QUEUE_NAMES, {})).toEqual(['transcription']);
    expect(parseQueues([], TASK_QUEUE_NAMES, { WORKER_QUEUES: 'indexing' })).toEqual(['indexing']);
    expect(() => parseQueues(['--queues', 'indexing,videos'], TASK_QUEUE_NAMES, {})).toThrow(ConfigError);
    expect(() => parseQueues(['--queues', 'indexing,videos'], TASK_QUEUE_NAMES, {})).toThrow(
      '--queues takes a comma-separated list of indexing, transcription, recipes; got "indexing,videos"',
    );
  });
});
