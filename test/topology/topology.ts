import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger, type LogLevel } from '../../core/log.js';
import { freePort } from '../../fakes/ports.js';
import { TASK_QUEUE_NAMES } from '../../runtime/services.js';
import { type GristmillProcess, startGristmill } from './gristmill.js';
import { startTopologyPostgres, type TopologyPostgres } from './postgres.js';
import { type Proxy, startProxy } from './proxy.js';
import {
  composeTemporalVersion,
  createNamespace,
  provisionTemporalServer,
  setupSchemas,
  startTemporalServer,
  type TemporalServer,
} from './temporal-server.js';

/**
 * docker-compose.yml's production topology on one machine, without Docker, in the order compose starts it:
 * postgres (+ its init script) -> temporal-schema -> temporal -> temporal-namespace -> Gristmill. Gristmill runs
 * as two API processes behind a reverse proxy and two worker processes per task queue.
 */
export interface Topology {
  dir: string;
  postgres: TopologyPostgres;
  temporal: TemporalServer;
  apis: GristmillProcess[];
  workers: Record<string, GristmillProcess[]>;
  proxy: Proxy;
  /** The proxy's URL: what clients use. */
  url: string;
  /** The environment every Gristmill process has. */
  env: Record<string, string>;
  /** How long each part took to start, in ms. */
  timings: Record<string, number>;
  stop(): Promise<void>;
}

export async function startTopology(o: { env: Record<string, string>; apis?: number; workersPerQueue?: number }): Promise<Topology> {
  const log = createLogger((process.env.TEST_LOG_LEVEL as LogLevel | undefined) ?? 'info', 'topology');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-topology-'));
  await fs.chmod(dir, 0o755); // as root, PostgreSQL runs as user postgres and must enter it
  const logDir = path.join(dir, 'logs');
  await fs.mkdir(logDir);
  const timings: Record<string, number> = {};
  const timed = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
    const t = Date.now();
    const v = await f();
    timings[name] = Date.now() - t;
    return v;
  };

  const version = await composeTemporalVersion();
  const [bin, postgres] = await Promise.all([
    timed('temporalServerBinaries', () => provisionTemporalServer(version, log)),
    timed('postgres', async () => startTopologyPostgres(dir, await freePort())),
  ]);
  const sql = { host: postgres.host, port: postgres.port, user: 'temporal', password: postgres.passwords.temporal };
  await timed('temporalSchema', () => setupSchemas(bin, sql));
  const temporal = await timed('temporal', () => startTemporalServer(bin, sql, path.join(dir, 'temporal'), log));
  await timed('temporalNamespace', () => createNamespace(temporal.address, 'default', log));

  const apis: GristmillProcess[] = [];
  const proxy = await startProxy(() => apis.map((a) => a.url!));
  const env: Record<string, string> = {
    DATABASE_URL: postgres.gristmillUrl,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: 'default',
    DATA_DIR: path.join(dir, 'data'), // compose's gristmill-data volume, shared by every Gristmill container
    PUBLIC_BASE_URL: proxy.url,
    LOG_LEVEL: 'info',
    SEARCH_VECTORS: 'pgvector', // as docker-compose.yml, on its pgvector image
    ...o.env,
  };
  // The first API process runs the migrations alone, as compose's single `app` container does before any other.
  await timed('apis', async () => {
    for (let i = 0; i < (o.apis ?? 2); i++) apis.push(await startGristmill({ name: `api-${i}`, role: 'api', env, logDir }));
  });
  const workers: Record<string, GristmillProcess[]> = {};
  await timed('workers', async () => {
    for (const queue of TASK_QUEUE_NAMES) {
      workers[queue] = [];
      for (let i = 0; i < (o.workersPerQueue ?? 2); i++) {
        workers[queue].push(await startGristmill({ name: `worker-${queue}-${i}`, role: 'worker', queue, env, logDir }));
      }
    }
  });
  log.info('topology ready', { dir, proxy: proxy.url, temporal: temporal.address, timings });

  return {
    dir,
    postgres,
    temporal,
    apis,
    workers,
    proxy,
    url: proxy.url,
    env,
    timings,
    stop: async () => {
      await proxy.close();
      await Promise.allSettled([...apis, ...Object.values(workers).flat()].map((p) => p.stop()));
      await temporal.stop();
      await postgres.stop();
      if (!process.env.TOPOLOGY_KEEP) await fs.rm(dir, { recursive: true, force: true });
      else log.info('kept the topology folder (TOPOLOGY_KEEP)', { dir });
    },
  };
}
