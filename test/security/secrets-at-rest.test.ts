import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.js';
import { createLogger } from '../../core/log.js';
import { redact } from '../../core/redact.js';
import { SECRETS_FILE, secretBox } from '../../core/secrets.js';
import { apiKeyContext } from '../../docindex/entities/embedding-profile.js';
import { gitHostTokenContext } from '../../docindex/entities/library.js';
import { sealPlainSecrets } from '../../docindex/secrets.js';
import { api, enc, expectError, waitForJob } from '../docindex/helpers.js';
import { type GitHost, startGitHost, TestRepo } from '../support/git.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * Secrets at rest: git-host tokens and embedding API keys never sit in PostgreSQL in plain
 * text, neither after a write nor after an earlier version's plain rows are sealed at start; the key is in
 * DATA_DIR/secrets.key (0600) or SECRETS_KEY, and a value only opens with that key and for its own record.
 */
const TOKEN = 'ghp_secret_at_rest_token_0001';
const OLD_TOKEN = 'ghp_plain_row_from_before_0002';
const OLD_KEY = 'sk-plain-key-from-before-0003';
let stack: TestStack;
let host: GitHost;
let tmp: string;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-secrets-'));
  for (const name of ['gadgets', 'old']) {
    const repo = new TestRepo(path.join(tmp, name));
    repo.write({ 'README.md': `# ${name}\n\nThe ${name} library, with documentation worth indexing for the test.\n` });
    repo.commit();
    repo.tag('v1.0.0');
    repo.publish(path.join(tmp, 'host'), 'acme', name);
  }
  host = await startGitHost(path.join(tmp, 'host'), TOKEN);
  stack = await startTestStack({ env: { SECRETS_KEY: '' } }); // the key file in DATA_DIR, generated
});
afterAll(async () => {
  await stack?.stop();
  await host?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const rows = async (sql: string) => (await stack.orm.em.fork().execute(sql)) as Record<string, string>[];
const dump = async () => JSON.stringify([await rows('select * from library'), await rows('select * from embedding_profile')]);

describe('stored secrets', () => {
  it('a git-host token is sealed when written, and opened for git only', async () => {
    const res = await api(stack, 'POST', '/api/v1/libs', { source: 'git-host', sourceUrl: `${host.url}/acme/gadgets.git`, gitHostToken: TOKEN });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect((await waitForJob(stack, res.body.job.id)).status).toBe('done');
    expect(host.requests.some((r) => r.authorized)).toBe(true);
    const [row] = await rows(`select git_host_token from library where id = '/acme/gadgets'`);
    expect(row!.git_host_token).toMatch(/^gmsec:v1:[0-9a-f]{8}:[A-Za-z0-9_-]+$/);
    expect(await dump()).not.toContain(TOKEN);
    // A new token through PATCH: sealed too, and it is the one git sends.
    await api(stack, 'PATCH', `/api/v1/libs/${enc('/acme/gadgets')}`, { gitHostToken: TOKEN });
    const [patched] = await rows(`select git_host_token from library where id = '/acme/gadgets'`);
    expect(patched!.git_host_token).not.toBe(row!.git_host_token); // a fresh IV each time
    expect(secretBox(stack.config).open(patched!.git_host_token!, gitHostTokenContext('/acme/gadgets'))).toBe(TOKEN);
    expect((await api(stack, 'POST', `/api/v1/libs/${enc('/acme/gadgets')}/versions`, { tag: 'v1.0.0', autoIndex: false })).status).toBe(201);
  });

  it('an embedding API key is sealed when written', async () => {
    const res = await api(stack, 'PUT', '/api/v1/settings/embedding', {
      profile: { id: 'hosted', provider: 'remote-compatible', model: 'm', config: { baseUrl: 'https://embeddings.example.com/v1', apiKey: 'sk-written-key-0004' } },
    });
    expect(res.status).toBe(200);
    expect(await dump()).not.toContain('sk-written-key-0004');
  });

  it('the key file: 32 random bytes, mode 0600, generated once', async () => {
    const file = path.join(stack.dataDir, SECRETS_FILE);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64')).toHaveLength(32);
  });

  it("plain rows of an earlier version are sealed at start, once, and still work", async () => {
    const em = stack.orm.em.fork();
    await em.execute(
      `insert into library (id, title, source, source_url, git_host_token, state, created_at, updated_at) values ('/acme/old', 'old', 'git-host', ?, ?, 'pending', now(), now())`,
      [`${host.url}/acme/old.git`, OLD_TOKEN],
    );
    await em.execute(
      `insert into embedding_profile (id, name, provider, model, is_default, enabled, config, created_at, updated_at) values ('old', 'old', 'remote-compatible', 'm', false, true, ?, now(), now())`,
      [JSON.stringify({ baseUrl: 'https://old.example.com/v1', apiKey: OLD_KEY })],
    );
    // A process starting on this database (sharing DATA_DIR, where the key is) seals them.
    const next = await startTestStack({ api: false, queues: [], env: { DATABASE_URL: stack.databaseUrl, DATA_DIR: stack.dataDir, SECRETS_KEY: '' } });
    await next.stop();
    expect(await dump()).not.toContain(OLD_TOKEN);
    expect(await dump()).not.toContain(OLD_KEY);
    const [lib] = await rows(`select git_host_token from library where id = '/acme/old'`);
    const [profile] = await rows(`select config->>'apiKey' as key from embedding_profile where id = 'old'`);
    const box = secretBox(stack.config);
    expect(box.open(lib!.git_host_token!, gitHostTokenContext('/acme/old'))).toBe(OLD_TOKEN);
    expect(box.open(profile!.key!, apiKeyContext('old', 'https://old.example.com/v1'))).toBe(OLD_KEY);
    // Idempotent, and racing processes seal each value once.
    const log = createLogger('silent');
    expect(await Promise.all([sealPlainSecrets(stack.orm, stack.config, log), sealPlainSecrets(stack.orm, stack.config, log)])).toEqual([0, 0]);
    await em.execute(`update library set git_host_token = ? where id = '/acme/old'`, [TOKEN]);
    const counts = await Promise.all([sealPlainSecrets(stack.orm, stack.config, log), sealPlainSecrets(stack.orm, stack.config, log)]);
    expect(counts[0]! + counts[1]!).toBe(1);
    const [resealed] = await rows(`select git_host_token from library where id = '/acme/old'`);
    expect(box.open(resealed!.git_host_token!, gitHostTokenContext('/acme/old'))).toBe(TOKEN);
    // The migrated token is the one git uses.
    const job = await api(stack, 'POST', `/api/v1/libs/${enc('/acme/old')}/index`);
    expect((await waitForJob(stack, job.body.job.id)).status).toBe('done');
  });

  it('opens only with its key and for its own record; the plain value stays redacted', async () => {
    const [row] = await rows(`select git_host_token from library where id = '/acme/gadgets'`);
    const sealed = row!.git_host_token!;
    const other = secretBox(loadConfig({ DATA_DIR: tmp, SECRETS_KEY: randomBytes(32).toString('base64') }));
    expect(() => other.open(sealed, gitHostTokenContext('/acme/gadgets'))).toThrow(/sealed with another key .*SECRETS_KEY or DATA_DIR\/secrets\.key, or enter the secret again/);
    expect(() => secretBox(stack.config).open(sealed, gitHostTokenContext('/acme/old'))).toThrow(/does not open here/);
    // One character of the ciphertext changed (the one before the last: its six bits are all data), never to itself.
    const tampered = sealed.slice(0, -2) + (sealed.at(-2) === 'A' ? 'B' : 'A') + sealed.slice(-1);
    expect(tampered).not.toBe(sealed);
    expect(() => secretBox(stack.config).open(tampered, gitHostTokenContext('/acme/gadgets'))).toThrow(/does not open here/);
    expect(redact(`git said ${TOKEN}`)).toBe('git said ***');
    // A process without the key file never makes one up to open with.
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-secrets-none-'));
    try {
      expect(() => secretBox(loadConfig({ DATA_DIR: empty })).open(sealed, gitHostTokenContext('/acme/gadgets'))).toThrow(/secrets\.key is missing; set SECRETS_KEY or restore the file/);
      expect(fs.existsSync(path.join(empty, SECRETS_FILE))).toBe(false);
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }

    // A process with another key says what to do instead of failing obscurely.
    const stranger = await startTestStack({ queues: [], env: { DATABASE_URL: stack.databaseUrl, SECRETS_KEY: randomBytes(32).toString('hex') } });
    try {
      const res = await api(stranger, 'POST', `/api/v1/libs/${enc('/acme/gadgets')}/versions`, { tag: 'v2.0.0' });
      expectError(res, 400, 'REPOSITORY_UNREACHABLE');
      expect(res.body.error).toMatch(/sealed with another key/);
    } finally {
      await stranger.stop();
    }
  });

  it('SECRETS_KEY: hex or base64, 32 bytes; no key file then', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-secrets-env-'));
    try {
      const key = randomBytes(32);
      for (const raw of [key.toString('hex'), key.toString('base64'), key.toString('base64url')]) {
        const box = secretBox(loadConfig({ DATA_DIR: dir, SECRETS_KEY: raw }));
        expect(box.open(box.seal('a-secret-value', 'ctx'), 'ctx')).toBe('a-secret-value');
      }
      expect(fs.existsSync(path.join(dir, SECRETS_FILE))).toBe(false);
      for (const bad of ['short', randomBytes(16).toString('hex'), randomBytes(31).toString('base64')]) {
        expect(() => loadConfig({ SECRETS_KEY: bad }), bad).toThrow(/SECRETS_KEY must be 32 random bytes/);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
