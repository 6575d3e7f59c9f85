import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, NativeConnection, Runtime, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import { sharedActivities } from '../activities/index.js';
import { databaseOutageInterceptor } from '../activities/outage.js';
import type { ActivityDeps } from '../activities/deps.js';
import { applyConfiguredSlotLimits } from '../activities/slots.js';
import { type QueueName, taskQueue } from '../core/config.js';
import type { Logger } from '../core/log.js';
import type { Activities } from './service.js';
import { serviceOfQueue, slotPools, workflowModules } from './services.js';

/** The shared workflows every worker runs besides the services' (the health ping, the concurrency pools). */
const SHARED_WORKFLOWS = [new URL('../workflows/index.ts', import.meta.url)];
/** `npm run build` writes the bundle here; production workers load it instead of bundling at start. */
const PREBUILT_BUNDLE = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));

/** A module as it exists here: `.ts` from source (tsx, vitest), `.js` once compiled (dist/). */
function modulePath(url: URL): string {
  const file = fileURLToPath(url);
  return fs.existsSync(file) ? file : file.replace(/\.ts$/, '.js');
}

/** Every module whose workflows the workers run: the shared ones and each service's (runtime/services.ts). */
export const WORKFLOW_MODULES: readonly string[] = [...SHARED_WORKFLOWS, ...workflowModules].map(modulePath);

/**
 * Bundles the workflows of `modules` (by default every service's; tests add their probe workflows). The bundler takes
 * one file, so an entry that re-exports each module is written to a temporary folder; it finds the SDK through this
 * project's node_modules, since the entry's folder has none.
 */
export async function bundleWorkflows(modules: readonly string[] = WORKFLOW_MODULES): Promise<string> {
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'gristmill-workflows-'));
  const entry = path.join(dir, 'workflows.ts');
  await fs.promises.writeFile(entry, modules.map((m) => `export * from ${JSON.stringify(m)};\n`).join(''));
  const nodeModules = path.resolve(path.dirname(createRequire(import.meta.url).resolve('@temporalio/workflow')), '../../..');
  try {
    const { code } = await bundleWorkflowCode({
      workflowsPath: entry,
      webpackConfigHook: (c) => ({ ...c, resolve: { ...c.resolve, modules: [...(c.resolve?.modules ?? []), nodeModules] } }),
      logger: { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
    });
    return code;
  } finally {
    await fs.promises.rm(dir, { recursive: true, force: true });
  }
}

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

/** The bundle workers load: the prebuilt one when there is one and no extra module is asked for. */
export async function workflowBundle(extraModules: readonly string[] = []): Promise<WorkflowBundleOption> {
  if (!extraModules.length && fs.existsSync(PREBUILT_BUNDLE)) return { codePath: PREBUILT_BUNDLE };
  return { code: await bundleWorkflows([...WORKFLOW_MODULES, ...extraModules]) };
}

/** A queue's activities: the shared ones, and those of the service that owns the queue. */
export async function activitiesFor(queue: QueueName, deps: ActivityDeps): Promise<Activities> {
  const service = serviceOfQueue(queue);
  if (!service) throw new Error(`no service has a task queue named "${queue}"`);
  return { ...sharedActivities(deps, slotPools), ...(await service.queues![queue]!(deps)) };
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
  /** Modules of extra workflows to run beside every service's (tests' probe workflows). */
  extraWorkflows?: readonly string[];
}): Promise<Workers> {
  installRuntime(o.deps.log);
  const connection = await NativeConnection.connect({ address: o.address });
  const bundle = await workflowBundle(o.extraWorkflows);
  const workers = await Promise.all(
    o.queues.map(async (queue) =>
      Worker.create({
        connection,
        namespace: o.namespace,
        taskQueue: taskQueue(o.deps.config, queue),
        workflowBundle: bundle,
        activities: await activitiesFor(queue, o.deps),
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
  await applyConfiguredSlotLimits(o.deps, o.queues, slotPools);
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
