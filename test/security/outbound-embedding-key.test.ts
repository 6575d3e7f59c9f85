import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, expectError } from '../docindex/helpers.js';
import { type FakeEmbeddings, startFakeEmbeddings } from '../../fakes/fake-embeddings.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * A stored API key is only ever sent to the address it was stored with. Embedding servers are
 * configured by the operator (not guarded), but PUT /api/v1/settings/embedding and its /test with a saved
 * profile's id and a new baseUrl used to send the saved key to the new address. Two fake servers record the
 * Authorization they receive.
 */
const KEY = 'sk-stored-embedding-key-5551234';
const OTHER = 'sk-other-embedding-key-7778889';
let stack: TestStack;
let home: FakeEmbeddings;
let elsewhere: FakeEmbeddings;

beforeAll(async () => {
  [home, elsewhere] = await Promise.all([startFakeEmbeddings({ apiKey: KEY }), startFakeEmbeddings()]);
  stack = await startTestStack({ queues: [] });
  const saved = await api(stack, 'PUT', '/api/v1/settings/embedding', {
    profile: { id: 'hosted', name: 'Hosted', provider: 'remote-compatible', model: 'text-embedding-3-small', config: { baseUrl: `${home.url}/v1`, apiKey: KEY } },
  });
  expect(saved.status, JSON.stringify(saved.body)).toBe(200);
});
afterAll(async () => {
  await stack?.stop();
  await Promise.all([home?.close(), elsewhere?.close()]);
});

const authorizations = (f: FakeEmbeddings) => f.requests.map((r) => r.headers.authorization ?? null);

describe('a saved profile with a new baseUrl', () => {
  it('/test does not send the stored key there: 400 API_KEY_REQUIRED, whether the key is masked or left out', async () => {
    for (const config of [{ baseUrl: `${elsewhere.url}/v1`, apiKey: '********' }, { baseUrl: `${elsewhere.url}/v1` }]) {
      const res = await api(stack, 'POST', '/api/v1/settings/embedding/test', {
        profile: { id: 'hosted', provider: 'remote-compatible', model: 'text-embedding-3-small', config },
      });
      expectError(res, 400, 'API_KEY_REQUIRED');
      expect(res.body.details[0].pointer).toBe('/body/profile/config/apiKey');
      expect(JSON.stringify(res.body)).not.toContain(KEY);
    }
    expect(elsewhere.requests).toEqual([]);
  });

  it('PUT refuses it too, and the saved profile is left as it was', async () => {
    const res = await api(stack, 'PUT', '/api/v1/settings/embedding', {
      profile: { id: 'hosted', provider: 'remote-compatible', model: 'text-embedding-3-small', config: { baseUrl: `${elsewhere.url}/v1`, apiKey: '********' } },
    });
    expectError(res, 400, 'API_KEY_REQUIRED');
    const ok = await api(stack, 'POST', '/api/v1/settings/embedding/test', { profileId: 'hosted' });
    expect(ok.body).toMatchObject({ ok: true, dimensions: 8 });
    expect(authorizations(home).at(-1)).toBe(`Bearer ${KEY}`);
    expect(elsewhere.requests).toEqual([]);
  });

  it('the same address spelled differently keeps the key; a new key for the new address is sent there', async () => {
    const same = await api(stack, 'POST', '/api/v1/settings/embedding/test', {
      profile: { id: 'hosted', provider: 'remote-compatible', model: 'text-embedding-3-small', config: { baseUrl: `${home.url.replace('http', 'HTTP')}/v1/`, apiKey: '********' } },
    });
    expect(same.body).toMatchObject({ ok: true });
    expect(authorizations(home).at(-1)).toBe(`Bearer ${KEY}`);

    const moved = await api(stack, 'PUT', '/api/v1/settings/embedding', {
      profile: { id: 'hosted', provider: 'remote-compatible', model: 'text-embedding-3-small', config: { baseUrl: `${elsewhere.url}/v1`, apiKey: OTHER } },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect((await api(stack, 'POST', '/api/v1/settings/embedding/test', { profileId: 'hosted' })).body).toMatchObject({ ok: true });
    expect(authorizations(elsewhere)).toEqual([`Bearer ${OTHER}`]);
    expect(authorizations(home)).not.toContain(`Bearer ${OTHER}`);
  });
});
