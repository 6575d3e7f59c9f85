import path from 'node:path';
import { buildTinyCrossEncoder } from '../fakes/tiny-cross-encoder.js';

/**
 * The cross-encoder the quality benchmark's `rerank-local` phase reranks with, as a `local-transformers` rerank profile
 * (docindex/rerank/): QUALITY_RERANK_MODEL_PATH, a folder holding a real one (config.json, tokenizer files,
 * onnx/model.onnx, e.g. an ms-marco-MiniLM export), else the tiny test cross-encoder (fakes/tiny-cross-encoder.ts),
 * whose figures say what the stage costs, not what reranking gains. QUALITY_RERANK_WEIGHT and
 * QUALITY_RERANK_CANDIDATES override the RERANK_* defaults. The timeout is long: a slow answer is measured, not dropped.
 */
export async function rerankProfile(dir: string): Promise<{ label: string; profile: Record<string, unknown> }> {
  const given = process.env.QUALITY_RERANK_MODEL_PATH;
  const modelPath = given ? path.resolve(given) : (await buildTinyCrossEncoder(dir)).path;
  const label = given ? path.basename(modelPath) : 'tiny cross-encoder';
  const config = {
    modelPath,
    timeoutMs: 600_000,
    ...(process.env.QUALITY_RERANK_WEIGHT && { weight: Number(process.env.QUALITY_RERANK_WEIGHT) }),
    ...(process.env.QUALITY_RERANK_CANDIDATES && { candidates: Number(process.env.QUALITY_RERANK_CANDIDATES) }),
  };
  return { label, profile: { name: label, provider: 'local-transformers', model: label, config, active: true } };
}
