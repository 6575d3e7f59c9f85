import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import { fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.js';
import { formatIp, parseIp, specialKind } from '../../core/ip.js';
import { OutboundGuard, type Resolver } from '../../outbound/guard.js';
import { selfSignedCertificate } from '../../fakes/tls.js';
import { internalServer, INTERNAL_SECRET, publicServer, type RecordingServer } from './outbound-support.js';

/**
 * The outbound-address guard on its own (outbound/guard.ts, outbound/proxy.ts, core/ip.ts): which addresses it
 * refuses, in every spelling, and that it refuses them where connections are made: after redirects, and when a
 * name resolves to something else the second time (DNS rebinding).
 */
const REFUSED = { name: 'PermanentError', code: 'ADDRESS_NOT_ALLOWED' };
const policy = (allow = '127.0.0.2') => loadConfig({ OUTBOUND_ALLOW: allow }).outbound;

let internal: RecordingServer;
let pub: RecordingServer;
beforeAll(async () => {
  internal = await internalServer();
  pub = await publicServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('public page'));
});
afterAll(async () => {
  await Promise.all([internal?.close(), pub?.close()]);
});

describe('addresses', () => {
  it('reads hosts as resolvers do, and says what kind of address each is', () => {
    const cases: [string, string, string | undefined][] = [
      ['127.0.0.1', '127.0.0.1', 'loopback'],
      ['2130706433', '127.0.0.1', 'loopback'], // decimal
      ['0x7f.1', '127.0.0.1', 'loopback'], // hex, two parts
      ['0177.0.0.1', '127.0.0.1', 'loopback'], // octal
      ['017700000001', '127.0.0.1', 'loopback'],
      ['127.1', '127.0.0.1', 'loopback'],
      ['0', '0.0.0.0', 'unspecified ("this network")'],
      ['10.1.2.3', '10.1.2.3', 'private'],
      ['172.16.0.1', '172.16.0.1', 'private'],
      ['172.32.0.1', '172.32.0.1', undefined],
      ['192.168.1.10', '192.168.1.10', 'private'],
      ['100.64.0.1', '100.64.0.1', 'shared (carrier-grade NAT)'],
      ['169.254.169.254', '169.254.169.254', 'cloud metadata'],
      ['169.254.10.10', '169.254.10.10', 'link-local'],
      ['224.0.0.251', '224.0.0.251', 'multicast'],
      ['255.255.255.255', '255.255.255.255', 'reserved (including broadcast)'],
      ['8.8.8.8', '8.8.8.8', undefined],
      ['::1', '::1', 'loopback'],
      ['[::1]', '::1', 'loopback'],
      ['::', '::', 'unspecified'],
      ['::ffff:127.0.0.1', '::ffff:7f00:1', 'loopback'], // IPv4-mapped
      ['[::ffff:7f00:1]', '::ffff:7f00:1', 'loopback'],
      ['::ffff:169.254.169.254', '::ffff:a9fe:a9fe', 'cloud metadata'],
      ['::ffff:8.8.8.8', '::ffff:808:808', undefined],
      ['64:ff9b::a00:1', '64:ff9b::a00:1', 'private'], // NAT64 of 10.0.0.1
      ['2002:c0a8:101::1', '2002:c0a8:101::1', 'private'], // 6to4 of 192.168.1.1
      ['::127.0.0.1', '::7f00:1', 'reserved (IPv4-compatible)'],
      ['fd00:ec2::254', 'fd00:ec2::254', 'cloud metadata'],
      ['fd12:3456::1', 'fd12:3456::1', 'private (unique local)'],
      ['fe80::1%eth0', 'fe80::1', 'link-local'],
      ['ff02::1', 'ff02::1', 'multicast'],
      ['2606:4700:4700::1111', '2606:4700:4700::1111', undefined],
    ];
    for (const [host, formatted, kind] of cases) {
      const b = parseIp(host);
      expect(b && formatIp(b), host).toBe(formatted);
      expect(specialKind(b!), host).toBe(kind);
    }
    for (const name of ['example.com', 'localhost', '1.2.3.4.5', '256.0.0.1', '08.0.0.1', '1:2:3:4:5:6:7:8:9', 'fe80::1::2', '']) {
      expect(parseIp(name), name).toBeUndefined();
    }
  });

  it('OUTBOUND_ALLOW takes ranges, addresses and host names, and says what it cannot read', () => {
    const p = policy('192.168.1.0/24, 10.0.0.5 fd00::/8,[fd01::1], gitea.lan,*.home.arpa');
    expect(p.allowRanges).toHaveLength(4);
    expect(p.allowHosts).toEqual(['gitea.lan', '*.home.arpa']);
    for (const bad of ['10.0.0.0/33', 'http://gitea.lan', 'gitea.lan/x', '-x.lan', '1.2.3.4.5']) {
      expect(() => loadConfig({ OUTBOUND_ALLOW: bad }), bad).toThrow(/OUTBOUND_ALLOW/);
    }
    const g = new OutboundGuard(p);
    expect(g.refusal(parseIp('192.168.1.77')!)).toBeUndefined();
    expect(g.refusal(parseIp('192.168.2.77')!)).toBe('private');
    expect(g.refusal(parseIp('::ffff:192.168.1.77')!)).toBeUndefined(); // a mapped address is its IPv4 one
    expect(g.refusal(parseIp('fd00::9')!)).toBeUndefined();
    expect(g.hostAllowed('GITEA.lan.')).toBe(true);
    expect(g.hostAllowed('nas.home.arpa')).toBe(true);
    expect(g.hostAllowed('home.arpa')).toBe(false);
  });

  it('refuses a name if any of its addresses is refused, and says why without the address', async () => {
    const resolver: Resolver = async (name) =>
      name === 'mixed.test' ? [{ address: '93.184.215.14', family: 4 }, { address: '10.0.0.7', family: 4 }] : [{ address: '93.184.215.14', family: 4 }];
    const g = new OutboundGuard(policy(''), resolver);
    await expect(g.resolve('public.test')).resolves.toEqual([{ address: '93.184.215.14', family: 4 }]);
    const err = await g.resolve('mixed.test').catch((e: unknown) => e);
    expect(err).toMatchObject(REFUSED);
    expect((err as Error).message).toMatch(/^mixed\.test resolves to a private address; .*OUTBOUND_ALLOW/);
    expect((err as Error).message).not.toContain('10.0.0.7');
    await expect(g.resolve('0x7f.1')).rejects.toThrow('0x7f.1 is a loopback address');
    await expect(new OutboundGuard(policy('')).resolve('localhost')).rejects.toMatchObject(REFUSED);
    // Allowed by name: whatever it resolves to.
    await expect(new OutboundGuard(policy('mixed.test'), resolver).resolve('mixed.test')).resolves.toHaveLength(2);
  });
});

