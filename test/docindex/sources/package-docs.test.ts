import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneToPackageDocs, readmeFromMetadata, selectPackageDocs } from '../../../docindex/sources/package-docs.js';

/**
 * A package's own documentation (docindex/sources/package-docs.ts): what an npm tarball, an sdist, a wheel or a
 * crate keeps when it is indexed from the archive, and that pruning leaves exactly that on disk.
 */
let base: string;
let n = 0;
beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'package-docs-test-'));
});
afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

async function folder(files: Record<string, string>): Promise<string> {
  const root = path.join(base, `pkg-${++n}`);
  for (const [file, body] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await fs.writeFile(path.join(root, file), body);
  }
  return root;
}

async function tree(root: string): Promise<string[]> {
  const entries = await fs.readdir(root, { recursive: true, withFileTypes: true });
  return entries.map((e) => path.relative(root, path.join(e.parentPath, e.name)) + (e.isDirectory() ? '/' : '')).sort();
}

describe('selectPackageDocs', () => {
  it('keeps an npm package README, docs and examples, and drops its code, changelog and license', async () => {
    const root = await folder({
      'README.md': '# x',
      'CHANGELOG.md': '## 1.0.0',
      'LICENSE.md': 'MIT',
      'package.json': '{}',
      'lib/index.js': 'module.exports = 1',
      'lib/index.d.ts': 'export declare const x: number;',
      'docs/guide.md': '# Guide',
      'docs/api/reference.mdx': '# API',
      'examples/basic.js': 'require("x")',
      'MIGRATING.md': '# Migrating',
    });
    expect(await selectPackageDocs(root)).toEqual({
      keep: ['MIGRATING.md', 'README.md', 'docs/api/reference.mdx', 'docs/guide.md', 'examples/basic.js'],
      dropped: 5,
      typeDeclarations: false,
    });
  });

  it('keeps type declarations when nothing but a README documents the package', async () => {
    const root = await folder({
      'README.md': '# x',
      'CHANGELOG.md': '## 1.0.0',
      'index.js': 'module.exports = 1',
      'index.d.ts': '/** Adds. */ export declare function add(a: number, b: number): number;',
      'types/options.d.mts': 'export interface Options {}',
      'types/options.test-d.ts': 'expectType<number>(add(1, 2))',
    });
    expect(await selectPackageDocs(root)).toEqual({ keep: ['README.md', 'index.d.ts', 'types/options.d.mts'], dropped: 3, typeDeclarations: true });
  });

  it('keeps a crate README and examples, drops its sources', async () => {
    const root = await folder({
      'Cargo.toml': '[package]',
      'README.md': '# tokio',
      'src/lib.rs': '//! Tokio',
      'examples/echo.rs': 'fn main() {}',
      'benches/b.rs': 'fn b() {}',
    });
    expect((await selectPackageDocs(root)).keep).toEqual(['README.md', 'examples/echo.rs']);
  });

  it('keeps notebooks and an sdist docs folder, not its tests', async () => {
    const root = await folder({
      'README.rst': 'Pkg',
      'PKG-INFO': 'Name: pkg\n\nlong description',
      'setup.py': 'setup()',
      'src/pkg/__init__.py': 'x = 1',
      'docs/index.rst': 'Docs',
      'docs/conf.py': 'project = "pkg"',
      'notebooks/tour.ipynb': '{"cells": []}',
      'tests/test_pkg.py': 'def test(): pass',
      'requirements.txt': 'requests',
    });
    expect((await selectPackageDocs(root)).keep).toEqual(['README.rst', 'docs/conf.py', 'docs/index.rst', 'notebooks/tour.ipynb']);
  });
});

describe('pruneToPackageDocs', () => {
  it('leaves only the documentation on disk, no empty folders', async () => {
    const root = await folder({
      'README.md': '# x',
      'lib/a/b/index.js': '1',
      'docs/guide.md': '# Guide',
      'docs/images/logo.png': 'png',
      'package.json': '{}',
    });
    const docs = await pruneToPackageDocs(root);
    expect(docs).toEqual({ keep: ['README.md', 'docs/guide.md'], dropped: 3, typeDeclarations: false });
    expect(await tree(root)).toEqual(['README.md', 'docs/', 'docs/guide.md']);
  });

  it('turns a wheel long description into its README, and keeps its stubs as the documentation', async () => {
    const root = await folder({
      'pkg/__init__.py': 'def add(a, b): return a + b',
      'pkg/__init__.pyi': 'def add(a: int, b: int) -> int: ...',
      'pkg-1.0.dist-info/METADATA': 'Metadata-Version: 2.1\nName: pkg\nDescription-Content-Type: text/markdown; charset=UTF-8\n\n# Pkg\n\nAdds numbers.\n',
      'pkg-1.0.dist-info/RECORD': 'pkg/__init__.py,,',
    });
    const docs = await pruneToPackageDocs(root);
    expect(docs).toMatchObject({ keep: ['README.md', 'pkg/__init__.pyi'], typeDeclarations: true });
    expect(await fs.readFile(path.join(root, 'README.md'), 'utf8')).toBe('# Pkg\n\nAdds numbers.\n');
    expect(await tree(root)).toEqual(['README.md', 'pkg/', 'pkg/__init__.pyi']);
  });
});

describe('readmeFromMetadata', () => {
  it('writes an sdist description as reStructuredText by default, and never over a README', async () => {
    const sdist = await folder({ 'PKG-INFO': 'Metadata-Version: 2.1\nName: pkg\n\nPkg\n===\n' });
    expect(await readmeFromMetadata(sdist)).toBe('README.rst');
    expect(await fs.readFile(path.join(sdist, 'README.rst'), 'utf8')).toBe('Pkg\n===\n');
    const withReadme = await folder({ 'readme.md': '# mine', 'PKG-INFO': 'Name: pkg\n\nother' });
    expect(await readmeFromMetadata(withReadme)).toBeNull();
    expect(await readmeFromMetadata(await folder({ 'PKG-INFO': 'Name: pkg\nSummary: none\n' }))).toBeNull();
  });
});
