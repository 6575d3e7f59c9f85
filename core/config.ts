/**
 * The one configuration: every setting comes from the environment and is declared once, as a row of TABLE below
 * (its variable, parser, default, meaning, whether it is a secret, and its section). The same table yields the typed
 * Config (`loadConfig`) and the reference, docs/configuration.md (`npm run docs:config`; a test keeps them equal).
 * A bad value stops startup with a message naming the variable instead of failing later.
 */
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from './errors.js';
import { type AddressRange, hostName, parseRange } from './ip.js';
import type { LogLevel } from './log.js';
import {
  bool,
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
 * The kinds of transcription backend (docs/transcription.md, "The transcription backend"): `callback` speaks Gristmill's own
 * submit-and-webhook contract; the others answer each request with the transcript (transcription/backends/).
 */
export const ASR_BACKENDS = ['callback', 'openai', 'whisper-cpp', 'whisper-asr'] as const;
export type AsrBackendKind = (typeof ASR_BACKENDS)[number];

export const RECIPE_MANAGERS = ['mealie', 'tandoor'] as const;
export type RecipeManagerKind = (typeof RECIPE_MANAGERS)[number];

/**
 * How the language model is asked (recipes/llm.ts): `openai`, chat completions with a `json_schema` response format;
 * `ollama`, Ollama's native chat API with the schema as its `format`.
 */
export const LLM_API_STYLES = ['openai', 'ollama'] as const;
export type LlmApiStyle = (typeof LLM_API_STYLES)[number];

/** The typed configuration: each field is filled by the row of the same name in TABLE (below). */
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
  /** Transcription: the backend, upload and webhook limits, waits, and the media tools. */
  transcription: TranscriptionConfig;
  /** Web push (shared by every service that notifies). */
  push: PushConfig;
  /** The recipe queue: concurrency, limits, the language model and the recipe manager. */
  recipes: RecipesConfig;
  /** CPUs this process may use (containers often get fewer than the host has); bounds indexing concurrency. */
  cpuCount: number;
  /** How long an indexing step may go without progress (a heartbeat) before Temporal retries it on another worker. */
  indexingHeartbeatTimeoutMs: number;
  /** Embedding providers: where local models live and whether they may be downloaded. */
  embeddings: EmbeddingsConfig;
  /**
   * Folders under which local libraries may be registered, browsed and read (LOCAL_SOURCE_ROOTS); by default the home
   * folder of the user running Gristmill. Never empty: `/` is how to allow everywhere. See docindex/local-folders.ts.
   */
  localSourceRoots: string[];
  /** Semantic search: the most memory the in-process vector matrices may take (SEARCH_VECTOR_CACHE_MB). */
  searchVectorCacheBytes: number;
  /** Semantic search: threads that scan vectors (SEARCH_THREADS; 0 = on the event loop). */
  searchThreads: number;
  /** Keyword search: the most matches a query reads, shared between its terms (SEARCH_RANK_CANDIDATES); see docindex/search/keyword.ts. */
  searchRankCandidates: number;
  /** Which internal addresses user-supplied URLs may still reach (outbound/guard.ts). */
  outbound: OutboundConfig;
  /** SECRETS_KEY: the key that encrypts stored secrets (core/secrets.ts); unset: DATA_DIR/secrets.key. */
  secretsKey: Buffer | undefined;
}

export interface EmbeddingsConfig {
  /** Where local models are looked up and downloads go (DATA_DIR/models). */
  cacheDir: string;
  /**
   * Fetch a local model from the Hugging Face hub (or `modelHost`) on first use when it is not there, so semantic
   * search works out of the box; an install that cannot reach it falls back to keyword search.
   */
  allowDownloads: boolean;
  /** Where models are downloaded from: the Hugging Face hub, or a mirror of it (ends with '/'). */
  modelHost: string;
  /** The model of the default local profile created at first start. */
  defaultModel: string;
  /** A folder holding that model, instead of the cache. */
  defaultModelPath: string | undefined;
}

