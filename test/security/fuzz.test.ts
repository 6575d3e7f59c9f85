import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeFamily } from '../../api/cors.js';
import { badJson, badMultipart, nested, pct, Rng, seedFor, unicodeString, weirdString, weirdValue } from '../support/fuzz.js';
import { json, type Json } from '../support/http.js';
import { rawRequest, type RawRequest } from '../support/raw-http.js';
import { BrowserSubscriber } from '../../fakes/push-service.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { until } from '../support/until.js';

/**
 * A bounded fuzz test of the whole API. For each route family, FUZZ_REQUESTS malformed requests (wrong
 * types, huge and unicode strings, NUL bytes, bad JSON, truncated and boundary-less multipart, wrong content types,
 * encoded and overlong path segments, odd queries, headers and methods), drawn from FUZZ_SEED. Every answer must come
 * within BOUND_MS, be no 5xx but the route's documented ones (never 500 INTERNAL_ERROR), and carry no stack trace, SQL
 * or secret; after each family the process must still answer. A failure names the seed, the family and the request's
 * index: `FUZZ_SEED=<seed> FUZZ_FAMILY=<family> npx vitest run test/security/fuzz.test.ts` replays it (FUZZ_DEBUG=1
 * prints every request and answer).
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const PER_FAMILY = Number(process.env.FUZZ_REQUESTS ?? 300);
const ONLY = process.env.FUZZ_FAMILY;
/** The slowest acceptable answer (to its headers), on a busy shared machine. */
const BOUND_MS = 5_000;
/** No answer at all by then is a hang. */
const HANG_MS = 20_000;
const IN_FLIGHT = 4;

const SECRETS = { ASR_API_KEY: 'asr-secret-fuzz-0123456789', LLM_API_KEY: 'llm-secret-fuzz-0123456789', RECIPE_MANAGER_TOKEN: 'rm-secret-fuzz-0123456789' };
const GIT_TOKEN = 'ghp_fuzzGitHostToken0123456789abcdef';

interface Op {
  method: string;
  template: string;
  family: string;
  documented: Set<number>;
  query: string[];
}

interface Outcome {
  sent: number;
  byClass: Record<string, number>;
  documented5xx: number;
  undocumented5xx: number;
  hangs: number;
  slow: number;
  maxMs: number;
  failures: string[];
}

let stack: TestStack;
let tmp: string;
let ops: Op[];
const pools: Record<string, string[]> = {};
const secrets: string[] = [];
const results = new Map<string, Outcome>();

