/**
 * What the pipeline and search need from an embedding provider: a batch of texts in, one unit-length-or-not
 * float32 vector per text out, in order. `embed` honours `signal` (a cancelled job stops embedding).
 */
export interface EmbeddingProvider {
  readonly profileId: string;
  readonly model: string;
  /** Known after the first call when the profile does not say. */
  readonly dimensions: number | null;
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
  /** Releases threads or connections; a provider is closed when its profile changes. */
  close(): Promise<void>;
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
