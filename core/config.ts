/**
 * The one configuration: every setting comes from the environment and is declared once, as a row (its variable,
 * parser, default, meaning, whether it is a secret, and its section): the platform's in TABLE below, each service's in
 * its folder (transcription/configuration.ts and the like, listed by runtime/services.ts). The same rows yield the
 * typed Config (runtime/config.ts, `loadConfig`) and the reference, docs/configuration.md (`npm run docs:config`; a
 * test keeps them equal).
 * A bad value stops startup with a message naming the variable instead of failing later.
 */
import os from 'node:os';
import { ConfigError } from './errors.js';
import { type AddressRange, hostName, parseRange } from './ip.js';
import type { LogLevel } from './log.js';
import {
  baseUrl,
  type Env,
  int,
  list,
  oneOf,
  parser,
  type ReadElsewhere,
  readSettings,
  refine,
  renderReference,
  resolvedPath,
  type SectionInfo,
  type Setting,
  type SettingsTable,
  size,
  text,
  url,
} from './settings.js';

export { parseSize } from './settings.js';

/** A task queue's logical name, as a service declares it (runtime/services.ts lists them); `taskQueue` adds the prefix. */
export type QueueName = string;

/** The real task queue name for a logical queue. */
export function taskQueue(config: Pick<Config, 'taskQueuePrefix'>, name: QueueName): string {
  return `${config.taskQueuePrefix}${name}`;
}

const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const satisfies readonly LogLevel[];

/**
 * The typed configuration: the platform's settings, each filled by the row of the same name in TABLE (below), and
 * each service's section (ServiceConfigs).
 */
export interface Config extends PlatformConfig, ServiceConfigs {}

/**
 * The services' sections of the configuration. Each service adds its own by declaration merging, beside its rows
 * (transcription/configuration.ts and the like), so its settings live in its folder and still type `config.x`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the services' declarations
export interface ServiceConfigs {}

/** What a service adds to the configuration (runtime/service.ts, `configuration`): its rows and their sections. */
export interface ConfigSection {
  /** The sections its rows name, in the order the reference shows them. */
  sections: Record<string, SectionInfo>;
  /** Rows in the shape of what they fill: a key of ServiceConfigs holding rows of its own, or a field at the top. */
  table: SettingsTable;
}

/** A service's rows for its section `T` (TypeScript checks that none is missing). */
export type SectionRows<T> = { [K in keyof T]: Setting<T[K], Config, string> };

/** The platform's settings: the server, security, the database, Temporal, jobs, web push and outbound requests. */
export interface PlatformConfig {
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
  /**
   * Host names the API answers to besides IP addresses, `localhost` and PUBLIC_BASE_URL's host (ALLOWED_HOSTS; `.x`
   * also matches subdomains; `*` any): a DNS-rebinding page names its own host, and is refused.
   */
  allowedHosts: string[];
  /** Browser origins that may call the API while API_KEY is unset, besides its own (ALLOWED_ORIGINS; `*` any). */
  allowedOrigins: string[];
  publicBaseUrl: string;
  bodyLimitBytes: number;
  logLevel: LogLevel;
  reconcileIntervalMs: number;
  /**
   * How often a concurrency pool checks that its holders still run (taking back the slots of those that ended), and
   * a job waiting for a slot checks that its pool still has its request (SLOT_CHECK_INTERVAL_MS).
   */
  slotCheckIntervalMs: number;
  /** Job events older than this many days are deleted (EVENT_RETENTION_DAYS; 0 keeps them). */
  eventRetentionDays: number;
  sseHeartbeatMs: number;
  shutdownTimeoutMs: number;
  /** Web push (shared by every service that notifies). */
  push: PushConfig;
  /** CPUs this process may use (containers often get fewer than the host has); bounds indexing concurrency. */
  cpuCount: number;
  /** Which internal addresses user-supplied URLs may still reach (outbound/guard.ts). */
  outbound: OutboundConfig;
  /** SECRETS_KEY: the key that encrypts stored secrets (core/secrets.ts); unset: DATA_DIR/secrets.key. */
  secretsKey: Buffer | undefined;
}

