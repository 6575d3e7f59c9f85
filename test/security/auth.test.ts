import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Library } from '../../docindex/entities/library.js';
import { json, type Json } from '../support/http.js';
import { rawRequest } from '../support/raw-http.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * With API_KEY set, no spelling of a protected path gets past the key (before: the key was checked on the path as
 * written, case-sensitively, while the router matched any case and a trailing slash).
 */
const KEY = 'k3y-for-security-tests-0123456789';
let stack: TestStack;
let operations: { method: string; path: string; literalEnd: boolean; query: string }[];

beforeAll(async () => {
  stack = await startTestStack({ queues: [], env: { API_KEY: KEY } });
  const doc = await json(await fetch(`${stack.url}/api/openapi.json`));
  // Every operation that wants the key: the document marks the open ones with `security: [{}]`.
  operations = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([p, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => !(Array.isArray(op.security) && op.security.length === 1 && Object.keys(op.security[0]).length === 0))
      .map(([method]) => ({ method: method.toUpperCase(), path: concrete(p), literalEnd: !p.endsWith('}'), query: p === '/healthz' ? '?deep=1' : '' })),
  );
});
afterAll(() => stack?.stop());

const PARAMS: Record<string, string> = { id: 'x', jobId: '00000000-0000-4000-8000-000000000000', tag: 'v1', format: 'srt' };
const concrete = (p: string) => p.replace(/\{(\w+)\}/g, (_, name: string) => PARAMS[name] ?? 'x');

/**
 * Ways of writing a path that a lenient router (or a second look at the path) might still take for it. Path
 * parameters are data (`/api/v1/libs/X` is another library), so only literal segments are changed.
 */
function variants(path: string, literalEnd: boolean): string[] {
  const [first, ...rest] = path.slice(1).split('/');
  const tail = rest.length ? `/${rest.join('/')}` : '';
  const encodedFirst = `%${first!.charCodeAt(0).toString(16)}${first!.slice(1)}`;
  return [
    path.toUpperCase(),
    `/${first![0]!.toUpperCase()}${first!.slice(1)}${tail}`,
    ...(literalEnd ? [`${path.slice(0, -1)}${path.slice(-1).toUpperCase()}`, `${path.slice(0, -1)}%${path.charCodeAt(path.length - 1).toString(16)}`] : []),
    `${path}/`,
    `/${path}`,
    `/${first}/${tail}`,
    `/${encodedFirst}${tail}`,
    `/${first}${tail.replace(/\//g, '%2F')}`,
    `/${first}/.${tail}`,
    `/${first}/x/..${tail}`,
    `${path};`,
  ].filter((v) => v !== path);
}

/** The API's code; Context7's family answers `{error: "not_found", message}` for it. */
const notFoundCode = (text: string) => {
  const body = JSON.parse(text);
  return body.code ?? (body.error === 'not_found' ? 'ROUTE_NOT_FOUND' : body.error);
};

const send = (method: string, path: string, headers: Record<string, string> = {}) =>
  rawRequest(stack.url, {
    method,
    path,
    headers: { 'Content-Type': 'application/json', ...headers },
    ...(method !== 'GET' && method !== 'DELETE' && { body: '{}' }),
    headOnly: true,
  });

describe('API_KEY', () => {
  it('is not skipped by other spellings of a protected path', async () => {
    const attacks = [
      { method: 'GET', path: '/API/v1/libs' },
      { method: 'GET', path: '/Api/v1/fs/browse?path=/' },
      { method: 'POST', path: '/API/v1/libs', body: JSON.stringify({ source: 'local', sourceUrl: '/etc' }) },
      { method: 'POST', path: '/mcp/', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) },
      { method: 'POST', path: '/MCP', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) },
    ];
    for (const a of attacks) {
      const res = await rawRequest(stack.url, { ...a, headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' } });
      expect([401, 404], `${a.method} ${a.path}`).toContain(res.status);
      expect(JSON.parse(res.text).code).toMatch(/^(UNAUTHORIZED|ROUTE_NOT_FOUND)$/);
    }
    expect(await stack.orm.em.fork().count(Library, {})).toBe(0);
  });

  it('is wanted by every protected operation, and no other spelling of it reaches a route, with or without the key', async () => {
    expect(operations.length).toBeGreaterThan(40);
    let checked = 0;
    for (const { method, path, literalEnd, query } of operations) {
      const plain = await send(method, path + query);
      expect(plain.status, `${method} ${path}`).toBe(401);
      expect(plain.headers['www-authenticate']).toBe('Bearer');
      for (const v of variants(path, literalEnd)) {
        // Without the key: 401 (some route, refusing) or no route at all; never a route's work, never the app's page.
        const res = await send(method, v + query);
        expect([401, 404, 405], `${method} ${v}`).toContain(res.status);
        if (res.status === 404) expect(notFoundCode(res.text), `${method} ${v}`).toBe('ROUTE_NOT_FOUND');
        // With it: still nothing served (a variant may name another route's data, e.g. a library called "searcH").
        const keyed = await send(method, v + query, { Authorization: `Bearer ${KEY}` });
        expect(keyed.status, `${method} ${v} with the key`).toBeGreaterThanOrEqual(400);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(300);
  });

  it('accepts the key on the canonical path, and leaves preflight, health and the OpenAPI document open', async () => {
    const ok = await fetch(`${stack.url}/api/v1/libs`, { headers: { Authorization: `Bearer ${KEY}` } });
    expect(ok.status).toBe(200);
    expect((await fetch(`${stack.url}/api/v1/libs`, { method: 'OPTIONS' })).status).toBe(204);
    expect((await fetch(`${stack.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${stack.url}/healthz?deep=1`)).status).toBe(401);
    expect((await fetch(`${stack.url}/healthz?deep=1&deep=1`)).status).toBe(400);
    expect((await fetch(`${stack.url}/api/openapi.json`)).status).toBe(200);
  });
});
