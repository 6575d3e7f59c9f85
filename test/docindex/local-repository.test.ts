import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { headCommit, isRepository, localTags, mayBeInRepository, originUrl } from '../../docindex/git.js';
import { git, TestRepo } from '../support/git.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-local-repo-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe("a local folder's repository", () => {
  it('is none for a folder with no .git or HEAD in it or above it, without asking git', async () => {
    const plain = path.join(root, 'plain', 'docs');
    fs.mkdirSync(plain, { recursive: true });
    expect(await mayBeInRepository(plain)).toBe(false);
    expect(await headCommit(plain)).toBeNull();
    expect(await isRepository(plain)).toBe(false);
    expect(await localTags(plain)).toEqual([]);
    expect(await originUrl(plain)).toBeUndefined();
  });

  it("is found from a folder inside a repository's work tree", async () => {
    const repo = new TestRepo(path.join(root, 'work')).write({ 'docs/guide/a.md': '# A' });
    const commit = repo.commit('first');
    repo.tag('v1.0.0');
    git(repo.dir, 'remote', 'add', 'origin', 'https://git.example.test/o/r.git');
    const inside = path.join(repo.dir, 'docs', 'guide');
    expect(await mayBeInRepository(inside)).toBe(true);
    expect(await headCommit(inside)).toBe(commit);
    expect(await isRepository(inside)).toBe(true);
    expect(await localTags(inside)).toEqual([{ tag: 'v1.0.0', commit }]);
    expect(await originUrl(inside)).toBe('https://git.example.test/o/r.git');
  });

  it('is found through a symbolic link to a folder inside a repository', async () => {
    const repo = new TestRepo(path.join(root, 'linked-to')).write({ 'docs/a.md': '# A' });
    const commit = repo.commit('first');
    const link = path.join(root, 'plain-links', 'docs');
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(path.join(repo.dir, 'docs'), link);
    expect(await mayBeInRepository(link)).toBe(true);
    expect(await headCommit(link)).toBe(commit);
  });

  it('is found from a linked work tree, whose .git is a file', async () => {
    const repo = new TestRepo(path.join(root, 'main-tree')).write({ 'a.md': '# A' });
    const first = repo.commit('first');
    repo.write({ 'b.md': '# B' }).commit('second');
    const linked = path.join(root, 'linked-tree');
    git(repo.dir, 'worktree', 'add', '--quiet', '--detach', linked, first);
    expect(fs.statSync(path.join(linked, '.git')).isFile()).toBe(true);
    expect(await headCommit(linked)).toBe(first);
  });

  it('is found in a bare repository, which has no .git', async () => {
    const repo = new TestRepo(path.join(root, 'source')).write({ 'a.md': '# A' });
    const commit = repo.commit('first');
    const bare = repo.publish(path.join(root, 'host'), 'o', 'r');
    expect(await mayBeInRepository(bare)).toBe(true);
    expect(await headCommit(bare)).toBe(commit);
  });
});
