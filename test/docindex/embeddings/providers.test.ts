import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalProvider, localModelPresent } from '../../../docindex/embeddings/local.js';
import { EmbeddingError, ModelUnavailableError } from '../../../docindex/embeddings/provider.js';
import { RemoteProvider } from '../../../docindex/embeddings/remote.js';
import { type FakeEmbeddings, startFakeEmbeddings, vectorFor } from '../../../fakes/fake-embeddings.js';
import { startFakeHub } from '../../../fakes/fake-hub.js';
import { buildTinyModel } from '../../../fakes/tiny-model.js';

const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
let tmp: string;
let model: { path: string; dimensions: number };

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-emb-'));
  model = await buildTinyModel(tmp);
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('the local transformers.js provider', () => {
  it('loads a model from a folder and embeds batches into unit vectors, in order', async () => {
    const p = new LocalProvider('p', 'tiny-bert', null, { modelPath: model.path, batchSize: 2 }, { cacheDir: path.join(tmp, 'cache'), allowDownloads: false });
    try {
      const texts = ['How do I install the router?', 'setup the routing', 'database query cache', 'How do I install the router?', 'render a component'];
      const v = await p.embed(texts);
      expect(v).toHaveLength(5);
      expect(p.dimensions).toBe(model.dimensions);
      for (const x of v) expect(cos(x, x)).toBeCloseTo(1, 5);
      expect(Array.from(v[3]!)).toEqual(Array.from(v[0]!)); // batches of 2: the same text gives the same vector
      expect(cos(v[0]!, v[1]!)).toBeGreaterThan(cos(v[0]!, v[2]!) + 0.3); // related words are near
    } finally {
      await p.close();
    }
  });

  it('loads a model id from the cache folder', async () => {
    const cache = path.join(tmp, 'cache2');
    fs.mkdirSync(path.join(cache, 'acme'), { recursive: true });
    fs.cpSync(model.path, path.join(cache, 'acme', 'tiny'), { recursive: true });
    const p = new LocalProvider('p', 'acme/tiny', null, {}, { cacheDir: cache, allowDownloads: false });
    try {
      expect((await p.embed(['hello']))[0]).toHaveLength(model.dimensions);
    } finally {
      await p.close();
    }
  });

  it('says where to put a model it cannot find, without downloading', async () => {
    const p = new LocalProvider('p', 'nobody/missing-model', null, {}, { cacheDir: path.join(tmp, 'empty'), allowDownloads: false });
    try {
      const err = await p.embed(['x']).catch((e: Error) => e);
      expect(err).toBeInstanceOf(EmbeddingError);
      expect((err as EmbeddingError).permanent).toBe(true);
      expect((err as Error).message).toContain(path.join(tmp, 'empty', 'nobody/missing-model'));
      expect((err as Error).message).toContain('EMBEDDING_ALLOW_DOWNLOADS=true');
    } finally {
      await p.close();
    }
  });
});

describe('the local provider downloading its model on first use', () => {
  it('downloads from the hub into the cache, reporting progress, then loads from disk without the network', async () => {
    const hub = await startFakeHub({ 'acme/tiny-dl': model.path });
    const cache = path.join(tmp, 'downloads');
    const runtime = { cacheDir: cache, allowDownloads: true, modelHost: hub.url };
    const p = new LocalProvider('p', 'acme/tiny-dl', null, {}, runtime);
    const seen: { loaded: number; total: number }[] = [];
    try {
      expect(localModelPresent('acme/tiny-dl', cache)).toBe(false);
      await p.prepare((d) => seen.push(d));
      expect(hub.downloads.some((u) => u.endsWith('/onnx/model.onnx'))).toBe(true);
      expect(seen.length).toBeGreaterThan(2);
      const last = seen.at(-1)!;
      expect(last.loaded).toBe(last.total);
      expect(last.total).toBeGreaterThanOrEqual(fs.statSync(path.join(model.path, 'onnx', 'model.onnx')).size);
      expect(localModelPresent('acme/tiny-dl', cache)).toBe(true);
      expect((await p.embed(['router']))[0]).toHaveLength(model.dimensions);
    } finally {
      await p.close();
      await hub.close();
    }
    // Once downloaded, no hub is needed, and preparing reports nothing.
    const again = new LocalProvider('p2', 'acme/tiny-dl', null, {}, { ...runtime, modelHost: 'http://127.0.0.1:9/' });
    try {
      const quiet: unknown[] = [];
      await again.prepare((d) => quiet.push(d));
      expect(quiet).toEqual([]);
    } finally {
      await again.close();
    }
  });

  it('reports a hub it cannot reach as an unavailable model, saying where to put it', async () => {
    const p = new LocalProvider('p', 'acme/unreachable', null, {}, { cacheDir: path.join(tmp, 'offline'), allowDownloads: true, modelHost: 'http://127.0.0.1:9/' });
    try {
      const err = await p.prepare().catch((e: Error) => e);
      expect(err).toBeInstanceOf(ModelUnavailableError);
      expect((err as Error).message).toContain(path.join(tmp, 'offline', 'acme/unreachable'));
      expect((err as Error).message).toContain('downloading it from http://127.0.0.1:9/ failed');
    } finally {
      await p.close();
    }
  });
});

