import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TEST_ENV, type TestStack } from './stack.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A worker as its own process (`npm run worker -- --queues ...`), on a test stack's database, Temporal and task
 * queues, so a test can kill it with SIGKILL mid-job. Resolves once it polls; its output is kept for failures.
 */
export async function startWorkerProcess(stack: TestStack, queues: string[], env: Record<string, string> = {}): Promise<ChildProcess & { output: () => string }> {
  const c = stack.config;
  const worker = spawn(process.execPath, ['--import', 'tsx', 'bin/worker.ts', '--queues', queues.join(',')], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: stack.databaseUrl,
      TEMPORAL_ADDRESS: c.temporalAddress,
      TASK_QUEUE_PREFIX: c.taskQueuePrefix,
      DATA_DIR: stack.dataDir,
      PUBLIC_BASE_URL: c.publicBaseUrl,
      LOG_LEVEL: 'info',
      ...TEST_ENV,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  worker.stdout!.on('data', (b) => (output += b));
  worker.stderr!.on('data', (b) => (output += b));
  const deadline = Date.now() + 120_000;
  while (!output.includes('workers polling')) {
    if (Date.now() > deadline || worker.exitCode !== null) throw new Error(`worker did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return Object.assign(worker, { output: () => output });
}

/** SIGKILL, as a crash or the OOM killer would: no shutdown, no last heartbeat. */
export function killWorker(worker: ChildProcess): Promise<void> {
  if (worker.exitCode !== null || worker.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((r) => worker.once('exit', () => r()));
  worker.kill('SIGKILL');
  return exited;
}
