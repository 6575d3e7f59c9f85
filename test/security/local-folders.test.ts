import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.js';
import { Library } from '../../docindex/entities/library.js';
import { LocalFolders } from '../../docindex/local-folders.js';
import { api, enc, expectError, snippetsOf, waitForJob } from '../docindex/helpers.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * Local libraries and the folder browser stay inside LOCAL_SOURCE_ROOTS by real path, never reach credential folders
 * or DATA_DIR (before: with LOCAL_SOURCE_ROOTS unset anything could be registered and read back, and the browser
 * listed the whole disk, hidden folders included).
 */
let stack: TestStack;
let tmp: string;
let root: string;
let outside: string;
const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
};
const DOC = (what: string) => `# ${what}\n\nThis page explains ${what} in enough words to become a snippet of its own, with detail.\n`;

beforeAll(async () => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-folders-')));
  root = path.join(tmp, 'root');
  outside = path.join(tmp, 'outside');
  write(path.join(outside, 'secret.md'), DOC('the secret outside the roots'));
  write(path.join(root, 'project', 'README.md'), DOC('the project'));
  write(path.join(root, 'project', 'docs', 'guide.md'), DOC('the guide'));
  write(path.join(root, 'project', '.aws', 'notes.md'), DOC('aws credentials'));
  write(path.join(root, 'project', 'gristmill-data', 'transcripts', 'x.md'), DOC('someone else transcript'));
  write(path.join(root, '.ssh', 'keys', 'id.md'), DOC('a key'));
  write(path.join(root, '.config', 'gcloud', 'creds.md'), DOC('gcloud'));
  write(path.join(root, '.config', 'app', 'x.md'), DOC('app settings'));
  fs.mkdirSync(path.join(root, '.hidden-project'));
  fs.symlinkSync(outside, path.join(root, 'escape'));
  fs.symlinkSync('/etc', path.join(root, 'etc-link'));
  stack = await startTestStack({
    queues: ['indexing'],
    // DATA_DIR inside a registered folder: its files must never be indexed.
    env: { LOCAL_SOURCE_ROOTS: root, DATA_DIR: path.join(root, 'project', 'gristmill-data') },
  });
});
afterAll(async () => {
  await stack?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const register = (sourceUrl: string) => api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl, autoIndex: false });
const browse = (p?: string, showHidden = false) => api(stack, 'GET', `/api/v1/fs/browse?${p === undefined ? '' : `path=${enc(p)}&`}showHidden=${showHidden ? 1 : 0}`);

describe('registering a local library', () => {
  it('refuses folders outside the roots, symlinks leading out, credential folders and DATA_DIR', async () => {
    for (const p of ['/etc', '/', outside, path.join(root, 'escape'), path.join(root, 'etc-link'), path.join(root, 'project', '..', 'escape'), path.join(root, '.ssh'), path.join(root, '.ssh', 'keys'), path.join(root, '.config', 'gcloud'), path.join(root, 'project', 'gristmill-data'), tmp]) {
      expectError(await register(p), 400, 'SOURCE_NOT_ALLOWED');
    }
    expect(await stack.orm.em.fork().count(Library, {})).toBe(0);
  });

  it('stores the real path of an allowed folder', async () => {
    const res = await register(path.join(root, 'project', 'docs', '..'));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.library.sourceUrl).toBe(path.join(root, 'project'));
    await api(stack, 'DELETE', `/api/v1/libs/${enc(res.body.library.id)}`);
  });
});

