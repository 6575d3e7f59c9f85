import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../../core/errors.js';
import { checkConventions, knownConventions, MAX_PREFIX_LENGTH, profileConventions, vectorFingerprint } from '../../../docindex/embeddings/conventions.js';
import { LocalProvider } from '../../../docindex/embeddings/local.js';
import { embedAs, embedQuery } from '../../../docindex/embeddings/provider.js';
import { RemoteProvider } from '../../../docindex/embeddings/remote.js';
import { type FakeEmbeddings, startFakeEmbeddings } from '../../../fakes/fake-embeddings.js';
import { buildTinyModel } from '../../../fakes/tiny-model.js';

const E5 = { queryPrefix: 'query: ', passagePrefix: 'passage: ', pooling: 'mean' };
const BGE = { queryPrefix: 'Represent this sentence for searching relevant passages: ', passagePrefix: '', pooling: 'cls' };
const NOMIC = { queryPrefix: 'search_query: ', passagePrefix: 'search_document: ', pooling: 'mean' };
const NONE = { queryPrefix: '', passagePrefix: '', pooling: 'mean' };

describe("a model's conventions", () => {
  it('are known by model name, whatever its owner or tag', () => {
    for (const m of ['intfloat/e5-small-v2', 'e5-small-v2', 'Xenova/e5-base-v2', 'e5-small-v2-q', 'intfloat/multilingual-e5-large', 'e5-large']) {
      expect(knownConventions(m), m).toEqual(E5);
    }
    for (const m of ['BAAI/bge-small-en-v1.5', 'bge-base-en-v1.5', 'Xenova/bge-large-en-v1.5', 'bge-small-en-v1.5-q']) expect(knownConventions(m), m).toEqual(BGE);
    for (const m of ['nomic-embed-text', 'nomic-embed-text:latest', 'nomic-ai/nomic-embed-text-v1.5']) expect(knownConventions(m), m).toEqual(NOMIC);
    // Sentence-transformers, hosted models, instruction-tuned e5 and unknown names: no prefixes, mean pooling.
    for (const m of ['Xenova/all-MiniLM-L6-v2', 'text-embedding-3-small', 'intfloat/e5-mistral-7b-instruct', 'multilingual-e5-large-instruct', 'tiny-bert', '']) {
      expect(knownConventions(m), m).toEqual(NONE);
    }
    expect(knownConventions(null)).toEqual(NONE);
  });

  it("are overridden by a profile's config; an empty prefix removes the model's", () => {
    expect(profileConventions('e5-small-v2', {})).toEqual(E5);
    expect(profileConventions('e5-small-v2', { queryPrefix: '', passagePrefix: '' })).toEqual(NONE);
    expect(profileConventions('bge-small-en-v1.5', { pooling: 'mean', passagePrefix: 'doc: ' })).toEqual({ ...BGE, pooling: 'mean', passagePrefix: 'doc: ' });
    expect(profileConventions('my-model', { queryPrefix: 'Q ', pooling: 'cls' })).toEqual({ queryPrefix: 'Q ', passagePrefix: '', pooling: 'cls' });
    // A model folder names its model when the profile has none.
    expect(profileConventions(null, { modelPath: '/models/e5-small-v2' })).toEqual(E5);
  });

  it('refuses overrides that are not strings, too long, with control characters, or an unknown pooling', () => {
    const code = (provider: string, config: Record<string, unknown>) => {
      try {
        checkConventions(provider, config);
        return 'accepted';
      } catch (err) {
        expect(err).toBeInstanceOf(ValidationError);
        return `${(err as ValidationError).code}: ${(err as Error).message}`;
      }
    };
    expect(code('local-transformers', { queryPrefix: 'query: ', passagePrefix: '', pooling: 'cls' })).toBe('accepted');
    expect(code('remote-compatible', { queryPrefix: 'search_query: ' })).toBe('accepted');
    expect(code('local-transformers', { queryPrefix: 'x'.repeat(MAX_PREFIX_LENGTH) })).toBe('accepted');
    expect(code('local-transformers', { queryPrefix: 'x'.repeat(MAX_PREFIX_LENGTH + 1) })).toMatch(/^INVALID_PROFILE: .*queryPrefix is longer than 200/);
    expect(code('local-transformers', { passagePrefix: 42 })).toMatch(/^INVALID_PROFILE: .*passagePrefix must be a string/);
    expect(code('local-transformers', { passagePrefix: 'doc:\n' })).toMatch(/control character/);
    expect(code('local-transformers', { pooling: 'max' })).toMatch(/^INVALID_PROFILE: config.pooling must be one of mean, cls/);
    expect(code('remote-compatible', { pooling: 'cls' })).toMatch(/a remote server pools/);
  });

  it("fingerprint what makes a profile's vectors, and nothing else", () => {
    type Profile = Parameters<typeof vectorFingerprint>[0];
    const base: Profile = { provider: 'local-transformers', model: 'e5-small-v2', dimensions: null, config: { modelPath: '/m/e5-small-v2', batchSize: 8 } };
    const same = (p: Partial<Profile>) => vectorFingerprint({ ...base, ...p }) === vectorFingerprint(base);
    expect(same({ config: { ...base.config, batchSize: 32 } })).toBe(true);
    expect(same({ dimensions: 384 })).toBe(true); // a local model's size is its own
    expect(same({ config: { ...base.config, queryPrefix: 'query: ' } })).toBe(true); // the model's own, said again
    expect(same({ config: { ...base.config, queryPrefix: '' } })).toBe(false);
    expect(same({ config: { ...base.config, passagePrefix: 'doc: ' } })).toBe(false);
    expect(same({ config: { ...base.config, pooling: 'cls' } })).toBe(false);
    expect(same({ model: 'e5-base-v2' })).toBe(false);
    expect(same({ config: { modelPath: '/m/other' } })).toBe(false);
    const remote = { provider: 'remote-compatible', model: 'text-embedding-3-small', dimensions: 1536, config: { baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'a' } };
    expect(vectorFingerprint({ ...remote, config: { ...remote.config, apiKey: 'b', batchSize: 2 } })).toBe(vectorFingerprint(remote));
    expect(vectorFingerprint({ ...remote, dimensions: 512 })).not.toBe(vectorFingerprint(remote));
  });
});

