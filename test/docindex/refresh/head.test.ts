import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeOutbound } from '../../../outbound/guard.js';
import { secretBox } from '../../../core/secrets.js';
import { gitHostTokenContext, type Library } from '../../../docindex/entities/library.js';
import { sourceHead } from '../../../docindex/refresh/head.js';
import { readConfig } from '../../../runtime/config.js';
import { type GitHost, git, startGitHost, TestRepo } from '../../support/git.js';
import { createLogger } from '../../../core/log.js';
import { forgetRegistryEndpoints } from '../../../docindex/sources/registries/index.js';
import { FakeRegistries } from '../../../fakes/fake-registries.js';

const log = createLogger('silent');

const TOKEN = 'head-test-token-5678';
let tmp: string;
let repo: TestRepo;
let host: GitHost;
let config: ReturnType<typeof readConfig>['config'];
let strict: ReturnType<typeof readConfig>['config'];

beforeAll(async () => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-head-')));
  repo = new TestRepo(path.join(tmp, 'work'));
  repo.write({ 'README.md': '# Head\n' });
  repo.commit('first');
  repo.tag('v1.0.0', true);
  repo.commit('second');
  repo.tag('v1.1.0');
  git(repo.dir, 'branch', 'stable', 'v1.0.0');
  repo.publish(path.join(tmp, 'host'), 'acme', 'head');
  host = await startGitHost(path.join(tmp, 'host'), TOKEN);
  config = readConfig({ DATA_DIR: path.join(tmp, 'data'), LOCAL_SOURCE_ROOTS: tmp, OUTBOUND_ALLOW: '127.0.0.1' }).config;
  strict = readConfig({ DATA_DIR: path.join(tmp, 'data'), LOCAL_SOURCE_ROOTS: tmp }).config;
});
afterAll(async () => {
  await host?.close();
  await closeOutbound(config);
  await closeOutbound(strict);
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A library as stored: a git host's token sealed for it, as the API stores it. */
const library = (source: Library['source'], sourceUrl: string, branch: string | null = null) =>
  ({
    id: '/acme/head',
    source,
    sourceUrl,
    branch,
    gitHostToken: source === 'git-host' ? secretBox(config).seal(TOKEN, gitHostTokenContext('/acme/head')) : null,
  }) as Library;

describe('sourceHead', () => {
  it("reads a git host's branch head and tags with one ls-remote, annotated tags peeled", async () => {
    const head = await sourceHead({ config, log }, library('git-host', `${host.url}/acme/head.git`), undefined);
    expect(head.revision).toBe(git(repo.dir, 'rev-parse', 'HEAD'));
    expect(head.versions).toEqual(
      expect.arrayContaining([
        { version: 'v1.0.0', commit: git(repo.dir, 'rev-parse', 'v1.0.0^{commit}'), yanked: false, publishedAt: null },
        { version: 'v1.1.0', commit: git(repo.dir, 'rev-parse', 'v1.1.0'), yanked: false, publishedAt: null },
      ]),
    );
    expect(head.versions).toHaveLength(2);
  });

  it("reads the library's own branch, and says when it does not exist", async () => {
    const stable = await sourceHead({ config, log }, library('git-host', `${host.url}/acme/head.git`, 'stable'));
    expect(stable.revision).toBe(git(repo.dir, 'rev-parse', 'v1.0.0^{commit}'));
    await expect(sourceHead({ config, log }, library('git-host', `${host.url}/acme/head.git`, 'gone'))).rejects.toMatchObject({ code: 'BRANCH_NOT_FOUND' });
  });

  it('asks a git host only where the outbound guard allows', async () => {
    const before = host.requests.length;
    await expect(sourceHead({ config: strict, log }, library('git-host', `${host.url}/acme/head.git`))).rejects.toMatchObject({ code: 'ADDRESS_NOT_ALLOWED' });
    expect(host.requests.length).toBe(before);
  });

  it("reads a local repository's head and tags, and a plain folder as always changed", async () => {
    const local = await sourceHead({ config, log }, library('local', repo.dir));
    expect(local.revision).toBe(git(repo.dir, 'rev-parse', 'HEAD'));
    expect(local.versions.map((v) => v.version).sort()).toEqual(['v1.0.0', 'v1.1.0']);
    const plain = path.join(tmp, 'plain');
    fs.mkdirSync(plain);
    expect(await sourceHead({ config, log }, library('local', plain))).toEqual({ revision: null, versions: [] });
    await expect(sourceHead({ config, log }, library('local', '/etc'))).rejects.toMatchObject({ code: 'LIBRARY_FOLDER_UNREADABLE' });
  });

  it("reads a package's latest version and its versions from its registry, and a site as always read again", async () => {
    const reg = await FakeRegistries.start();
    const saved = { ...process.env };
    try {
      Object.assign(process.env, reg.npmEnv());
      forgetRegistryEndpoints();
      await reg.publish('npm', 'head-pkg', '1.0.0', { 'README.md': '# head-pkg\n' });
      await reg.publish('npm', 'head-pkg', '1.1.0', { 'README.md': '# head-pkg\n' });
      await reg.publish('npm', 'head-pkg', '2.0.0-beta.1', { 'README.md': '# head-pkg\n' });
      const head = await sourceHead({ config, log }, library('npm', 'head-pkg'));
      // The registry's latest is what the default scope should hold; a pre-release is offered, never the latest.
      expect(head.revision).toBe('1.1.0');
      expect(head.versions.map((v) => v.version).sort()).toEqual(['1.0.0', '1.1.0', '2.0.0-beta.1']);
      expect(head.versions.every((v) => v.publishedAt !== null && v.yanked === false)).toBe(true);
      // A registry at an address the guard refuses is never asked.
      const before = reg.requests.length;
      await expect(sourceHead({ config: strict, log }, library('npm', 'head-pkg'))).rejects.toMatchObject({ code: 'ADDRESS_NOT_ALLOWED' });
      expect(reg.requests.length).toBe(before);
    } finally {
      process.env = saved;
      forgetRegistryEndpoints();
      await reg.close();
    }
    expect(await sourceHead({ config, log }, library('website', 'https://docs.example.com/'))).toEqual({ revision: null, versions: [] });
  });
});
