import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import type { RouteFactory } from '../../api/deps.js';
import { type QueueName } from '../../core/config.js';
import { readConfig } from '../../runtime/config.js';
import { TASK_QUEUE_NAMES } from '../../runtime/services.js';
import { createLogger, type LogLevel } from '../../core/log.js';
import { registerSecret } from '../../core/redact.js';
import type { JobKind } from '../../jobs/kinds.js';
import { ensureDatabase } from '../../runtime/postgres.js';
import { startStack, type Stack } from '../../runtime/stack.js';

export const PROBE_WORKFLOWS = fileURLToPath(new URL('../fixtures/workflows.ts', import.meta.url));

export interface TestStack extends Stack {
  url: string;
  databaseUrl: string;
  dataDir: string;
}

/** What every test process is allowed, whether in-process (startTestStack) or its own (startWorkerProcess). */
export const TEST_ENV = {
  // Test fixtures (local repositories) are made under the system's temporary folder.
  LOCAL_SOURCE_ROOTS: os.tmpdir(),
  // The fakes of third parties (post pages, git hosts, push services) listen on 127.0.0.1; the guard is strict
  // about everything else, and test/security/ starts stacks that allow less.
  OUTBOUND_ALLOW: '127.0.0.1',
  // Tests never download a model: a test that wants the download path gives its own fake hub.
  EMBEDDING_ALLOW_DOWNLOADS: 'false',
  EMBEDDING_MODEL_HOST: 'http://127.0.0.1:9/',
  // A search that finds nothing asks no registry: tests of on-demand registration turn it on against fake registries.
  INDEX_ON_DEMAND: 'false',
};

/**
 * A new, empty database `<prefix>_<id>` on the run's shared PostgreSQL server (or the server of `server`, a URL):
 * answers its URL.
 */
export async function createTestDatabase(prefix: string, id = randomBytes(4).toString('hex'), server = inject('databaseUrl')): Promise<string> {
  const url = new URL(server);
  url.pathname = `/${prefix}_${id}`;
  await ensureDatabase(url.toString());
  return url.toString();
}

/**
 * The API and workers of one test file, in-process, against the run's shared servers: a database of its own and
 * task queues of its own (a prefix), so files never see each other's jobs.
 */
export async function startTestStack(
  o: {
    env?: Record<string, string>;
    kinds?: JobKind[];
    routes?: RouteFactory[];
    queues?: readonly QueueName[];
    api?: boolean;
    extraWorkflows?: readonly string[];
    healthProbeTimeoutMs?: number;
    /** A PostgreSQL URL whose server holds the stack's database instead of the shared one (the pgvector server, say). */
    databaseServer?: string;
  } = {},
): Promise<TestStack> {
  const id = randomBytes(4).toString('hex');
  const dbUrl = await createTestDatabase('t', id, o.databaseServer);
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), `gristmill-${id}-`));
  const { config, secrets } = readConfig({
    DATA_DIR: dataDir,
    DATABASE_URL: dbUrl,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    PORT: '0',
    TASK_QUEUE_PREFIX: `t${id}-`,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    RECONCILE_INTERVAL_MS: '3600000', // tests call reconciler.runOnce() themselves
    SSE_HEARTBEAT_MS: '500',
    ...TEST_ENV,
    ...o.env,
  });
  secrets.forEach(registerSecret);
  const stack = await startStack({
    config,
    log: createLogger(config.logLevel as LogLevel, `test:${id}`),
    api: o.api ?? true,
    queues: o.queues ?? TASK_QUEUE_NAMES,
    services: 'attach',
    extraWorkflows: o.extraWorkflows ?? [PROBE_WORKFLOWS],
    reconcileGraceMs: 0,
    ...(o.kinds && { kinds: o.kinds }),
    ...(o.routes && { routes: o.routes }),
    ...(o.healthProbeTimeoutMs && { healthProbeTimeoutMs: o.healthProbeTimeoutMs }),
  });
  return {
    ...stack,
    url: stack.api?.url ?? '',
    databaseUrl: dbUrl,
    dataDir,
    stop: async () => {
      await stack.stop();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