beforeAll(async () => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'gristmill-fuzz-')));
  fs.mkdirSync(path.join(tmp, 'widgets', 'docs'), { recursive: true });
  fs.writeFileSync(
    path.join(tmp, 'widgets', 'README.md'),
    '# Widgets\n\nWidgets render themselves into any element: call `render(widget, element)` once per root element.\n\n' +
      '## Install\n\nInstall the package with npm and import `render` from it; the HTTPServer helper serves widgets too.\n',
  );
  fs.writeFileSync(path.join(tmp, 'widgets', 'docs', 'api.md'), '# API\n\n`useWidget(options)` returns the widget state; `snake_case` options are accepted for compatibility.\n');
  stack = await startTestStack({
    // Indexing runs for real, so search has snippets to rank; the other queues have no worker (jobs stay queued).
    queues: ['indexing'],
    healthProbeTimeoutMs: 300,
    env: { ...SECRETS, LOCAL_SOURCE_ROOTS: tmp, QUEUE_EXTRACT_WAIT_MS: '300', UPLOAD_MAX_BYTES: '256kb' },
  });
  secrets.push(...Object.values(SECRETS), GIT_TOKEN, new URL(stack.databaseUrl).password);
  const doc = await json(await fetch(`${stack.url}/api/openapi.json`));
  ops = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([p, byMethod]) =>
    Object.entries(byMethod).map(([method, op]) => ({
      method: method.toUpperCase(),
      template: p,
      family: routeFamily(p),
      documented: new Set(Object.keys(op.responses).map(Number)),
      query: (op.parameters as { name: string; in: string }[]).filter((q) => q.in === 'query').map((q) => q.name),
    })),
  );
  // Real records, so some requests reach them: a library, a transcription job, a queue item.
  const post = (p: string, body: unknown) => fetch(`${stack.url}${p}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const lib = await json(await post('/api/v1/libs', { source: 'local', sourceUrl: path.join(tmp, 'widgets') }));
  await until(async () => (await json(await fetch(`${stack.url}/api/v1/jobs/${lib.job.id}`))).job.status, (s) => s === 'done' || s === 'failed', { timeoutMs: 60_000 });
  const job = await json(await post('/api/jobs', { url: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ' }));
  const item = await json(await post('/api/queue', { url: 'https://www.instagram.com/p/Fuzz1/' }));
  pools.id = [encodeURIComponent(lib.library.id), job.id, item.id, '00000000-0000-4000-8000-000000000000', '%2Fa%2Fb'];
  pools.jobId = [job.id, '00000000-0000-4000-8000-000000000000'];
  pools.tag = ['v1.0.0', 'main'];
  pools.format = ['srt', 'txt', 'md', 'json'];
  pools.item = [item.id];
  pools.token = ['x'.repeat(43)];
});

afterAll(async () => {
  if (results.size) {
    const rows = [...results].map(([family, o]) =>
      [family.padEnd(26), String(o.sent).padStart(5), JSON.stringify(o.byClass).padEnd(40), String(o.documented5xx).padStart(4), String(o.undocumented5xx).padStart(4), String(o.slow).padStart(4), String(o.hangs).padStart(4), `${Math.round(o.maxMs)} ms`].join(' '),
    );
    console.log(`fuzz seed ${SEED}\nfamily                      sent  statuses                                 doc5 bad5 slow hang  slowest\n${rows.join('\n')}`);
  }
  await stack?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A value for a path parameter: mostly real or plausible, often malformed. */
function paramValue(r: Rng, name: string): string {
  if (r.chance(0.4)) return r.pick(pools[name] ?? ['x']);
  return r.pick([
    () => pct(weirdString(r)).slice(0, r.pick([100, 1000, 6000])),
    () => '%00',
    () => '%ZZ%',
    () => '%2F..%2F..%2Fetc%2Fpasswd',
    () => '..',
    () => 'a'.repeat(r.pick([1024, 1025, 5000])),
    () => pct(unicodeString(r, 20)),
    () => '%C0%AE%C0%AE',
    () => r.pick(['exe', 'SRT', 'srt%00', '']),
  ])();
}

function pathOf(r: Rng, op: Op): string {
  let p = op.template.replace(/\{(\w+)\}/g, (_, name: string) => paramValue(r, name) || 'x');
  if (r.chance(0.1)) p = r.pick([p.toUpperCase(), `${p}/`, `/${p}`, p.replace('/', '//'), p.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`)]);
  return p;
}

/** A valid query for an operation, the starting point of query mutations. */
function baseQuery(op: Op): [string, string][] {
  const bases: Record<string, [string, string][]> = {
    '/api/v1/context': [['libraryId', '/local/widgets'], ['query', 'render widgets'], ['type', 'json']],
    '/api/v2/context': [['libraryId', '/local/widgets'], ['query', 'render'], ['type', 'txt']],
    '/api/v1/libs/search': [['libraryName', 'widgets'], ['query', 'render']],
    '/api/v2/libs/search': [['libraryName', 'widgets'], ['query', 'render']],
    '/api/v1/libs': [['state', 'indexed'], ['limit', '10'], ['offset', '0']],
    '/api/v1/jobs': [['repositoryId', '/local/widgets'], ['status', 'done'], ['limit', '20']],
    '/api/v1/jobs/stream': [['repositoryId', '/local/widgets']],
    '/api/v1/fs/browse': [['path', tmp], ['showHidden', '1']],
    '/api/jobs': [['status', 'pending'], ['limit', '20'], ['offset', '0']],
    '/api/queue': [['status', 'pending'], ['limit', '20'], ['offset', '0']],
    '/api/queue/stream': [['itemId', pools.item![0]!]],
    '/api/extract-stream': [['url', 'https://www.instagram.com/p/Fuzz1/']],
    '/api/webhooks/asr/{jobId}': [['token', 'x'.repeat(43)]],
    '/healthz': [['deep', '0']],
  };
  return [...(bases[op.template] ?? [])];
}

