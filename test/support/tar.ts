import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip, gzipSync } from 'node:zlib';
import { Header } from 'tar';

/**
 * Tarballs written block by block, so tests can make the ones a careful packer never would: `../` and absolute
 * names, links, devices, lying sizes, truncated bodies. node-tar's Header encodes each entry's 512-byte header.
 */
export interface TarEntry {
  path: string;
  type?: 'File' | 'Directory' | 'SymbolicLink' | 'Link' | 'CharacterDevice' | 'FIFO';
  body?: string | Buffer;
  linkpath?: string;
}

const BLOCK = 512;

export function tarHeader(e: { path: string; type?: TarEntry['type']; size?: number; linkpath?: string }): Buffer {
  const block = Buffer.alloc(BLOCK);
  new Header({ path: e.path, type: e.type ?? 'File', size: e.size ?? 0, mode: 0o644, mtime: new Date(0), ...(e.linkpath && { linkpath: e.linkpath }) }).encode(block, 0);
  return block;
}

const pad = (n: number) => Buffer.alloc((BLOCK - (n % BLOCK)) % BLOCK);

/** The uncompressed tar stream of these entries, ended by its two zero blocks. */
export function tarBytes(entries: TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const body = typeof e.body === 'string' ? Buffer.from(e.body) : (e.body ?? Buffer.alloc(0));
    const type = e.type ?? 'File';
    parts.push(tarHeader({ path: e.path, type, size: type === 'File' ? body.length : 0, ...(e.linkpath && { linkpath: e.linkpath }) }));
    if (type === 'File') parts.push(body, pad(body.length));
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(parts);
}

export const tgz = (entries: TarEntry[]): Buffer => gzipSync(tarBytes(entries));

/**
 * A tar.gz bomb written to `file`: one entry whose header honestly says `size` bytes of zeros, gzipped (about
 * 1000 to 1), then the end blocks. 2 GB of zeros come to about 2 MB.
 */
export async function tgzBomb(file: string, size: number, name = 'package/zeros.md'): Promise<void> {
  const zeros = Buffer.alloc(1024 * 1024);
  async function* stream() {
    yield tarHeader({ path: name, size });
    for (let left = size; left > 0; left -= zeros.length) yield left >= zeros.length ? zeros : zeros.subarray(0, left);
    yield Buffer.concat([pad(size), Buffer.alloc(BLOCK * 2)]);
  }
  await pipeline(Readable.from(stream()), createGzip({ level: 9 }), createWriteStream(file));
}
