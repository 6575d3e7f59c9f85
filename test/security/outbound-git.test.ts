import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.js';
import { probeRemote } from '../../docindex/git.js';
import { OutboundGuard } from '../../outbound/guard.js';
import { api, expectError, waitForJob } from '../docindex/helpers.js';
import { type GitHost, startGitHost, TestRepo } from '../support/git.js';
import { freePort } from '../../fakes/ports.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { publicServer, type RecordingServer } from './outbound-support.js';

/**
 * Git-host libraries: a remote at an internal address, over http(s), git:// or ssh, is
 * refused before git connects; a redirect inside is refused at the connection; a sourceUrl such as `-ox@x:o/r`
 * never reaches git as an option. Only 127.0.0.2 is allowed here.
 */
const TOKEN = 'ghp_outbound_git_test_token_1';
let stack: TestStack;
let tmp: string;
let host: GitHost;
let pub: RecordingServer;
let daemon: ChildProcess | undefined;
let daemonPort: number;
let listener: net.Server;
let connections = 0;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-outbound-git-'));
  const repo = new TestRepo(path.join(tmp, 'work'));
  repo.write({ 'README.md': '# Gadgets\n\nGadgets are small devices with one clear purpose each, documented here.\n' });
  repo.commit();
  repo.publish(path.join(tmp, 'host'), 'acme', 'gadgets');
  host = await startGitHost(path.join(tmp, 'host'), TOKEN);
  // A "public" git host whose every path redirects to the internal one.
  pub = await publicServer((req, res) => res.writeHead(301, { location: `${host.url}${req.url}` }).end());
  // Something listening on an internal port, to see whether git:// connects to it.
  listener = net.createServer((s) => {
    connections++;
    s.destroy();
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  // A git daemon on the allowed address, for git:// that should work.
  daemonPort = await freePort();
  daemon = spawn('git', ['daemon', '--reuseaddr', '--export-all', `--base-path=${path.join(tmp, 'host')}`, '--listen=127.0.0.2', `--port=${daemonPort}`, path.join(tmp, 'host')], { stdio: 'ignore' });
  await waitForPort('127.0.0.2', daemonPort);
  stack = await startTestStack({ env: { OUTBOUND_ALLOW: '127.0.0.2' } });
});
afterAll(async () => {
  daemon?.kill();
  await stack?.stop();
  await Promise.all([host?.close(), pub?.close(), new Promise((r) => listener?.close(r))]);
  fs.rmSync(tmp, { recursive: true, force: true });
});

const addLibrary = (sourceUrl: string, extra: Record<string, unknown> = {}) =>
  api(stack, 'POST', '/api/v1/libs', { source: 'git-host', sourceUrl, autoIndex: false, ...extra });

describe('git-host libraries at internal addresses', () => {
  it('are refused before git connects: http, git:// to any port, ssh-style, by name', async () => {
    const listenerPort = (listener.address() as net.AddressInfo).port;
    for (const url of [
      `${host.url}/acme/gadgets.git`,
      `git://127.0.0.1:${listenerPort}/acme/gadgets.git`,
      `git://0x7f.1:${listenerPort}/acme/gadgets.git`,
      `ssh://git@127.0.0.1:${listenerPort}/acme/gadgets.git`,
      'git@localhost:acme/gadgets.git',
      'http://169.254.169.254/acme/gadgets.git',
    ]) {
      const res = await addLibrary(url, { gitHostToken: TOKEN });
      expectError(res, 400, 'ADDRESS_NOT_ALLOWED');
      expect(res.body.error, url).toMatch(/^The repository was refused: .* (loopback|cloud metadata) address; .*OUTBOUND_ALLOW/);
      expect(res.body.details).toEqual([{ pointer: '/body/sourceUrl', message: res.body.error }]);
    }
    expect(host.requests).toEqual([]);
    expect(connections).toBe(0);
  });

  it('a public remote that redirects inside is refused at the redirect', async () => {
    const res = await addLibrary(`${pub.url}/acme/gadgets.git`, { gitHostToken: TOKEN });
    expectError(res, 400, 'REPOSITORY_UNREACHABLE');
    expect(JSON.stringify(res.body)).not.toContain(TOKEN);
    expect(pub.hits.length).toBeGreaterThan(0);
    expect(host.requests).toEqual([]);
  });

  it('URLs that git or ssh would read as options, or that carry credentials, are 400 INVALID_SOURCE_URL', async () => {
    for (const url of ['-ox@x:o/r', '--upload-pack=touch /tmp/x', 'x@-oProxyCommand=sh:o/r', 'ssh://-oProxyCommand=sh@h/o/r', 'https://user:ghp_pw@github.com/o/r', 'ext::sh -c touch% /tmp/x', 'file:///etc/passwd', 'https://github.com/o/r\nx']) {
      const res = await addLibrary(url);
      expect(res.body.code, url).toBe('INVALID_SOURCE_URL');
      expectError(res, 400, 'INVALID_SOURCE_URL');
    }
  });

  it('git:// to an allowed host works, at the address the guard checked', async () => {
    const res = await addLibrary(`git://127.0.0.2:${daemonPort}/acme/gadgets.git`, { autoIndex: true });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect((await waitForJob(stack, res.body.job.id)).status).toBe('done');
  });
});

