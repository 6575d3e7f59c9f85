import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractArchive, type ExtractOptions } from '../../../docindex/sources/archive.js';
import { tarBytes, tarHeader, tgz, tgzBomb } from '../../support/tar.js';
import { deflatedZeros, zipBytes } from '../../support/zip.js';

/**
 * Package archives (docindex/sources/archive.ts): normal npm, sdist, crate and wheel layouts extract with their
 * top-level folder stripped; hostile ones (traversal, links, devices, bombs, truncation) never write outside the
 * folder and end with a stable code or a reported skip.
 */
let base: string;
let n = 0;
beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'archive-test-'));
});
afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

/** A fresh case folder: `box/archive` is the input, `box/out` the destination, `box` is what must stay clean. */
async function box(bytes?: Buffer, name = 'archive'): Promise<{ dir: string; file: string; dest: string }> {
  const dir = path.join(base, `case-${++n}`);
  await fs.mkdir(dir);
  const file = path.join(dir, name);
  if (bytes) await fs.writeFile(file, bytes);
  return { dir, file, dest: path.join(dir, 'out') };
}

/** Every path under `dir`, relative, sorted (links listed, not followed). */
async function tree(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  return entries.map((e) => path.relative(dir, path.join(e.parentPath, e.name)) + (e.isDirectory() ? '/' : e.isSymbolicLink() ? '@' : '')).sort();
}

async function extract(bytes: Buffer, kind: 'tgz' | 'zip', o: ExtractOptions = {}) {
  const b = await box(bytes);
  const result = await extractArchive(b.file, kind, b.dest, o);
  return { ...b, result };
}

describe('normal packages', () => {
  it('strips the package/ folder of an npm tarball', async () => {
    const { dest, result } = await extract(
      tgz([
        { path: 'package/package.json', body: '{"name":"x"}' },
        { path: 'package/README.md', body: '# x' },
        { path: 'package/docs/', type: 'Directory' },
        { path: 'package/docs/guide.md', body: '## Guide' },
        { path: 'package/lib/index.js', body: 'module.exports = 1' },
      ]),
      'tgz',
    );
    expect(result.root).toBe(path.join(dest, 'package'));
    expect(await tree(result.root)).toEqual(['README.md', 'docs/', 'docs/guide.md', 'lib/', 'lib/index.js', 'package.json']);
    expect(await fs.readFile(path.join(result.root, 'docs/guide.md'), 'utf8')).toBe('## Guide');
    expect(result).toMatchObject({ files: 4, skipped: [] });
    expect(result.bytes).toBe(12 + 3 + 8 + 18);
  });

  it('strips the <name>-<version>/ folder of an sdist or crate, and reads an uncompressed tar too', async () => {
    const entries = [
      { path: 'pydantic-2.1.0/PKG-INFO', body: 'Name: pydantic' },
      { path: 'pydantic-2.1.0/docs/index.md', body: '# Pydantic' },
    ];
    for (const bytes of [tgz(entries), tarBytes(entries)]) {
      const { dest, result } = await extract(bytes, 'tgz');
      expect(result.root).toBe(path.join(dest, 'pydantic-2.1.0'));
      expect(await tree(result.root)).toEqual(['PKG-INFO', 'docs/', 'docs/index.md']);
    }
  });

  it('extracts a wheel (zip) at its root, where it has no single folder', async () => {
    const { dest, result } = await extract(
      zipBytes([
        { name: 'pkg/__init__.py', body: 'x = 1\n'.repeat(100) },
        { name: 'pkg/py.typed', body: '', store: true },
        { name: 'pkg-1.0.dist-info/', body: '' },
        { name: 'pkg-1.0.dist-info/METADATA', body: 'Name: pkg\n\n# Pkg', store: true },
      ]),
      'zip',
    );
    expect(result.root).toBe(dest);
    expect(await tree(dest)).toEqual(['pkg-1.0.dist-info/', 'pkg-1.0.dist-info/METADATA', 'pkg/', 'pkg/__init__.py', 'pkg/py.typed']);
    expect(await fs.readFile(path.join(dest, 'pkg/__init__.py'), 'utf8')).toBe('x = 1\n'.repeat(100));
    expect(result.files).toBe(3);
  });

  it('writes files without their modes: nothing executable or set-uid comes out', async () => {
    const { result } = await extract(tgz([{ path: 'package/bin/run', body: '#!/bin/sh' }]), 'tgz');
    expect((await fs.stat(path.join(result.root, 'bin/run'))).mode & 0o7777).toBe(0o644 & ~process.umask());
  });
});

