import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../runtime/config.js';
import { LocalReranker } from '../../../docindex/rerank/local.js';
import { createReranker } from '../../../docindex/rerank/providers.js';
import { RerankError } from '../../../docindex/rerank/remote.js';
import { buildTinyCrossEncoder } from '../../../fakes/tiny-cross-encoder.js';

/**
 * The local cross-encoder (docindex/rerank/local.ts) with the tiny one from fakes/tiny-cross-encoder.ts, loaded by
 * transformers.js from its folder: scores come from the model's logits, pair by pair, in a worker thread.
 */
let tmp: string;
let model: string;
let broken: string;
const runtime = () => ({ cacheDir: path.join(tmp, 'cache'), allowDownloads: false });
const QUERY = 'how do i configure the router';
const DOCS = ['the cache is cleared on restart', 'configure the router with routes', 'a test of widgets'];

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-rerank-local-'));
  model = (await buildTinyCrossEncoder(tmp)).path;
  broken = (await buildTinyCrossEncoder(path.join(tmp, 'broken'), { broken: true })).path;
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('LocalReranker', () => {
  it('scores each (query, passage) pair with the model; the passage that answers scores highest', async () => {
    const reranker = new LocalReranker('tiny-cross-encoder', { modelPath: model }, runtime());
    try {
      const scores = await reranker.score(QUERY, DOCS);
      expect(scores).toHaveLength(3);
      expect(scores.every(Number.isFinite)).toBe(true);
      expect(scores.indexOf(Math.max(...scores))).toBe(1);
      // Deterministic, and the same in batches of one as in one batch.
      const single = new LocalReranker('tiny-cross-encoder', { modelPath: model, batchSize: 1 }, runtime());
      try {
        const again = await single.score(QUERY, DOCS);
        again.forEach((s, i) => expect(s).toBeCloseTo(scores[i]!, 4));
      } finally {
        await single.close();
      }
    } finally {
      await reranker.close();
    }
  });

  it('cuts a pair to the model length instead of failing on a passage longer than the model reads', async () => {
    const reranker = new LocalReranker('tiny-cross-encoder', { modelPath: model, maxLength: 16 }, runtime());
    try {
      const widgets = 'widget '.repeat(5000);
      // Only the first tokens of the pair are read: the answer at the end of a long passage is not seen.
      const scores = await reranker.score(QUERY, [`configure the router ${widgets}`, `${widgets} configure the router`]);
      expect(scores[0]).toBeGreaterThan(scores[1]! + 1);
    } finally {
      await reranker.close();
    }
  });

  it('fails with a RerankError saying where to put a missing model, and on a model that is not ONNX', async () => {
    const missing = new LocalReranker('acme/no-such-reranker', {}, runtime());
    const bad = new LocalReranker('tiny-cross-encoder', { modelPath: broken }, runtime());
    try {
      const err = await missing.score(QUERY, DOCS).catch((e: Error) => e);
      expect(err).toBeInstanceOf(RerankError);
      expect((err as Error).message).toContain(path.join(tmp, 'cache', 'acme/no-such-reranker'));
      expect((err as Error).message).toContain('EMBEDDING_ALLOW_DOWNLOADS=true');
      await expect(bad.score(QUERY, DOCS)).rejects.toThrow(/local rerank model failed/);
    } finally {
      await missing.close();
      await bad.close();
    }
  });

  it("takes the profile's candidates, weight and timeout over the RERANK_* settings; no answer in time is a RerankError", async () => {
    const config = loadConfig({ DATA_DIR: tmp, RERANK_CANDIDATES: '12', RERANK_WEIGHT: '0.5' });
    const fromSettings = createReranker({ id: 'p', provider: 'local-transformers', model: null, config: { modelPath: model } }, config);
    expect([fromSettings.candidates, fromSettings.weight]).toEqual([12, 0.5]);
    await fromSettings.close();
    // 100 ms is less than loading the model takes.
    const hurried = createReranker({ id: 'p', provider: 'local-transformers', model: null, config: { modelPath: model, candidates: 5, weight: 1, timeoutMs: 100 } }, config);
    try {
      expect([hurried.candidates, hurried.weight]).toEqual([5, 1]);
      await expect(hurried.score(QUERY, DOCS)).rejects.toThrow(/no answer within 100 ms/);
    } finally {
      await hurried.close();
    }
  });
});
