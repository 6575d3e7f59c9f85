import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, NativeConnection, Runtime, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import { activitiesFor } from '../activities/index.js';
import { databaseOutageInterceptor } from '../activities/outage.js';
import type { ActivityDeps } from '../activities/deps.js';
import { applyConfiguredSlotLimits } from '../activities/slots.js';
import { type QueueName, taskQueue } from '../core/config.js';
import type { Logger } from '../core/log.js';
import { indexingPool } from '../docindex/pool.js';
import { recipesPool } from '../recipes/pool.js';

/** The workflows the workers run; tests point this at a file that re-exports them plus their probes. */
const source = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
export const WORKFLOWS_PATH = fs.existsSync(source) ? source : fileURLToPath(new URL('../workflows/index.js', import.meta.url));
/** `npm run build` writes the bundle here; production workers load it instead of bundling at start. */
const PREBUILT_BUNDLE = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));

let runtimeInstalled = false;
/** Routes the Temporal core's own logs into ours, once per process. */
function installRuntime(log: Logger): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const l = log.child('temporal');
  Runtime.install({
    // Signals are handled once, by runtime/main.ts, which stops everything in order.
    shutdownSignals: [],
    logger: {
      log: (level, message, meta) => (level === 'ERROR' ? l.error : level === 'WARN' ? l.warn : l.debug)(message, meta),
      trace: () => undefined,
      debug: (m, meta) => l.debug(m, meta),
      info: (m, meta) => l.debug(m, meta),
      warn: (m, meta) => l.warn(m, meta),
      error: (m, meta) => l.error(m, meta),
    },
  });
}

export async function workflowBundle(workflowsPath = WORKFLOWS_PATH): Promise<WorkflowBundleOption> {
  if (workflowsPath === WORKFLOWS_PATH && fs.existsSync(PREBUILT_BUNDLE)) return { codePath: PREBUILT_BUNDLE };
  return bundleWorkflowCode({ workflowsPath, logger: { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined } });
}

export interface Workers {
  queues: QueueName[];
  /** Resolves when every worker has stopped. */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * One Worker per task queue, all in this process and on one connection. Every worker has every workflow type
 * (one bundle) and its queue's activities. Scale out by running more processes with `--queues`.
 */
export async function startWorkers(o: {
  address: string;
  namespace: string;
  queues: readonly QueueName[];
  deps: ActivityDeps;
  workflowsPath?: string;
}): Promise<Workers> {
  installRuntime(o.deps.log);
  const connection = await NativeConnection.connect({ address: o.address });
  const bundle = await workflowBundle(o.workflowsPath);
  const workers = await Promise.all(
    o.queues.map((queue) =>
      Worker.create({
        connection,
        namespace: o.namespace,
        taskQueue: taskQueue(o.deps.config, queue),
        workflowBundle: bundle,
        activities: activitiesFor(queue, o.deps),
        interceptors: { activity: [databaseOutageInterceptor] },
        shutdownGraceTime: '10 seconds',
      }),
    ),
  );
  const done = Promise.all(workers.map((w) => w.run())).then(
    () => connection.close(),
    async (err) => {
      await Promise.allSettled(workers.map(async (w) => w.getState() === 'RUNNING' && w.shutdown()));
      await connection.close().catch(() => undefined);
      throw err;
    },
  );
  await applyConfiguredSlotLimits(o.deps, o.queues, [indexingPool, recipesPool]);
  o.deps.log.info('workers polling', { queues: o.queues.map((q) => taskQueue(o.deps.config, q)).join(',') });
  return {
    queues: [...o.queues],
    done,
    shutdown: async () => {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await done.catch(() => undefined);
    },
  };
}
