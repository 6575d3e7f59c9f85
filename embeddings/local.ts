import fs from 'node:fs';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startThread } from '../runtime/threads.js';
import { EmbeddingError, type EmbeddingProvider } from './provider.js';

/** The default local model: all-MiniLM-L6-v2 as exported for transformers.js (384 dimensions). */
export const DEFAULT_LOCAL_MODEL = 'Xenova/all-MiniLM-L6-v2';
export const DEFAULT_LOCAL_DIMENSIONS = 384;

/** Settings of a `local-transformers` profile. */
export interface LocalConfig {
  /** A folder holding the model (config.json, tokenizer files, onnx/model.onnx); else the model id is used. */
  modelPath?: string;
  batchSize?: number;
}

export interface LocalWorkerData {
  model: string;
  modelPath: string | undefined;
  cacheDir: string;
  allowDownloads: boolean;
}
export interface LocalWorkerRequest {
  id: number;
  texts: string[];
}
export type LocalWorkerReply = { id: number; vectors: Float32Array[] } | { id: number; error: string };

/** Whether a model can be loaded without the network: a model folder, or a model id already in the cache. */
export function localModelPresent(model: string, cacheDir: string, modelPath?: string): boolean {
  const dir = modelPath ?? path.join(cacheDir, model);
  return fs.existsSync(path.join(dir, 'onnx', 'model.onnx')) && fs.existsSync(path.join(dir, 'tokenizer.json'));
}

export class LocalProvider implements EmbeddingProvider {
  dimensions: number | null;
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: Error) => void }>();

  constructor(
    readonly profileId: string,
    readonly model: string,
    dimensions: number | null,
    private readonly config: LocalConfig,
    private readonly runtime: { cacheDir: string; allowDownloads: boolean },
  ) {
    this.dimensions = dimensions;
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const data: LocalWorkerData = { model: this.model, modelPath: this.config.modelPath, ...this.runtime };
    const worker = startThread(import.meta.url, 'local-worker', data);
    worker.on('message', (reply: LocalWorkerReply) => {
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
    if (/local_files_only|could not locate file|not found|ENOENT|fetch failed|allowRemoteModels/i.test(message)) {
      const where = this.config.modelPath ?? path.join(this.runtime.cacheDir, this.model);
      return new EmbeddingError(
        `The local model ${this.model} is not available: put it in ${where}` +
          (this.runtime.allowDownloads ? ' (downloading it failed)' : ', or allow downloads with EMBEDDING_ALLOW_DOWNLOADS=true') +
          `. (${message.split('\n')[0]})`,
        true,
      );
    }
    return new EmbeddingError(`The local model failed: ${message.split('\n')[0]}`, false);
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
