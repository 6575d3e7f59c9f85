import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { addAbortSignal, pipeline as pipe, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32, createGunzip, createInflateRaw } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { PermanentError } from '../../core/errors.js';

/**
 * Extracting a package's archive (an npm tarball, a PyPI sdist or wheel, a .crate) into a folder of the attempt's
 * own, safely by construction: only regular files and folders are made, at paths checked to stay inside the folder;
 * links, devices, FIFOs and unsafe names are skipped and reported. Sizes are counted on the bytes really
 * decompressed, never taken from headers, so a bomb is stopped while it streams. Nested archives are never opened:
 * they are kept as plain files (package-docs.ts drops them).
 */

/** The failure codes of package archives (PermanentError.code). */
export const ARCHIVE_TOO_LARGE = 'ARCHIVE_TOO_LARGE';
export const ARCHIVE_BOMB = 'ARCHIVE_BOMB';
export const ARCHIVE_INVALID = 'ARCHIVE_INVALID';
export const ARCHIVE_INTEGRITY = 'ARCHIVE_INTEGRITY';

export interface ArchiveLimits {
  /** Entries of any kind, skipped ones included. */
  maxEntries: number;
  /** A larger file is skipped (a package's binary is no documentation), the rest still extracted. */
  maxFileBytes: number;
  /** Bytes decompressed in all (a tarball's whole stream, a zip's inflated entries). */
  maxTotalBytes: number;
  /** Decompressed bytes per compressed byte, judged once RATIO_FLOOR bytes came out; deflate bombs reach ~1000. */
  maxRatio: number;
}

export const ARCHIVE_LIMITS: ArchiveLimits = {
  maxEntries: 20_000,
  maxFileBytes: 20 * 1024 * 1024,
  maxTotalBytes: 512 * 1024 * 1024,
  maxRatio: 200,
};

/** Below this many decompressed bytes the ratio is not judged: small, repetitive archives compress very well. */
const RATIO_FLOOR = 8 * 1024 * 1024;

export interface Extraction {
  /** The folder to use: `dest`, or the single top-level folder packages carry (`package/`, `<name>-<version>/`). */
  root: string;
  files: number;
  bytes: number;
  skipped: { path: string; reason: string }[];
}

export interface ExtractOptions extends Partial<ArchiveLimits> {
  signal?: AbortSignal;
}

const tooLarge = (message: string) => new PermanentError(message, ARCHIVE_TOO_LARGE);
const invalid = (err: unknown) => new PermanentError(`The package archive is not readable: ${(err as Error).message ?? String(err)}`, ARCHIVE_INVALID);
const isOurs = (err: unknown) => err instanceof PermanentError && !!err.code?.startsWith('ARCHIVE_');

/** Why an entry's name may not be written, or null when it may. */
export function unsafeName(name: string): string | null {
  if (name.includes('\0')) return 'NUL in the name';
  if (name.includes('\\')) return 'backslash in the name';
  // eslint-disable-next-line no-control-regex
  if (/[\x01-\x1f\x7f]/.test(name)) return 'control character in the name';
  if (name.startsWith('/') || /^[a-zA-Z]:/.test(name)) return 'absolute path';
  const segments = name.split('/');
  if (segments.includes('..')) return '".." in the path';
  if (!segments.some((s) => s && s !== '.')) return 'empty path';
  if (name.length > 4096 || segments.some((s) => Buffer.byteLength(s) > 255)) return 'name too long';
  return null;
}

/** Counts decompressed bytes against the total and the ratio. */
class Meter {
  total = 0;
  compressed = 0;
  constructor(private readonly limits: ArchiveLimits) {}

  add(n: number): void {
    this.total += n;
    if (this.total > this.limits.maxTotalBytes) throw tooLarge(`The package archive holds more than ${this.limits.maxTotalBytes} bytes`);
    const ratio = this.total / Math.max(1, this.compressed);
    if (this.total > RATIO_FLOOR && ratio > this.limits.maxRatio) {
      throw new PermanentError(`The package archive decompresses ${Math.round(ratio)} times its size (a decompression bomb)`, ARCHIVE_BOMB);
    }
  }
}

/** Where entries go: checks each name and path, writes regular files and folders only, keeps the counts. */
class Sink {
  files = 0;
  bytes = 0;
  entries = 0;
  readonly skipped: { path: string; reason: string }[] = [];

  constructor(
    private readonly dest: string,
    readonly limits: ArchiveLimits,
  ) {}

  /** Counts entries of any kind against the limit (a zip says how many it has before any is read). */
  count(n = 1): void {
    this.entries += n;
    if (this.entries > this.limits.maxEntries) throw tooLarge(`The package archive has more than ${this.limits.maxEntries} entries`);
  }

  skip(name: string, reason: string): void {
    if (this.skipped.length < 1000) this.skipped.push({ path: name.slice(0, 300), reason });
  }