export interface OutboundConfig {
  /** OUTBOUND_ALLOW's ranges and addresses: reachable although they are loopback, private, link-local, ... */
  allowRanges: AddressRange[];
  /** OUTBOUND_ALLOW's host names (lower case; `*.lan` is every name under `lan`), whatever they resolve to. */
  allowHosts: string[];
}

export interface PushConfig {
  /** Both or neither; neither: a key pair is generated once into DATA_DIR/vapid.json. */
  vapidPublicKey: string | undefined;
  vapidPrivateKey: string | undefined;
  /** The `sub` claim push services use to contact the operator: a mailto: or https: URL. */
  vapidSubject: string;
  /** Extra certificate authorities (PEM) trusted for push services, e.g. a self-hosted one with a private CA. */
  caFile: string | undefined;
}

/** ALLOWED_HOSTS: a DNS-rebinding page names its own host, and is refused. */
const hostNames = list('host names, comma-separated', (entry, name) => {
  const host = entry.toLowerCase();
  if (host !== '*' && !/^\.?[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(host)) {
    throw new ConfigError(`${name} takes host names such as gristmill.lan or .example.com (no scheme, port or path), got "${entry}"`);
  }
  return host;
});

const origins = list('origins, comma-separated', (entry, name) => {
  if (entry === '*') return entry;
  try {
    const origin = new URL(entry).origin;
    if (origin !== 'null' && entry.replace(/\/+$/, '').toLowerCase() === origin.toLowerCase()) return origin;
  } catch {
    // reported below
  }
  throw new ConfigError(`${name} takes origins such as https://tools.example.com or http://localhost:5173, got "${entry}"`);
});

const HOST_NAME = /^(\*\.)?[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

const outboundEntry = (entry: string, name: string): AddressRange | string => {
  const range = parseRange(entry);
  const host = hostName(entry);
  if (range) return range;
  if (HOST_NAME.test(host) && !/^[\d.]+$/.test(host)) return host;
  throw new ConfigError(
    `${name} takes ranges (192.168.1.0/24, fd00::/8), addresses (10.0.0.5) and host names (gitea.lan, *.lan), comma-separated; "${entry}" is none of these`,
  );
};

const outboundAllow = refine(list('ranges, addresses and host names, comma-separated', outboundEntry), (entries) => ({
  allowRanges: entries.filter((e): e is AddressRange => typeof e !== 'string'),
  allowHosts: entries.filter((e): e is string => typeof e === 'string'),
}));

const secretsKey = parser('32 bytes: 64 hex digits or base64', (raw, name) => {
  const key = /^[0-9a-f]{64}$/i.test(raw)
    ? Buffer.from(raw, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(raw)
      ? Buffer.from(raw.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
      : undefined;
  if (key?.length !== 32) {
    throw new ConfigError(`${name} must be 32 random bytes, as 64 hex digits or base64 (\`openssl rand -base64 32\`)`);
  }
  return key;
});

const queuePrefix = parser('letters, digits, `.`, `-`, `_`', (raw, name) => {
  if (!/^[A-Za-z0-9._-]*$/.test(raw)) throw new ConfigError(`${name} may only contain letters, digits, dot, dash and underscore`);
  return raw;
});

const vapidKey = (bytes: number) =>
  parser(`${bytes} bytes, URL-safe base64`, (raw, name) => {
    if (Buffer.from(raw, 'base64url').length !== bytes) {
      throw new ConfigError(`${name} must be ${bytes} bytes in URL-safe base64 (as \`npx web-push generate-vapid-keys\` prints)`);
    }
    return raw;
  });

const vapidSubject = refine(text('a `mailto:` address or an `https:` URL'), (subject, name) => {
  if (!/^(mailto:|https:\/\/)/i.test(subject)) throw new ConfigError(`${name} must be a mailto: address or an https: URL`);
  return subject;
});

const SECTIONS = {
  server: { title: 'Server', about: 'The HTTP API and the process that runs it.' },
  security: { title: 'Security', about: 'Who may call the API, and the key of stored secrets; see [security.md](security.md).' },
  outbound: { title: 'Outbound requests', about: 'Which internal addresses the URLs users supply may still reach (outbound/guard.ts).' },
  database: { title: 'Database', about: 'PostgreSQL: an external server, or an embedded one under `DATA_DIR/postgres`.' },
  temporal: { title: 'Temporal', about: 'The Temporal frontend, or the CLI dev server started with its state under `DATA_DIR/temporal`.' },
  jobs: { title: 'Jobs', about: 'Reconciliation, concurrency pools and job events; see [jobs.md](jobs.md).' },
  push: { title: 'Web push', about: 'Notifications, shared by every service that sends them (push/).' },
} satisfies Record<string, SectionInfo>;
type Section = keyof typeof SECTIONS;

type Rows<T> = { [K in keyof T]: Setting<T[K], Config, Section> };
/** One row per field of PlatformConfig, in the same shape (TypeScript checks that none is missing). */
type ConfigTable = Omit<Rows<PlatformConfig>, 'push'> & { push: Rows<PushConfig> };

const SEE_SECURITY = 'see [security.md](security.md)';

/** In reading order: a Derived default reads only settings above it. */
const TABLE: ConfigTable = {
  port: { variable: 'PORT', section: 'server', parse: int(0, 65535), default: '3000', meaning: 'HTTP port of the API' },
  host: { variable: 'HOST', section: 'server', parse: text('an address'), default: '127.0.0.1', meaning: 'interface the API binds; `0.0.0.0` in containers' },
  dataDir: {
    variable: 'DATA_DIR', section: 'server', parse: resolvedPath(), default: './data',
    meaning: 'where state is kept: the embedded PostgreSQL cluster, the Temporal dev server, local models, `secrets.key`, `vapid.json`',
  },
  publicBaseUrl: {
    variable: 'PUBLIC_BASE_URL', section: 'server', parse: baseUrl,
    default: { text: '`http://localhost:$PORT`', value: (c) => `http://localhost:${c.port}` },
    meaning: 'how clients and callbacks reach the API',
  },
  bodyLimitBytes: {
    variable: 'BODY_LIMIT', section: 'server', parse: size(), default: '1mb',
    meaning: 'largest JSON, form or text body of a route that sets no other limit (larger: 413)',
  },
  logLevel: { variable: 'LOG_LEVEL', section: 'server', parse: oneOf(LOG_LEVELS), default: 'info', meaning: 'the least severe log lines written' },
  shutdownTimeoutMs: {
    variable: 'SHUTDOWN_TIMEOUT_MS', section: 'server', parse: int(100, 600_000), default: '20000',
    meaning: 'longest graceful shutdown before the process exits anyway',
  },
  cpuCount: {
    variable: 'CPU_COUNT', section: 'server', parse: int(1, 4096),
    default: { text: 'CPUs Node sees', value: () => os.availableParallelism() },
    meaning: 'CPUs this deployment may use (containers often get fewer than the host has); bounds the indexing concurrency',
  },
  apiKey: {
    variable: 'API_KEY', section: 'security', parse: text(), secret: true,
    meaning:
      'when set, every `/api` route, `/mcp` and `/healthz?deep=1` require `Authorization: Bearer <key>` (not plain `/healthz`, `/api/openapi.json`, ' +
      `webhooks, which carry their own token), and pages on other sites may call the API with it; unset, only this machine should reach the API (${SEE_SECURITY})`,
  },
  allowedHosts: {
    variable: 'ALLOWED_HOSTS', section: 'security', parse: hostNames, default: { text: '', value: () => [] },
    meaning:
      "host names the API answers to besides IP addresses, `localhost`, `*.localhost`, `HOST` and `PUBLIC_BASE_URL`'s host (`.example.com` also " +
      'matches its subdomains; `*` any); other `Host` headers: 403 `HOST_NOT_ALLOWED`',
  },
  allowedOrigins: {
    variable: 'ALLOWED_ORIGINS', section: 'security', parse: origins, default: { text: '', value: () => [] },
    meaning: 'browser origins (`https://tools.example.com`) that may call the API while `API_KEY` is unset, besides its own (`*` any); others: 403 `ORIGIN_NOT_ALLOWED`',
  },
  secretsKey: {
    variable: 'SECRETS_KEY', section: 'security', parse: secretsKey, secret: true, default: { text: 'generated' },
    meaning:
      'the key (`openssl rand -base64 32`) that encrypts stored git-host tokens and embedding API keys (core/secrets.ts); unset: `DATA_DIR/secrets.key`, ' +
      'generated once (mode 0600). Every process needs the same key; losing it means entering those secrets again',
  },
  outbound: {
    variable: 'OUTBOUND_ALLOW', section: 'outbound', parse: outboundAllow,
    default: { text: 'none', value: () => ({ allowRanges: [], allowHosts: [] }) },
    meaning:
      'internal addresses that URLs users supply (git remotes, recipe posts and pictures, video URLs, push endpoints) may reach anyway: ranges ' +
      `(\`192.168.1.0/24\`, \`fd00::/8\`), addresses (\`10.0.0.5\`) and host names (\`gitea.lan\`, \`*.lan\`). Unset: public addresses only (${SEE_SECURITY})`,
  },
  databaseUrl: {
    variable: 'DATABASE_URL', section: 'database', parse: url(), secret: (raw) => new URL(raw).password, default: { text: 'embedded' },
    meaning: 'a PostgreSQL URL (its password is the secret); unset: the embedded server',
  },
  embeddedPostgresPort: { variable: 'EMBEDDED_POSTGRES_PORT', section: 'database', parse: int(1, 65535), default: '5433', meaning: 'port of the embedded PostgreSQL' },
  temporalAddress: {
    variable: 'TEMPORAL_ADDRESS', section: 'temporal', parse: text('`host:port`'), default: { text: 'dev server' },
    meaning: 'a Temporal frontend; unset: the dev server is started',
  },
  temporalNamespace: { variable: 'TEMPORAL_NAMESPACE', section: 'temporal', parse: text(), default: 'default', meaning: 'Temporal namespace' },
  temporalCli: { variable: 'TEMPORAL_CLI', section: 'temporal', parse: text('a path'), meaning: 'path to a `temporal` binary for the dev server' },
  temporalPort: { variable: 'TEMPORAL_PORT', section: 'temporal', parse: int(1, 65535), default: '7233', meaning: 'gRPC port of the dev server' },
  temporalUiPort: {
    variable: 'TEMPORAL_UI_PORT', section: 'temporal', parse: int(1, 65535),
    default: { text: '`TEMPORAL_PORT + 1000` (8233)', value: (c) => c.temporalPort + 1000 },
    meaning: 'web UI port of the dev server',
  },
  taskQueuePrefix: {
    variable: 'TASK_QUEUE_PREFIX', section: 'temporal', parse: queuePrefix, default: '',
    meaning: 'prefix of every task queue name, so several deployments (or test files) can share one namespace',
  },
  reconcileIntervalMs: {
    variable: 'RECONCILE_INTERVAL_MS', section: 'jobs', parse: int(100, 86_400_000), default: '30000',
    meaning: 'how often jobs are checked against their workflows',
  },
  slotCheckIntervalMs: {
    variable: 'SLOT_CHECK_INTERVAL_MS', section: 'jobs', parse: int(100, 3_600_000), default: '30000',
    meaning:
      'how often a concurrency pool takes back the slots of runs that ended, and a job waiting for a slot checks that its pool still has its request',
  },
  eventRetentionDays: {
    variable: 'EVENT_RETENTION_DAYS', section: 'jobs', parse: int(0, 36_500), default: '30',
    meaning: 'job events older than this many days are deleted (`0`: kept forever)',
  },
  sseHeartbeatMs: {
    variable: 'SSE_HEARTBEAT_MS', section: 'jobs', parse: int(50, 3_600_000), default: '15000',
    meaning: 'heartbeat interval of event streams, and how often each API process looks for events whose `NOTIFY` was lost',
  },
  push: {
    vapidPublicKey: {
      variable: 'VAPID_PUBLIC_KEY', section: 'push', parse: vapidKey(65), default: { text: 'generated' },
      meaning: 'the public key of the web push key pair (both keys or neither; neither: generated once into `DATA_DIR/vapid.json`)',
    },
    vapidPrivateKey: {
      variable: 'VAPID_PRIVATE_KEY', section: 'push', parse: vapidKey(32), secret: true, default: { text: 'generated' },
      meaning: 'its private key',
    },
    vapidSubject: {
      variable: 'VAPID_SUBJECT', section: 'push', parse: vapidSubject,
      default: { text: '`PUBLIC_BASE_URL` if https, else `mailto:gristmill@localhost`', value: (c) => (publicHttps(c.publicBaseUrl) ? c.publicBaseUrl : 'mailto:gristmill@localhost') },
      meaning: 'the `sub` claim push services use to contact the operator',
    },
    caFile: {
      variable: 'PUSH_CA_FILE', section: 'push', parse: text('a path'),
      meaning: 'extra certificate authorities (PEM) trusted for push services, e.g. a self-hosted one with a private CA',
    },
  },
};

/** An https PUBLIC_BASE_URL other than localhost is where push services can reach the operator. */
function publicHttps(base: string): boolean {
  return /^https:/i.test(base) && !/^https:\/\/localhost\b/i.test(base);
}

/** Read by their owners, before or without a configuration; listed in the reference all the same. */
const READ_ELSEWHERE: ReadElsewhere<Section>[] = [
  {
    variable: 'TEMPORAL_CLI_DOWNLOAD_URL', section: 'temporal', default: "Temporal's CDN", accepts: 'a URL', readBy: 'runtime/temporal.ts',
    meaning: 'a mirror of the Temporal CLI v1.5.1 `.tar.gz` for this platform',
  },
  {
    variable: 'GRISTMILL_CACHE_DIR', section: 'temporal', default: '`~/.cache/gristmill`', accepts: 'a path', readBy: 'core/binaries.ts',
    meaning: 'where the Temporal CLI and yt-dlp are cached (unset: under `$XDG_CACHE_HOME` when set)',
  },
  {
    variable: 'WORKER_QUEUES', section: 'temporal', default: 'all', accepts: '`indexing`, `transcription`, `recipes`, comma-separated', readBy: 'runtime/main.ts',
    meaning: 'default of `--queues` for `npm run worker`',
  },
];

/** The platform's rows, then every service's: the order they are read in. */
const tableWith = (services: readonly ConfigSection[]): SettingsTable => Object.assign({}, TABLE, ...services.map((s) => s.table));

/**
 * The configuration, with every service's section (runtime/config.ts passes them), and the texts of the secrets that
 * were set, which the caller registers for redaction (core/redact.ts). The platform's rows are read first, so a
 * service's defaults may derive from them.
 */
export function readConfig(services: readonly ConfigSection[], env: Env = process.env): { config: Config; secrets: string[] } {
  const { values: config, secrets } = readSettings<Config>(tableWith(services), env);
  if (!config.push.vapidPublicKey !== !config.push.vapidPrivateKey) {
    throw new ConfigError('Set both VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY, or neither (a key pair is then generated once)');
  }
  return { config, secrets };
}

const REFERENCE_HEAD = `
# Configuration

<!-- Written by \`npm run docs:config\` from the rows in core/config.ts and each service's configuration.ts; edit
those, not this file. -->

Everything is configured by environment variables; a bad value stops startup with a message naming the variable. A
variable set to an empty string counts as unset. Variables marked (secret) never appear in responses, logs or job
errors (see [Secrets](#secrets)).
`;

const REFERENCE_TAIL = `
## Secrets

Secrets (\`API_KEY\`, \`SECRETS_KEY\`, git host tokens, provider keys, \`ASR_API_KEY\`, \`LLM_API_KEY\`,
\`RECIPE_MANAGER_TOKEN\`, the VAPID private key, database passwords) are never written to a response, a log line or a job
error: every such string goes through one redaction step (core/redact.ts). The secrets users give Gristmill to keep
(git-host tokens, embedding providers' API keys) are stored encrypted (AES-256-GCM with \`SECRETS_KEY\` or
\`DATA_DIR/secrets.key\`) and decrypted only by the step that sends them; see [security.md](security.md), "Secrets at rest".
`;

/** docs/configuration.md, as the table says it should read. */
export function configurationReference(services: readonly ConfigSection[]): string {
  return renderReference({
    table: tableWith(services),
    elsewhere: READ_ELSEWHERE,
    sections: Object.assign({}, SECTIONS, ...services.map((s) => s.sections)),
    head: REFERENCE_HEAD,
    tail: REFERENCE_TAIL,
  });
}