describe('the folder browser', () => {
  it('starts at the first root and lists real folders only: no symlinks, no credential folders', async () => {
    const home = await browse();
    expect(home.status).toBe(200);
    expect(home.body.path).toBe(root);
    expect(home.body.parent).toBeNull();
    expect(home.body.directories.map((d: { name: string }) => d.name)).toEqual(['project']);
    const hidden = await browse(root, true);
    expect(hidden.body.directories.map((d: { name: string }) => d.name)).toEqual(['.config', '.hidden-project', 'project']);
    const config = await browse(path.join(root, '.config'), true);
    expect(config.body.directories.map((d: { name: string }) => d.name)).toEqual(['app']);
    const project = await browse(path.join(root, 'project'), true);
    // .aws is a credential folder, gristmill-data is DATA_DIR: neither is listed.
    expect(project.body.directories.map((d: { name: string }) => d.name)).toEqual(['docs']);
    expect(project.body.parent).toBe(root);
  });

  it('never enters what may not be registered', async () => {
    for (const p of ['/', '/etc', outside, path.join(root, 'escape'), path.join(root, 'etc-link'), path.join(root, '.ssh'), path.join(root, '.config', 'gcloud'), path.join(root, 'project', 'gristmill-data')]) {
      expectError(await browse(p, true), 400, 'SOURCE_NOT_ALLOWED');
    }
    expectError(await browse('relative/path'), 400, 'INVALID_PATH');
    expectError(await browse(path.join(root, 'missing')), 404, 'FOLDER_NOT_FOUND');
  });
});

describe('indexing a local library', () => {
  it('never reads credential folders or DATA_DIR inside it, and stops when the folder later leads out of the roots', async () => {
    const res = await api(stack, 'POST', '/api/v1/libs', { source: 'local', sourceUrl: path.join(root, 'project') });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const job = await waitForJob(stack, res.body.job.id);
    expect(job.status, JSON.stringify(job)).toBe('done');
    const files = [...new Set((await snippetsOf(stack, res.body.library.id)).map((s) => s.file_path))].sort();
    expect(files).toEqual(['README.md', 'docs/guide.md']);

    // The folder is swapped for a symlink out of the roots: the next run refuses to read it.
    fs.renameSync(path.join(root, 'project'), path.join(root, 'project-moved'));
    fs.symlinkSync(outside, path.join(root, 'project'));
    const again = await api(stack, 'POST', `/api/v1/libs/${enc(res.body.library.id)}/index`);
    const failed = await waitForJob(stack, again.body.job.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/cannot be read: .*symlink.*LOCAL_SOURCE_ROOTS/);
    const after = (await snippetsOf(stack, res.body.library.id)).map((s) => s.content).join('\n');
    expect(after).not.toContain('secret outside');
  });
});

describe('a root inside DATA_DIR (a container mounting /data/repos)', () => {
  it('is allowed on purpose; the rest of DATA_DIR is not', async () => {
    const data = path.join(tmp, 'data');
    write(path.join(data, 'repos', 'app', 'README.md'), DOC('the app'));
    write(path.join(data, 'uploads', 'job', 'source.md'), DOC('an upload'));
    const folders = new LocalFolders({ dataDir: data, localSourceRoots: [path.join(data, 'repos')] });
    expect(await folders.resolve(path.join(data, 'repos', 'app'))).toBe(path.join(data, 'repos', 'app'));
    await expect(folders.resolve(path.join(data, 'uploads'))).rejects.toMatchObject({ code: 'SOURCE_NOT_ALLOWED' });
    await expect(folders.resolve(data)).rejects.toMatchObject({ code: 'SOURCE_NOT_ALLOWED' });
    expect(await folders.allows(data)).toBe(false);
  });
});

describe('LOCAL_SOURCE_ROOTS', () => {
  it('is the home folder by default, and takes absolute folders only', () => {
    expect(loadConfig({}).localSourceRoots).toEqual([os.homedir()]);
    expect(loadConfig({ LOCAL_SOURCE_ROOTS: `/srv/code${path.delimiter}/home/me/src/` }).localSourceRoots).toEqual(['/srv/code', '/home/me/src']);
    expect(() => loadConfig({ LOCAL_SOURCE_ROOTS: 'code' })).toThrow(/LOCAL_SOURCE_ROOTS/);
    expect(() => loadConfig({ LOCAL_SOURCE_ROOTS: path.delimiter })).toThrow(/names none/);
  });
});