export interface OutboundConfig {
  /** OUTBOUND_ALLOW's ranges and addresses: reachable although they are loopback, private, link-local, ... */
  allowRanges: AddressRange[];
  /** OUTBOUND_ALLOW's host names (lower case; `*.lan` is every name under `lan`), whatever they resolve to. */
  allowHosts: string[];
}

export interface TranscriptionConfig {
  /** Which protocol the backend speaks (ASR_BACKEND). */
  asrBackend: AsrBackendKind;
  /** The transcription backend; unset: jobs that need it fail with a message saying so (captions still work). */
  asrBaseUrl: string | undefined;
  asrApiKey: string | undefined;
  /** The model asked for (OpenAI-compatible servers), or the one the server runs, for the job's record. */
  asrModel: string | undefined;
  /** The spoken language (ISO 639-1) sent to synchronous backends; unset: the model detects it. */
  asrLanguage: string | undefined;
  /** Synchronous backends: the largest audio file sent in one request; longer audio is split at silences. */
  asrChunkMaxBytes: number;
  /** Largest webhook body (segment lists of long recordings are large). */
  asrWebhookBodyLimitBytes: number;
  uploadMaxBytes: number;
  /** Longest single wait for the backend's model after a 503; Retry-After is capped to it. */
  modelWaitMaxMs: number;
  /** Resubmissions after 503 answers before the job fails. */
  maxResubmits: number;
  /** How long a job waits for the backend's webhook after submission. */
  webhookTimeoutMs: number;
  /** How long the webhook handler waits for the outcome before it answers 200 (the result is kept durably). */
  webhookResponseMs: number;
  /** Heartbeat timeout of long activities: how soon a dead worker's download or wait is retried elsewhere. */
  heartbeatTimeoutMs: number;
  /** Longest download or ffmpeg run. */
  mediaTimeoutMs: number;
  ffmpegPath: string | undefined;
  ytdlpPath: string | undefined;
  /** ffmpeg runs at once per worker process; more wait (heartbeating) so CPU-bound work never starves the rest. */
  ffmpegConcurrency: number;
}