describe('texts embedded in a role', () => {
  let fake: FakeEmbeddings;
  beforeAll(async () => {
    fake = await startFakeEmbeddings({ dimensions: 8 });
  });
  afterAll(() => fake.close());
  const sent = () => fake.requests.at(-1)!.body.input;

  it("reach a remote server with the model's query and passage prefixes", async () => {
    const e5 = new RemoteProvider('p', 'intfloat/e5-small-v2', null, { baseUrl: `${fake.url}/v1` });
    await embedAs(e5, 'passage', ['Set the log level.', 'Routes map paths.']);
    expect(sent()).toEqual(['passage: Set the log level.', 'passage: Routes map paths.']);
    expect(await embedQuery(e5, 'how do I change the log level')).toHaveLength(8);
    expect(sent()).toEqual(['query: how do I change the log level']);
    expect(fake.requests.at(-1)!.body.model).toBe('intfloat/e5-small-v2');

    const nomic = new RemoteProvider('p', 'nomic-embed-text', null, { baseUrl: `${fake.url}/v1`, queryPrefix: 'search_query: ', passagePrefix: '' });
    await embedAs(nomic, 'passage', ['plain']);
    expect(sent()).toEqual(['plain']); // the profile's empty passage prefix wins over the model's
    await embedQuery(nomic, 'q');
    expect(sent()).toEqual(['search_query: q']);

    const minilm = new RemoteProvider('p', 'all-MiniLM-L6-v2', null, { baseUrl: `${fake.url}/v1` });
    await embedAs(minilm, 'query', ['as is']);
    expect(sent()).toEqual(['as is']);
  });
});

describe('local pooling', () => {
  let tmp: string;
  let model: { path: string; dimensions: number };
  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-pooling-'));
    model = await buildTinyModel(tmp);
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('cls and mean give different unit vectors for the same text; the prefix is part of what is embedded', async () => {
    const runtime = { cacheDir: path.join(tmp, 'cache'), allowDownloads: false };
    const mean = new LocalProvider('p', 'tiny-bert', null, { modelPath: model.path }, runtime);
    const cls = new LocalProvider('p', 'tiny-bert', null, { modelPath: model.path, pooling: 'cls' }, runtime);
    const prefixed = new LocalProvider('p', 'tiny-bert', null, { modelPath: model.path, queryPrefix: 'how do i ' }, runtime);
    try {
      expect(mean.conventions.pooling).toBe('mean');
      expect(cls.conventions.pooling).toBe('cls');
      const text = 'install the router and configure the cache';
      const [a] = await mean.embed([text]);
      const [b] = await cls.embed([text]);
      expect(a).toHaveLength(model.dimensions);
      expect(b).toHaveLength(model.dimensions);
      const norm = (v: Float32Array) => Math.hypot(...v);
      expect(norm(a!)).toBeCloseTo(1, 5);
      expect(norm(b!)).toBeCloseTo(1, 5);
      expect(Array.from(b!)).not.toEqual(Array.from(a!));
      // The same pooling twice is the same vector: the difference is the pooling's.
      expect(Array.from((await mean.embed([text]))[0]!)).toEqual(Array.from(a!));
      expect(Array.from(await embedQuery(prefixed, text))).not.toEqual(Array.from(a!));
      expect(Array.from(await embedQuery(prefixed, text))).toEqual(Array.from((await mean.embed([`how do i ${text}`]))[0]!));
    } finally {
      await Promise.all([mean.close(), cls.close(), prefixed.close()]);
    }
  });
});