  /** The absolute path of an entry inside dest, or null (skipped and reported) when it may not be written. */
  target(name: string): string | null {
    const reason = unsafeName(name);
    if (reason) return this.skip(name, reason), null;
    const target = path.resolve(this.dest, ...name.split('/').filter((s) => s && s !== '.'));
    if (!target.startsWith(this.dest + path.sep)) return this.skip(name, 'outside the folder'), null;
    return target;
  }

  async folder(name: string): Promise<void> {
    const target = this.target(name);
    if (target) await this.guard(name, () => fs.mkdir(target, { recursive: true, mode: 0o755 }));
  }

  /**
   * Writes a file's bytes, counting them (`meter` when the caller does not count them itself). A file over the
   * per-file limit is removed and reported; returns false when the rest of `chunks` was not read.
   */
  async file(name: string, chunks: AsyncIterable<Buffer>, meter?: Meter): Promise<boolean> {
    const target = this.target(name);
    if (!target) return false;
    // O_EXCL never follows a link nor replaces a file: a second entry of the same name is skipped.
    const fh = await this.guard(name, async () => {
      await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o755 });
      return fs.open(target, 'wx', 0o644);
    });
    if (!fh) return false;
    let size = 0;
    try {
      for await (const chunk of chunks) {
        meter?.add(chunk.length);
        size += chunk.length;
        if (size > this.limits.maxFileBytes) break;
        await fh.write(chunk);
      }
    } finally {
      await fh.close();
    }
    if (size > this.limits.maxFileBytes) {
      await fs.rm(target, { force: true });
      this.skip(name, `larger than ${this.limits.maxFileBytes} bytes`);
      return false;
    }
    this.files++;
    this.bytes += size;
    return true;
  }

  /** Runs a file-system step; a name clash with an earlier entry (file vs folder, duplicate) skips the entry. */
  private async guard<T>(name: string, step: () => Promise<T>): Promise<T | null> {
    try {
      return await step();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' || code === 'ENOTDIR' || code === 'EISDIR' || code === 'ENAMETOOLONG') {
        this.skip(name, `clashes with another entry (${code})`);
        return null;
      }
      throw err;
    }
  }
}

export async function extractArchive(file: string, kind: 'tgz' | 'zip', dest: string, options: ExtractOptions = {}): Promise<Extraction> {
  const { signal, ...rest } = options;
  const limits = { ...ARCHIVE_LIMITS, ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) };
  const folder = path.resolve(dest);
  await fs.mkdir(folder, { recursive: true });
  if ((await fs.readdir(folder)).length) throw new Error(`${folder} is not empty`);
  const sink = new Sink(folder, limits);
  const meter = new Meter(limits);
  try {
    if (kind === 'zip') await extractZip(file, sink, meter, signal);
    else await extractTar(file, sink, meter, signal);
  } catch (err) {
    await fs.rm(folder, { recursive: true, force: true });
    await fs.mkdir(folder, { recursive: true });
    if (signal?.aborted) throw signal.reason ?? err;
    // The file system's own failures (no space left, ...) are not the archive's fault: passed on as they are.
    if (isOurs(err) || (err as NodeJS.ErrnoException).syscall) throw err;
    throw invalid(err);
  }
  return { root: await packageRoot(folder), files: sink.files, bytes: sink.bytes, skipped: sink.skipped };
}

/** The single top-level folder a package carries, or the folder itself. */
async function packageRoot(folder: string): Promise<string> {
  const top = await fs.readdir(folder, { withFileTypes: true });
  return top.length === 1 && top[0]!.isDirectory() ? path.join(folder, top[0]!.name) : folder;
}

/** A pass-through stream that tells `add` how many bytes went by. */
function counting(add: (n: number) => void): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      add(chunk.length);
      done(null, chunk);
    },
  });
}

const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);

/**
 * A tarball (gzipped or not), decompressed here rather than by the tar parser so that every byte that comes out
 * is counted, and an archive compressed twice is refused instead of silently decompressed again.
 */
