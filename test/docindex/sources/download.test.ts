import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../../core/log.js';
import { downloadTo, type DownloadOptions, expectedDigests } from '../../../docindex/sources/download.js';
import type { SourceContext } from '../../../docindex/sources/types.js';
import { OutboundGuard } from '../../../outbound/guard.js';
import { loadConfig } from '../../../runtime/config.js';
import { internalServer, type RecordingServer, recordingServer } from '../../security/outbound-support.js';

/**
 * Archive downloads (docindex/sources/download.ts) from a real server on 127.0.0.2, which the guard is configured
 * to allow as an operator would allow a mirror; 127.0.0.1 plays an internal address that must stay unreached.
 */
const BODY = Buffer.from('a package archive, or so it says\n'.repeat(1000));
const SHA256 = createHash('sha256').update(BODY).digest('hex');
const INTEGRITY = `sha512-${createHash('sha512').update(BODY).digest('base64')}`;

let internal: RecordingServer;
let server: RecordingServer;
let dir: string;
const config = loadConfig({ OUTBOUND_ALLOW: '127.0.0.2' });
const guard = new OutboundGuard(config.outbound);
const open = new Set<http.ServerResponse>();

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  open.add(res);
  res.on('close', () => open.delete(res));
  const u = new URL(req.url ?? '/', 'http://x');
  switch (u.pathname) {
    case '/ok':
      return void res.writeHead(200, { 'content-length': BODY.length }).end(BODY);
    case '/chunked':
      res.writeHead(200);
      res.write(BODY.subarray(0, 1000));
      return void setTimeout(() => res.end(BODY.subarray(1000)), 20);
    case '/big-declared':
      return void res.writeHead(200, { 'content-length': 50_000_000 }).end();
    case '/big-undeclared': {
      // No Content-Length, and bytes for as long as the client reads.
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 7);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      return pump();
    }
    case '/hang':
      return; // never answers
    case '/stall':
      res.writeHead(200, { 'content-length': BODY.length });
      return void res.write(BODY.subarray(0, 100)); // then nothing
    case '/cut':
      res.writeHead(200, { 'content-length': BODY.length });
      return void res.write(BODY.subarray(0, 100), () => res.socket?.destroy());
    case '/to-internal':
      return void res.writeHead(302, { location: `${internal.url}/secret.tgz` }).end();
    case '/busy':
      return void res.writeHead(503, { 'retry-after': '7' }).end('try later');
    default:
      return void res.writeHead(404).end('no such archive');
  }
}

beforeAll(async () => {
  internal = await internalServer();
  server = await recordingServer('127.0.0.2', route);
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'download-test-'));
});
afterAll(async () => {
  for (const res of open) res.destroy();
  await Promise.all([internal?.close(), server?.close(), guard.close()]);
  await fs.rm(dir, { recursive: true, force: true });
});

let n = 0;
function context(signal = new AbortController().signal): SourceContext & { beats: string[] } {
  const beats: string[] = [];
  return { config, guard, log: createLogger('silent'), signal, workdir: dir, heartbeat: (d) => beats.push(d), beats };
}

async function download(route: string, o: Partial<DownloadOptions> = {}, ctx = context()) {
  const file = path.join(dir, `a${++n}.tgz`);
  const run = downloadTo(`${server.url}${route}`, file, ctx, { what: 'The archive', maxBytes: 1_000_000, ...o });
  return { file, run };
}

const exists = (file: string) => fs.access(file).then(() => true, () => false);

