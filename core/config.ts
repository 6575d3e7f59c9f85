import os from 'node:os';
import path from 'node:path';
import { ConfigError } from './errors.js';
import type { LogLevel } from './log.js';
import { registerSecret } from './redact.js';

/**
 * The one configuration loader. Every setting comes from the environment, has a documented default (README table),
 * and is checked here so that a bad value stops startup with a clear message instead of failing later.
 */
export const TASK_QUEUE_NAMES = ['indexing', 'transcription', 'recipes'] as const;
export type QueueName = (typeof TASK_QUEUE_NAMES)[number];

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** Unset: an embedded PostgreSQL is started under `dataDir/postgres`. */
  databaseUrl: string | undefined;
  embeddedPostgresPort: number;
  /** Unset: the Temporal CLI dev server is started with its state under `dataDir/temporal`. */
  temporalAddress: string | undefined;
  temporalNamespace: string;
  temporalCli: string | undefined;
  temporalPort: number;
  temporalUiPort: number;
  /** Prefixed to every task queue name, so several deployments (or test files) can share one Temporal namespace. */
  taskQueuePrefix: string;
  apiKey: string | undefined;
  publicBaseUrl: string;
  bodyLimitBytes: number;
  logLevel: LogLevel;
  reconcileIntervalMs: number;
  sseHeartbeatMs: number;
  shutdownTimeoutMs: number;
  /** CPUs this process may use (containers often get fewer than the host has); bounds indexing concurrency. */
  cpuCount: number;
  /** How long an indexing activity may go without a heartbeat before Temporal retries it on another worker. */
  indexingHeartbeatTimeoutMs: number;
  /** Folders under which local libraries may be registered and browsed; empty: anywhere the server can read. */
  localSourceRoots: string[];
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v ? v : undefined;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = str(env, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return n;
}

const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** Parses sizes such as `1mb`, `512kb` or a plain byte count. */
export function parseSize(name: string, raw: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(raw.trim());
  if (!m) throw new ConfigError(`${name} must be a size such as 1mb, 512kb or 1048576, got "${raw}"`);
  return Math.floor(Number(m[1]) * SIZE_UNITS[(m[2] ?? 'b').toLowerCase()]!);
}

function url(env: Env, name: string): string | undefined {
  const raw = str(env, name);
  if (raw === undefined) return undefined;
  try {
    new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL, got a value that does not parse`);
  }
  return raw;
}

const LOG_LEVELS: LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const logLevel = (str(env, 'LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const prefix = str(env, 'TASK_QUEUE_PREFIX') ?? '';
  if (!/^[A-Za-z0-9._-]*$/.test(prefix)) {
    throw new ConfigError('TASK_QUEUE_PREFIX may only contain letters, digits, dot, dash and underscore');
  }
  const temporalPort = int(env, 'TEMPORAL_PORT', 7233, 1, 65535);
  const databaseUrl = url(env, 'DATABASE_URL');
  const apiKey = str(env, 'API_KEY');
  registerSecret(apiKey);
  if (databaseUrl) registerSecret(new URL(databaseUrl).password);

  return {
    port,
    host: str(env, 'HOST') ?? '127.0.0.1',
    dataDir: path.resolve(str(env, 'DATA_DIR') ?? './data'),
    databaseUrl,
    embeddedPostgresPort: int(env, 'EMBEDDED_POSTGRES_PORT', 5433, 1, 65535),
    temporalAddress: str(env, 'TEMPORAL_ADDRESS'),
    temporalNamespace: str(env, 'TEMPORAL_NAMESPACE') ?? 'default',
    temporalCli: str(env, 'TEMPORAL_CLI'),
    temporalPort,
    temporalUiPort: int(env, 'TEMPORAL_UI_PORT', temporalPort + 1000, 1, 65535),
    taskQueuePrefix: prefix,
    apiKey,
    publicBaseUrl: (url(env, 'PUBLIC_BASE_URL') ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    bodyLimitBytes: parseSize('BODY_LIMIT', str(env, 'BODY_LIMIT') ?? '1mb'),
    logLevel,
    reconcileIntervalMs: int(env, 'RECONCILE_INTERVAL_MS', 30_000, 100, 86_400_000),
    sseHeartbeatMs: int(env, 'SSE_HEARTBEAT_MS', 15_000, 50, 3_600_000),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 20_000, 100, 600_000),
    cpuCount: int(env, 'CPU_COUNT', os.availableParallelism(), 1, 4096),
    indexingHeartbeatTimeoutMs: int(env, 'INDEXING_HEARTBEAT_TIMEOUT_MS', 120_000, 1000, 3_600_000),
    localSourceRoots: (str(env, 'LOCAL_SOURCE_ROOTS') ?? '')
      .split(path.delimiter)
      .filter(Boolean)
      .map((p) => path.resolve(p)),
  };
}

/** The real task queue name for a logical queue. */
export function taskQueue(config: Pick<Config, 'taskQueuePrefix'>, name: QueueName): string {
  return `${config.taskQueuePrefix}${name}`;
}
