/**
 * Runs transformers.js in a worker thread: inference is CPU-bound and would otherwise stall the event loop of the
 * process that asked (the API when it embeds a query, a worker when it embeds snippets).
 */
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { env, pipeline, type FeatureExtractionPipeline } from '@huggingface/transformers';
import { localModelPresent, type LocalWorkerData, type LocalWorkerReply, type LocalWorkerRequest } from './local.js';

const data = workerData as LocalWorkerData;
env.allowLocalModels = true;
env.allowRemoteModels = data.allowDownloads;
if (data.modelHost) env.remoteHost = data.modelHost;
env.cacheDir = data.cacheDir;
// A model folder given by path is loaded from there; a model id from the cache, where downloads land too.
env.localModelPath = data.modelPath ? path.dirname(data.modelPath) : data.cacheDir;
const modelId = data.modelPath ? path.basename(data.modelPath) : data.model;

let extractor: Promise<FeatureExtractionPipeline> | undefined;
const load = () =>
  (extractor ??= pipeline('feature-extraction', modelId, {
    dtype: 'fp32',
    // transformers.js reports reading files from disk too: progress is asked for only when there is a download.
    ...(!localModelPresent(data.model, data.cacheDir, data.modelPath) && {
      progress_callback: (p: { status: string; file?: string; loaded?: number; total?: number }) => {
        if (p.status === 'progress' && p.file) parentPort!.postMessage({ download: { file: p.file, loaded: p.loaded ?? 0, total: p.total ?? 0 } } satisfies LocalWorkerReply);
      },
    }),
  }).catch((err: Error) => {
    extractor = undefined; // a later call may succeed (e.g. after the model was copied in)
    throw err;
  }) as Promise<FeatureExtractionPipeline>);

parentPort!.on('message', async (req: LocalWorkerRequest) => {
  let reply: LocalWorkerReply;
  try {
    const run = await load();
    // The model's own pooling (conventions.ts): bge was trained on its [CLS] vector, e5 and MiniLM on the mean.
    const out = await run(req.texts, { pooling: data.pooling, normalize: true });
    const [rows, dims] = out.dims as [number, number];
    const all = out.data as Float32Array;
    const vectors = Array.from({ length: rows }, (_, i) => all.slice(i * dims, (i + 1) * dims));
    reply = { id: req.id, vectors };
    parentPort!.postMessage(reply, vectors.map((v) => v.buffer as ArrayBuffer));
  } catch (err) {
    reply = { id: req.id, error: (err as Error).message };
    parentPort!.postMessage(reply);
  }
});
