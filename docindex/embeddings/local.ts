import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ValidationError } from '../../core/errors.js';
import { startThread, ThreadCalls } from '../../core/threads.js';
import { EMBED_BATCH_LIMITS } from './batches.js';
import { type ConventionsConfig, type ModelConventions, modelFamilyName, type Pooling, profileConventions } from './conventions.js';
import { type DownloadProgress, EmbeddingError, type EmbeddingProvider, ModelUnavailableError } from './provider.js';

/** The default local model: all-MiniLM-L6-v2 as exported for transformers.js (384 dimensions). */
export const DEFAULT_LOCAL_MODEL = 'Xenova/all-MiniLM-L6-v2';
export const DEFAULT_LOCAL_DIMENSIONS = 384;

/**
 * The weights a local model runs with: `fp32` (onnx/model.onnx) or `q8`, 8-bit (onnx/model_quantized.onnx, a quarter
 * of the size and about twice as fast on a CPU, with the same ranking quality: bench/README.md, "Embed").
 */
export const DTYPES = ['fp32', 'q8'] as const;
export type Dtype = (typeof DTYPES)[number];
const ONNX_FILES: Record<Dtype, string> = { fp32: 'model.onnx', q8: 'model_quantized.onnx' };

/** Settings of a `local-transformers` profile; the model's prefixes and pooling may be overridden (conventions.ts). */
export interface LocalConfig extends ConventionsConfig {
  /** A folder holding the model (config.json, tokenizer files, onnx/model.onnx or model_quantized.onnx); else the model id is used. */
  modelPath?: string;
  batchSize?: number;
  /** Which weights to load; unset, `modelDtypes` chooses. */
  dtype?: Dtype;
}

/** Where a local provider finds its model: the cache folder, and whether (and from where) it may download one. */
export interface LocalRuntime {
  cacheDir: string;
  allowDownloads: boolean;
  /** The Hugging Face hub or a mirror (default https://huggingface.co/). */
  modelHost?: string;
  /** onnxruntime's threads for one batch (default: all cores; see `embedThreads`). */
  threads?: number;
}

export interface LocalWorkerData extends LocalRuntime {
  model: string;
  modelPath: string | undefined;
  pooling: Pooling;
  /** The weights to try, in order: a later one is loaded when an earlier one is not there. */
  dtypes: Dtype[];
  /** Word pieces a text is cut to (the model's training length), or the tokenizer's own limit. */
  maxTokens: number | undefined;
  threads: number;
}
export interface LocalWorkerRequest {
  id: number;
  texts: string[];
}
export type LocalWorkerReply =
  | { id: number; vectors: Float32Array[] }
  | { id: number; error: string }
  /** A file of the model being downloaded (transformers.js' progress events). */
  | { download: { file: string; loaded: number; total: number } };

/** Checks a profile's `dtype` (a row changed by hand reaches here too): one of DTYPES, for a local model only. */
export function checkDtype(provider: string, config: Record<string, unknown>): void {
  const fail = (message: string): never => {
    throw new ValidationError(message, 'INVALID_PROFILE', [{ pointer: '/body/profile/config/dtype', message }]);
  };
  if (config.dtype === undefined) return;
  if (!DTYPES.includes(config.dtype as Dtype)) fail(`config.dtype must be one of ${DTYPES.join(', ')}`);
  if (provider !== 'local-transformers') fail('config.dtype is for local-transformers profiles: a remote server runs its model as it is configured');
}

/** Whether a model can be loaded without the network (with `dtype`'s weights, else either): a model folder, or a model id already in the cache. */
export function localModelPresent(model: string, cacheDir: string, modelPath?: string, dtype?: Dtype): boolean {
  const dir = modelPath ?? path.join(cacheDir, model);
  const weights = (dtype ? [dtype] : DTYPES).some((d) => fs.existsSync(path.join(dir, 'onnx', ONNX_FILES[d])));
  return weights && fs.existsSync(path.join(dir, 'tokenizer.json'));
}

/**
 * The weights to load, in order of preference: the profile's `dtype`; else 8-bit when the model's folder has them,
 * fp32 when it has only those (a model already embedded with keeps making the same vectors), and 8-bit first for a
 * model still to be downloaded (Xenova's exports on the hub publish both), fp32 when it has no 8-bit file.
 */
export function modelDtypes(dir: string, dtype?: Dtype): Dtype[] {
  if (dtype) return [dtype];
  const has = (d: Dtype) => fs.existsSync(path.join(dir, 'onnx', ONNX_FILES[d]));
  if (has('q8')) return ['q8'];
  if (has('fp32')) return ['fp32'];
  return ['q8', 'fp32'];
}