describe('downloads', () => {
  it('streams the body to the file and checks the registry digests (hex, SRI)', async () => {
    for (const route of ['/ok', '/chunked']) {
      const ctx = context();
      const { file, run } = await download(route, { sha256: SHA256, sha512: `${INTEGRITY} sha1-AAAA` }, ctx);
      expect(await run).toEqual({ bytes: BODY.length, sha256: SHA256 });
      expect(await fs.readFile(file)).toEqual(BODY);
      expect(ctx.beats[0]).toMatch(/^The archive: 0\.0 MB/);
    }
  });

  it('refuses a wrong digest, and leaves no file', async () => {
    const wrong = createHash('sha512').update('something else').digest('base64');
    for (const o of [{ sha512: `sha512-${wrong}` }, { sha256: '0'.repeat(64) }, { sha256: 'not a digest' }]) {
      const { file, run } = await download('/ok', o);
      await expect(run).rejects.toMatchObject({ name: 'PermanentError', code: 'ARCHIVE_INTEGRITY' });
      expect(await exists(file)).toBe(false);
    }
  });

  it('refuses more than maxBytes, whether or not the server says how much it sends', async () => {
    for (const route of ['/big-declared', '/big-undeclared']) {
      const { file, run } = await download(route, { maxBytes: 1_000_000 });
      await expect(run).rejects.toMatchObject({ name: 'PermanentError', code: 'ARCHIVE_TOO_LARGE' });
      expect(await exists(file)).toBe(false);
    }
  });

  it('ends a server that hangs before or during the body, recoverably', async () => {
    for (const route of ['/hang', '/stall']) {
      const { file, run } = await download(route, { idleMs: 300 });
      await expect(run).rejects.toMatchObject({ name: 'RecoverableError', message: 'The archive sent nothing for 300 ms' });
      expect(await exists(file)).toBe(false);
    }
    const { run } = await download('/stall', { timeoutMs: 400 });
    await expect(run).rejects.toMatchObject({ name: 'RecoverableError', message: 'The archive did not finish within 400 ms' });
  });

  it('names the whole time as the reason even when the clock reads later each time (one timer ends the call)', async () => {
    // Reproduces a CI failure: the millisecond turned between the download's clock and the request's own deadline,
    // whose timer then fired first and read as a broken connection.
    const real = Date.now.bind(Date);
    let skew = 0;
    const now = vi.spyOn(Date, 'now').mockImplementation(() => real() + skew++);
    try {
      const { run } = await download('/stall', { timeoutMs: 200 });
      await expect(run).rejects.toMatchObject({ name: 'RecoverableError', message: 'The archive did not finish within 200 ms' });
    } finally {
      now.mockRestore();
    }
  });

  it('calls a connection cut mid-body and a 5xx recoverable, a 404 permanent', async () => {
    const cut = await download('/cut');
    await expect(cut.run).rejects.toMatchObject({ name: 'RecoverableError', message: expect.stringMatching(/^The archive broke off/) });
    expect(await exists(cut.file)).toBe(false);
    await expect((await download('/busy')).run).rejects.toMatchObject({ name: 'RecoverableError', retryAfterMs: 7000 });
    await expect((await download('/missing')).run).rejects.toMatchObject({ name: 'PermanentError', message: expect.stringContaining('404') });
  });

  it('refuses a redirect to an address the guard refuses, without reaching it', async () => {
    const { file, run } = await download('/to-internal');
    await expect(run).rejects.toMatchObject({ name: 'PermanentError', code: 'ADDRESS_NOT_ALLOWED' });
    expect(internal.hits).toEqual([]);
    expect(await exists(file)).toBe(false);
    await expect(downloadTo(`${internal.url}/x.tgz`, path.join(dir, 'direct.tgz'), context(), { what: 'The archive', maxBytes: 1000 })).rejects.toMatchObject({
      code: 'ADDRESS_NOT_ALLOWED',
    });
    expect(internal.hits).toEqual([]);
  });

  it('refuses URLs that are not http(s)', async () => {
    for (const url of ['file:///etc/passwd', 'data:,hello', 'not a url']) {
      await expect(downloadTo(url, path.join(dir, 'x.tgz'), context(), { what: 'The archive', maxBytes: 1000 })).rejects.toMatchObject({ name: 'PermanentError' });
    }
  });

  it('ends when the attempt is cancelled, with the cancellation', async () => {
    const stop = new AbortController();
    const { file, run } = await download('/stall', {}, context(stop.signal));
    setTimeout(() => stop.abort(new Error('cancelled by the user')), 100);
    await expect(run).rejects.toThrow('cancelled by the user');
    expect(await exists(file)).toBe(false);
  });
});

describe('expectedDigests', () => {
  it('reads hex, SRI and base64, and passes over other algorithms', () => {
    const hex = createHash('sha512').update('x').digest('hex');
    const b64 = Buffer.from(hex, 'hex').toString('base64');
    expect(expectedDigests(`sha1-abc sha512-${b64}`, 'sha512')).toEqual([hex]);
    expect(expectedDigests(hex.toUpperCase(), 'sha512')).toEqual([hex]);
    expect(expectedDigests(b64, 'sha512')).toEqual([hex]);
    expect(expectedDigests('sha1-abc', 'sha512')).toEqual([]);
    expect(expectedDigests(SHA256, 'sha256')).toEqual([SHA256]);
  });
});
