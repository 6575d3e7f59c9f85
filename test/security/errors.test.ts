import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Context } from 'koa';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RouteFactory } from '../../api/deps.js';
import type { Config } from '../../core/config.js';
import { createLogger } from '../../core/log.js';
import type { Orm } from '../../db/orm.js';
import { upstreamMessage } from '../../core/redact.js';
import { RemoteProvider } from '../../docindex/embeddings/remote.js';
import { createMcpServer } from '../../docindex/search/mcp.js';
import { startFakeEmbeddings } from '../../fakes/fake-embeddings.js';
import { json } from '../support/http.js';
import { rawRequest } from '../support/raw-http.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * Errors never leak (before: a NUL byte answered 500 with the SQL text; multipart without a boundary was 500;
 * unexpected errors were logged without a stack). Malformed input is a 400 with a stable code; an unexpected failure
 * is a 500 with a generic message and an id that its log line, stack included, carries too.
 */
const SQL = 'insert into "library" ("id") values ($1) - invalid byte sequence for encoding "UTF8": 0x00; password hunter2secret';

const boom: RouteFactory = () => [
  {
    method: 'GET',
    path: '/api/test/sql-failure',
    summary: 'Fails unexpectedly (tests only)',
    tags: ['test'],
    responses: { 200: { description: 'never' } },
    handler: async (_ctx: Context) => {
      throw new Error(SQL);
    },
  },
  {
    method: 'GET',
    path: '/api/test/own-response-failure',
    summary: 'Means to write its own response, then fails before it does (tests only)',
    tags: ['test'],
    responses: { 200: { description: 'never' } },
    handler: async (ctx: Context) => {
      ctx.respond = false;
      throw new Error('the transport could not start');
    },
  },
];

let stack: TestStack;
let logged: string[] = [];
beforeAll(async () => {
  stack = await startTestStack({ queues: [], routes: [boom], env: { LOG_LEVEL: 'warn' } });
});
afterAll(() => stack?.stop());
afterEach(() => {
  vi.restoreAllMocks();
  logged = [];
});
const captureLog = () => {
  const write = process.stderr.write.bind(process.stderr) as (chunk: string | Uint8Array) => boolean;
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    logged.push(String(chunk));
    return write(chunk);
  });
};

const post = (path: string, body: unknown) =>
  fetch(`${stack.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });

describe('malformed input', () => {
  it('a NUL byte (in a path, a query or a JSON string) or a lone surrogate is 400 INVALID_CHARACTER, with no SQL in the answer', async () => {
    const answers = [
      await fetch(`${stack.url}/api/v1/jobs/%00`),
      await fetch(`${stack.url}/api/jobs/%00`),
      await fetch(`${stack.url}/api/queue/a%00b`),
      await fetch(`${stack.url}/api/v1/libs/%2Fa%00%2Fb`),
      await fetch(`${stack.url}/api/v1/jobs?repositoryId=%00`),
      await fetch(`${stack.url}/api/v1/context?libraryId=/a/b&query=x%00y`),
      await post('/api/queue', { url: 'https://example.com/\u0000' }),
      await post('/api/v1/libs', { source: 'local', sourceUrl: '/tmp', title: 'a\u0000b' }),
      await post('/api/notifications/unsubscribe', { endpoint: 'https://push.example.com/\u0000' }),
      await post('/api/v1/ledger/validate', { '\u0000': 1 }),
    ];
    // A lone surrogate: JSON can carry one, PostgreSQL's json refuses it (found by the fuzz test).
    const put = (body: unknown) => fetch(`${stack.url}/api/v1/settings/embedding`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    answers.push(await put({ profile: { id: 'p', provider: 'remote-compatible', model: 'm', config: { baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'k\ud800' } } }));
    answers.push(await post('/api/queue', { url: 'https://example.com/\udc00' }));
    for (const res of answers) {
      const text = await res.text();
      expect(res.status, text).toBe(400);
      expect(JSON.parse(text).code).toBe('INVALID_CHARACTER');
      expect(text).not.toMatch(/select|insert|encoding|0x00/i);
    }
  });

  it('a NUL byte in an upload field or file name is 400 INVALID_CHARACTER', async () => {
    const body = (disposition: string) =>
      `--B\r\nContent-Disposition: form-data; name="title"\r\n\r\na\u0000b\r\n--B\r\nContent-Disposition: form-data; ${disposition}\r\nContent-Type: audio/wav\r\n\r\nRIFF\r\n--B--\r\n`;
    for (const d of ['name="file"; filename="a.wav"']) {
      const res = await rawRequest(stack.url, { method: 'POST', path: '/api/jobs', headers: { 'Content-Type': 'multipart/form-data; boundary=B' }, body: body(d) });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.text).code).toBe('INVALID_CHARACTER');
    }
    const named = `--B\r\nContent-Disposition: form-data; name="file"; filename="a\u0000.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF\r\n--B--\r\n`;
    const res = await rawRequest(stack.url, { method: 'POST', path: '/api/jobs', headers: { 'Content-Type': 'multipart/form-data; boundary=B' }, body: named });
    expect(res.status).toBe(400);
  });

  it('JSON nested absurdly deep is 400 NESTING_TOO_DEEP; an overlong path parameter is 400', async () => {
    const deep = await post('/api/v1/ledger/validate', '['.repeat(50_000) + ']'.repeat(50_000));
    expect(deep.status).toBe(400);
    expect((await json(deep)).code).toBe('NESTING_TOO_DEEP');
    const long = await fetch(`${stack.url}/api/v1/libs/${'a'.repeat(5000)}`);
    expect(long.status).toBe(400);
    expect((await json(long)).details[0].pointer).toBe('/path/id');
  });

  it('a body that is not what its Content-Encoding says is 400; an unknown Content-Encoding is 415 (found by the fuzz test)', async () => {
    for (const [encoding, status, code] of [['gzip', 400, 'INVALID_CONTENT_ENCODING'], ['deflate', 400, 'INVALID_CONTENT_ENCODING'], ['br', 400, 'INVALID_CONTENT_ENCODING'], ['x-nope', 415, 'UNSUPPORTED_ENCODING']] as const) {
      const res = await rawRequest(stack.url, { method: 'POST', path: '/api/queue', headers: { 'Content-Type': 'application/json', 'Content-Encoding': encoding }, body: '{"url":"https://example.com/p"}' });
      expect(res.status, encoding).toBe(status);
      expect(JSON.parse(res.text).code, encoding).toBe(code);
    }
  });

  it('multipart without a boundary is 400, and a body of the wrong type is 415', async () => {
    const res = await rawRequest(stack.url, { method: 'POST', path: '/api/jobs', headers: { 'Content-Type': 'multipart/form-data' }, body: 'x' });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).code).toBe('INVALID_MULTIPART');
    const xml = await rawRequest(stack.url, { method: 'POST', path: '/api/jobs', headers: { 'Content-Type': 'application/xml' }, body: '<a/>' });
    expect(xml.status).toBe(415);
  });
});