/**
 * Word pieces a model was trained on, where that is shorter than its tokenizer's limit (512 for BERT models):
 * sentence-transformers cuts all-MiniLM-L6-v2's input at 256, and the rest of a longer text only costs time.
 */
export function modelMaxTokens(model: string): number | undefined {
  return /^all-minilm-l6-v2(-q)?$/.test(modelFamilyName(model)) ? 256 : undefined;
}

/** onnxruntime's threads: every core for the one batch in flight (measured against two threads of one each: bench/README.md, "Embed"). */
export function embedThreads(): number {
  return os.availableParallelism();
}

export class LocalProvider implements EmbeddingProvider {
  dimensions: number | null;
  readonly conventions: ModelConventions;
  /** Its thread embeds one batch at a time. */
  readonly oneCallAtATime = true;
  private readonly thread: ThreadCalls<Omit<LocalWorkerRequest, 'id'>, Extract<LocalWorkerReply, { id: number }>, Float32Array[]>;
  private readonly downloads = new Set<(file: string, loaded: number, total: number) => void>();

  constructor(
    readonly profileId: string,
    readonly model: string,
    dimensions: number | null,
    private readonly config: LocalConfig,
    private readonly runtime: LocalRuntime,
  ) {
    this.dimensions = dimensions;
    this.conventions = profileConventions(model, config);
    this.thread = new ThreadCalls({
      start: () => startThread(import.meta.url, 'local-worker', this.workerData()),
      answer: (reply) => reply.vectors,
      explain: (message) => this.explain(message),
      stopped: (err) => new EmbeddingError(`The local embedding thread stopped: ${err.message}`, false),
      onOther: (message) => {
        const { download } = message as Extract<LocalWorkerReply, { download: unknown }>;
        if (download) for (const listener of this.downloads) listener(download.file, download.loaded, download.total);
      },
    });
  }

  onDisk(): boolean {
    return localModelPresent(this.model, this.runtime.cacheDir, this.config.modelPath, this.config.dtype);
  }

  private workerData(): LocalWorkerData {
    const { modelPath, dtype } = this.config;
    return {
      ...this.runtime,
      model: this.model,
      modelPath,
      pooling: this.conventions.pooling,
      dtypes: modelDtypes(modelPath ?? path.join(this.runtime.cacheDir, this.model), dtype),
      maxTokens: modelMaxTokens(this.model || path.basename(modelPath ?? '')),
      threads: this.runtime.threads ?? embedThreads(),
    };
  }

  /** Turns transformers.js' loading errors into what the user has to do. */
  private explain(message: string): EmbeddingError {
    if (/local_files_only|could not locate file|not found|ENOENT|fetch failed|allowRemoteModels|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|network/i.test(message)) {
      const where = this.config.modelPath ?? path.join(this.runtime.cacheDir, this.model);
      const from = this.runtime.modelHost ?? 'https://huggingface.co/';
      return new ModelUnavailableError(
        `The local model ${this.model} is not available: put it in ${where}` +
          (this.runtime.allowDownloads ? ` (downloading it from ${from} failed)` : ', or allow downloads with EMBEDDING_ALLOW_DOWNLOADS=true') +
          `. (${message.split('\n')[0]})`,
      );
    }
    return new EmbeddingError(`The local model failed: ${message.split('\n')[0]}`, false);
  }

  /**
   * Loads the model in its thread, downloading it first when it is not on disk (and downloads are allowed);
   * `onDownload` hears the bytes of all its files so far. A model already loaded answers at once.
   */
  async prepare(onDownload?: (progress: DownloadProgress) => void): Promise<void> {
    const files = new Map<string, { loaded: number; total: number }>();
    const listener = (file: string, loaded: number, total: number) => {
      files.set(file, { loaded, total });
      let sum = 0;
      let size = 0;
      for (const f of files.values()) {
        sum += f.loaded;
        size += f.total;
      }
      onDownload?.({ loaded: sum, total: size });
    };
    this.downloads.add(listener);
    try {
      await this.embed(['ready']);
    } finally {
      this.downloads.delete(listener);
    }
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    // The pipeline's batches are sized by tokens already (batches.ts): the count only caps a caller's long list.
    const size = this.config.batchSize ?? EMBED_BATCH_LIMITS.maxItems;
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += size) {
      signal?.throwIfAborted();
      const vectors = await this.thread.call({ texts: texts.slice(i, i + size) });
      for (const v of vectors) {
        if (this.dimensions && v.length !== this.dimensions) {
          throw new EmbeddingError(`The model returned ${v.length} dimensions; the profile says ${this.dimensions}`, true);
        }
        this.dimensions ??= v.length;
      }
      out.push(...vectors);
    }
    return out;
  }

  close(): Promise<void> {
    return this.thread.close();
  }
}