describe('what git is given', () => {
  let bin: string;
  let log: string;
  const realPath = process.env.PATH;
  beforeAll(() => {
    bin = fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-fake-git-'));
    log = path.join(bin, 'calls.log');
    const git = fs.realpathSync(require_('git'));
    // Wrappers that record their arguments (one per line, a blank line after each call): git runs on, ssh fails.
    fs.writeFileSync(path.join(bin, 'git'), `#!/bin/sh\nprintf 'git\\n' >> ${log}\nfor a in "$@"; do printf '%s\\n' "$a" >> ${log}; done\nprintf '\\n' >> ${log}\nexec ${git} "$@"\n`, { mode: 0o755 });
    fs.writeFileSync(path.join(bin, 'ssh'), `#!/bin/sh\nprintf 'ssh\\n' >> ${log}\nfor a in "$@"; do printf '%s\\n' "$a" >> ${log}; done\nprintf '\\n' >> ${log}\nexit 255\n`, { mode: 0o755 });
    process.env.PATH = `${bin}:${realPath}`;
  });
  afterAll(() => {
    process.env.PATH = realPath;
    fs.rmSync(bin, { recursive: true, force: true });
  });
  const calls = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '').split('\n\n').filter(Boolean).map((c) => c.split('\n'));

  it('a URL comes after --, and an option-like one never reaches git', async () => {
    const guard = new OutboundGuard(loadConfig({ OUTBOUND_ALLOW: '127.0.0.2' }).outbound);
    try {
      await expect(probeRemote('-ox@x:o/r', { guard })).rejects.toThrow(/Not a git remote URL/);
      await expect(probeRemote('--upload-pack=touch /tmp/pwned', { guard })).rejects.toThrow(/Not a git remote URL/);
      expect(calls()).toEqual([]);
      const remote = `${pub.url}/acme/none.git`;
      await expect(probeRemote(remote, { guard })).rejects.toThrow();
      expect(calls()).toEqual([['git', 'ls-remote', '--heads', '--', remote]]);
    } finally {
      await guard.close();
    }
  });

  it('ssh is pinned to the checked address, the name kept for host keys', async () => {
    fs.rmSync(log, { force: true });
    const guard = new OutboundGuard(loadConfig({ OUTBOUND_ALLOW: 'localhost' }).outbound);
    try {
      await expect(probeRemote('git@localhost:acme/gadgets.git', { guard })).rejects.toThrow();
      const ssh = calls().find((c) => c[0] === 'ssh');
      expect(ssh).toBeDefined();
      expect(ssh).toContain('HostKeyAlias=localhost');
      expect(ssh!.find((a) => a.startsWith('HostName='))).toMatch(/^HostName=(127\.0\.0\.1|::1)$/);
      expect(ssh).toContain('ProxyCommand=none');
    } finally {
      await guard.close();
    }
  });
});

function require_(cmd: string): string {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const p = path.join(dir, cmd);
    if (fs.existsSync(p)) return p;
  }
  throw new Error(`${cmd} not found`);
}

async function waitForPort(hostname: string, port: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host: hostname, port }, () => (s.destroy(), resolve(true)));
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${hostname}:${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