describe('where connections are made', () => {
  const guard = new OutboundGuard(policy('127.0.0.2'));
  afterAll(() => guard.close());

  it('fetch: a refused address, a redirect to one and a name resolving to one are never reached', async () => {
    const ok = await fetch(`${pub.url}/page`, { dispatcher: guard.dispatcher });
    expect(await ok.text()).toBe('public page');
    for (const url of [
      `${internal.url}/direct`,
      `http://localhost:${internal.port}/by-name`,
      `http://[::ffff:127.0.0.1]:${internal.port}/mapped`,
      `http://2130706433:${internal.port}/decimal`,
      `${pub.url}/to?url=${encodeURIComponent(`${internal.url}/redirected`)}`,
    ]) {
      const err = await fetch(url, { dispatcher: guard.dispatcher }).catch((e: unknown) => e);
      expect((err as { cause?: unknown }).cause, url).toMatchObject(REFUSED);
    }
    expect(internal.hits).toEqual([]);
  });

  it('the address checked is the one connected to: a name that rebinds between check and connect is refused', async () => {
    // First answer an allowed address, then the internal one: a check followed by a separate connection would
    // reach the internal server.
    let calls = 0;
    const rebinding: Resolver = async () => [{ address: calls++ === 0 ? '127.0.0.2' : '127.0.0.1', family: 4 }];
    const g = new OutboundGuard(policy('127.0.0.2'), rebinding);
    try {
      await g.checkUrl(`http://rebind.test:${internal.port}/`, 'The post'); // passes: 127.0.0.2
      const err = await fetch(`http://rebind.test:${internal.port}/secret`, { dispatcher: g.dispatcher }).catch((e: unknown) => e);
      expect((err as { cause?: unknown }).cause).toMatchObject(REFUSED);
      // The proxy git and yt-dlp use: the same.
      calls = 0;
      const status = await connectThrough(await g.proxyUrl(), `rebind.test:${internal.port}`);
      expect(status).toMatch(/^HTTP\/1\.1 403/);
      expect(internal.hits).toEqual([]);
    } finally {
      await g.close();
    }
  });

  it('the proxy: CONNECT and plain HTTP to allowed addresses only, and only with its credentials', async () => {
    const proxy = await guard.proxyUrl();
    expect(await connectThrough(proxy, `127.0.0.2:${pub.port}`)).toMatch(/^HTTP\/1\.1 200/);
    expect(await connectThrough(proxy, `127.0.0.1:${internal.port}`)).toMatch(/^HTTP\/1\.1 403/);
    expect(await connectThrough(proxy, `localhost:${internal.port}`)).toMatch(/^HTTP\/1\.1 403/);
    const anonymous = new URL(proxy);
    anonymous.username = '';
    anonymous.password = '';
    expect(await connectThrough(anonymous.toString(), `127.0.0.2:${pub.port}`)).toMatch(/^HTTP\/1\.1 407/);

    expect(await forwardThrough(proxy, `${pub.url}/page`)).toEqual({ status: 200, body: 'public page' });
    const refused = await forwardThrough(proxy, `${internal.url}/page`);
    expect(refused.status).toBe(403);
    expect(refused.body).not.toContain(INTERNAL_SECRET);
    // A redirect is passed back to the tool, whose next request is checked like the first.
    const redirect = await forwardThrough(proxy, `${pub.url}/to?url=${encodeURIComponent(`${internal.url}/x`)}`);
    expect(redirect.status).toBe(302);
    expect((await forwardThrough(proxy, `${internal.url}/x`)).status).toBe(403);
    expect(internal.hits).toEqual([]);
  });

  it('https.Agent (web push): address literals and names are checked when the socket is made', async () => {
    const { key, cert } = selfSignedCertificate();
    const server = https.createServer({ key, cert }, (_req, res) => res.end('pushed'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    let hits = 0;
    server.on('request', () => hits++);
    const agent = guard.httpsAgent({ ca: cert });
    try {
      for (const host of ['127.0.0.1', 'localhost']) {
        const err = await new Promise<unknown>((resolve) => {
          const req = https.request({ host, port, path: '/', method: 'POST', agent }, () => resolve(undefined));
          req.on('error', resolve);
          req.end();
        });
        expect(err, host).toMatchObject(REFUSED);
      }
      expect(hits).toBe(0);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

/** Sends CONNECT through the proxy; answers its status line. */
function connectThrough(proxy: string, authority: string): Promise<string> {
  const p = new URL(proxy);
  const auth = p.username ? { 'proxy-authorization': `Basic ${Buffer.from(`${decodeURIComponent(p.username)}:${decodeURIComponent(p.password)}`).toString('base64')}` } : {};
  return new Promise((resolve, reject) => {
    const req = http.request({ host: p.hostname, port: p.port, method: 'CONNECT', path: authority, headers: auth });
    req.on('connect', (res, socket) => {
      socket.destroy();
      resolve(`HTTP/1.1 ${res.statusCode}`);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(`HTTP/1.1 ${res.statusCode}`);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A plain-HTTP request through the proxy (absolute-form, as curl and yt-dlp send them). */
function forwardThrough(proxy: string, url: string): Promise<{ status: number; body: string }> {
  const p = new URL(proxy);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(p.username)}:${decodeURIComponent(p.password)}`).toString('base64')}`;
  return new Promise((resolve, reject) => {
    const req = http.request({ host: p.hostname, port: p.port, method: 'GET', path: url, headers: { 'proxy-authorization': auth, host: new URL(url).host } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
