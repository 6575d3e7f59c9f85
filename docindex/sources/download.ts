import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs/promises';
import { PermanentError, RecoverableError } from '../../core/errors.js';
import { redact } from '../../core/redact.js';
import { readText, request, statusFailure } from '../../outbound/http.js';
import { ARCHIVE_INTEGRITY, ARCHIVE_TOO_LARGE } from './archive.js';
import type { SourceContext } from './types.js';

/**
 * Downloading a package's archive to a file, through the outbound guard (the URL comes from a registry's answer,
 * so every connection, redirects included, goes only where the guard allows). The size is counted as the body
 * streams: a Content-Length over the limit ends it before the body, but the limit holds whatever the header said.
 * The digest the registry published is checked at the end. A failed download leaves no file behind.
 */
export interface DownloadOptions {
  /** How messages name it ("The archive of fastify 5.2.0"). */
  what: string;
  maxBytes: number;
  /** Hex (PyPI, crates), or SRI (`sha256-<base64>`). */
  sha256?: string;
  /** npm's `integrity`: SRI (`sha512-<base64>`, possibly several space-separated), or hex. */
  sha512?: string;
  headers?: Record<string, string>;
  /** The whole download's time (10 minutes unless said), and the longest wait for a byte (60 s). */
  timeoutMs?: number;
  idleMs?: number;
}

export interface Download {
  bytes: number;
  /** The file's SHA-256, hex: a stamp of what was read. */
  sha256: string;
}

const HEARTBEAT_MS = 1000;

/** The hex digests `value` names for `algo`; SRI tokens of other algorithms are passed over. */
export function expectedDigests(value: string, algo: 'sha256' | 'sha512'): string[] {
  const bytes = algo === 'sha256' ? 32 : 64;
  return value
    .trim()
    .split(/\s+/)
    .flatMap((token) => {
      const sri = /^(sha\d+)-(.+)$/i.exec(token);
      if (sri && sri[1]!.toLowerCase() !== algo) return [];
      const digest = sri ? sri[2]! : token;
      if (digest.length === bytes * 2 && /^[0-9a-f]+$/i.test(digest)) return [digest.toLowerCase()];
      const decoded = /^[A-Za-z0-9+/]+=*$/.test(digest) ? Buffer.from(digest, 'base64') : Buffer.alloc(0);
      return decoded.length === bytes ? [decoded.toString('hex')] : [];
    });
}

interface Check {
  algo: 'sha256' | 'sha512';
  expected: string[];
  hash: Hash;
}

function checks(o: DownloadOptions): Check[] {
  const list: Check[] = [];
  for (const algo of ['sha256', 'sha512'] as const) {
    const value = o[algo];
    if (!value) continue;
    const expected = expectedDigests(value, algo);
    if (!expected.length) throw new PermanentError(`${o.what}: the registry's ${algo} digest is not readable (${redact(value.slice(0, 100))})`, ARCHIVE_INTEGRITY);
    list.push({ algo, expected, hash: createHash(algo) });
  }
  return list;
}

/** Aborts with a recoverable error when the whole time is up or when no byte came for `idleMs` (`touch` restarts it). */
function timers(what: string, timeoutMs: number, idleMs: number) {
  const controller = new AbortController();
  const stop = (message: string) => controller.abort(new RecoverableError(`${what} ${message}`));
  const total = setTimeout(() => stop(`did not finish within ${timeoutMs} ms`), timeoutMs);
  let idle = setTimeout(() => stop(`sent nothing for ${idleMs} ms`), idleMs);
  return {
    signal: controller.signal,
    touch() {
      clearTimeout(idle);
      idle = setTimeout(() => stop(`sent nothing for ${idleMs} ms`), idleMs);
    },
    clear() {
      clearTimeout(total);
      clearTimeout(idle);
    },
  };
}

export async function downloadTo(url: string, file: string, ctx: SourceContext, o: DownloadOptions): Promise<Download> {
  const protocol = URL.canParse(url) ? new URL(url).protocol : '';
  if (protocol !== 'http:' && protocol !== 'https:') throw new PermanentError(`${o.what} has no http(s) URL: ${redact(url.slice(0, 200))}`);
  const verify = checks(o);
  const timeoutMs = o.timeoutMs ?? 10 * 60_000;
  const clock = timers(o.what, timeoutMs, o.idleMs ?? 60_000);
  // The clock alone ends the call: the request's own deadline only backs it up, a second later, so it can never
  // fire first (within the same millisecond it once did, and a timeout read as a broken connection).
  const call = { signal: AbortSignal.any([ctx.signal, clock.signal]), deadline: Date.now() + timeoutMs + 1000 };
  try {
    const res = await request(o.what, url, { headers: o.headers ?? {} }, call, { guard: ctx.guard });
    if (!res.ok) throw statusFailure(o.what, res, await readText(o.what, res, call, 2000).catch(() => ''));
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (declared > o.maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw tooLarge(o);
    }
    const result = await save(res, file, { ctx, o, verify, declared, touch: clock.touch, signal: call.signal });
    for (const c of verify) {
      const actual = c.hash.digest('hex');
      if (!c.expected.includes(actual)) throw new PermanentError(`${o.what} does not match the registry's ${c.algo} digest (got ${actual})`, ARCHIVE_INTEGRITY);
    }
    return result;
  } catch (err) {
    await fs.rm(file, { force: true });
    throw err;
  } finally {
    clock.clear();
  }
}

const tooLarge = (o: DownloadOptions) => new PermanentError(`${o.what} is larger than ${o.maxBytes} bytes`, ARCHIVE_TOO_LARGE);
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

/** Streams the body to the file, counting, hashing and heartbeating; a failure while reading is classified. */
async function save(
  res: Response,
  file: string,
  s: { ctx: SourceContext; o: DownloadOptions; verify: Check[]; declared: number; touch: () => void; signal: AbortSignal },
): Promise<Download> {
  const sha256 = createHash('sha256');
  const out = await fs.open(file, 'w');
  let size = 0;
  let beat = 0;
  try {
    for await (const chunk of res.body ?? []) {
      s.touch();
      size += chunk.byteLength;
      if (size > s.o.maxBytes) throw tooLarge(s.o);
      sha256.update(chunk);
      for (const c of s.verify) c.hash.update(chunk);
      await out.write(chunk);
      if (Date.now() - beat >= HEARTBEAT_MS) {
        beat = Date.now();
        s.ctx.heartbeat(`${s.o.what}: ${mb(size)}${s.declared >= 0 ? ` of ${mb(s.declared)}` : ''}`);
      }
    }
  } catch (err) {
    if (err instanceof PermanentError) throw err;
    if (s.signal.aborted) throw s.signal.reason ?? err;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new RecoverableError(`${s.o.what} broke off: ${redact(cause?.code ?? cause?.message ?? (err as Error).message)}`);
  } finally {
    await out.close();
  }
  return { bytes: size, sha256: sha256.digest('hex') };
}