function queryOf(r: Rng, op: Op): string {
  const params = baseQuery(op);
  if (!params.length && !r.chance(op.method === 'GET' ? 0.6 : 0.2)) return '';
  const names = [...op.query, 'lastEventId', 'token', weirdString(r).slice(0, 20), '__proto__'];
  const weird = () => (r.chance(0.3) ? r.pick(['1', '0', '-1', '200', '201', 'true', 'json', 'txt', 'keyword', 'semantic', 'hybrid', '/a/b', 'x']) : weirdString(r).slice(0, r.pick([50, 2000, 12_000])));
  for (let n = 1 + r.int(r.chance(0.1) ? 300 : 3); n > 0; n--) {
    const k = r.int(4);
    if (k === 0 && params.length) params[r.int(params.length)]![1] = weird(); // a known parameter, malformed
    else if (k === 1 && params.length) params.splice(r.int(params.length), 1); // one left out
    else if (k === 2 && params.length) params.push([r.pick(params)[0], weird()]); // given twice
    else params.push([r.pick(names), weird()]);
  }
  const parts = params.map(([name, value]) => `${pct(name)}=${r.chance(0.1) ? value.replace(/[^\x21-\x7e]/g, '+') : pct(value)}`);
  return `?${parts.join('&')}`.slice(0, 14_000);
}

/** A valid-looking body for an operation, the starting point of most mutations. */
function baseBody(op: Op): Record<string, unknown> {
  const key = `${op.method} ${op.template}`;
  const bodies: Record<string, Record<string, unknown>> = {
    'POST /api/v1/libs': { source: 'local', sourceUrl: path.join(tmp, 'widgets'), title: 'w', gitHostToken: GIT_TOKEN, autoIndex: false },
    'PATCH /api/v1/libs/{id}': { title: 'renamed', description: 'd', branch: 'main' },
    'POST /api/v1/libs/{id}/versions': { tag: 'v1.0.0', autoIndex: false },
    'PUT /api/v1/settings/indexing': { concurrency: 2 },
    'PUT /api/v1/settings/embedding': { profile: { id: 'fuzz', provider: 'remote-compatible', model: 'm', config: { baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'sk-fuzz-0000000000' } } },
    'POST /api/v1/settings/embedding/test': { profile: { provider: 'remote-compatible', model: 'm', config: { baseUrl: 'http://127.0.0.1:1/v1' } } },
    'POST /api/v1/ledger/validate': { version: 1, findings: [] },
    'POST /api/jobs': { url: 'https://www.youtube.com/watch?v=abc', title: 't', mode: 'auto' },
    'POST /api/webhooks/asr/{jobId}': { id: 'asr-1', status: 'completed', segments: [{ start: 0, end: 1, text: 'hi' }] },
    'POST /api/queue': { url: 'https://www.instagram.com/p/Fuzz2/' },
    'POST /api/extract': { url: 'https://www.instagram.com/p/Fuzz3/' },
    'POST /api/notifications/subscribe': { clientId: 'fuzz', subscription: new BrowserSubscriber('https://push.example.com/fuzz').toJSON() },
    'POST /api/notifications/unsubscribe': { endpoint: 'https://push.example.com/fuzz', clientId: 'fuzz' },
    'POST /mcp': { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'query-docs', arguments: { libraryId: '/local/widgets', query: 'render', searchMode: 'hybrid', tokens: 500 } } },
  };
  return structuredClone(bodies[key] ?? {});
}

/** MCP messages besides query-docs, so every method and tool gets malformed arguments too. */
function mcpBody(r: Rng): Record<string, unknown> {
  return r.pick([
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'query-docs', arguments: { libraryId: '/local/widgets', query: 'render', searchMode: 'hybrid', tokens: 500 } } },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'resolve-library-id', arguments: { libraryName: 'widgets', query: 'render' } } },
    { jsonrpc: '2.0', id: 3, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } },
    { jsonrpc: '2.0', id: 4, method: 'tools/list', params: {} },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    [{ jsonrpc: '2.0', id: 5, method: 'tools/list' }, { jsonrpc: '2.0', id: 6, method: 'ping' }],
  ]) as Record<string, unknown>;
}

/** Sets a random field (at any depth) of `body` to `value`. */
function mutateField(r: Rng, body: Record<string, unknown>, value: unknown): void {
  let target: Record<string, unknown> = body;
  for (;;) {
    const keys = Object.keys(target);
    if (!keys.length) break;
    const k = r.pick(keys);
    const v = target[k];
    if (v && typeof v === 'object' && !Array.isArray(v) && r.chance(0.6)) target = v as Record<string, unknown>;
    else {
      target[k] = value;
      return;
    }
  }
  target[weirdString(r).slice(0, 30) || 'extra'] = value;
}