describe('the remote OpenAI-compatible provider', () => {
  let fake: FakeEmbeddings;
  beforeAll(async () => {
    fake = await startFakeEmbeddings({ dimensions: 8, apiKey: 'sk-test-remote-key-123' });
  });
  afterAll(() => fake.close());
  const provider = (extra: Record<string, unknown> = {}, dims: number | null = null) =>
    new RemoteProvider('r', 'text-embedding-3-small', dims, { baseUrl: `${fake.url}/v1`, apiKey: 'sk-test-remote-key-123', maxRetryWaitMs: 2000, ...extra });

  it('embeds in batches with the bearer key, sorting answers by index', async () => {
    fake.requests.length = 0;
    const v = await provider({ batchSize: 2 }).embed(['one', 'two', 'three']);
    expect(v.map((x) => Array.from(x))).toEqual(['one', 'two', 'three'].map((t) => Array.from(Float32Array.from(vectorFor(t, 8)))));
    expect(fake.requests.map((r) => r.body.input)).toEqual([['one', 'two'], ['three']]);
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer sk-test-remote-key-123');
    expect(fake.requests[0]!.path).toBe('/v1/embeddings');
  });

  it('asks for the profile dimensions and checks them', async () => {
    fake.requests.length = 0;
    expect((await provider({}, 4).embed(['x']))[0]).toHaveLength(4);
    expect(fake.requests[0]!.body.dimensions).toBe(4);
  });

  it('waits as long as Retry-After says on 429, then succeeds', async () => {
    fake.requests.length = 0;
    fake.script.push({ status: 429, retryAfter: '1' });
    const v = await provider().embed(['x']);
    expect(v).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]!.at - fake.requests[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it('backs off on 5xx and gives up after maxAttempts with a clear error', async () => {
    fake.script.push({ status: 503, retryAfter: '0' }, { status: 500 }, { status: 502, retryAfter: '0' });
    const err = await provider({ maxAttempts: 3 }).embed(['x']).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/answered 502 .* 3 times/);
    expect((err as EmbeddingError).permanent).toBe(false);
  });

  it('tries again a server that stops in the middle of its answer, and says so when it keeps doing it', async () => {
    fake.requests.length = 0;
    fake.script.push({ status: 200, stall: true });
    expect(await provider({ timeoutMs: 1000 }).embed(['x'])).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);
    fake.script.push({ status: 200, stall: true }, { status: 200, stall: true });
    const err = (await provider({ timeoutMs: 1000, maxAttempts: 2 }).embed(['x']).catch((e: Error) => e)) as EmbeddingError;
    expect(err).toBeInstanceOf(EmbeddingError);
    expect(err.message).toBe('The embedding server did not answer within 1000 ms');
    expect(err.permanent).toBe(false);
  });

  it('fails at once with a clear message on 401 and 404', async () => {
    const bad = new RemoteProvider('r', 'm', null, { baseUrl: `${fake.url}/v1`, apiKey: 'sk-wrong-key-000' });
    const e401 = (await bad.embed(['x']).catch((e: Error) => e)) as EmbeddingError;
    expect(e401.permanent).toBe(true);
    expect(e401.message).toContain('rejected the API key (401)');
    expect(e401.message).not.toContain('sk-wrong-key-000');
    const e404 = (await provider({ baseUrl: `${fake.url}/nowhere` }).embed(['x']).catch((e: Error) => e)) as EmbeddingError;
    expect(e404.message).toContain('not found (404)');
  });

  const failure = async (p: Promise<unknown>) => ((await p.then(() => new Error('no error'), (e: Error) => e)) as Error).message;

  it('rejects malformed answers', async () => {
    fake.script.push({ status: 200, body: 'not json' });
    expect(await failure(provider().embed(['x']))).toContain('not JSON');
    fake.script.push({ status: 200, body: JSON.stringify({ data: [] }) });
    expect(await failure(provider().embed(['x']))).toContain('has 0 embeddings for 1 texts');
    fake.script.push({ status: 200, body: JSON.stringify({ data: [{ index: 0, embedding: ['a'] }] }) });
    expect(await failure(provider().embed(['x']))).toContain('not a list of numbers');
  });

  it('speaks Azure: api-key header and api-version', async () => {
    fake.requests.length = 0;
    const azure = new RemoteProvider('a', 'embed-small', null, {
      baseUrl: `${fake.url}/openai/deployments/embed-small`,
      apiKey: 'sk-test-remote-key-123',
      auth: 'api-key',
      apiVersion: '2024-10-21',
    });
    expect(await azure.embed(['x'])).toHaveLength(1);
    expect(fake.requests[0]!.path).toBe('/openai/deployments/embed-small/embeddings?api-version=2024-10-21');
    expect(fake.requests[0]!.headers['api-key']).toBe('sk-test-remote-key-123');
    expect(fake.requests[0]!.headers.authorization).toBeUndefined();
  });
});
