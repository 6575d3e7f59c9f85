import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.js';
import { redact, registerSecret } from '../../core/redact.js';
import { cacheDir, findTemporalCli } from '../../runtime/temporal.js';

const log = createLogger('silent');
let tmp: string;
let server: http.Server;
let mirror: string;

function fakeCli(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'temporal');
  fs.writeFileSync(file, '#!/bin/sh\necho fake temporal\n', { mode: 0o755 });
  return file;
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-prov-'));
  // A mirror on 127.0.0.1 serving the release archive layout: a tar.gz with `temporal` at its root.
  const archiveDir = path.join(tmp, 'archive');
  fakeCli(archiveDir);
  execFileSync('tar', ['-czf', path.join(tmp, 'temporal.tar.gz'), '-C', archiveDir, 'temporal']);
  server = http.createServer((req, res) => {
    if (req.url === '/cli/archive.tar.gz') fs.createReadStream(path.join(tmp, 'temporal.tar.gz')).pipe(res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  mirror = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** An environment with no `temporal` and no `go` on PATH, and a cache of its own. */
function env(name: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: path.join(tmp, name, 'empty-bin'), GRISTMILL_CACHE_DIR: path.join(tmp, name, 'cache'), ...extra };
}

describe('finding the Temporal CLI', () => {
  it('takes TEMPORAL_CLI first, and says so when it is not executable', async () => {
    const explicit = fakeCli(path.join(tmp, 'explicit'));
    expect(await findTemporalCli(log, { explicit, env: env('a') })).toBe(explicit);
    await expect(findTemporalCli(log, { explicit: path.join(tmp, 'missing'), env: env('a') })).rejects.toThrow(
      /TEMPORAL_CLI points at .*missing, which is not an executable file/,
    );
  });

  it('then `temporal` on PATH, before the cache', async () => {
    const e = env('b');
    const onPath = fakeCli(e.PATH!);
    fakeCli(cacheDir(e));
    expect(await findTemporalCli(log, { env: e })).toBe(onPath);
  });

  it('then the user-level cache, so a fresh clone on the same machine reuses it', async () => {
    const e = env('c');
    const cached = fakeCli(cacheDir(e));
    expect(cached).toBe(path.join(tmp, 'c', 'cache', 'temporal', 'v1.5.1', 'temporal'));
    expect(await findTemporalCli(log, { env: e })).toBe(cached);
  });

  it('then downloads the pinned archive into the cache', async () => {
    const e = env('d', { TEMPORAL_CLI_DOWNLOAD_URL: `${mirror}/cli/archive.tar.gz` });
    const found = await findTemporalCli(log, { env: e });
    expect(found).toBe(path.join(cacheDir(e), 'temporal'));
    expect(execFileSync(found).toString()).toBe('fake temporal\n');
    // Nothing half-written is left beside it.
    expect(fs.readdirSync(cacheDir(e))).toEqual(['temporal']);
  });

  it('else builds it with go install into the cache', async () => {
    const e = env('g', { TEMPORAL_CLI_DOWNLOAD_URL: `${mirror}/nothing-here.tar.gz` });
    // A stand-in for `go`: `go install <module>/cmd/temporal@<version>` writes `temporal` into GOBIN.
    const calls = path.join(tmp, 'g', 'calls');
    fs.mkdirSync(e.PATH!, { recursive: true });
    fs.writeFileSync(
      path.join(e.PATH!, 'go'),
      `#!/bin/sh\necho "$*" >> ${calls}\nmkdir -p "$GOBIN"\nprintf '#!/bin/sh\\necho built temporal\\n' > "$GOBIN/temporal"\nchmod +x "$GOBIN/temporal"\n`,
      { mode: 0o755 },
    );
    const found = await findTemporalCli(log, { env: { ...e, PATH: `${e.PATH}:/usr/bin:/bin` } });
    expect(found).toBe(path.join(cacheDir(e), 'temporal'));
    expect(execFileSync(found).toString()).toBe('built temporal\n');
    expect(fs.readFileSync(calls, 'utf8').trim()).toBe('install github.com/temporalio/cli/cmd/temporal@v1.5.1');
    expect(fs.readdirSync(cacheDir(e))).toEqual(['temporal']);
  });

  it('fails with one message that names every way to get it', async () => {
    const e = env('e', { TEMPORAL_CLI_DOWNLOAD_URL: `${mirror}/nothing-here.tar.gz` });
    const err = await findTemporalCli(log, { env: e }).catch((x: Error) => x);
    expect(err).toBeInstanceOf(Error);
    const message = (err as Error).message;
    expect(message).toContain('HTTP 404');
    expect(message).toContain('Go is not installed');
    for (const way of ['TEMPORAL_ADDRESS', 'TEMPORAL_CLI', 'PATH', 'go install github.com/temporalio/cli/cmd/temporal@v1.5.1']) {
      expect(message).toContain(way);
    }
  });
});

describe('secret redaction', () => {
  it('masks credentials in URLs, bearer tokens and registered secrets', () => {
    registerSecret('super-secret-api-key');
    expect(redact('clone https://x-access-token:ghp_abcdef123456@github.com/o/r.git failed')).toBe(
      'clone https://***@github.com/o/r.git failed',
    );
    expect(redact('header Bearer abcdefghijklmnop')).toBe('header Bearer ***');
    expect(redact('key=super-secret-api-key!')).toBe('key=***!');
    expect(redact('token ok', ['tok'])).toBe('token ok'); // too short to be a secret
  });
});