function requestFor(r: Rng, op: Op): { request: RawRequest; kind: string } {
  let method = op.method;
  if (r.chance(0.08)) method = r.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD']);
  const p = pathOf(r, op) + queryOf(r, op);
  const headers: Record<string, string> = {};
  if (r.chance(0.15)) headers['Last-Event-ID'] = r.pick(['-1', 'abc', '1e309', '9'.repeat(30), '0', '\u00e9']);
  if (op.template === '/mcp' && !r.chance(0.1)) headers.Accept = 'application/json, text/event-stream';
  else if (r.chance(0.05)) headers.Accept = r.pick(['text/event-stream', '*/*', 'application/xml', 'x'.repeat(3000)]);
  if (r.chance(0.05)) headers.Authorization = r.pick(['Bearer', 'Bearer ' + 'x'.repeat(4000), 'Basic Og==', 'Bearer \u00e9']);
  let kind = 'query';
  let body: string | Buffer | undefined;
  if (method === 'POST' || method === 'PUT' || method === 'PATCH' || (method === 'DELETE' && r.chance(0.2))) {
    const base = op.template === '/mcp' && method === 'POST' ? mcpBody(r) : baseBody(op);
    const k = r.int(10);
    headers['Content-Type'] = 'application/json';
    if (k <= 2) {
      kind = 'field-type';
      mutateField(r, base, weirdValue(r));
      body = JSON.stringify(base);
    } else if (k === 3) {
      kind = 'field-string';
      mutateField(r, base, weirdString(r));
      body = JSON.stringify(base);
    } else if (k === 4) {
      kind = 'bad-json';
      body = badJson(r, JSON.stringify(base));
    } else if (k === 5) {
      kind = 'content-type';
      headers['Content-Type'] = r.pick([
        'text/plain',
        'application/xml',
        'application/x-www-form-urlencoded',
        'application/json; charset=utf-16',
        'application/json; charset=nope',
        '',
        'multipart/form-data',
        'multipart/form-data; boundary=X',
        'application/*',
        'application/json, text/html',
      ]);
      body = headers['Content-Type'] === 'application/x-www-form-urlencoded' ? `a=1&b[c][d][e][f][g]=2&__proto__[x]=1&${'k'.repeat(10)}=${'v'.repeat(5000)}` : JSON.stringify(base);
      if (!headers['Content-Type']) delete headers['Content-Type'];
    } else if (k === 6) {
      kind = 'multipart';
      const m = badMultipart(r);
      headers['Content-Type'] = m.type;
      body = m.body;
    } else if (k === 7) {
      kind = 'encoding';
      headers['Content-Encoding'] = r.pick(['gzip', 'deflate', 'br', 'x-nope']);
      body = JSON.stringify(base);
    } else if (k === 8) {
      kind = 'deep';
      body = JSON.stringify({ ...base, deep: nested(r.pick([64, 65, 1000])) });
    } else {
      kind = 'valid-ish';
      body = JSON.stringify(base);
    }
  } else if (r.chance(0.05)) {
    kind = 'body-on-get';
    headers['Content-Type'] = 'application/json';
    body = '{"a":';
  }
  return { request: { method, path: p, headers, ...(body !== undefined && { body }), headOnly: true, timeoutMs: HANG_MS }, kind };
}

/** The web interface: any path outside the API. */
function webRequest(r: Rng): { request: RawRequest; kind: string } {
  const p = r.pick([
    () => '/' + pct(weirdString(r)).slice(0, 2000),
    () => r.pick(['/../etc/passwd', '/%2e%2e/%2e%2e/etc/passwd', '/..%2f..%2fetc%2fpasswd', '/assets/..%5c..%5cx', '/%00', '/index.html%00.js', '/recipes/share?url=' + pct(weirdString(r).slice(0, 500))]),
    () => '/' + 'a/'.repeat(r.pick([10, 2000])),
    () => r.pick(['/', '/recipes', '/search?q=x', '/sw.js', '/manifest.webmanifest', '/favicon.ico']),
  ])();
  return { request: { method: r.pick(['GET', 'GET', 'HEAD', 'POST']), path: p, headOnly: true, timeoutMs: HANG_MS }, kind: 'web' };
}

