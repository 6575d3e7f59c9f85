import fs from 'node:fs/promises';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createApp, listen, type RunningApi } from '../api/app.js';
import type { AppDeps, RouteFactory } from '../api/deps.js';
import type { ActivityDeps } from '../activities/deps.js';
import type { Config, QueueName } from '../core/config.js';
import type { Logger } from '../core/log.js';
import { migrate, type Orm } from '../db/orm.js';
import { closeOutbound } from '../outbound/guard.js';
import { EventHub } from '../jobs/hub.js';
import { type JobKind, JobKinds } from '../jobs/kinds.js';
import { registerSearchAttributes } from '../jobs/launch.js';
import { Reconciler } from '../jobs/reconciler.js';
import { ensureHousekeepingSchedule } from '../jobs/housekeeping.js';
import { JobStore } from '../jobs/store.js';
import { openDatabase } from './database.js';
import { provisionPostgres, type PostgresEndpoint } from './postgres.js';
import { errorFormats, jobKinds, serviceRoutes, services, TASK_QUEUE_NAMES } from './services.js';
import { provisionTemporal, type TemporalEndpoint } from './temporal.js';
import type { Workers } from './worker.js';


export interface StackOptions {
  config: Config;
  log: Logger;
  /** Run the HTTP API (with the event hub and the reconciler). */
  api: boolean;
  /** Task queues to poll in this process; none for an API-only process. */
  queues: readonly QueueName[];
  /**
   * `embedded`: start Postgres and the Temporal dev server unless DATABASE_URL / TEMPORAL_ADDRESS are set
   * (`npm start`). `attach`: connect to running ones, by default those a local `npm start` runs (`npm run api`,
   * `npm run worker`).
   */
  services: 'embedded' | 'attach';
  /** For tests: extra job kinds, routes and modules of probe workflows. */
  kinds?: JobKind[];
  routes?: RouteFactory[];
  extraWorkflows?: readonly string[];
  healthProbeTimeoutMs?: number;
  reconcileGraceMs?: number;
}

export interface Stack {
  config: Config;
  orm: Orm;
  temporal: Client;
  jobs: JobStore;
  hub: EventHub | undefined;
  reconciler: Reconciler | undefined;
  api: RunningApi | undefined;
  workers: Workers | undefined;
  temporalUiUrl: string | undefined;
  stop(): Promise<void>;
}

/** For `attach`: the embedded cluster of DATA_DIR that `npm start` runs, when DATABASE_URL is not set. */
export async function attachedDatabaseUrl(config: Config): Promise<string> {
  if (config.databaseUrl) return config.databaseUrl;
  const secret = await fs.readFile(path.join(config.dataDir, 'postgres.secret'), 'utf8').catch(() => undefined);
  if (!secret) {
    throw new Error(
      `DATABASE_URL is not set and ${config.dataDir} holds no embedded PostgreSQL: set DATABASE_URL, or run \`npm start\` first.`,
    );
  }
  return `postgres://gristmill:${encodeURIComponent(secret.trim())}@127.0.0.1:${config.embeddedPostgresPort}/gristmill`;
}

/** The platform's schedules (housekeeping) and each service's (runtime/service.ts, `schedules`); failures are logged. */
async function ensureSchedules(orm: Orm, temporal: Client, config: Config, log: Logger): Promise<void> {
  const steps: [string, () => Promise<void>][] = [
    ['housekeeping', () => ensureHousekeepingSchedule(temporal, config, TASK_QUEUE_NAMES[0]!)],
    ...services.flatMap((s): [string, () => Promise<void>][] =>
      s.schedules ? [[s.name, () => s.schedules!({ orm, config, log: log.child(s.name), temporal })]] : [],
    ),
  ];
  for (const [name, step] of steps) {
    await step().catch((err: Error) => log.warn(`could not set up the schedules of ${name}; they are tried again at the next start`, { error: err.message }));
  }
}

/**
 * Brings up what this process runs, in dependency order, and returns one `stop` that takes it down in reverse:
 * API (no new requests, event streams ended) -> reconciler -> workers (drain) -> connections -> servers.
 */
