import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.js';
import { Library } from '../../docindex/entities/library.js';
import { rawRequest, type RawRequest } from '../support/raw-http.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * A web page in the user's browser cannot drive a local install (before: with no API_KEY, CORS `*`, no Host check,
 * any page could register a folder as a library and read it back, and list the disk; a DNS-rebinding page was even
 * same-origin). Non-browser clients are unaffected.
 */
let stack: TestStack;
let port: string;
beforeAll(async () => {
  stack = await startTestStack({
    queues: [],
    env: { ALLOWED_HOSTS: 'gristmill.lan,.home.arpa', ALLOWED_ORIGINS: 'http://tools.example:5173' },
  });
  port = new URL(stack.url).port;
});
afterAll(() => stack?.stop());

const send = (r: Omit<RawRequest, 'path'> & { path?: string }) => rawRequest(stack.url, { path: '/api/v1/libs', ...r });
const code = (text: string) => JSON.parse(text).code as string;
const registerEtc = (headers: Record<string, string>) =>
  send({ method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify({ source: 'local', sourceUrl: '/etc' }) });

describe('the Host check', () => {
  it('refuses a name the server does not serve (DNS rebinding), even when the page is same-origin under it', async () => {
    for (const host of [`rebind.attacker.example:${port}`, 'attacker.example', `gristmill.lan.attacker.example:${port}`, `localhost.attacker.example`]) {
      const read = await send({ headers: { Host: host } });
      expect(read.status, host).toBe(403);
      expect(code(read.text)).toBe('HOST_NOT_ALLOWED');
      const write = await registerEtc({ Host: host, Origin: `http://${host}`, 'Sec-Fetch-Site': 'same-origin' });
      expect(write.status).toBe(403);
    }
    const page = await send({ path: '/', headers: { Host: `rebind.attacker.example:${port}` } });
    expect(page.status).toBe(403);
    expect(await stack.orm.em.fork().count(Library, {})).toBe(0);
  });

  it('answers IP addresses, localhost, PUBLIC_BASE_URL and ALLOWED_HOSTS (with .suffix for subdomains)', async () => {
    for (const host of [`127.0.0.1:${port}`, `[::1]:${port}`, `localhost:${port}`, `app.localhost:${port}`, `LOCALHOST:${port}`, 'gristmill.lan', 'nas.home.arpa:8080', 'home.arpa', `10.0.0.7:${port}`]) {
      const res = await send({ headers: { Host: host } });
      expect(res.status, host).toBe(200);
    }
  });

  it('is 400 for a Host header that is not a host', async () => {
    for (const host of ['a b', 'x/y', 'user@evil', '[:::', 'a:b:c']) {
      const res = await send({ headers: { Host: host } });
      expect(res.status, JSON.stringify(host)).toBe(400);
    }
  });
});

describe('cross-origin browser requests without API_KEY', () => {
  it('are refused from a foreign Origin, with the CORS headers so the page can read why', async () => {
    const res = await registerEtc({ Origin: 'https://evil.example' });
    expect(res.status).toBe(403);
    expect(code(res.text)).toBe('ORIGIN_NOT_ALLOWED');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    for (const path of ['/api/v1/fs/browse?path=/', '/api/v1/context?libraryId=/local/etc&query=passwd', '/api/v1/libs', '/mcp', '/healthz?deep=1']) {
      const read = await send({ path, headers: { Origin: 'https://evil.example' } });
      expect(read.status, path).toBe(403);
    }
    expect(await stack.orm.em.fork().count(Library, {})).toBe(0);
  });

  it('are refused when the browser says the request comes from another site, Origin or not', async () => {
    for (const site of ['cross-site', 'same-site']) {
      const res = await send({ path: '/api/v1/fs/browse?path=/', headers: { 'Sec-Fetch-Site': site, 'Sec-Fetch-Mode': 'no-cors' } });
      expect(res.status, site).toBe(403);
    }
    const nullOrigin = await registerEtc({ Origin: 'null' });
    expect(nullOrigin.status).toBe(403);
    // Another port on localhost is another origin too.
    const otherPort = await send({ headers: { Origin: 'http://localhost:5173' } });
    expect(otherPort.status).toBe(403);
  });

  it('leave preflight at 204, the web app reachable from links, and same-origin, allowed and non-browser clients alone', async () => {
    const preflight = await send({ method: 'OPTIONS', headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-methods']).toContain('POST');
    const navigation = await send({ path: '/recipes', headers: { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'navigate' } });
    expect(navigation.status).toBe(200);
    const typed = await send({ headers: { 'Sec-Fetch-Site': 'none' } });
    expect(typed.status).toBe(200);
    const sameOrigin = await send({ headers: { Origin: `http://127.0.0.1:${port}`, 'Sec-Fetch-Site': 'same-origin' } });
    expect(sameOrigin.status).toBe(200);
    const sameOriginByName = await send({ headers: { Host: `localhost:${port}`, Origin: `http://localhost:${port}` } });
    expect(sameOriginByName.status).toBe(200);
    const allowed = await send({ headers: { Origin: 'http://tools.example:5173', 'Sec-Fetch-Site': 'cross-site' } });
    expect(allowed.status).toBe(200);
    const curl = await send({});
    expect(curl.status).toBe(200);
  });
});

describe('with API_KEY set', () => {
  let keyed: TestStack;
  const KEY = 'k3y-for-browser-tests-0123456789';
  beforeAll(async () => {
    keyed = await startTestStack({ queues: [], env: { API_KEY: KEY } });
  });
  afterAll(() => keyed?.stop());

  it('a page elsewhere may call the API with the key (the key decides), but still only under a served Host', async () => {
    const url = keyed.url;
    const withKey = await rawRequest(url, { path: '/api/v1/libs', headers: { Origin: 'https://tools.example', Authorization: `Bearer ${KEY}` } });
    expect(withKey.status).toBe(200);
    const without = await rawRequest(url, { path: '/api/v1/libs', headers: { Origin: 'https://tools.example' } });
    expect(without.status).toBe(401);
    const rebound = await rawRequest(url, { path: '/api/v1/libs', headers: { Host: 'rebind.attacker.example', Authorization: `Bearer ${KEY}` } });
    expect(rebound.status).toBe(403);
  });
});

describe('the settings', () => {
  it('refuse values that cannot work, naming the variable', () => {
    expect(() => loadConfig({ ALLOWED_HOSTS: 'http://gristmill.lan' })).toThrow(/ALLOWED_HOSTS/);
    expect(() => loadConfig({ ALLOWED_HOSTS: 'gristmill.lan:3000' })).toThrow(/ALLOWED_HOSTS/);
    expect(() => loadConfig({ ALLOWED_ORIGINS: 'tools.example' })).toThrow(/ALLOWED_ORIGINS/);
    expect(() => loadConfig({ ALLOWED_ORIGINS: 'https://tools.example/app' })).toThrow(/ALLOWED_ORIGINS/);
    const c = loadConfig({ ALLOWED_HOSTS: 'Gristmill.LAN, .home.arpa', ALLOWED_ORIGINS: 'https://Tools.example, *' });
    expect(c.allowedHosts).toEqual(['gristmill.lan', '.home.arpa']);
    expect(c.allowedOrigins).toEqual(['https://tools.example', '*']);
  });
});
