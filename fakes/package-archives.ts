/**
 * Package archives as registries serve them, built from a few files for the fake registries (fakes/fake-registries.ts):
 * npm's tarball (everything under `package/`), a PyPI sdist (`<name>-<version>/` with PKG-INFO) and wheel (a zip
 * with its `.dist-info`), a crate (`<name>-<version>/` with Cargo.toml).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { create as createTar } from 'tar';

export type Files = Record<string, string | Buffer>;

/** A gzipped tarball of `files`, each under `prefix/` (written to a scratch folder first: node-tar packs files on disk). */
export async function tarGz(prefix: string, files: Files): Promise<Buffer> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fake-archive-'));
  try {
    for (const [name, content] of Object.entries(files)) {
      const file = path.join(dir, prefix, name);
      if (!file.startsWith(path.join(dir, prefix) + path.sep)) throw new Error(`A fake archive's file must stay inside it: ${name}`);
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, content);
    }
    const chunks: Buffer[] = [];
    // files only, no folder entries, as `npm pack` and `cargo package` write them
    const entries = Object.keys(files).sort().map((name) => `${prefix}/${name}`);
    for await (const chunk of createTar({ gzip: true, cwd: dir, portable: true }, entries)) chunks.push(Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** A zip of `files`, stored (not compressed): the smallest writer that unzip tools and yauzl read. */
export function storedZip(files: Files): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of Object.entries(files)) {
    const data = Buffer.isBuffer(content) ? content : Buffer.from(content);
    const nameBytes = Buffer.from(name);
    const crc = zlib.crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x21, 12); // 1980-01-01
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(centrals.length / 2, 8);
  end.writeUInt16LE(centrals.length / 2, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** The distribution name in file names (PEP 625 / wheel): lowercase, runs of `-_.` as `_`. */
export const distName = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '_');

export interface ArchiveMeta {
  description?: string;
  repository?: string;
}

export function npmTarball(name: string, version: string, files: Files, meta: ArchiveMeta): Promise<Buffer> {
  const manifest = { name, version, description: meta.description ?? '', ...(meta.repository && { repository: meta.repository }) };
  return tarGz('package', { 'package.json': JSON.stringify(manifest, null, 2), ...files });
}

function pkgInfo(name: string, version: string, meta: ArchiveMeta): string {
  return [`Metadata-Version: 2.1`, `Name: ${name}`, `Version: ${version}`, `Summary: ${meta.description ?? ''}`, ...(meta.repository ? [`Project-URL: Source, ${meta.repository}`] : []), ''].join('\n');
}

export function pypiSdist(name: string, version: string, files: Files, meta: ArchiveMeta): Promise<Buffer> {
  return tarGz(`${distName(name)}-${version}`, { 'PKG-INFO': pkgInfo(name, version, meta), ...files });
}

export function pypiWheel(name: string, version: string, files: Files, meta: ArchiveMeta): Buffer {
  const info = `${distName(name)}-${version}.dist-info`;
  return storedZip({
    ...files,
    [`${info}/METADATA`]: pkgInfo(name, version, meta),
    [`${info}/WHEEL`]: 'Wheel-Version: 1.0\nGenerator: gristmill-fake\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
    [`${info}/RECORD`]: '',
  });
}

export function crateArchive(name: string, version: string, files: Files, meta: ArchiveMeta): Promise<Buffer> {
  const toml = [`[package]`, `name = "${name}"`, `version = "${version}"`, `edition = "2021"`, ...(meta.repository ? [`repository = "${meta.repository}"`] : []), ''].join('\n');
  return tarGz(`${name}-${version}`, { 'Cargo.toml': toml, ...files });
}
