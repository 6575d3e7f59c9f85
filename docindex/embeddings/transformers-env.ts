import path from 'node:path';
import { env } from '@huggingface/transformers';

/** Where a model thread finds its model: the cache folder and download rule of config.embeddings, or a folder by path. */
export interface ModelLocation {
  model: string;
  modelPath: string | undefined;
  cacheDir: string;
  allowDownloads: boolean;
  modelHost?: string;
}

/**
 * Points transformers.js, in a model thread (embeddings/local-worker.ts, rerank/local-worker.ts), at the model, and
 * returns the id to load it by: a folder given by path is loaded from there, a model id from the cache, where
 * downloads (when allowed) land too.
 */
export function useModelLocation(at: ModelLocation): string {
  env.allowLocalModels = true;
  env.allowRemoteModels = at.allowDownloads;
  if (at.modelHost) env.remoteHost = at.modelHost;
  env.cacheDir = at.cacheDir;
  env.localModelPath = at.modelPath ? path.dirname(at.modelPath) : at.cacheDir;
  return at.modelPath ? path.basename(at.modelPath) : at.model;
}
