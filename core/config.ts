import os from 'node:os';
import path from 'node:path';
import { ConfigError } from './errors.js';
import { type AddressRange, hostName, parseRange } from './ip.js';
import type { LogLevel } from './log.js';
import { registerSecret } from './redact.js';

/**
 * The one configuration loader. Every setting comes from the environment, has a documented default (README table),
 * and is checked here so that a bad value stops startup with a clear message instead of failing later.
 */
/** A task queue's logical name, as a service declares it (runtime/services.ts lists them); `taskQueue` adds the prefix. */
export type QueueName = string;

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

type Env = Record<string, string | undefined>;

/** LOCAL_SOURCE_ROOTS: absolute folders, never none (an empty list would refuse everything without saying why). */
function localSourceRoots(env: Env): string[] {
  const roots = (str(env, 'LOCAL_SOURCE_ROOTS') ?? os.homedir()).split(path.delimiter).filter(Boolean);
  if (!roots.length) throw new ConfigError(`LOCAL_SOURCE_ROOTS takes absolute folders separated by "${path.delimiter}", and names none`);
  return roots.map((p) => {
    if (!path.isAbsolute(p)) throw new ConfigError(`LOCAL_SOURCE_ROOTS takes absolute folders separated by "${path.delimiter}", got "${p}"`);
    return path.resolve(p);
  });
}

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

