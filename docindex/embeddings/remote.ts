import { redact, upstreamMessage } from '../../core/redact.js';
import { retryAfterMs } from '../../core/retry-after.js';
import { type ConventionsConfig, type ModelConventions, profileConventions } from './conventions.js';
import { EmbeddingError, type EmbeddingProvider } from './provider.js';

/**
 * Settings of a `remote-compatible` profile: any OpenAI-compatible `POST {baseUrl}/embeddings` (Text Embeddings
 * Inference and Ollama serve one under /v1). The model's prefixes are sent in the texts; pooling is the server's.
 */
export interface RemoteConfig extends Omit<ConventionsConfig, 'pooling'> {
  baseUrl: string;
  apiKey?: string;
  /** `bearer` (OpenAI, Ollama, LM Studio, most servers) or `api-key` (Azure OpenAI). */
  auth?: 'bearer' | 'api-key';
  /** Azure OpenAI: the deployment's api-version, sent as a query parameter. */
  apiVersion?: string;
  /** Texts per request. */
  batchSize?: number;
  /** Attempts on 429 and 5xx before giving up. */
  maxAttempts?: number;
  /** Cap on one wait between attempts (Retry-After is honoured up to it). */
  maxRetryWaitMs?: number;
  timeoutMs?: number;
}

/** The presets the settings page offers; the user fills in keys and names. */
export const REMOTE_PRESETS = [
  {
    id: 'openai',
    label: 'Hosted (OpenAI)',
    provider: 'remote-compatible',
    model: 'text-embedding-3-small',
    dimensions: 1536,
    config: { baseUrl: 'https://api.openai.com/v1', auth: 'bearer', apiKey: '' },
  },
  {
    id: 'local-server',
    label: 'Local server (Ollama, LM Studio)',
    provider: 'remote-compatible',
    model: 'nomic-embed-text',
    dimensions: 768,
    config: { baseUrl: 'http://localhost:11434/v1', auth: 'bearer' },
  },
  {
    id: 'azure',
    label: 'Cloud-hosted deployment (Azure OpenAI)',
    provider: 'remote-compatible',
    model: 'text-embedding-3-small',
    dimensions: 1536,
    config: {
      baseUrl: 'https://<resource>.openai.azure.com/openai/deployments/<deployment>',
      auth: 'api-key',
      apiVersion: '2024-10-21',
      apiKey: '',
    },
  },
] as const;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });

export class RemoteProvider implements EmbeddingProvider {
  dimensions: number | null;
  readonly conventions: ModelConventions;

  constructor(
    readonly profileId: string,
    readonly model: string,
    dimensions: number | null,
    private readonly config: RemoteConfig,
    /** The API key, asked for when a request is sent (a stored key is opened then: docindex/embeddings/profiles.ts). */
    private readonly apiKey: () => string | undefined = () => config.apiKey,
  ) {
    this.dimensions = dimensions;
    this.conventions = profileConventions(model, config);
  }

  private url(): string {
    const u = `${this.config.baseUrl.replace(/\/+$/, '')}/embeddings`;
    return this.config.apiVersion ? `${u}?api-version=${encodeURIComponent(this.config.apiVersion)}` : u;
  }

  private headers(): Record<string, string> {
    const h: Record<string, string> = { 'content-type': 'application/json' };
    const key = this.apiKey();
    if (key) {
      if (this.config.auth === 'api-key') h['api-key'] = key;
      else h.authorization = `Bearer ${key}`;
    }
    return h;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const size = this.config.batchSize ?? 64;
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += size) out.push(...(await this.request(texts.slice(i, i + size), signal)));
    return out;
  }

  private async request(input: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const attempts = this.config.maxAttempts ?? 5;
    const timeoutMs = this.config.timeoutMs ?? 60_000;
    const body = JSON.stringify({ model: this.model, input, ...(this.dimensions && { dimensions: this.dimensions }) });
    const headers = this.headers();
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      let text: string;
      try {
        const timeout = AbortSignal.timeout(timeoutMs);
        res = await fetch(this.url(), { method: 'POST', headers, body, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
        // The time limit covers the answer's body: a server that stops sending is tried again like one not reached.
        text = await res.text();
      } catch (err) {
        if (signal?.aborted) throw err;
        if (attempt >= attempts) {
          const late = (err as Error).name === 'TimeoutError';
          throw new EmbeddingError(late ? `The embedding server did not answer within ${timeoutMs} ms` : `The embedding server could not be reached: ${redact((err as Error).message)}`, false);
        }
        await sleep(Math.min(1000 * 2 ** (attempt - 1), this.config.maxRetryWaitMs ?? 60_000), signal);
        continue;
      }
      if (res.status === 429 || res.status >= 500) {
        if (attempt >= attempts) {
          throw new EmbeddingError(`The embedding server answered ${res.status} ${res.statusText} ${attempts} times`, false);
        }
        const wait = retryAfterMs(res.headers.get('retry-after')) ?? 1000 * 2 ** (attempt - 1);
        await sleep(Math.min(wait, this.config.maxRetryWaitMs ?? 60_000), signal);
        continue;
      }
      if (res.status === 401 || res.status === 403) {
        throw new EmbeddingError(`The embedding server rejected the API key (${res.status}): check the profile's key`, true);
      }
      if (res.status === 404) {
        throw new EmbeddingError(`The embedding endpoint or model was not found (404): check baseUrl, model and deployment (${this.model})`, true);
      }
      if (!res.ok) {
        const message = upstreamMessage(text);
        throw new EmbeddingError(`The embedding server answered ${res.status}${message ? `: ${message}` : ''}`, true);
      }
      return this.parse(text, input.length);
    }
  }

  private parse(text: string, expected: number): Float32Array[] {
    let data: unknown;
    try {
      data = (JSON.parse(text) as { data?: unknown }).data;
    } catch {
      throw new EmbeddingError('The embedding server answered with something that is not JSON', true);
    }
    if (!Array.isArray(data) || data.length !== expected) {
      throw new EmbeddingError(`The embedding server's answer has ${Array.isArray(data) ? data.length : 'no'} embeddings for ${expected} texts`, true);
    }
    const rows = [...data].sort((a, b) => (a as { index: number }).index - (b as { index: number }).index);
    return rows.map((row) => {
      const v = (row as { embedding?: unknown }).embedding;
      if (!Array.isArray(v) || !v.length || v.some((x) => typeof x !== 'number')) {
        throw new EmbeddingError('The embedding server answered an embedding that is not a list of numbers', true);
      }
      if (this.dimensions && v.length !== this.dimensions) {
        throw new EmbeddingError(`The model returned ${v.length} dimensions; the profile says ${this.dimensions}`, true);
      }
      this.dimensions ??= v.length;
      return Float32Array.from(v as number[]);
    });
  }

  async close(): Promise<void> {}
}
