import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../runtime/config.js';
import { DEFAULT_LOCAL_MODEL, LocalProvider, localModelPresent } from '../docindex/embeddings/local.js';
import { buildTinyModel } from '../fakes/tiny-model.js';

/** Snippet-like texts: a breadcrumb, a title and a paragraph or a code block, about 120 tokens each. */
function corpus(n: number): string[] {
  const words = 'install configure router route render component cache request response server client error handle test deploy token page file data query'.split(' ');
  return Array.from({ length: n }, (_, i) => {
    const body = Array.from({ length: 90 }, (_, j) => words[(i * 7 + j * 3) % words.length]).join(' ');
    return `Guide > Section ${i % 40}\nHow to ${words[i % words.length]} things\n${body}`;
  });
}

async function measure(label: string, make: (batch: number) => LocalProvider, texts: string[]): Promise<void> {
  for (const batch of [1, 16, 64]) {
    const p = make(batch);
    try {
      await p.embed(texts.slice(0, batch)); // load the model first: we measure throughput, not start-up
      const t0 = performance.now();
      await p.embed(texts);
      const s = (performance.now() - t0) / 1000;
      console.log(`${label.padEnd(28)} batch ${String(batch).padStart(2)}  ${(texts.length / s).toFixed(1).padStart(8)} snippets/s`);
    } finally {
      await p.close();
    }
  }
}

export async function embed(): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-bench-embed-'));
  try {
    console.log(`machine: ${os.cpus().length} cores, node ${process.version}; inference in a worker thread`);
    const tiny = await buildTinyModel(dir);
    const runtime = { cacheDir: path.join(dir, 'cache'), allowDownloads: false };
    await measure('tiny model (32 dims)', (batch) => new LocalProvider('bench', 'tiny-bert', null, { modelPath: tiny.path, batchSize: batch }, runtime), corpus(2048));

    const config = loadConfig();
    if (localModelPresent(DEFAULT_LOCAL_MODEL, config.embeddings.cacheDir)) {
      const real = { cacheDir: config.embeddings.cacheDir, allowDownloads: false };
      await measure(`${DEFAULT_LOCAL_MODEL}`, (batch) => new LocalProvider('bench', DEFAULT_LOCAL_MODEL, null, { batchSize: batch }, real), corpus(256));
    } else {
      console.log(`${DEFAULT_LOCAL_MODEL}: skipped, not in ${config.embeddings.cacheDir} (no downloads here; put it there to measure it)`);
    }
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
