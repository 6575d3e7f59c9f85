import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler } from '../../api/errors.js';
import { webApp } from '../../api/web.js';
import { createLogger } from '../../core/log.js';
import { json } from '../support/http.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/** The web interface as the API serves it: from the sources (built in memory), behind an API key it must not need. */
const KEY = 'web-test-api-key-0123456789';
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ queues: [], env: { API_KEY: KEY } });
});
afterAll(() => stack?.stop());

/**
 * A raw request, so that paths and headers reach the server exactly as written (fetch would normalise `..`, and it
 * adds `Cache-Control: no-cache` to a conditional request).
 */
function raw(base: string, rawPath: string, method = 'GET', headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/`, { method, path: rawPath, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the web interface', () => {
  let html: string;
  let script: string;
  let styles: string;

  it('serves the shell at / without an API key, with a content security policy, revalidated on each load', async () => {
    const res = await fetch(`${stack.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('etag')).toMatch(/^"[\w-]+"$/);
    html = await res.text();
    expect(html).toContain('<div id="app"></div>');
    expect(html).toContain('<link rel="manifest" href="/manifest.webmanifest" />');
    script = /<script type="module" src="(\/assets\/app-\w+\.js)">/.exec(html)![1]!;
    styles = /<link rel="stylesheet" href="(\/assets\/styles-\w+\.css)"/.exec(html)![1]!;

    // The API itself still wants the key.
    expect((await fetch(`${stack.url}/api/v1/libs`)).status).toBe(401);
  });

  it('serves hashed assets with their types, cached for good', async () => {
    const js = await fetch(`${stack.url}${script}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await js.text()).toContain('gristmill.apiKey');
    const css = await fetch(`${stack.url}${styles}`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await css.text()).toContain('--accent');
    const map = await fetch(`${stack.url}${script}.map`);
    expect(map.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });

  it('serves the manifest with its share target, the service worker and the icons', async () => {
    const manifest = await fetch(`${stack.url}/manifest.webmanifest`);
    expect(manifest.headers.get('content-type')).toBe('application/manifest+json; charset=utf-8');
    expect((await json(manifest)).share_target).toEqual({ action: '/recipes/share', method: 'GET', params: { title: 'title', text: 'text', url: 'url' } });
    const sw = await fetch(`${stack.url}/sw.js`);
    expect(sw.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(sw.headers.get('cache-control')).toBe('no-cache');
    expect(await sw.text()).toContain("addEventListener('push'");
    for (const icon of ['/icon-192.png', '/icon-512.png']) {
      const png = await fetch(`${stack.url}${icon}`);
      expect(png.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await png.arrayBuffer()).subarray(1, 4).toString()).toBe('PNG');
    }
    expect((await fetch(`${stack.url}/icon.svg`)).headers.get('content-type')).toBe('image/svg+xml');
  });

  it('answers index.html for the pages of the app, and 304 when the browser has it', async () => {
    for (const page of ['/search', '/transcripts', '/recipes/share?url=https%3A%2F%2Fexample.com%2Fp%2F1', '/settings', '/no/such/page']) {
      const res = await fetch(`${stack.url}${page}`);
      expect(res.status, page).toBe(200);
      expect(await res.text()).toBe(html);
    }
    const etag = (await fetch(`${stack.url}/`)).headers.get('etag')!;
    const again = await raw(stack.url, '/recipes', 'GET', { 'If-None-Match': etag });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
    const head = await raw(stack.url, '/', 'HEAD');
    expect(head.status).toBe(200);
    expect(Number(head.headers['content-length'])).toBe(Buffer.byteLength(html));
    expect(head.body).toBe('');
  });

  it('answers 404 for a missing file, and never serves another method', async () => {
    for (const missing of ['/assets/app-NOPE.js', '/favicon.ico', '/index.htm']) {
      const res = await fetch(`${stack.url}${missing}`);
      expect(res.status, missing).toBe(404);
      expect(await json(res)).toMatchObject({ code: 'ROUTE_NOT_FOUND' });
    }
    const post = await fetch(`${stack.url}/search`, { method: 'POST' });
    expect(post.status).toBe(404);
    expect(await json(post)).toMatchObject({ code: 'ROUTE_NOT_FOUND' });
  });

  it('refuses paths that climb out of the app, however they are written', async () => {
    for (const p of ['/../package.json', '/assets/../../package.json', '/%2e%2e/package.json', '/assets/..%2f..%2fpackage.json', '/..%5cpackage.json', '/%00', '/%E0%A4%A']) {
      const res = await raw(stack.url, p);
      expect(res.status, p).toBe(400);
      expect(JSON.parse(res.body), p).toMatchObject({ code: 'INVALID_PATH' });
      expect(res.body).not.toContain('"dependencies"');
    }
  });

  it('leaves /api, /mcp and /healthz to the API: unknown routes there are JSON, as before', async () => {
    const auth = { Authorization: `Bearer ${KEY}` };
    const api = await fetch(`${stack.url}/api/v1/nothing-here`, { headers: auth });
    expect(api.status).toBe(404);
    expect(await json(api)).toEqual({ error: 'No route for GET /api/v1/nothing-here', code: 'ROUTE_NOT_FOUND' });
    // No route, nothing to protect: the key is decided per route (api/auth.ts), and the app never answers here.
    const unknown = await fetch(`${stack.url}/api/v1/nothing-here`);
    expect(unknown.status).toBe(404);
    expect(await json(unknown)).toMatchObject({ code: 'ROUTE_NOT_FOUND' });
    const known = await fetch(`${stack.url}/api/v1/libs`);
    expect(known.status).toBe(401);
    expect(await json(known)).toMatchObject({ code: 'UNAUTHORIZED' });
    expect((await fetch(`${stack.url}/api`)).headers.get('content-type')).toMatch(/^application\/json/);
    const health = await fetch(`${stack.url}/healthz`);
    expect(health.headers.get('content-type')).toMatch(/^application\/json/);
    const healthSub = await fetch(`${stack.url}/healthz/more`);
    expect(healthSub.status).toBe(404);
    expect(await json(healthSub)).toMatchObject({ code: 'ROUTE_NOT_FOUND' });
    const mcpSub = await fetch(`${stack.url}/mcp/x`);
    expect(mcpSub.status).toBe(404);
    expect(await json(mcpSub)).toMatchObject({ code: 'ROUTE_NOT_FOUND' });
  });
});

describe('a built web interface (dist/web)', () => {
  const log = createLogger('silent');
  let dir: string;
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-web-'));
    await fs.mkdir(path.join(dir, 'built', 'assets'), { recursive: true });
    await fs.writeFile(path.join(dir, 'built', 'index.html'), '<!doctype html><title>built</title>');
    await fs.writeFile(path.join(dir, 'built', 'assets', 'app-ABC123.js'), 'console.log(1)');
    await fs.writeFile(path.join(dir, 'secret.txt'), 'not for the web');
    await fs.mkdir(path.join(dir, 'empty'));
    const app = new Koa();
    app.use(errorHandler(log));
    app.use(async (ctx, next) => (ctx.path.startsWith('/empty') ? webApp(log, path.join(dir, 'empty'))(ctx, next) : next()));
    app.use(webApp(log, path.join(dir, 'built')));
    server = http.createServer(app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server?.close(r));
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('is read from disk once and served from memory, nothing outside it', async () => {
    expect(await (await fetch(`${url}/`)).text()).toBe('<!doctype html><title>built</title>');
    const js = await fetch(`${url}/assets/app-ABC123.js`);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await js.text()).toBe('console.log(1)');
    // Files added later are not served: the app is what was there at the first request.
    await fs.writeFile(path.join(dir, 'built', 'late.js'), 'late');
    expect((await fetch(`${url}/late.js`)).status).toBe(404);
    expect((await raw(url, '/../secret.txt')).status).toBe(400);
  });

  it('says how to build it when the folder has no app', async () => {
    const res = await fetch(`${url}/empty/page`);
    expect(res.status).toBe(503);
    expect(await json(res)).toMatchObject({ code: 'WEB_INTERFACE_NOT_BUILT', error: expect.stringContaining('run `npm run build`') });
  });
});