async function extractTar(file: string, sink: Sink, meter: Meter, signal: AbortSignal | undefined): Promise<void> {
  const gzipped = (await head(file, 2)).equals(Buffer.from([0x1f, 0x8b]));
  const parser = new Parser({ strict: true, zstd: false, brotli: false });
  const tasks: Promise<void>[] = [];
  let failed: unknown;
  let current: ReadEntry | undefined;
  // Ends every wait on the parser once anything failed: a destroyed entry never lets it drain.
  const stop = new AbortController();
  const fail = (err: unknown) => {
    failed ??= err;
    current?.destroy();
    stop.abort(err);
  };
  const entryTask = (entry: ReadEntry) => {
    if (failed) return entry.resume();
    current = entry;
    tasks.push(tarEntry(entry, sink).catch(fail));
  };
  parser.on('entry', entryTask);
  parser.on('error', fail);
  parser.on('ignoredEntry', (entry: ReadEntry) => {
    sink.skip(entry.path, `unsupported entry type ${entry.type}`);
    try {
      sink.count();
    } catch (err) {
      fail(err);
    }
  });
  const ended = once(parser, 'end', { signal: stop.signal });
  ended.catch(() => undefined);

  const counter = counting((n) => (meter.compressed += n));
  let first = true;
  const feed = async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) {
      if (failed) throw failed;
      if (first && chunk[0] === 0x1f && chunk[1] === 0x8b) throw new Error('the tarball is compressed twice');
      first = false;
      meter.add(chunk.length);
      if (!parser.write(chunk)) await once(parser, 'drain', { signal: stop.signal });
    }
    parser.end();
    await ended;
  };
  // The pipeline rejects with its own AbortError when its last step throws: the step's error is kept first.
  const consume = async (source: AsyncIterable<Buffer>) => {
    try {
      await feed(source);
    } catch (err) {
      fail(err);
      throw err;
    }
  };
  const read = createReadStream(file, signal ? { signal } : {});
  try {
    if (gzipped) await pipeline(read, counter, createGunzip(), consume);
    else await pipeline(read, counter, consume);
    await Promise.all(tasks);
    if (failed) throw failed;
  } catch (err) {
    fail(err);
    await Promise.allSettled(tasks);
    throw failed;
  }
}

async function tarEntry(entry: ReadEntry, sink: Sink): Promise<void> {
  sink.count();
  if (entry.type === 'Directory') {
    entry.resume();
    return sink.folder(entry.path);
  }
  if (!FILE_TYPES.has(entry.type)) {
    entry.resume();
    const kind = entry.type === 'SymbolicLink' ? 'symbolic link' : entry.type === 'Link' ? 'hard link' : entry.type;
    return sink.skip(entry.path, `${kind} not extracted`);
  }
  const read = await sink.file(entry.path, entry);
  if (!read) entry.resume();
}

async function head(file: string, n: number): Promise<Buffer> {
  const fh = await fs.open(file, 'r');
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await fh.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

/** What a zip entry is, from its name and the Unix mode some zips keep in the external attributes. */
function zipEntryKind(entry: Entry, name: string): 'file' | 'folder' | { skip: string } {
  const type = (entry.externalFileAttributes >>> 16) & S_IFMT;
  if (name.endsWith('/') || type === S_IFDIR) return 'folder';
  if (type === S_IFLNK) return { skip: 'symbolic link not extracted' };
  if (type && type !== S_IFREG) return { skip: 'special file not extracted' };
  if (entry.isEncrypted()) return { skip: 'encrypted' };
  if (!entry.canDecodeFileData()) return { skip: `compression method ${entry.compressionMethod} not supported` };
  return 'file';
}

/** A zip (a wheel): names are decoded here, so an unsafe one skips its entry instead of failing the whole archive. */
async function extractZip(file: string, sink: Sink, meter: Meter, signal: AbortSignal | undefined): Promise<void> {
  const zip: ZipFile = await yauzl.openPromise(file, { lazyEntries: true, autoClose: false, decodeStrings: false });
  try {
    if (zip.entryCount > sink.limits.maxEntries) sink.count(zip.entryCount);
    for await (const entry of zip.eachEntry()) {
      signal?.throwIfAborted();
      sink.count();
      const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, true);
      const kind = zipEntryKind(entry, name);
      if (kind === 'folder') await sink.folder(name);
      else if (kind === 'file') await zipFile(zip, entry, name, sink, meter, signal);
      else sink.skip(name, kind.skip);
    }
  } finally {
    zip.close();
  }
}

/**
 * One zip entry's bytes, inflated here rather than by yauzl so that the compressed bytes really read are counted
 * (the ratio is judged on them, not on the sizes the headers claim) and the size and CRC are checked at the end.
 */
async function zipFile(zip: ZipFile, entry: Entry, name: string, sink: Sink, meter: Meter, signal: AbortSignal | undefined): Promise<void> {
  const raw = await zip.openReadStreamPromise(entry, { decodeFileData: false });
  const counter = counting((n) => (meter.compressed += n));
  let size = 0;
  let crc = 0;
  const check = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      crc = crc32(chunk, crc);
      done(null, chunk);
    },
    flush(done) {
      if (size !== entry.uncompressedSize || crc !== entry.crc32) done(new Error(`${name}: its size or CRC does not match its header`));
      else done();
    },
  });
  // The callback form returns the last stream, which an error anywhere in the chain destroys with that error.
  const out = entry.compressionMethod === 8 ? pipe(raw, counter, createInflateRaw(), check, () => undefined) : pipe(raw, counter, check, () => undefined);
  if (signal) addAbortSignal(signal, out);
  try {
    await sink.file(name, out, meter);
  } finally {
    out.destroy();
    raw.destroy();
  }
}
