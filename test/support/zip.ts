import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32, createDeflateRaw, deflateRawSync } from 'node:zlib';

/**
 * A minimal zip writer (local headers, central directory, end record; stored or deflated), so tests can write
 * what zip tools refuse to: `..` and absolute names, backslashes, symbolic links by their Unix mode, sizes that lie.
 */
export interface ZipEntry {
  name: string;
  body?: string | Buffer;
  /** Unix mode kept in the external attributes (0o120777 for a symbolic link, whose body is the target). */
  mode?: number;
  store?: boolean;
  /** Overrides the uncompressed size written in the headers. */
  declaredSize?: number;
  /** Ready deflated bytes of `size` uncompressed bytes (a bomb too large to build in memory as plain bytes). */
  deflated?: { data: Buffer; size: number; crc: number };
}

export function zipBytes(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const plain = typeof e.body === 'string' ? Buffer.from(e.body) : (e.body ?? Buffer.alloc(0));
    const method = e.deflated || !e.store ? 8 : 0;
    const data = e.deflated?.data ?? (method === 8 ? deflateRawSync(plain) : plain);
    const crc = e.deflated?.crc ?? crc32(plain);
    const size = e.declaredSize ?? e.deflated?.size ?? plain.length;

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x800, 6); // names are UTF-8
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, data);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix, so the mode in the external attributes counts
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((e.mode ?? (e.name.endsWith('/') ? 0o40755 : 0o100644)) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** `size` zero bytes, deflated as they stream (about 1000 to 1), with their CRC: a bomb built without holding it. */
export async function deflatedZeros(size: number): Promise<{ data: Buffer; size: number; crc: number }> {
  const chunk = Buffer.alloc(Math.min(size, 4 * 1024 * 1024));
  let crc = 0;
  async function* zeros() {
    for (let left = size; left > 0; left -= chunk.length) {
      const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
      crc = crc32(part, crc);
      yield part;
    }
  }
  const parts: Buffer[] = [];
  await pipeline(Readable.from(zeros()), createDeflateRaw({ level: 9 }), async (out: AsyncIterable<Buffer>) => {
    for await (const p of out) parts.push(p);
  });
  return { data: Buffer.concat(parts), size, crc };
}
