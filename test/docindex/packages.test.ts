import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgetRegistryEndpoints } from '../../docindex/sources/registries/index.js';
import { ensureRefreshSchedule, refreshScheduleId } from '../../docindex/refresh/schedules.js';
import { ensureSchedule } from '../../jobs/schedules.js';
import { createLogger } from '../../core/log.js';
import { FakeRegistries } from '../../fakes/fake-registries.js';
import { type GitHost, startGitHost, TestRepo } from '../support/git.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { tgz } from '../support/tar.js';
import { until } from '../support/until.js';
import { api, enc, expectError, snippetsOf, waitForJob } from './helpers.js';

/**
 * Packages of a registry as libraries, end to end: npm, PyPI and crates fakes on 127.0.0.1 that speak each
 * registry's protocol, reached through each ecosystem's own configuration (npm's registry setting, PIP_INDEX_URL, a
 * CARGO_HOME), and a public git host for a package's repository.
 */
let stack: TestStack;
let reg: FakeRegistries;
let host: GitHost;
let tmp: string;
let gadgetCommit: string;
const saved = { ...process.env };
const log = createLogger('silent');

const DOCS = {
  'README.md': '# widget-docs\n\nWidgets render themselves into a page when they are mounted.\n',
  'docs/guide.md': '# Guide\n\n## Mounting\n\nCall `mountWidget(element)` to show a widget inside an element of the page.\n\n```js\nmountWidget(document.body)\n```\n',
  'index.js': 'module.exports = function mountWidget() {}\n',
  'CHANGELOG.md': '# Changelog\n\n- 1.0.0: first\n',
};

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-packages-'));
  reg = await FakeRegistries.start();
  Object.assign(process.env, reg.npmEnv(), reg.pipEnv(), { CARGO_HOME: reg.cargoHome() });
  forgetRegistryEndpoints();
  await reg.publish('npm', 'widget-docs', '0.9.0', { ...DOCS, 'docs/guide.md': '# Guide\n\n## Attaching\n\nThe old way to show a widget: call `attachWidget(element)` with the element it goes into, and it renders at once.\n' }, { description: 'Widgets for pages' });
  await reg.publish('npm', 'widget-docs', '1.0.0', DOCS, { description: 'Widgets for pages' });
  // A package whose documentation is only in its repository, at the commit it was published from.
  const repo = new TestRepo(path.join(tmp, 'gadget'));
  repo.write({ 'README.md': '# gadget-lib\n\nGadgets.\n', 'docs/repo-only.md': '# Sprockets\n\nSprockets turn gadgets at the published commit.\n' });
  gadgetCommit = repo.commit('published');
  repo.write({ 'docs/repo-only.md': '# Sprockets\n\nA later commit nobody published.\n' });
  repo.commit('later');
  repo.publish(path.join(tmp, 'host'), 'acme', 'gadget-lib');
  host = await startGitHost(path.join(tmp, 'host'), null);
  await reg.publish('npm', 'gadget-lib', '2.0.0', { 'README.md': '# gadget-lib\n' }, { repository: { type: 'git', url: `git+${host.url}/acme/gadget-lib.git` }, gitHead: gadgetCommit });
  await reg.publish('pypi', 'Snake_Tools', '2.0.0', { 'README.md': '# Snake Tools\n\nCoil a snake with `coil(snake, turns)`: the snake is wound around itself the given number of turns, then kept still.\n', 'snake_tools/__init__.py': '' });
  await reg.publish('crates', 'crab-kit', '0.3.0', {
    'README.md': '# crab-kit\n\nCrabs walk sideways.\n',
    'src/lib.rs': '//! Crab kit: walking crabs.\n\n/// Walks the crab `steps` steps sideways and answers where it ended.\npub fn walk_sideways(steps: u32) -> u32 { steps }\n',
  });
  stack = await startTestStack({ env: { INDEX_ON_DEMAND: 'true', INDEX_ON_DEMAND_WAIT_MS: '30000', INDEX_VERSION_POLICY: 'latest' } });
});
afterAll(async () => {
  await stack?.stop();
  await reg?.close();
  await host?.close();
  process.env = saved;
  forgetRegistryEndpoints();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const files = async (lib: string, version: string | null = null) => [...new Set((await snippetsOf(stack, lib, version)).map((s) => s.file_path))].sort();
const libraryRow = async (id: string) =>
  ((await stack.orm.em.fork().execute('select latest_version, last_commit, repository_url, on_demand, state from library where id = ?', [id])) as {
    latest_version: string | null;
    last_commit: string | null;
    repository_url: string | null;
    on_demand: boolean;
    state: string;
  }[])[0];

async function register(source: string, sourceUrl: string) {
  const res = await api(stack, 'POST', '/api/v1/libs', { source, sourceUrl });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const job = await waitForJob(stack, res.body.job.id);
  expect(job.status, JSON.stringify(job)).toBe('done');
  return res.body.library;
}

describe('a package library', () => {
  it('is indexed from the documentation in its archive when it names no repository', async () => {
    const lib = await register('npm', 'widget-docs');
    expect(lib).toMatchObject({ id: '/npm/widget-docs', title: 'widget-docs', description: 'Widgets for pages', source: 'npm', sourceUrl: 'widget-docs', onDemand: false });
    // Documentation only: no source file, no changelog.
    expect(await files('/npm/widget-docs')).toEqual(['README.md', 'docs/guide.md']);
    expect(await libraryRow('/npm/widget-docs')).toMatchObject({ latest_version: '1.0.0', last_commit: '1.0.0' });
    const ctx = await api(stack, 'GET', `/api/v1/context?${new URLSearchParams({ libraryId: '/npm/widget-docs', query: 'mountWidget' })}`);
    expect(ctx.body.snippets[0].content).toContain('mountWidget');
    expect(ctx.body.repository).toMatchObject({ indexedVersion: '1.0.0', indexedAt: expect.any(String) });
  });

  it('is read from its repository at the commit it was published from', async () => {
    await register('npm', 'gadget-lib');
    const snippets = await snippetsOf(stack, '/npm/gadget-lib');
    expect(snippets.map((s) => s.content).join('\n')).toContain('at the published commit');
    expect(snippets.map((s) => s.content).join('\n')).not.toContain('nobody published');
    expect(await libraryRow('/npm/gadget-lib')).toMatchObject({ latest_version: '2.0.0', last_commit: gadgetCommit, repository_url: `${host.url}/acme/gadget-lib` });
  });

  it('comes from PyPI and crates alike, a crate with its doc comments', async () => {
    await register('pypi', 'snake-tools');
    expect(await files('/pypi/snake-tools')).toEqual(['README.md']);
    await register('crates', 'crab-kit');
    const crab = await snippetsOf(stack, '/crates/crab-kit');
    expect(crab.map((s) => s.content).join('\n')).toContain('Walks the crab');
  });

  it('refuses what no registry has, and names that are no package name', async () => {
    expectError(await api(stack, 'POST', '/api/v1/libs', { source: 'npm', sourceUrl: 'no-such-package' }), 400, 'PACKAGE_NOT_FOUND');
    expectError(await api(stack, 'POST', '/api/v1/libs', { source: 'npm', sourceUrl: '../../etc/passwd' }), 400, 'INVALID_PACKAGE_NAME');
    expectError(await api(stack, 'POST', '/api/v1/libs', { source: 'pypi', sourceUrl: 'bad\u0000name' }), 400, 'INVALID_CHARACTER');
    expectError(await api(stack, 'POST', `/api/v1/libs/${enc('/npm/widget-docs')}/versions`, { tag: '9.9.9' }), 400, 'VERSION_NOT_FOUND');
  });

  it('indexes a published version as a version of its library', async () => {
    const res = await api(stack, 'POST', `/api/v1/libs/${enc('/npm/widget-docs')}/versions`, { tag: '0.9.0' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect((await waitForJob(stack, res.body.job.id)).status).toBe('done');
    const old = await snippetsOf(stack, '/npm/widget-docs', '/npm/widget-docs/0.9.0');
    expect(old.map((s) => s.content).join('\n')).toContain('attachWidget');
  });

  it('picks up a new version on its schedule, with nobody asking', async () => {
    await reg.publish('npm', 'widget-docs', '1.1.0', { ...DOCS, 'docs/guide.md': '# Guide\n\nNew in 1.1: `mountWidget(element, { lazy: true })` waits until it is seen.\n' });
    const deps = { config: stack.config, orm: stack.orm, temporal: stack.temporal, jobs: stack.jobs, log };
    const handle = stack.temporal.schedule.getHandle(refreshScheduleId(stack.config, '/npm/widget-docs'));
    const before = (await handle.describe()).info.numActionsTaken;
    // The library's schedule, its interval shortened below the settings' minute for the test.
    await ensureSchedule(stack.temporal, {
      scheduleId: refreshScheduleId(stack.config, '/npm/widget-docs'),
      every: 2000,
      workflowType: 'refreshLibraryWorkflow',
      taskQueue: `${stack.config.taskQueuePrefix}indexing`,
      args: [{ libraryId: '/npm/widget-docs' }],
    });
    await until(() => handle.describe(), (d) => d.info.numActionsTaken > before, { timeoutMs: 30_000, what: 'a refresh run' });
    await ensureRefreshSchedule(deps, { id: '/npm/widget-docs', refreshEvery: null });
    await until(() => libraryRow('/npm/widget-docs'), (r) => r?.latest_version === '1.1.0' && r.state === 'indexed', { timeoutMs: 60_000, what: 'the new version indexed' });
    const text = (await snippetsOf(stack, '/npm/widget-docs')).map((s) => s.content).join('\n');
    expect(text).toContain('lazy: true');
  });

  it('registers the exact versions a lockfile names, and says which are ready, queued or unknown', async () => {
    const lock = {
      name: 'app',
      lockfileVersion: 3,
      packages: {
        '': { name: 'app', dependencies: { 'widget-docs': '^1.0.0', 'gadget-lib': '2.0.0', 'no-such-package': '1.0.0' }, devDependencies: { 'crab-tools': '1.0.0' } },
        'node_modules/widget-docs': { version: '1.0.0' },
        'node_modules/gadget-lib': { version: '2.0.0' },
        'node_modules/no-such-package': { version: '1.0.0' },
        'node_modules/crab-tools': { version: '1.0.0', dev: true },
      },
    };
    const res = await api(stack, 'POST', '/api/v1/libs/from-lockfile', { fileName: 'package-lock.json', content: JSON.stringify(lock) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ format: 'package-lock.json', ecosystem: 'npm', summary: { ready: 1, queued: 1, unknown: 1 } });
    const by = Object.fromEntries(res.body.dependencies.map((d: { name: string }) => [d.name, d]));
    expect(by['gadget-lib']).toMatchObject({ status: 'ready', libraryId: '/npm/gadget-lib', version: '2.0.0' });
    // 1.0.0 is no longer the latest: it becomes a version of its own, indexed now.
    expect(by['widget-docs']).toMatchObject({ status: 'queued', libraryId: '/npm/widget-docs/1.0.0' });
    expect(by['no-such-package']).toMatchObject({ status: 'unknown', libraryId: null });
    expect(by['crab-tools']).toBeUndefined(); // development dependencies only when asked
    expectError(await api(stack, 'POST', '/api/v1/libs/from-lockfile', { fileName: 'Gemfile.lock', content: 'GEM\n' }), 400, 'LOCKFILE_UNSUPPORTED');
    expectError(await api(stack, 'POST', '/api/v1/libs/from-lockfile', { fileName: 'package-lock.json', content: '{"lockfileVersion": 3, "packages": ' }), 400, 'LOCKFILE_INVALID');
  });

  it('fails a job with a clear error for an archive that is a bomb, and writes nothing outside its folder for one with escaping paths', async () => {
    const escape = tgz([
      { path: 'package/README.md', body: '# evil-paths\n\nOnly this file is documentation: every other entry of the archive tries to leave its folder.\n' },
      { path: 'package/../../escaped.md', body: 'out' },
      { path: '/tmp/absolute-escape.md', body: 'out' },
      { path: 'package/link.md', type: 'SymbolicLink', linkpath: '/etc/passwd' },
    ]);
    await reg.publish('npm', 'evil-paths', '1.0.0', {}, { archive: escape });
    await register('npm', 'evil-paths');
    expect(await files('/npm/evil-paths')).toEqual(['README.md']);
    expect(fs.existsSync(path.join(stack.dataDir, 'work', 'escaped.md'))).toBe(false);
    expect(fs.existsSync('/tmp/absolute-escape.md')).toBe(false);
    // Far more bytes once inflated than the archive's size allows.
    const bomb = tgz([{ path: 'package/README.md', body: '# bomb\n' }, { path: 'package/docs/zeros.md', body: Buffer.alloc(300 * 1024 * 1024) }]);
    await reg.publish('npm', 'zip-bomb', '1.0.0', {}, { archive: bomb });
    const res = await api(stack, 'POST', '/api/v1/libs', { source: 'npm', sourceUrl: 'zip-bomb' });
    const job = await waitForJob(stack, res.body.job.id);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/decompresses \d+ times/);
  });

  it('never downloads an archive the metadata points at an internal address', async () => {
    await reg.publish('npm', 'inward', '1.0.0', { 'README.md': '# inward\n' }, { archiveUrl: 'http://169.254.169.254/latest/inward.tgz' });
    const res = await api(stack, 'POST', '/api/v1/libs', { source: 'npm', sourceUrl: 'inward' });
    const job = await waitForJob(stack, res.body.job.id);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/refused/i);
  });
});

describe('on demand', () => {
  let client: Client;
  beforeAll(async () => {
    await reg.publish('npm', 'lazy-docs', '3.1.0', { 'README.md': '# lazy-docs\n\nLoad things lazily with `lazyLoad(thing)`: nothing is read until the thing is first used, then it is kept.\n' }, { description: 'Lazy loading' });
    await reg.publish('pypi', 'coil-py', '1.0.0', { 'README.md': '# coil-py\n\nCoiling in Python: `coil.wind(rope)` winds a rope around its drum until the drum is full.\n' });
    client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`)));
  });
  afterAll(async () => {
    await client?.close();
  });
  const text = (r: Awaited<ReturnType<Client["callTool"]>>) => (r.content as { text: string }[])[0]!.text;

  it('registers a package nobody registered on a miss, and query-docs waits for its first index', async () => {
    const resolved = await client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'lazy-docs', query: 'lazy loading in javascript' } });
    expect(text(resolved)).toContain('- Context7-compatible library ID: /npm/lazy-docs');
    expect(text(resolved)).toMatch(/- State: being indexed/);
    expect(await libraryRow('/npm/lazy-docs')).toMatchObject({ on_demand: true });
    const docs = await client.callTool({ name: 'query-docs', arguments: { libraryId: '/npm/lazy-docs', query: 'lazyLoad' } }, undefined, { timeout: 60_000 });
    expect(docs.isError, text(docs)).toBeFalsy();
    expect(text(docs)).toContain('lazyLoad(thing)');
    expect(text(docs)).toMatch(/\/npm\/lazy-docs: Indexed: 3\.1\.0, \d{4}-\d\d-\d\d/);
  });

  it('finds a Python package for a Python question, through v2 search too', async () => {
    const res = await api(stack, 'GET', `/api/v2/libs/search?${new URLSearchParams({ libraryName: 'coil-py', query: 'how do I wind a rope in python' })}`);
    expect(res.status).toBe(200);
    expect(res.body.results[0]).toMatchObject({ id: '/pypi/coil-py', source: 'pypi' });
    expect(['initial', 'processing', 'finalized']).toContain(res.body.results[0].state);
  });

  it('indexes a version asked for by its id, and answers 503 with progress while it cannot wait longer', async () => {
    await reg.publish('npm', 'lazy-docs', '3.0.0', { 'README.md': '# lazy-docs\n\nIn 3.0 things were loaded with `lazyLoadOld(thing)`, which loaded them on the first use and kept them.\n' });
    const v1 = await api(stack, 'GET', `/api/v1/context?${new URLSearchParams({ libraryId: '/npm/lazy-docs/3.0.0', query: 'lazyLoadOld' })}`);
    // The REST answer does not wait: the version is registered and being indexed.
    expectError(v1, 503, 'INDEXING_IN_PROGRESS');
    expect(v1.body.error).toMatch(/being indexed.*try again in about \d+ seconds/);
    const docs = await client.callTool({ name: 'query-docs', arguments: { libraryId: '/npm/lazy-docs/3.0.0', query: 'lazyLoadOld' } }, undefined, { timeout: 60_000 });
    expect(text(docs)).toContain('lazyLoadOld(thing)');
    // A version no registry has stays a 404.
    expectError(await api(stack, 'GET', `/api/v1/context?${new URLSearchParams({ libraryId: '/npm/lazy-docs/7.7.7', query: 'x' })}`), 404, 'VERSION_NOT_FOUND');
  });

  it('answers a miss as a miss when the registry hangs, within its bound', async () => {
    reg.hang('/npm/hangs-forever');
    const t0 = Date.now();
    const res = await client.callTool({ name: 'resolve-library-id', arguments: { libraryName: 'hangs-forever', query: 'x' } }, undefined, { timeout: 60_000 });
    expect(text(res)).toBe('No libraries found matching the provided name.');
    expect(Date.now() - t0).toBeLessThan(30_000);
    reg.clearFaults();
  });

  it('registers a project dependency from the MCP tool', async () => {
    const r = await client.callTool({ name: 'index-dependencies', arguments: { fileName: 'requirements.txt', content: 'coil-py==1.0.0\nnot-on-pypi==2.0\n' } });
    expect(text(r)).toMatch(/requirements\.txt \(pypi\): \d ready, \d being indexed, 1 unknown/);
    expect(text(r)).toContain('- coil-py 1.0.0:');
  });
});
