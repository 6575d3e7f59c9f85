import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EMBED_BATCH_LIMITS, tokenBatches } from '../docindex/embeddings/batches.js';
import { type LocalConfig, LocalProvider } from '../docindex/embeddings/local.js';
import { countTokens } from '../docindex/parse/tokens.js';
import { buildTinyModel } from '../fakes/tiny-model.js';
import { type RealModelName, realModel } from './quality-model.js';

/**
 * Snippet-like texts: a breadcrumb, a title and a paragraph of 10 to about 400 words (most of them short, as
 * snippets are), in the order the pipeline embeds them: shortest first.
 */
function corpus(n: number): string[] {
  const words = 'install configure router route render component cache request response server client error handle test deploy token page file data query'.split(' ');
  const texts = Array.from({ length: n }, (_, i) => {
    const length = 10 + Math.round(((i * 37) % 97) ** 2 / 24);
    const body = Array.from({ length }, (_, j) => words[(i * 7 + j * 3) % words.length]).join(' ');
    return `Guide > Section ${i % 40}\nHow to ${words[i % words.length]} things\n${body}`;
  });
  return texts.sort((a, b) => a.length - b.length);
}

/** Batches of a fixed count, and batches within the pipeline's token budget (docindex/embeddings/batches.ts). */
const SCHEMES: [string, (texts: string[]) => string[][]][] = [
  ...[1, 16, 64].map((n): [string, (texts: string[]) => string[][]] => [`batch ${String(n).padStart(2)}`, (t) => tokenBatches(t, () => 1, { maxTokens: n, maxItems: n })]),
  ['token budget', (t) => tokenBatches(t, countTokens, EMBED_BATCH_LIMITS)],
];

async function measure(label: string, config: LocalConfig, texts: string[], runtime: { cacheDir: string; allowDownloads: boolean }): Promise<void> {
  for (const [scheme, split] of SCHEMES) {
    const batches = split(texts);
    const p = new LocalProvider('bench', path.basename(config.modelPath ?? ''), null, { ...config, batchSize: Math.max(...batches.map((b) => b.length)) }, runtime);
    try {
      await p.embed(texts.slice(0, 1)); // load the model first: we measure throughput, not start-up
      const t0 = performance.now();
      for (const batch of batches) await p.embed(batch);
      const s = (performance.now() - t0) / 1000;
      console.log(`${label.padEnd(36)} ${scheme.padEnd(12)} ${(texts.length / s).toFixed(1).padStart(8)} snippets/s`);
    } finally {
      await p.close();
    }
  }
}

/** The models measured: EMBED_MODELS (comma-separated names of bench/quality-model.ts), the default local model in both forms unless set. */
const MODELS = (process.env.EMBED_MODELS ?? 'all-MiniLM-L6-v2,all-MiniLM-L6-v2-q').split(',').filter(Boolean) as RealModelName[];

export async function embed(): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-bench-embed-'));
  try {
    console.log(`machine: ${os.cpus().length} cores, node ${process.version}; inference in a worker thread`);
    const tiny = await buildTinyModel(dir);
    const runtime = { cacheDir: path.join(dir, 'cache'), allowDownloads: false };
    await measure('tiny model (32 dims)', { modelPath: tiny.path }, corpus(2048), runtime);
    for (const name of MODELS) {
      const modelPath = await realModel(name).catch((err: Error) => console.log(`${name}: skipped, ${err.message.split('\n')[0]}`));
      if (modelPath) await measure(name, { modelPath }, corpus(256), runtime);
    }
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
