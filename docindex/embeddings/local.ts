import fs from 'node:fs';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startThread } from '../../core/threads.js';
import { type ConventionsConfig, type ModelConventions, type Pooling, profileConventions } from './conventions.js';
import { type DownloadProgress, EmbeddingError, type EmbeddingProvider, ModelUnavailableError } from './provider.js';

/** The default local model: all-MiniLM-L6-v2 as exported for transformers.js (384 dimensions). */
export const DEFAULT_LOCAL_MODEL = 'Xenova/all-MiniLM-L6-v2';
export const DEFAULT_LOCAL_DIMENSIONS = 384;

/** Settings of a `local-transformers` profile; the model's prefixes and pooling may be overridden (conventions.ts). */
export interface LocalConfig extends ConventionsConfig {
  /** A folder holding the model (config.json, tokenizer files, onnx/model.onnx); else the model id is used. */
  modelPath?: string;
  batchSize?: number;
}

/** Where a local provider finds its model: the cache folder, and whether (and from where) it may download one. */
export interface LocalRuntime {
  cacheDir: string;
  allowDownloads: boolean;
  /** The Hugging Face hub or a mirror (default https://huggingface.co/). */
  modelHost?: string;
}

export interface LocalWorkerData extends LocalRuntime {
  model: string;
  modelPath: string | undefined;
  pooling: Pooling;
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

/** Whether a model can be loaded without the network: a model folder, or a model id already in the cache. */
export function localModelPresent(model: string, cacheDir: string, modelPath?: string): boolean {
  const dir = modelPath ?? path.join(cacheDir, model);
  return fs.existsSync(path.join(dir, 'onnx', 'model.onnx')) && fs.existsSync(path.join(dir, 'tokenizer.json'));
}

export class LocalProvider implements EmbeddingProvider {
  dimensions: number | null;
  readonly conventions: ModelConventions;
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: Error) => void }>();
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
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const data: LocalWorkerData = { model: this.model, modelPath: this.config.modelPath, pooling: this.conventions.pooling, ...this.runtime };
    const worker = startThread(import.meta.url, 'local-worker', data);
    worker.on('message', (reply: LocalWorkerReply) => {
      if ('download' in reply) {
        for (const listener of this.downloads) listener(reply.download.file, reply.download.loaded, reply.download.total);
        return;
      }
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      if (!this.pending.size) worker.unref(); // idle: it must not keep the process alive
      if ('error' in reply) p.reject(this.explain(reply.error));
      else p.resolve(reply.vectors);
    });
    const fail = (err: Error) => {
      for (const p of this.pending.values()) p.reject(new EmbeddingError(`The local embedding thread stopped: ${err.message}`, false));
      this.pending.clear();
      this.worker = undefined;
    };
    worker.on('error', fail);
    worker.on('exit', (code) => code !== 0 && fail(new Error(`exit code ${code}`)));
    worker.unref();
    return (this.worker = worker);
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
    const size = this.config.batchSize ?? 16;
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += size) {
      signal?.throwIfAborted();
      const batch = texts.slice(i, i + size);
      const worker = this.start();
      const id = this.nextId++;
      const vectors = await new Promise<Float32Array[]>((resolve, reject) => {
        this.pending.set(id, { resolve, reject });
        worker.ref(); // busy: keep the process alive until the answer comes
        worker.postMessage({ id, texts: batch } satisfies LocalWorkerRequest);
      });
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

  async close(): Promise<void> {
    await this.worker?.terminate();
    this.worker = undefined;
  }
}
