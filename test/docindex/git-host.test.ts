import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GitHost, startGitHost, TestRepo } from '../support/git.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { api, enc, expectError, snippetsOf, waitForJob } from './helpers.js';

const TOKEN = 'ghp_s3cretTokenFor_gristmill_tests';
let stack: TestStack;
let host: GitHost;
let tmp: string;
let repo: TestRepo;
let remote: string;
const output: string[] = [];
let restoreOutput: () => void;

beforeAll(async () => {
  // Everything the stack logs, to prove the token never appears in a log line.
  const write = process.stdout.write.bind(process.stdout);
  const writeErr = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => (output.push(String(chunk)), write(chunk, ...rest))) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => (output.push(String(chunk)), writeErr(chunk, ...rest))) as typeof process.stderr.write;
  restoreOutput = () => {
    process.stdout.write = write;
    process.stderr.write = writeErr;
  };

  stack = await startTestStack({ env: { LOG_LEVEL: 'debug' } });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-githost-'));
  repo = new TestRepo(path.join(tmp, 'work'));
  repo.write({ 'README.md': '# Gadgets\n\nGadgets are small devices with one clear purpose each.\n\n```js\ngadget.start()\n```\n' });
  repo.commit('first');
  repo.tag('v2.0.0', true);
  repo.write({ 'docs/usage.md': '# Usage\n\nStart a gadget, then stop it when you are done with it.\n' });
  repo.commit('second');
  repo.publish(path.join(tmp, 'host'), 'acme', 'gadgets');
  host = await startGitHost(path.join(tmp, 'host'), TOKEN);
  remote = `${host.url}/acme/gadgets.git`;
});
afterAll(async () => {
  restoreOutput?.();
  await stack?.stop();
  await host?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const responses: string[] = [];
async function call(method: string, p: string, body?: unknown) {
  const res = await api(stack, method, p, body);
  responses.push(JSON.stringify(res.body));
  return res;
}

describe('a git-host library', () => {
  it('refuses a remote it cannot read, without echoing the token', async () => {
    expectError(await call('POST', '/api/v1/libs', { source: 'git-host', sourceUrl: remote }), 400, 'REPOSITORY_UNREACHABLE');
    const wrong = await call('POST', '/api/v1/libs', { source: 'git-host', sourceUrl: remote, gitHostToken: 'wrong-token-12345678' });
    expectError(wrong, 400, 'REPOSITORY_UNREACHABLE');
    expect(JSON.stringify(wrong.body)).not.toContain('wrong-token-12345678');
  });

  it('is cloned with its token and indexed', async () => {
    const res = await call('POST', '/api/v1/libs', { source: 'git-host', sourceUrl: remote, gitHostToken: TOKEN });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.library).toMatchObject({ id: '/acme/gadgets', title: 'gadgets', source: 'git-host', sourceUrl: remote, hasGitHostToken: true });
    const job = await waitForJob(stack, res.body.job.id);
    expect(job.status, JSON.stringify(job)).toBe('done');
    const snippets = await snippetsOf(stack, '/acme/gadgets');
    expect(snippets.map((s) => s.file_path)).toEqual(expect.arrayContaining(['README.md', 'docs/usage.md']));
    const [lib] = (await stack.orm.em.fork().execute('select last_commit from library where id = ?', ['/acme/gadgets'])) as { last_commit: string }[];
    expect(lib!.last_commit).toMatch(/^[0-9a-f]{40}$/);
  });

  it('checks a tag against the remote before indexing it, and stores its commit', async () => {
    expectError(await call('POST', `/api/v1/libs/${enc('/acme/gadgets')}/versions`, { tag: 'v9.0.0' }), 400, 'TAG_NOT_FOUND');
    const res = await call('POST', `/api/v1/libs/${enc('/acme/gadgets')}/versions`, { tag: 'v2.0.0' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const job = await waitForJob(stack, res.body.job.id);
    expect(job.status, JSON.stringify(job)).toBe('done');
    const files = (await snippetsOf(stack, '/acme/gadgets', '/acme/gadgets/v2.0.0')).map((s) => s.file_path);
    expect(files).toContain('README.md');
    expect(files).not.toContain('docs/usage.md'); // not there yet at v2.0.0
    const { versions } = (await call('GET', `/api/v1/libs/${enc('/acme/gadgets')}/versions`)).body;
    expect(versions[0].commitHash).toMatch(/^[0-9a-f]{40}$/);
  });

  it('discovers no tags for git-host libraries', async () => {
    expect((await call('POST', `/api/v1/libs/${enc('/acme/gadgets')}/versions/discover`)).body).toEqual({ tags: [] });
  });

  it('fails a job with a clear error when the token stops working, and works again with a new one', async () => {
    await call('PATCH', `/api/v1/libs/${enc('/acme/gadgets')}`, { gitHostToken: 'revoked-token-87654321' });
    const res = await call('POST', `/api/v1/libs/${enc('/acme/gadgets')}/index`);
    const job = await waitForJob(stack, res.body.job.id, 90_000);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/Authentication failed|could not read|401/i);
    expect(job.error).not.toContain('revoked-token-87654321');
    // Earlier snippets are still served: the library stays indexed.
    expect((await call('GET', `/api/v1/libs/${enc('/acme/gadgets')}`)).body.state).toBe('indexed');

    await call('PATCH', `/api/v1/libs/${enc('/acme/gadgets')}`, { gitHostToken: TOKEN });
    const again = await call('POST', `/api/v1/libs/${enc('/acme/gadgets')}/index`);
    expect((await waitForJob(stack, again.body.job.id)).status).toBe('done');
  });

  it('never lets the token into a response, a log line, a job error, stageDetail or an event', async () => {
    for (const r of responses) expect(r).not.toContain(TOKEN);
    const em = stack.orm.em.fork();
    const jobs = await em.execute(`select error, stage_detail, detail::text as detail from job`);
    expect(JSON.stringify(jobs)).not.toContain(TOKEN);
    const events = await em.execute(`select data::text as data from job_event`);
    expect(events.length).toBeGreaterThan(0);
    expect(JSON.stringify(events)).not.toContain(TOKEN);
    const logs = output.join('');
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain(TOKEN);
    expect(logs).not.toContain(Buffer.from(`x-access-token:${TOKEN}`).toString('base64'));
    // And it was really used: the host saw authorized requests.
    expect(host.requests.some((r) => r.authorized)).toBe(true);
  });
});

