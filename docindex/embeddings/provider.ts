import { type ModelConventions, type TextRole, withPrefix } from './conventions.js';

/**
 * What the pipeline and search need from an embedding provider: a batch of texts in, one unit-length-or-not
 * float32 vector per text out, in order. `embed` honours `signal` (a cancelled job stops embedding).
 */
export interface EmbeddingProvider {
  readonly profileId: string;
  readonly model: string;
  /** Known after the first call when the profile does not say. */
  readonly dimensions: number | null;
  /** The prefixes (and a local model's pooling) its model was trained with: conventions.ts. */
  readonly conventions: ModelConventions;
  /**
   * Runs one call at a time (a local model's thread): a caller with several texts gains by sending them in one call
   * rather than queueing calls (docindex/search/query-vectors.ts). Left out: calls may run side by side.
   */
  readonly oneCallAtATime?: boolean;
  /** Texts as given, no prefix added: callers embed through `embedAs`, which adds them. */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
  /**
   * Gets ready to embed (a local model is loaded, and downloaded first when it is not there yet); `onDownload` hears
   * how far a download has come. Providers with nothing to prepare leave it out.
   */
  prepare?(onDownload?: (progress: DownloadProgress) => void): Promise<void>;
  /** Whether `prepare` would load without downloading anything (a local model already on disk). */
  onDisk?(): boolean;
  /** Releases threads or connections; a provider is closed when its profile changes. */
  close(): Promise<void>;
}

/**
 * Embeds texts in a role: search embeds queries, indexing passages (snippets). Every caller goes through here, so a
 * query and the snippets it is compared with carry the prefixes their model was trained with.
 */
export function embedAs(provider: EmbeddingProvider, role: TextRole, texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
  return provider.embed(
    texts.map((t) => withPrefix(provider.conventions, role, t)),
    signal,
  );
}

/** One query's vector. */
export async function embedQuery(provider: EmbeddingProvider, query: string, signal?: AbortSignal): Promise<Float32Array> {
  const [v] = await embedAs(provider, 'query', [query], signal);
  return v!;
}

/** A model download under way: bytes of all its files so far, and their total as far as known. */
export interface DownloadProgress {
  loaded: number;
  total: number;
}

/** A provider failure with a message fit for a job error and the settings page (never a secret). */
export class EmbeddingError extends Error {
  constructor(
    message: string,
    /** Retrying cannot help (bad key, unknown model, a malformed answer). */
    readonly permanent: boolean,
  ) {
    super(message);
    this.name = permanent ? 'PermanentError' : 'EmbeddingError';
  }
}

/**
 * A local model that is neither on disk nor downloadable (downloads are off, or the hub cannot be reached): the
 * default profile then falls back to keyword search instead of failing every indexing job.
 */
export class ModelUnavailableError extends EmbeddingError {
  constructor(message: string) {
    super(message, true);
  }
}
