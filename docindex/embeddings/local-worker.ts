/**
 * Runs transformers.js in a worker thread: inference is CPU-bound and would otherwise stall the event loop of the
 * process that asked (the API when it embeds a query, a worker when it embeds snippets).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type FeatureExtractionPipeline, mean_pooling, pipeline, type Tensor } from '@huggingface/transformers';
import { type Dtype, localModelPresent, type LocalWorkerData, type LocalWorkerReply, type LocalWorkerRequest } from './local.js';
import { useModelLocation } from './transformers-env.js';

const data = workerData as LocalWorkerData;
const modelId = useModelLocation(data);

const open = (dtype: Dtype) =>
  pipeline('feature-extraction', modelId, {
    dtype,
    // Every core on the one batch in flight (inter-op threads only help graphs with parallel branches, BERT has none).
    // Threads that spin while waiting for work took cores from the rest of a busy machine and were slower there
    // (bench/README.md, "Embed"): they sleep instead.
    session_options: { intraOpNumThreads: data.threads, interOpNumThreads: 1, extra: { session: { intra_op: { allow_spinning: '0' } } } },
    // transformers.js reports reading files from disk too: progress is asked for only when there is a download.
    ...(!localModelPresent(data.model, data.cacheDir, data.modelPath, dtype) && {
      progress_callback: (p: { status: string; file?: string; loaded?: number; total?: number }) => {
        if (p.status === 'progress' && p.file) parentPort!.postMessage({ download: { file: p.file, loaded: p.loaded ?? 0, total: p.total ?? 0 } } satisfies LocalWorkerReply);
      },
    }),
  }) as Promise<FeatureExtractionPipeline>;

/** The first of the weights to try that loads (a model without 8-bit weights falls back to fp32). */
async function openFirst(): Promise<FeatureExtractionPipeline> {
  for (const [i, dtype] of data.dtypes.entries()) {
    try {
      return await open(dtype);
    } catch (err) {
      if (i === data.dtypes.length - 1) throw err;
    }
  }
  throw new Error('no weights to load');
}

let extractor: Promise<FeatureExtractionPipeline> | undefined;
const load = () =>
  (extractor ??= openFirst().catch((err: Error) => {
    extractor = undefined; // a later call may succeed (e.g. after the model was copied in)
    throw err;
  }));

/** The pipeline's own steps, with texts cut at the model's training length (`maxTokens`) instead of the tokenizer's. */
async function embedded(run: FeatureExtractionPipeline, texts: string[]): Promise<Tensor> {
  const inputs = run.tokenizer(texts, { padding: true, truncation: true, max_length: data.maxTokens ?? null });
  const { last_hidden_state: tokens } = (await run.model(inputs)) as { last_hidden_state: Tensor };
  // The model's own pooling (conventions.ts): bge was trained on its [CLS] vector, e5 and MiniLM on the mean.
  const pooled = data.pooling === 'cls' ? tokens.slice(null, 0) : mean_pooling(tokens, inputs.attention_mask as Tensor);
  return pooled.normalize(2, -1);
}

parentPort!.on('message', async (req: LocalWorkerRequest) => {
  let reply: LocalWorkerReply;
  try {
    const out = await embedded(await load(), req.texts);
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