/** A comma- or space-separated list. */
function list(env: Env, name: string): string[] {
  return (str(env, name) ?? '').split(/[\s,]+/).filter(Boolean);
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = str(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
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
    allowedHosts: list(env, 'ALLOWED_HOSTS').map((h) => {
      const host = h.toLowerCase();
      if (host !== '*' && !/^\.?[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(host)) {
        throw new ConfigError(`ALLOWED_HOSTS takes host names such as gristmill.lan or .example.com (no scheme, port or path), got "${h}"`);
      }
      return host;
    }),
    allowedOrigins: list(env, 'ALLOWED_ORIGINS').map((o) => {
      if (o === '*') return o;
      try {
        const origin = new URL(o).origin;
        if (origin !== 'null' && o.replace(/\/+$/, '').toLowerCase() === origin.toLowerCase()) return origin;
      } catch {
        // reported below
      }
      throw new ConfigError(`ALLOWED_ORIGINS takes origins such as https://tools.example.com or http://localhost:5173, got "${o}"`);
    }),
    publicBaseUrl: (url(env, 'PUBLIC_BASE_URL') ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    bodyLimitBytes: parseSize('BODY_LIMIT', str(env, 'BODY_LIMIT') ?? '1mb'),
    logLevel,
    reconcileIntervalMs: int(env, 'RECONCILE_INTERVAL_MS', 30_000, 100, 86_400_000),
    slotCheckIntervalMs: int(env, 'SLOT_CHECK_INTERVAL_MS', 30_000, 100, 3_600_000),
    eventRetentionDays: int(env, 'EVENT_RETENTION_DAYS', 30, 0, 36_500),
    sseHeartbeatMs: int(env, 'SSE_HEARTBEAT_MS', 15_000, 50, 3_600_000),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 20_000, 100, 600_000),
    transcription: transcriptionConfig(env),
    push: pushConfig(env, url(env, 'PUBLIC_BASE_URL')),
    recipes: recipesConfig(env),
    cpuCount: int(env, 'CPU_COUNT', os.availableParallelism(), 1, 4096),
    indexingHeartbeatTimeoutMs: int(env, 'INDEXING_HEARTBEAT_TIMEOUT_MS', 45_000, 1000, 3_600_000),
    embeddings: {
      cacheDir: path.resolve(str(env, 'EMBEDDING_CACHE_DIR') ?? path.join(str(env, 'DATA_DIR') ?? './data', 'models')),
      allowDownloads: bool(env, 'EMBEDDING_ALLOW_DOWNLOADS', true),
      modelHost: (url(env, 'EMBEDDING_MODEL_HOST') ?? 'https://huggingface.co/').replace(/\/*$/, '/'),
      defaultModel: str(env, 'EMBEDDING_DEFAULT_MODEL') ?? 'Xenova/all-MiniLM-L6-v2',
      defaultModelPath: str(env, 'EMBEDDING_MODEL_PATH') && path.resolve(str(env, 'EMBEDDING_MODEL_PATH')!),
    },
    localSourceRoots: localSourceRoots(env),
    searchVectorCacheBytes: int(env, 'SEARCH_VECTOR_CACHE_MB', 512, 1, 1_048_576) * 1024 * 1024,
    searchThreads: int(env, 'SEARCH_THREADS', Math.min(4, int(env, 'CPU_COUNT', os.availableParallelism(), 1, 4096)), 0, 64),
    searchRankCandidates: int(env, 'SEARCH_RANK_CANDIDATES', 1000, 100, 10_000_000),
    outbound: outboundConfig(env),
    secretsKey: secretsKey(env),
  };
}

export interface OutboundConfig {
  /** OUTBOUND_ALLOW's ranges and addresses: reachable although they are loopback, private, link-local, ... */
  allowRanges: AddressRange[];
  /** OUTBOUND_ALLOW's host names (lower case; `*.lan` is every name under `lan`), whatever they resolve to. */
  allowHosts: string[];
}

const HOST_NAME = /^(\*\.)?[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

function outboundConfig(env: Env): OutboundConfig {
  const out: OutboundConfig = { allowRanges: [], allowHosts: [] };
  for (const entry of list(env, 'OUTBOUND_ALLOW')) {
    const range = parseRange(entry);
    const name = hostName(entry);
    if (range) out.allowRanges.push(range);
    else if (HOST_NAME.test(name) && !/^[\d.]+$/.test(name)) out.allowHosts.push(name);
    else {
      throw new ConfigError(
        `OUTBOUND_ALLOW takes ranges (192.168.1.0/24, fd00::/8), addresses (10.0.0.5) and host names (gitea.lan, *.lan), comma-separated; "${entry}" is none of these`,
      );
    }
  }
  return out;
}

function secretsKey(env: Env): Buffer | undefined {
  const raw = str(env, 'SECRETS_KEY');
  if (raw === undefined) return undefined;
  registerSecret(raw);
  const key = /^[0-9a-f]{64}$/i.test(raw)
    ? Buffer.from(raw, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(raw)
      ? Buffer.from(raw.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
      : undefined;
  if (key?.length !== 32) {
    throw new ConfigError('SECRETS_KEY must be 32 random bytes, as 64 hex digits or base64 (`openssl rand -base64 32`)');
  }
  return key;
}

/** The real task queue name for a logical queue. */
export function taskQueue(config: Pick<Config, 'taskQueuePrefix'>, name: QueueName): string {
  return `${config.taskQueuePrefix}${name}`;
}

/**
 * The kinds of transcription backend (README, "The transcription backend"): `callback` speaks Gristmill's own
 * submit-and-webhook contract; the others answer each request with the transcript (transcription/backends/).
 */
export const ASR_BACKENDS = ['callback', 'openai', 'whisper-cpp', 'whisper-asr'] as const;
export type AsrBackendKind = (typeof ASR_BACKENDS)[number];

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

function transcriptionConfig(env: Env): TranscriptionConfig {
  const asrApiKey = str(env, 'ASR_API_KEY');
  registerSecret(asrApiKey);
  const asrBackend = (str(env, 'ASR_BACKEND') ?? 'callback').toLowerCase() as AsrBackendKind;
  if (!ASR_BACKENDS.includes(asrBackend)) throw new ConfigError(`ASR_BACKEND must be one of ${ASR_BACKENDS.join(', ')}`);
  const asrLanguage = str(env, 'ASR_LANGUAGE')?.toLowerCase();
  if (asrLanguage !== undefined && !/^[a-z]{2,3}$/.test(asrLanguage)) {
    throw new ConfigError(`ASR_LANGUAGE must be a language code such as en or de, got "${asrLanguage}"`);
  }
  const asrChunkMaxBytes = parseSize('ASR_CHUNK_MAX_BYTES', str(env, 'ASR_CHUNK_MAX_BYTES') ?? '24mb');
  if (asrChunkMaxBytes < 64 * 1024) throw new ConfigError('ASR_CHUNK_MAX_BYTES must be at least 64kb (2 seconds of audio)');
  return {
    asrBackend,
    asrBaseUrl: url(env, 'ASR_BASE_URL')?.replace(/\/+$/, ''),
    asrApiKey,
    asrModel: str(env, 'ASR_MODEL') ?? (asrBackend === 'openai' ? 'whisper-1' : undefined),
    asrLanguage,
    asrChunkMaxBytes,
    asrWebhookBodyLimitBytes: parseSize('ASR_WEBHOOK_BODY_LIMIT', str(env, 'ASR_WEBHOOK_BODY_LIMIT') ?? '50mb'),
    uploadMaxBytes: parseSize('UPLOAD_MAX_BYTES', str(env, 'UPLOAD_MAX_BYTES') ?? '2gb'),
    modelWaitMaxMs: int(env, 'TRANSCRIPTION_MODEL_WAIT_MAX_MS', 600_000, 10, 86_400_000),
    maxResubmits: int(env, 'TRANSCRIPTION_MAX_RESUBMITS', 5, 0, 1000),
    webhookTimeoutMs: int(env, 'TRANSCRIPTION_WEBHOOK_TIMEOUT_MS', 6 * 3_600_000, 100, 30 * 86_400_000),
    webhookResponseMs: int(env, 'TRANSCRIPTION_WEBHOOK_RESPONSE_MS', 10_000, 10, 600_000),
    heartbeatTimeoutMs: int(env, 'TRANSCRIPTION_HEARTBEAT_TIMEOUT_MS', 30_000, 500, 3_600_000),
    mediaTimeoutMs: int(env, 'TRANSCRIPTION_MEDIA_TIMEOUT_MS', 2 * 3_600_000, 1000, 86_400_000),
    ffmpegPath: str(env, 'FFMPEG_PATH'),
    ytdlpPath: str(env, 'YTDLP_PATH'),
    ffmpegConcurrency: int(env, 'TRANSCRIPTION_FFMPEG_CONCURRENCY', int(env, 'CPU_COUNT', os.availableParallelism(), 1, 4096), 1, 256),
  };
}

export const RECIPE_MANAGERS = ['mealie', 'tandoor'] as const;
export type RecipeManagerKind = (typeof RECIPE_MANAGERS)[number];

/**
 * How the language model is asked (recipes/llm.ts): `openai`, chat completions with a `json_schema` response format;
 * `ollama`, Ollama's native chat API with the schema as its `format`.
 */
export const LLM_API_STYLES = ['openai', 'ollama'] as const;
export type LlmApiStyle = (typeof LLM_API_STYLES)[number];

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

function recipesConfig(env: Env): RecipesConfig {
  const llmApiKey = str(env, 'LLM_API_KEY');
  const managerToken = str(env, 'RECIPE_MANAGER_TOKEN');
  registerSecret(llmApiKey);
  registerSecret(managerToken);
  const manager = (str(env, 'RECIPE_MANAGER') ?? 'mealie').toLowerCase() as RecipeManagerKind;
  if (!RECIPE_MANAGERS.includes(manager)) throw new ConfigError(`RECIPE_MANAGER must be one of ${RECIPE_MANAGERS.join(', ')}`);
  const llmApiStyle = (str(env, 'LLM_API_STYLE') ?? 'openai').toLowerCase() as LlmApiStyle;
  if (!LLM_API_STYLES.includes(llmApiStyle)) throw new ConfigError(`LLM_API_STYLE must be one of ${LLM_API_STYLES.join(', ')}`);
  const base = (name: string) => url(env, name)?.replace(/\/+$/, '');
  const cookiesFile = str(env, 'RECIPE_COOKIES_FILE');
  return {
    concurrency: int(env, 'QUEUE_CONCURRENCY', 2, 1, 256),
    timeoutMs: int(env, 'QUEUE_TIMEOUT_MS', 30_000, 100, 3_600_000),
    retryAttempts: int(env, 'QUEUE_RETRY_ATTEMPTS', 3, 1, 100),
    retryBackoffMs: int(env, 'QUEUE_RETRY_BACKOFF_MS', 1000, 10, 600_000),
    processingEnabled: bool(env, 'QUEUE_PROCESSING_ENABLED', true),
    extractWaitMs: int(env, 'QUEUE_EXTRACT_WAIT_MS', 120_000, 100, 3_600_000),
    llmBaseUrl: base('LLM_API_BASE_URL'),
    llmApiKey,
    llmModel: str(env, 'LLM_MODEL') ?? 'gpt-4o-mini',
    llmApiStyle,
    manager,
    managerBaseUrl: base('RECIPE_MANAGER_BASE_URL'),
    managerPublicUrl: base('RECIPE_MANAGER_PUBLIC_URL'),
    managerToken,
    mealieGroup: str(env, 'MEALIE_GROUP_SLUG') ?? 'home',
    cookiesFile: cookiesFile && path.resolve(cookiesFile),
  };
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

function pushConfig(env: Env, publicBaseUrl: string | undefined): PushConfig {
  const publicKey = str(env, 'VAPID_PUBLIC_KEY');
  const privateKey = str(env, 'VAPID_PRIVATE_KEY');
  registerSecret(privateKey);
  if (!publicKey !== !privateKey) {
    throw new ConfigError('Set both VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY, or neither (a key pair is then generated once)');
  }
  const key = (name: string, value: string | undefined, bytes: number) => {
    if (value !== undefined && Buffer.from(value, 'base64url').length !== bytes) {
      throw new ConfigError(`${name} must be ${bytes} bytes in URL-safe base64 (as \`npx web-push generate-vapid-keys\` prints)`);
    }
  };
  key('VAPID_PUBLIC_KEY', publicKey, 65);
  key('VAPID_PRIVATE_KEY', privateKey, 32);
  const publicHttps = publicBaseUrl && /^https:/i.test(publicBaseUrl) && !/^https:\/\/localhost\b/i.test(publicBaseUrl);
  const subject = str(env, 'VAPID_SUBJECT') ?? (publicHttps ? publicBaseUrl.replace(/\/+$/, '') : 'mailto:gristmill@localhost');
  if (!/^(mailto:|https:\/\/)/i.test(subject)) throw new ConfigError('VAPID_SUBJECT must be a mailto: address or an https: URL');
  return { vapidPublicKey: publicKey, vapidPrivateKey: privateKey, vapidSubject: subject, caFile: str(env, 'PUSH_CA_FILE') };
}