describe('hostile tarballs', () => {
  it('skips traversal, absolute names, backslashes, links and devices, and writes nothing outside the folder', async () => {
    const { dir, dest, result } = await extract(
      tgz([
        { path: 'package/ok.md', body: 'fine' },
        { path: '../evil', body: 'owned' },
        { path: 'package/../../evil2', body: 'owned' },
        { path: '/etc/x', body: 'owned' },
        { path: 'package\\..\\..\\evil3', body: 'owned' },
        { path: 'package/passwd', type: 'SymbolicLink', linkpath: '/etc/passwd' },
        { path: 'package/passwd', body: 'written through the link' },
        { path: 'package/up', type: 'SymbolicLink', linkpath: '..' },
        { path: 'package/up/evil4', body: 'owned' },
        { path: 'package/hard', type: 'Link', linkpath: '/etc/shadow' },
        { path: 'package/tty', type: 'CharacterDevice' },
        { path: 'package/fifo', type: 'FIFO' },
      ]),
      'tgz',
    );
    expect(await tree(dir)).toEqual(['archive', 'out/', 'out/package/', 'out/package/ok.md', 'out/package/passwd', 'out/package/up/', 'out/package/up/evil4']);
    // The file of the link's name is a plain file, written inside the folder, and /etc/passwd is untouched.
    expect(await fs.readFile(path.join(dest, 'package/passwd'), 'utf8')).toBe('written through the link');
    expect((await fs.lstat(path.join(dest, 'package/up'))).isDirectory()).toBe(true);
    const reasons = Object.fromEntries(result.skipped.map((s) => [s.path, s.reason]));
    expect(reasons).toMatchObject({
      '../evil': '".." in the path',
      'package/../../evil2': '".." in the path',
      '/etc/x': 'absolute path',
      'package\\..\\..\\evil3': 'backslash in the name',
      'package/passwd': 'symbolic link not extracted',
      'package/up': 'symbolic link not extracted',
      'package/hard': 'hard link not extracted',
      'package/tty': 'CharacterDevice not extracted',
      'package/fifo': 'FIFO not extracted',
    });
    expect(result.files).toBe(3);
  });

  it('keeps the first of two entries of the same name and reports the second', async () => {
    const { result } = await extract(
      tgz([
        { path: 'package/a.md', body: 'first' },
        { path: 'package/a.md', body: 'second' },
        { path: 'package/a.md/b.md', body: 'under a file' },
      ]),
      'tgz',
    );
    expect(await fs.readFile(path.join(result.root, 'a.md'), 'utf8')).toBe('first');
    expect(result.skipped.map((s) => s.reason)).toEqual(['clashes with another entry (EEXIST)', expect.stringMatching(/clashes with another entry/)]);
  });

  it('keeps a nested archive as a plain file, unopened', async () => {
    const inner = tgz([{ path: 'package/inner.md', body: 'inside' }]);
    const { result } = await extract(tgz([{ path: 'package/vendor.tgz', body: inner }]), 'tgz');
    expect(await tree(result.root)).toEqual(['vendor.tgz']);
    expect(await fs.readFile(path.join(result.root, 'vendor.tgz'))).toEqual(inner);
  });

  it('skips a file over the per-file limit and extracts the rest', async () => {
    const { result } = await extract(
      tgz([
        { path: 'package/big.wasm', body: Buffer.alloc(300_000, 1) },
        { path: 'package/README.md', body: '# x' },
      ]),
      'tgz',
      { maxFileBytes: 100_000 },
    );
    expect(await tree(result.root)).toEqual(['README.md']);
    expect(result.skipped).toEqual([{ path: 'package/big.wasm', reason: 'larger than 100000 bytes' }]);
  });

  it('stops a 2 GB gzip bomb while it streams (ratio), and by the total when the ratio is allowed', async () => {
    const b = await box(undefined, 'bomb.tgz');
    await tgzBomb(b.file, 2 * 1024 ** 3);
    expect((await fs.stat(b.file)).size).toBeLessThan(4 * 1024 * 1024);
    const started = Date.now();
    await expect(extractArchive(b.file, 'tgz', b.dest)).rejects.toMatchObject({ name: 'PermanentError', code: 'ARCHIVE_BOMB' });
    await expect(extractArchive(b.file, 'tgz', b.dest, { maxRatio: Infinity, maxTotalBytes: 64 * 1024 * 1024 })).rejects.toMatchObject({
      code: 'ARCHIVE_TOO_LARGE',
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await tree(b.dir)).toEqual(['bomb.tgz', 'out/']);
  }, 60_000);

  it('refuses more entries than the limit', async () => {
    const entries = Array.from({ length: 30 }, (_, i) => ({ path: `package/f${i}.md`, body: 'x' }));
    const b = await box(tgz(entries));
    await expect(extractArchive(b.file, 'tgz', b.dest, { maxEntries: 20 })).rejects.toMatchObject({ code: 'ARCHIVE_TOO_LARGE' });
    expect(await tree(b.dest)).toEqual([]);
  });

  it('calls a truncated, corrupt or doubly compressed archive invalid', async () => {
    const whole = tgz([{ path: 'package/README.md', body: 'x'.repeat(50_000) }]);
    const plain = tarBytes([{ path: 'package/README.md', body: 'y'.repeat(50_000) }]);
    const badChecksum = Buffer.concat([tarHeader({ path: 'package/a.md', size: 0 }), Buffer.alloc(1024)]);
    badChecksum[0] = 'q'.charCodeAt(0);
    const cases = [whole.subarray(0, whole.length / 2), plain.subarray(0, 10_000), badChecksum, Buffer.from('not an archive at all'), gzipSync(gzipSync(plain))];
    for (const bytes of cases) {
      const b = await box(bytes);
      await expect(extractArchive(b.file, 'tgz', b.dest)).rejects.toMatchObject({ name: 'PermanentError', code: 'ARCHIVE_INVALID' });
      expect(await tree(b.dest)).toEqual([]);
    }
  });

  it('ends when the attempt is cancelled', async () => {
    const b = await box(undefined, 'bomb.tgz');
    await tgzBomb(b.file, 256 * 1024 ** 2);
    const stop = new AbortController();
    stop.abort(new Error('cancelled'));
    await expect(extractArchive(b.file, 'tgz', b.dest, { signal: stop.signal })).rejects.toThrow('cancelled');
    const z = await box(zipBytes([{ name: 'a.md', body: 'a' }]));
    await expect(extractArchive(z.file, 'zip', z.dest, { signal: stop.signal })).rejects.toThrow('cancelled');
  });
});

describe('hostile zips', () => {
  it('skips traversal, absolute and backslash names and symbolic links', async () => {
    const { dir, result } = await extract(
      zipBytes([
        { name: 'pkg/ok.md', body: 'fine' },
        { name: '../evil', body: 'owned' },
        { name: 'pkg/../../evil2', body: 'owned' },
        { name: '/tmp/evil3', body: 'owned' },
        { name: 'C:/evil4', body: 'owned' },
        { name: '..\\evil5', body: 'owned' },
        { name: 'pkg/link', body: '/etc/passwd', mode: 0o120777, store: true },
        { name: 'pkg/fifo', body: '', mode: 0o010644, store: true },
      ]),
      'zip',
    );
    expect(await tree(dir)).toEqual(['archive', 'out/', 'out/pkg/', 'out/pkg/ok.md']);
    expect(result.skipped.map((s) => s.reason)).toEqual([
      '".." in the path',
      '".." in the path',
      'absolute path',
      'absolute path',
      'backslash in the name',
      'symbolic link not extracted',
      'special file not extracted',
    ]);
  });

  it('stops a zip bomb while it inflates, whatever its headers say', async () => {
    const bomb = await deflatedZeros(1024 ** 3);
    expect(bomb.data.length).toBeLessThan(2 * 1024 * 1024);
    // Honest headers, then headers that claim 10 bytes: both are stopped by counting what comes out.
    for (const declaredSize of [undefined, 10]) {
      const b = await box(zipBytes([{ name: 'README.md', body: '# x' }, { name: 'zeros.md', deflated: bomb, ...(declaredSize && { declaredSize }) }]));
      await expect(extractArchive(b.file, 'zip', b.dest)).rejects.toMatchObject({ code: 'ARCHIVE_BOMB' });
      expect(await tree(b.dest)).toEqual([]);
    }
    // Many bomb entries, each allowed on its own: the total stops them.
    const b = await box(zipBytes(Array.from({ length: 20 }, (_, i) => ({ name: `z${i}.md`, deflated: bomb }))));
    await expect(extractArchive(b.file, 'zip', b.dest, { maxRatio: Infinity, maxFileBytes: 1024 ** 3 * 2, maxTotalBytes: 256 * 1024 ** 2 })).rejects.toMatchObject({
      code: 'ARCHIVE_TOO_LARGE',
    });
  }, 60_000);

  it('calls a truncated zip, or one whose data does not match its header, invalid', async () => {
    const whole = zipBytes([{ name: 'a.md', body: 'a'.repeat(10_000) }]);
    const lying = zipBytes([{ name: 'a.md', body: 'a'.repeat(10_000), declaredSize: 5 }]);
    for (const bytes of [whole.subarray(0, whole.length - 30), lying]) {
      const b = await box(bytes);
      await expect(extractArchive(b.file, 'zip', b.dest)).rejects.toMatchObject({ code: 'ARCHIVE_INVALID' });
    }
  });

  it('refuses a zip that says it has more entries than the limit, before reading them', async () => {
    const b = await box(zipBytes(Array.from({ length: 30 }, (_, i) => ({ name: `f${i}.md`, body: 'x' }))));
    await expect(extractArchive(b.file, 'zip', b.dest, { maxEntries: 20 })).rejects.toMatchObject({ code: 'ARCHIVE_TOO_LARGE' });
  });
});