describe('an unexpected failure', () => {
  it('is 500 with a generic message and an error id; the log line has the id, the message and the stack', async () => {
    captureLog();
    const res = await fetch(`${stack.url}/api/test/sql-failure`);
    expect(res.status).toBe(500);
    const text = await res.text();
    const body = JSON.parse(text);
    expect(body).toEqual({ error: `Internal error (logged as ${body.errorId})`, code: 'INTERNAL_ERROR', errorId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(text).not.toMatch(/insert|hunter2secret|at /);
    const line = logged.find((l) => l.includes(body.errorId));
    expect(line).toBeDefined();
    expect(line).toContain('insert into "library"');
    expect(line).toMatch(/stack=Error: insert into[\s\S]*\n\s+at /);
  });

  it('in a handler that meant to write its own response is still answered, not left hanging', async () => {
    const res = await rawRequest(stack.url, { path: '/api/test/own-response-failure', timeoutMs: 10_000 });
    expect(res.status).toBe(500);
    expect(JSON.parse(res.text).code).toBe('INTERNAL_ERROR');
  });

  it('in an MCP tool is answered with an error id only, never the raw message', async () => {
    captureLog();
    const failingOrm = {
      em: {
        fork: () => {
          throw new Error(SQL);
        },
      },
    } as unknown as Orm;
    const server = createMcpServer({ config: stack.config as Config, orm: failingOrm, log: createLogger('warn', 'test') });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 't', version: '1' });
    await client.connect(clientSide);
    try {
      const result = (await client.callTool({ name: 'query-docs', arguments: { libraryId: '/a/b', query: 'x' } })) as { isError?: boolean; content: { text: string }[] };
      expect(result.isError).toBe(true);
      expect(result.content[0]!.text).toMatch(/^Internal error \(logged as [0-9a-f-]{36}\)$/);
      const id = /logged as ([0-9a-f-]{36})/.exec(result.content[0]!.text)![1]!;
      expect(logged.some((l) => l.includes(id) && l.includes('insert into'))).toBe(true);
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe("a third party's error answer", () => {
  it('is repeated only as the message of a JSON error, never as its raw body', async () => {
    expect(upstreamMessage('<html><body>Intranet admin: root password is hunter2secret</body></html>')).toBe('');
    expect(upstreamMessage(JSON.stringify({ error: { message: 'dimensions must be <= 1536', type: 'invalid_request_error' } }))).toBe('dimensions must be <= 1536');
    expect(upstreamMessage(JSON.stringify({ detail: 'x'.repeat(1000) }))).toHaveLength(200);
    expect(upstreamMessage(JSON.stringify({ rows: [{ secret: 1 }] }))).toBe('');

    const fake = await startFakeEmbeddings();
    try {
      fake.script.push({ status: 400, body: '<html>Intranet admin page: root password hunter2secret</html>' });
      const provider = new RemoteProvider('r', 'm', null, { baseUrl: `${fake.url}/v1`, apiKey: 'sk-some-key-0000', maxAttempts: 1 });
      const err = await provider.embed(['x']).then(() => undefined, (e: Error) => e);
      expect(err?.message).toBe('The embedding server answered 400');
      await provider.close();
    } finally {
      await fake.close();
    }
  });
});
