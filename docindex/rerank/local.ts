import path from 'node:path';
import { startThread, ThreadCalls } from '../../core/threads.js';
import { localModelPresent } from '../embeddings/local.js';
import { RerankError } from './remote.js';

/**
 * A local cross-encoder run by transformers.js in a worker thread (docindex/rerank/local-worker.ts), as the local
 * embedding provider runs its model (docindex/embeddings/local.ts): scoring is CPU-bound and would otherwise stall the
 * event loop of the process answering the query. The model is a folder (`modelPath`) or a model id in the cache
 * folder, downloaded there when EMBEDDING_ALLOW_DOWNLOADS allows, like an embedding model.
 */
export interface LocalRerankConfig {
  /** A folder holding the model (config.json, tokenizer files, onnx/model.onnx); else the model id is used. */
  modelPath?: string;
  /** Tokens of a (query, passage) pair the model reads; default the model's own limit, else 512. */
  maxLength?: number;
  /** Pairs scored in one model call. */
  batchSize?: number;
}

/** Where the model is found: the embedding models' cache folder and download rule (config.embeddings). */
export interface LocalRerankRuntime {
  cacheDir: string;
  allowDownloads: boolean;
  modelHost?: string;
}

export interface LocalRerankWorkerData extends LocalRerankRuntime, Omit<LocalRerankConfig, 'modelPath'> {
  model: string;
  modelPath: string | undefined;
}
export interface LocalRerankRequest {
  id: number;
  query: string;
  documents: string[];
}
export type LocalRerankReply = { id: number; scores: number[] } | { id: number; error: string };

export class LocalReranker {
  private readonly thread = new ThreadCalls<Omit<LocalRerankRequest, 'id'>, LocalRerankReply, number[]>({
    start: () => startThread(import.meta.url, 'local-worker', { ...this.runtime, ...this.config, model: this.model, modelPath: this.config.modelPath } satisfies LocalRerankWorkerData),
    answer: (reply) => reply.scores,
    explain: (message) => this.explain(message),
    stopped: (err) => new RerankError(`the local rerank thread stopped: ${err.message}`),
  });

  constructor(
    readonly model: string,
    private readonly config: LocalRerankConfig,
    private readonly runtime: LocalRerankRuntime,
  ) {}

  /** transformers.js' loading errors, told as what to do. */
  private explain(message: string): RerankError {
    const first = message.split('\n')[0];
    if (/local_files_only|could not locate file|not found|ENOENT|fetch failed|allowRemoteModels|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT/i.test(message)) {
      const where = this.config.modelPath ?? path.join(this.runtime.cacheDir, this.model);
      const downloads = this.runtime.allowDownloads ? 'downloading it failed' : 'or allow downloads with EMBEDDING_ALLOW_DOWNLOADS=true';
      return new RerankError(`the local rerank model ${this.model} is not available: put it in ${where} (${downloads}; ${first})`);
    }
    return new RerankError(`the local rerank model failed: ${first}`);
  }

  /** The model's relevance score of each document for `query` (higher is more relevant), by position. */
  score(query: string, documents: string[]): Promise<number[]> {
    // Told here: transformers.js, asked for a model it cannot find or fetch, fails on what it did not read.
    if (!this.thread.started && !this.runtime.allowDownloads && !localModelPresent(this.model, this.runtime.cacheDir, this.config.modelPath)) {
      return Promise.reject(this.explain('the model files are not found'));
    }
    return this.thread.call({ query, documents });
  }

  close(): Promise<void> {
    return this.thread.close();
  }
}
