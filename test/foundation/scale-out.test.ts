import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TASK_QUEUE_NAMES } from '../../core/config.js';
import { ConfigError } from '../../core/errors.js';
import { parseQueues } from '../../runtime/main.js';
import { json } from '../support/http.js';
import { startTestStack, type TestStack } from '../support/stack.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
let api: TestStack;
let worker: ChildProcess;
let output = '';

beforeAll(async () => {
  // An API process with no workers of its own...
  api = await startTestStack({ queues: [], healthProbeTimeoutMs: 2000 });
  // ...and `npm run worker -- --queues indexing` beside it, attached to the same Temporal and PostgreSQL.
  worker = spawn(process.execPath, ['--import', 'tsx', 'bin/worker.ts', '--queues', 'indexing'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: api.databaseUrl,
      TEMPORAL_ADDRESS: api.config.temporalAddress,
      TASK_QUEUE_PREFIX: api.config.taskQueuePrefix,
      DATA_DIR: api.dataDir,
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  worker.stdout!.on('data', (b) => (output += b));
  worker.stderr!.on('data', (b) => (output += b));
  const deadline = Date.now() + 60_000;
  while (!output.includes('workers polling')) {
    if (Date.now() > deadline || worker.exitCode !== null) throw new Error(`worker did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
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
