/**
 * Runs a cross-encoder with transformers.js in a worker thread (docindex/rerank/local.ts): each (query, passage) pair
 * is tokenized together, cut to the model's length, and scored by the model's logits.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { AutoModelForSequenceClassification, AutoTokenizer, type PreTrainedModel, type PreTrainedTokenizer, type Tensor } from '@huggingface/transformers';
import type { LocalRerankReply, LocalRerankRequest, LocalRerankWorkerData } from './local.js';
import { useModelLocation } from '../embeddings/transformers-env.js';

const data = workerData as LocalRerankWorkerData;
const modelId = useModelLocation(data);

/** BERT-style position tables stop at 512; a tokenizer that names no limit is cut there. */
const FALLBACK_MAX_LENGTH = 512;

let loaded: Promise<{ tokenizer: PreTrainedTokenizer; model: PreTrainedModel }> | undefined;
const load = () =>
  (loaded ??= Promise.all([AutoTokenizer.from_pretrained(modelId), AutoModelForSequenceClassification.from_pretrained(modelId, { dtype: 'fp32' })])
    .then(([tokenizer, model]) => ({ tokenizer, model }))
    .catch((err: Error) => {
      loaded = undefined; // a later call may succeed (e.g. after the model was copied in)
      throw err;
    }));

/** One score per pair: the logit of a one-label model, or the last label's (the "relevant" class) of a two-label one. */
async function scoreBatch(query: string, documents: string[]): Promise<number[]> {
  const { tokenizer, model } = await load();
  const limit = Number.isFinite(tokenizer.model_max_length) ? tokenizer.model_max_length : FALLBACK_MAX_LENGTH;
  const inputs = tokenizer(documents.map(() => query), { text_pair: documents, padding: true, truncation: true, max_length: Math.min(data.maxLength ?? limit, limit) });
  const { logits } = (await model(inputs)) as { logits: Tensor };
  const [rows, labels] = logits.dims as [number, number];
  const values = logits.data as Float32Array;
  return Array.from({ length: rows }, (_, i) => values[i * labels + labels - 1]!);
}

parentPort!.on('message', async (req: LocalRerankRequest) => {
  let reply: LocalRerankReply;
  try {
    const size = data.batchSize ?? 16;
    const scores: number[] = [];
    for (let i = 0; i < req.documents.length; i += size) scores.push(...(await scoreBatch(req.query, req.documents.slice(i, i + size))));
    reply = { id: req.id, scores };
  } catch (err) {
    reply = { id: req.id, error: (err as Error).message };
  }
  parentPort!.postMessage(reply);
});