export interface RecipesConfig {
  /** Items processed at once (the `recipes` concurrency pool). */
  concurrency: number;
  /** Longest attempt of one phase (its HTTP calls and yt-dlp stop then); Temporal's timeout backs it up. */
  timeoutMs: number;
  /** Attempts of a phase for recoverable failures (network, timeouts, 5xx, 429); then the item is `unhealthy`. */
  retryAttempts: number;
  /** The first wait before another attempt; it doubles each time, up to a minute. */
  retryBackoffMs: number;
  /** False: items are accepted and wait `pending` (the pool grants no slot) until a worker starts with it true. */
  processingEnabled: boolean;
  /** How long the deprecated synchronous POST /api/extract waits for the item before it answers 202. */
  extractWaitMs: number;
  /** OpenAI-compatible chat completions; unset: items fail at parsing saying so. */
  llmBaseUrl: string | undefined;
  llmApiKey: string | undefined;
  llmModel: string;
  llmApiStyle: LlmApiStyle;
  manager: RecipeManagerKind;
  /** Where Gristmill reaches the recipe manager's API; unset: items fail at uploading saying so. */
  managerBaseUrl: string | undefined;
  /** Where users reach it, for `recipeManagerUrl` (defaults to the base URL). */
  managerPublicUrl: string | undefined;
  managerToken: string | undefined;
  /** Mealie's group slug in recipe links (`{base}/g/{group}/r/{slug}`). */
  mealieGroup: string;
  /** A Netscape cookies file for yt-dlp (Instagram often needs a logged-in session). */
  cookiesFile: string | undefined;
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

/** LOCAL_SOURCE_ROOTS: never none (an empty list would refuse everything without saying why). */
const sourceRoots = parser('absolute folders, `:`-separated (`;` on Windows)', (raw, name) => {
  const roots = raw.split(path.delimiter).filter(Boolean);
  if (!roots.length) throw new ConfigError(`${name} takes absolute folders separated by "${path.delimiter}", and names none`);
  return roots.map((p) => {
    if (!path.isAbsolute(p)) throw new ConfigError(`${name} takes absolute folders separated by "${path.delimiter}", got "${p}"`);
    return path.resolve(p);
  });
});

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

const language = parser('a language code: `en`, `de`, ...', (raw, name) => {
  const code = raw.toLowerCase();
  if (!/^[a-z]{2,3}$/.test(code)) throw new ConfigError(`${name} must be a language code such as en or de, got "${code}"`);
  return code;
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

const atLeast64kb = refine(
  size(),
  (bytes, name) => {
    if (bytes < 64 * 1024) throw new ConfigError(`${name} must be at least 64kb (2 seconds of audio)`);
    return bytes;
  },
  'a size, at least `64kb`',
);

const baseUrl = url({ trailingSlashes: 'strip' });
const MB = 1024 * 1024;

const SECTIONS = {
  server: { title: 'Server', about: 'The HTTP API and the process that runs it.' },
  security: { title: 'Security', about: 'Who may call the API, and the key of stored secrets; see [security.md](security.md).' },
  outbound: { title: 'Outbound requests', about: 'Which internal addresses the URLs users supply may still reach (outbound/guard.ts).' },
  database: { title: 'Database', about: 'PostgreSQL: an external server, or an embedded one under `DATA_DIR/postgres`.' },
  temporal: { title: 'Temporal', about: 'The Temporal frontend, or the CLI dev server started with its state under `DATA_DIR/temporal`.' },
  jobs: { title: 'Jobs', about: 'Reconciliation, concurrency pools and job events; see [jobs.md](jobs.md).' },
  docindex: { title: 'Documentation index', about: 'Indexing libraries (docindex/).' },
  search: { title: 'Search', about: 'Keyword and semantic search over indexed libraries (docindex/search/).' },
  embeddings: { title: 'Embeddings', about: 'Local embedding models for semantic search (docindex/embeddings/).' },
  transcription: { title: 'Transcription', about: 'The transcription backend, uploads, waits and the media tools (transcription/).' },
  push: { title: 'Web push', about: 'Notifications, shared by every service that sends them (push/).' },
  recipes: { title: 'Recipe queue', about: 'Concurrency, limits, the language model and the recipe manager (recipes/).' },
} satisfies Record<string, SectionInfo>;
type Section = keyof typeof SECTIONS;

type Rows<T> = { [K in keyof T]: Setting<T[K], Config, Section> };
type Nested = 'transcription' | 'push' | 'recipes' | 'embeddings';
/** One row per field of Config, in the same shape (TypeScript checks that none is missing). */
type ConfigTable = Omit<Rows<Config>, Nested> & { [S in Nested]: Rows<Config[S]> };

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
  indexingHeartbeatTimeoutMs: {
    variable: 'INDEXING_HEARTBEAT_TIMEOUT_MS', section: 'docindex', parse: int(1000, 3_600_000), default: '45000',
    meaning: "how long the crawl may go without progress (git's, files parsed) before it is stopped and retried, on another worker if this one died",
  },
  localSourceRoots: {
    variable: 'LOCAL_SOURCE_ROOTS', section: 'docindex', parse: sourceRoots,
    default: { text: 'your home folder', value: () => [path.resolve(os.homedir())] },
    meaning:
      'folders under which local libraries may be registered, browsed and read, compared by real path (docindex/local-folders.ts); `/` allows ' +
      'everywhere. Credential folders (`.ssh`, `.gnupg`, `.aws`, ...) and `DATA_DIR` never are. Give the API and the indexing workers the same value',
  },
  searchVectorCacheBytes: {
    variable: 'SEARCH_VECTOR_CACHE_MB', section: 'search', parse: refine(int(1, 1_048_576), (mb) => mb * MB), default: '512',
    meaning: "memory (MB) for semantic search's in-process vector matrices (least recently used dropped)",
  },
  searchThreads: {
    variable: 'SEARCH_THREADS', section: 'search', parse: int(0, 64),
    default: { text: 'CPUs, at most 4', value: (c) => Math.min(4, c.cpuCount) },
    meaning: 'threads that scan vectors for semantic search; `0` scans on the event loop',
  },
  searchRankCandidates: {
    variable: 'SEARCH_RANK_CANDIDATES', section: 'search', parse: int(100, 10_000_000), default: '1000',
    meaning:
      'how many matches keyword search reads and ranks: each word of a query its share (this divided by the number of words). A word held by at ' +
      "least its share of the library's snippets (known from statistics each indexing run stores) is read to its share through the library's own " +
      'index, which bounds the cost of very common words (docindex/search/keyword.ts; see [ranking.md](ranking.md))',
  },
  embeddings: {
    cacheDir: {
      variable: 'EMBEDDING_CACHE_DIR', section: 'embeddings', parse: resolvedPath(),
      default: { text: '`DATA_DIR/models`', value: (c) => path.join(c.dataDir, 'models') },
      meaning: 'where local embedding models are looked up (and downloaded to)',
    },
    allowDownloads: {
      variable: 'EMBEDDING_ALLOW_DOWNLOADS', section: 'embeddings', parse: bool(), default: 'true',
      meaning:
        'download a missing local model on first use, so semantic search works out of the box (`false`: only models already on disk; an install ' +
        'that cannot reach the host falls back to keyword search; see docs/documentation-index.md, "Embeddings")',
    },
    modelHost: {
      variable: 'EMBEDDING_MODEL_HOST', section: 'embeddings', parse: refine(url(), (u) => u.replace(/\/*$/, '/')), default: 'https://huggingface.co/',
      meaning: 'where local models are downloaded from: the Hugging Face hub or a mirror of it',
    },
    defaultModel: {
      variable: 'EMBEDDING_DEFAULT_MODEL', section: 'embeddings', parse: text(), default: 'Xenova/all-MiniLM-L6-v2',
      meaning: 'the model of the local profile created at first start',
    },
    defaultModelPath: { variable: 'EMBEDDING_MODEL_PATH', section: 'embeddings', parse: resolvedPath(), meaning: 'a folder holding that model, instead of the cache' },
  },
  transcription: {
    asrBackend: {
      variable: 'ASR_BACKEND', section: 'transcription', parse: oneOf(ASR_BACKENDS, { anyCase: true }), default: 'callback',
      meaning: 'the protocol of the transcription backend (see docs/transcription.md, "The transcription backend")',
    },
    asrBaseUrl: {
      variable: 'ASR_BASE_URL', section: 'transcription', parse: baseUrl,
      meaning: 'the transcription backend; unset: jobs that need it fail saying so (caption jobs still work)',
    },
    asrApiKey: { variable: 'ASR_API_KEY', section: 'transcription', parse: text(), secret: true, meaning: 'sent to the backend as `Authorization: Bearer <key>`' },
    asrModel: {
      variable: 'ASR_MODEL', section: 'transcription', parse: text(),
      default: { text: '`whisper-1` for `openai`, else none', value: (c) => (c.transcription.asrBackend === 'openai' ? 'whisper-1' : undefined) },
      meaning: "the model asked for (`openai`); for the others, the name the job records for the server's model",
    },
    asrLanguage: {
      variable: 'ASR_LANGUAGE', section: 'transcription', parse: language,
      meaning: 'the spoken language (ISO 639-1) sent to synchronous backends; unset: the model detects it',
    },
    asrChunkMaxBytes: {
      variable: 'ASR_CHUNK_MAX_BYTES', section: 'transcription', parse: atLeast64kb, default: '24mb',
      meaning: 'synchronous backends: the largest audio sent in one request; longer audio is split at silences',
    },
    asrWebhookBodyLimitBytes: {
      variable: 'ASR_WEBHOOK_BODY_LIMIT', section: 'transcription', parse: size(), default: '50mb',
      meaning: "largest webhook body (the backend's segments), for a job waiting for its result only; any other call: `BODY_LIMIT`",
    },
    uploadMaxBytes: {
      variable: 'UPLOAD_MAX_BYTES', section: 'transcription', parse: size(), default: '2gb',
      meaning: 'largest upload; larger: 413 and nothing kept',
    },
    modelWaitMaxMs: {
      variable: 'TRANSCRIPTION_MODEL_WAIT_MAX_MS', section: 'transcription', parse: int(10, 86_400_000), default: '600000',
      meaning: "longest wait for the backend's model after one 503; caps Retry-After",
    },
    maxResubmits: {
      variable: 'TRANSCRIPTION_MAX_RESUBMITS', section: 'transcription', parse: int(0, 1000), default: '5',
      meaning: 'resubmissions after 503 answers before the job fails',
    },
    webhookTimeoutMs: {
      variable: 'TRANSCRIPTION_WEBHOOK_TIMEOUT_MS', section: 'transcription', parse: int(100, 30 * 86_400_000), default: '21600000',
      meaning: "how long a job waits for the backend's result (6 h)",
    },
    webhookResponseMs: {
      variable: 'TRANSCRIPTION_WEBHOOK_RESPONSE_MS', section: 'transcription', parse: int(10, 600_000), default: '10000',
      meaning: "how long the webhook handler waits for the outcome before answering 200 (the result is kept durably; keep it under the backend's HTTP timeout)",
    },
    heartbeatTimeoutMs: {
      variable: 'TRANSCRIPTION_HEARTBEAT_TIMEOUT_MS', section: 'transcription', parse: int(500, 3_600_000), default: '30000',
      meaning:
        "how long a download, conversion or submission may go without progress (the tool's output or CPU, bytes sent) before it is stopped and " +
        'retried, on another worker if this one died; a model wait heartbeats while it waits',
    },
    mediaTimeoutMs: {
      variable: 'TRANSCRIPTION_MEDIA_TIMEOUT_MS', section: 'transcription', parse: int(1000, 86_400_000), default: '7200000',
      meaning: 'longest download, conversion or upload to the backend',
    },
    ffmpegPath: {
      variable: 'FFMPEG_PATH', section: 'transcription', parse: text('a path'), default: { text: 'found' },
      meaning: 'path of ffmpeg (see docs/development.md, "Where ffmpeg and yt-dlp come from")',
    },
    ytdlpPath: {
      variable: 'YTDLP_PATH', section: 'transcription', parse: text('a path'), default: { text: 'found' },
      meaning: 'path of yt-dlp (see docs/development.md, "Where ffmpeg and yt-dlp come from")',
    },
    ffmpegConcurrency: {
      variable: 'TRANSCRIPTION_FFMPEG_CONCURRENCY', section: 'transcription', parse: int(1, 256),
      default: { text: '`CPU_COUNT`', value: (c) => c.cpuCount },
      meaning: 'ffmpeg conversions at once per worker process; more wait (heartbeating), so CPU-bound work never starves the rest',
    },
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
  recipes: {
    concurrency: {
      variable: 'QUEUE_CONCURRENCY', section: 'recipes', parse: int(1, 256), default: '2',
      meaning: 'recipe queue items processed at once (the `recipes` concurrency pool)',
    },
    timeoutMs: {
      variable: 'QUEUE_TIMEOUT_MS', section: 'recipes', parse: int(100, 3_600_000), default: '30000',
      meaning: "longest attempt of one phase of an item (its HTTP calls and yt-dlp are stopped then; Temporal's timeout backs it up)",
    },
    retryAttempts: {
      variable: 'QUEUE_RETRY_ATTEMPTS', section: 'recipes', parse: int(1, 100), default: '3',
      meaning: 'attempts of a phase for recoverable failures (network, timeouts, 5xx, 429); then the item is `unhealthy`',
    },
    retryBackoffMs: {
      variable: 'QUEUE_RETRY_BACKOFF_MS', section: 'recipes', parse: int(10, 600_000), default: '1000',
      meaning: "wait before a phase's second attempt, doubling each time up to a minute (a `Retry-After` wins)",
    },
    processingEnabled: {
      variable: 'QUEUE_PROCESSING_ENABLED', section: 'recipes', parse: bool(), default: 'true',
      meaning: '`false`: items are accepted and wait `pending` (the pool grants no slot) until a worker starts with it `true`',
    },
    extractWaitMs: {
      variable: 'QUEUE_EXTRACT_WAIT_MS', section: 'recipes', parse: int(100, 3_600_000), default: '120000',
      meaning: 'how long the deprecated synchronous `POST /api/extract` waits for the item before answering 202',
    },
    llmBaseUrl: {
      variable: 'LLM_API_BASE_URL', section: 'recipes', parse: baseUrl,
      meaning:
        "an OpenAI-compatible API, e.g. `https://api.openai.com/v1` or a local server's `/v1` (with `LLM_API_STYLE=ollama`, Ollama's address, " +
        'e.g. `http://localhost:11434`); unset: items fail at parsing saying so',
    },
    llmApiKey: { variable: 'LLM_API_KEY', section: 'recipes', parse: text(), secret: true, meaning: 'sent as `Authorization: Bearer <key>`' },
    llmModel: { variable: 'LLM_MODEL', section: 'recipes', parse: text(), default: 'gpt-4o-mini', meaning: 'the model asked' },
    llmApiStyle: {
      variable: 'LLM_API_STYLE', section: 'recipes', parse: oneOf(LLM_API_STYLES, { anyCase: true }), default: 'openai',
      meaning: "how the model is asked: `openai` (chat completions, `json_schema`) or `ollama` (Ollama's native `/api/chat` with the schema as `format`)",
    },
    manager: { variable: 'RECIPE_MANAGER', section: 'recipes', parse: oneOf(RECIPE_MANAGERS, { anyCase: true }), default: 'mealie', meaning: 'the recipe manager recipes are uploaded to' },
    managerBaseUrl: {
      variable: 'RECIPE_MANAGER_BASE_URL', section: 'recipes', parse: baseUrl,
      meaning: "where Gristmill reaches the recipe manager's API; unset: items fail at uploading saying so",
    },
    managerPublicUrl: {
      variable: 'RECIPE_MANAGER_PUBLIC_URL', section: 'recipes', parse: baseUrl, default: { text: '`RECIPE_MANAGER_BASE_URL`' },
      meaning: 'where users open it, for `recipeManagerUrl`',
    },
    managerToken: { variable: 'RECIPE_MANAGER_TOKEN', section: 'recipes', parse: text(), secret: true, meaning: "the recipe manager's API token" },
    mealieGroup: {
      variable: 'MEALIE_GROUP_SLUG', section: 'recipes', parse: text(), default: 'home',
      meaning: 'the group in Mealie recipe links (`{base}/g/{group}/r/{slug}`)',
    },
    cookiesFile: {
      variable: 'RECIPE_COOKIES_FILE', section: 'recipes', parse: resolvedPath(),
      meaning: 'a Netscape cookies file handed to yt-dlp (Instagram often wants a logged-in session)',
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

/** The configuration and the texts of the secrets that were set, which the caller registers for redaction (core/redact.ts). */
export function readConfig(env: Env = process.env): { config: Config; secrets: string[] } {
  const { values: config, secrets } = readSettings<Config>(TABLE, env);
  if (!config.push.vapidPublicKey !== !config.push.vapidPrivateKey) {
    throw new ConfigError('Set both VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY, or neither (a key pair is then generated once)');
  }
  return { config, secrets };
}

export function loadConfig(env: Env = process.env): Config {
  return readConfig(env).config;
}

const REFERENCE_HEAD = `
# Configuration

<!-- Written by \`npm run docs:config\` from the table in core/config.ts; edit that table, not this file. -->

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
export function configurationReference(): string {
  return renderReference({ table: TABLE, elsewhere: READ_ELSEWHERE, sections: SECTIONS, head: REFERENCE_HEAD, tail: REFERENCE_TAIL });
}
