import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { env, pipeline } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../../core/errors.js';
import { vectorFingerprint } from '../../../docindex/embeddings/conventions.js';
import { checkDtype, LocalProvider, localModelPresent, modelDtypes, modelMaxTokens } from '../../../docindex/embeddings/local.js';
import { buildTinyModel } from '../../../fakes/tiny-model.js';

let tmp: string;
let tiny: string;
/** The tiny model with its weights under the 8-bit file's name only (its weights are float; the name is what is chosen by). */
let quantizedOnly: string;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-local-'));
  tiny = (await buildTinyModel(tmp)).path;
  quantizedOnly = path.join(tmp, 'tiny-q');
  fs.cpSync(tiny, quantizedOnly, { recursive: true });
  fs.renameSync(path.join(quantizedOnly, 'onnx', 'model.onnx'), path.join(quantizedOnly, 'onnx', 'model_quantized.onnx'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const runtime = () => ({ cacheDir: path.join(tmp, 'cache'), allowDownloads: false });

describe("a local model's weights", () => {
  it('are 8-bit when the folder has them, fp32 when it has only those, 8-bit first when nothing is there yet, or as the profile says', () => {
    const both = path.join(tmp, 'both');
    fs.cpSync(tiny, both, { recursive: true });
    fs.copyFileSync(path.join(both, 'onnx', 'model.onnx'), path.join(both, 'onnx', 'model_quantized.onnx'));
    expect(modelDtypes(both)).toEqual(['q8']);
    expect(modelDtypes(tiny)).toEqual(['fp32']);
    expect(modelDtypes(quantizedOnly)).toEqual(['q8']);
    expect(modelDtypes(path.join(tmp, 'nothing'))).toEqual(['q8', 'fp32']);
    expect(modelDtypes(both, 'fp32')).toEqual(['fp32']);
    expect(localModelPresent('x', tmp, quantizedOnly)).toBe(true);
    expect(localModelPresent('x', tmp, quantizedOnly, 'fp32')).toBe(false);
  });

  it('are fp32 from a folder without 8-bit weights, with the vectors transformers.js itself gives', async () => {
    const p = new LocalProvider('p', 'tiny-bert', null, { modelPath: tiny }, runtime());
    const texts = ['How do I install the router?', 'database query cache', 'render a component'];
    try {
      const ours = await p.embed(texts);
      env.allowRemoteModels = false;
      env.localModelPath = tmp;
      const extractor = await pipeline('feature-extraction', path.basename(tiny), { dtype: 'fp32' });
      const theirs = await extractor(texts, { pooling: 'mean', normalize: true });
      const dims = ours[0]!.length;
      ours.forEach((v, i) => expect(Array.from(v)).toEqual(Array.from((theirs.data as Float32Array).slice(i * dims, (i + 1) * dims))));
    } finally {
      await p.close();
    }
  });

  it('are 8-bit from a folder that has only those, and a missing dtype the profile insists on is a clear error', async () => {
    const q = new LocalProvider('p', 'tiny-q', null, { modelPath: quantizedOnly }, runtime());
    const fp32 = new LocalProvider('p', 'tiny-q', null, { modelPath: quantizedOnly, dtype: 'fp32' }, runtime());
    try {
      expect(await q.embed(['install the router'])).toHaveLength(1);
      await expect(fp32.embed(['install the router'])).rejects.toThrow(/not available.*model\.onnx/s);
    } finally {
      await Promise.all([q.close(), fp32.close()]);
    }
  });

  it("cut all-MiniLM-L6-v2's texts at its training length, other models' at their tokenizer's", () => {
    expect(modelMaxTokens('Xenova/all-MiniLM-L6-v2')).toBe(256);
    expect(modelMaxTokens('all-MiniLM-L6-v2-q')).toBe(256);
    expect(modelMaxTokens('e5-small-v2')).toBeUndefined();
  });

  it('are a profile option checked on save, and part of what makes its vectors', () => {
    expect(() => checkDtype('local-transformers', { dtype: 'q8' })).not.toThrow();
    expect(() => checkDtype('local-transformers', {})).not.toThrow();
    for (const [provider, dtype] of [['local-transformers', 'int4'], ['local-transformers', 8], ['remote-compatible', 'q8']] as const) {
      const err = (() => {
        try {
          checkDtype(provider, { dtype });
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).code).toBe('INVALID_PROFILE');
    }
    const profile = { provider: 'local-transformers', model: 'all-MiniLM-L6-v2', config: {} };
    expect(vectorFingerprint({ ...profile, config: { dtype: 'q8' } })).not.toBe(vectorFingerprint(profile));
    expect(vectorFingerprint({ ...profile, config: { dtype: 'fp32' } })).not.toBe(vectorFingerprint({ ...profile, config: { dtype: 'q8' } }));
  });
});