const STACK_TRACE = /\n\s+at [^\n]+[:(]\d+|node:internal|\.ts:\d+:\d+|\/work\/|\/node_modules\//;
const SQL = /\b(select\s+.+\s+from|insert\s+into|update\s+\S+\s+set|delete\s+from)\b|\bviolates\b|\bsyntax error at\b/i;

function check(o: Outcome, op: Op | undefined, i: number, kind: string, req: RawRequest, res: { status: number; text: string; ms: number }): void {
  const cls = `${Math.floor(res.status / 100)}xx`;
  o.byClass[cls] = (o.byClass[cls] ?? 0) + 1;
  o.maxMs = Math.max(o.maxMs, res.ms);
  const where = `#${i} (${kind}) ${req.method} ${req.path.slice(0, 160)} -> ${res.status}`;
  if (res.status >= 500) {
    const internal = /INTERNAL_ERROR|Internal error/.test(res.text);
    if (!internal && op?.documented.has(res.status)) o.documented5xx++;
    else {
      o.undocumented5xx++;
      o.failures.push(`${where}: undocumented ${res.status}: ${res.text.slice(0, 300)}`);
    }
  }
  if (res.ms > BOUND_MS) {
    o.slow++;
    o.failures.push(`${where}: answered after ${Math.round(res.ms)} ms`);
  }
  if (STACK_TRACE.test(res.text)) o.failures.push(`${where}: a stack trace or path in the body: ${res.text.slice(0, 300)}`);
  if (res.status >= 400 && SQL.test(res.text)) o.failures.push(`${where}: SQL in the body: ${res.text.slice(0, 300)}`);
  for (const s of secrets) if (s && res.text.includes(s)) o.failures.push(`${where}: a secret in the body`);
}

async function fuzzFamily(family: string): Promise<Outcome> {
  const r = new Rng(seedFor(SEED, family));
  const mine = ops.filter((o) => o.family === family);
  const o: Outcome = { sent: 0, byClass: {}, documented5xx: 0, undocumented5xx: 0, hangs: 0, slow: 0, maxMs: 0, failures: [] };
  let next = 0;
  const worker = async () => {
    while (next < PER_FAMILY) {
      const i = next++;
      // Drawn in index order (synchronously, as each request is dispatched), so the seed replays the same requests.
      const op = family === 'web' ? undefined : r.pick(mine);
      const { request, kind } = op ? requestFor(r, op) : webRequest(r);
      o.sent++;
      try {
        const res = await rawRequest(stack.url, request);
        if (process.env.FUZZ_DEBUG) console.log(`DBG ${kind} ${request.method} ${request.path.slice(0, 80)} ${res.status} ${res.text.slice(0, 150)}`);
        check(o, op, i, kind, request, res);
      } catch (err) {
        const message = (err as Error).message;
        if (message.startsWith('hang')) {
          o.hangs++;
          o.failures.push(`#${i} (${kind}): ${message}`);
        } else if (!/ECONNRESET|socket hang up|EPIPE/.test(message)) {
          o.failures.push(`#${i} (${kind}) ${request.method} ${request.path.slice(0, 160)}: ${message}`);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  // Alive, and answering at once.
  const health = await rawRequest(stack.url, { path: '/healthz', timeoutMs: HANG_MS });
  if (health.status !== 200) o.failures.push(`after the family: /healthz answered ${health.status}`);
  return o;
}

const FAMILIES = [
  '/api/v1/libs',
  '/api/v1/context',
  '/api/v2/libs',
  '/api/v2/context',
  '/api/v1/jobs',
  '/api/v1/settings',
  '/api/v1/rerank-profiles',
  '/api/v1/fs',
  '/api/v1/schema',
  '/api/v1/ledger',
  '/api/jobs',
  '/api/playlists',
  '/api/webhooks',
  '/api/queue',
  '/api/extract',
  '/api/extract-stream',
  '/api/notifications',
  '/api/openapi.json',
  '/mcp',
  '/healthz',
  'web',
];

describe(`fuzzing every route family (seed ${SEED}, ${PER_FAMILY} requests each)`, () => {
  it('covers every family the API has', () => {
    expect(new Set(ops.map((o) => o.family))).toEqual(new Set(FAMILIES.filter((f) => f !== 'web')));
  });

  for (const family of FAMILIES.filter((f) => !ONLY || f === ONLY)) {
    it(`${family}: no undocumented 5xx, no hang, nothing slow, no leak`, { timeout: 600_000 }, async () => {
      const o = await fuzzFamily(family);
      results.set(family, o);
      expect(o.failures, `replay: FUZZ_SEED=${SEED} FUZZ_FAMILY=${family}\n${o.failures.slice(0, 20).join('\n')}`).toEqual([]);
      expect(o.sent).toBe(PER_FAMILY);
    });
  }
});