export async function startStack(o: StackOptions): Promise<Stack> {
  const { config, log } = o;
  const cleanups: { step: string; run: () => Promise<unknown> }[] = [];
  const onStop = (step: string, run: () => Promise<unknown>) => cleanups.push({ step, run });
  const stop = async () => {
    for (const { step, run } of cleanups.reverse().splice(0)) {
      const t0 = Date.now();
      await run().catch((err) => log.warn(`shutdown step "${step}" failed`, { error: (err as Error).message }));
      log.debug(`stopped ${step}`, { ms: Date.now() - t0 });
    }
  };

  try {
    let pgEndpoint: PostgresEndpoint;
    let temporalEndpoint: TemporalEndpoint;
    if (o.services === 'embedded') {
      // Both are started side by side: each takes a second or so, and they do not depend on each other.
      const [pgResult, temporalResult] = await Promise.allSettled([provisionPostgres(config, log), provisionTemporal(config, log)]);
      if (pgResult.status === 'fulfilled') onStop('postgres', () => pgResult.value.stop());
      if (temporalResult.status === 'fulfilled') onStop('temporal server', () => temporalResult.value.stop());
      if (pgResult.status === 'rejected') throw pgResult.reason;
      if (temporalResult.status === 'rejected') throw temporalResult.reason;
      pgEndpoint = pgResult.value;
      temporalEndpoint = temporalResult.value;
    } else {
      pgEndpoint = { url: await attachedDatabaseUrl(config), stop: async () => {} };
      temporalEndpoint = {
        address: config.temporalAddress ?? `127.0.0.1:${config.temporalPort}`,
        namespace: config.temporalNamespace,
        uiUrl: undefined,
        stop: async () => {},
      };
    }

    const orm = await openDatabase(pgEndpoint.url, log.child('db'));
    onStop('database pool', () => orm.close());
    await migrate(orm, pgEndpoint.url, log);
    for (const service of services) {
      await service.start?.({ orm, config, log: log.child(service.name) });
      const stopService = service.stop;
      if (stopService) onStop(service.name, () => stopService());
    }
    onStop('outbound guard', () => closeOutbound(config));

    const connection = await Connection.connect({ address: temporalEndpoint.address });
    onStop('temporal client', () => connection.close());
    const temporal = new Client({ connection, namespace: config.temporalNamespace });
    await registerSearchAttributes(temporal, log);

    const kindList = [...jobKinds, ...(o.kinds ?? [])];
    const kinds = new JobKinds(kindList);
    const jobs = new JobStore(kinds);

    let workers: Workers | undefined;
    if (o.queues.length) {
      const deps: ActivityDeps = { config, orm, jobs, log: log.child('worker'), temporal };
      // Imported only where workers run: an API process never loads Temporal's worker runtime.
      const { startWorkers } = await import('./worker.js');
      workers = await startWorkers({
        address: temporalEndpoint.address,
        namespace: config.temporalNamespace,
        queues: o.queues,
        deps,
        ...(o.extraWorkflows && { extraWorkflows: o.extraWorkflows }),
      });
      const w = workers;
      onStop('workers', () => w.shutdown());
      w.done.catch((err) => log.error('a worker stopped with an error', { error: err }));
    }

    let hub: EventHub | undefined;
    let reconciler: Reconciler | undefined;
    let api: RunningApi | undefined;
    if (o.api) {
      // Streams are checked for events whose NOTIFY was lost as often as they send heartbeats.
      hub = new EventHub(pgEndpoint.url, () => orm.em.fork(), log.child('events'), config.sseHeartbeatMs);
      await hub.start();
      const h = hub;
      reconciler = new Reconciler({
        em: () => orm.em.fork(),
        jobs,
        client: temporal,
        log: log.child('reconciler'),
        ...(o.reconcileGraceMs !== undefined && { graceMs: o.reconcileGraceMs }),
      });
      // Startup recovery: jobs whose workflow is gone are failed before anyone reads them.
      await reconciler.runOnce();
      reconciler.start(config.reconcileIntervalMs);
      const r = reconciler;
      onStop('reconciler', () => r.stop());
      // Periodic work is on Temporal Schedules, set up beside serving: a slow Temporal does not hold the API back.
      const scheduling = ensureSchedules(orm, temporal, config, log);
      onStop('schedules', () => scheduling);

      const appDeps: AppDeps = {
        config,
        log: log.child('api'),
        orm,
        temporal,
        hub,
        jobs,
        taskQueues: TASK_QUEUE_NAMES,
        healthProbeTimeoutMs: o.healthProbeTimeoutMs ?? 5000,
      };
      api = await listen(createApp(appDeps, { routes: [...serviceRoutes, ...(o.routes ?? [])], errorFormats }), appDeps, config.port, config.host);
      for (const service of services) service.apiStarted?.(appDeps);
      const a = api;
      onStop('api', async () => {
        const closing = a.close();
        await h.close(); // ends open event streams so the server can finish closing
        await closing;
      });
    }

    return {
      config,
      orm,
      temporal,
      jobs,
      hub,
      reconciler,
      api,
      workers,
      temporalUiUrl: temporalEndpoint.uiUrl,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
