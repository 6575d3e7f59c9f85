import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Parser as TarParser } from 'tar';
import yauzl from 'yauzl';
import { describe, expect, it } from 'vitest';
import { crateArchive, npmTarball, pypiSdist, pypiWheel } from '../../fakes/package-archives.js';

/** The fake registries' archives are the real formats: tarballs node-tar reads, wheels yauzl reads (fakes/package-archives.ts). */
async function tarEntries(archive: Buffer): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const parser = new TarParser({
    onReadEntry: (entry) => {
      const chunks: Buffer[] = [];
      entry.on('data', (c: Buffer) => chunks.push(c));
      entry.on('end', () => (out[entry.path] = Buffer.concat(chunks).toString()));
    },
  });
  await pipeline(Readable.from([archive]), parser);
  return out;
}

function zipEntries(archive: Buffer): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(archive, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      const out: Record<string, string> = {};
      zip.on('entry', (entry: yauzl.Entry) =>
        zip.openReadStream(entry, (e, stream) => {
          if (e) return reject(e);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            out[entry.fileName] = Buffer.concat(chunks).toString();
            zip.readEntry();
          });
        }),
      );
      zip.on('end', () => resolve(out));
      zip.readEntry();
    });
  });
}

describe('package archives', () => {
  it('npm: everything under package/, with a package.json', async () => {
    const files = await tarEntries(await npmTarball('@acme/kit', '1.0.0', { 'README.md': '# kit', 'docs/a.md': 'a' }, { repository: 'github:acme/kit' }));
    expect(Object.keys(files).sort()).toEqual(['package/README.md', 'package/docs/a.md', 'package/package.json']);
    expect(JSON.parse(files['package/package.json']!)).toMatchObject({ name: '@acme/kit', version: '1.0.0', repository: 'github:acme/kit' });
  });

  it('PyPI: an sdist with PKG-INFO, and a wheel with its dist-info', async () => {
    const sdist = await tarEntries(await pypiSdist('Py-Kit', '2.0', { 'README.md': 'r' }, { description: 'Kit' }));
    expect(Object.keys(sdist).sort()).toEqual(['py_kit-2.0/PKG-INFO', 'py_kit-2.0/README.md']);
    expect(sdist['py_kit-2.0/PKG-INFO']).toContain('Version: 2.0');
    const wheel = await zipEntries(pypiWheel('Py-Kit', '2.0', { 'py_kit/__init__.py': '"""doc"""' }, {}));
    expect(wheel['py_kit/__init__.py']).toBe('"""doc"""');
    expect(wheel['py_kit-2.0.dist-info/METADATA']).toContain('Name: Py-Kit');
  });

  it('crates: <name>-<version>/ with Cargo.toml naming the repository', async () => {
    const files = await tarEntries(await crateArchive('kit', '0.1.0', { 'src/lib.rs': '//! doc' }, { repository: 'https://github.com/acme/kit' }));
    expect(files['kit-0.1.0/Cargo.toml']).toContain('repository = "https://github.com/acme/kit"');
    expect(files['kit-0.1.0/src/lib.rs']).toBe('//! doc');
  });
});
