import { Client, Connection } from '@temporalio/client';
import type { Context } from 'koa';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../support/http.js';
import type { RouteFactory } from '../../api/deps.js';
import { ConflictError } from '../../core/errors.js';
import { freePort } from '../../fakes/ports.js';
import { startTestStack, type TestStack } from '../support/stack.js';

const echoBody = {
  $id: 'https://gristmill.dev/schemas/test/echo.body.json',
  title: 'EchoBody',
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1 }, count: { type: 'integer', minimum: 1 } },
  additionalProperties: false,
};

/** Test routes that exercise the shared middleware the way service routes will. */
const testRoutes: RouteFactory = () => [
  {
    method: 'POST',
    path: '/api/test/echo',
    summary: 'Echo (tests only)',
    tags: ['test'],
    body: echoBody,
    responses: { 200: { description: 'the body' } },
    handler: async (ctx: Context) => {
      ctx.body = { received: ctx.request.body };
    },
  },
  {
    method: 'DELETE',
    path: '/api/test/echo/:id',
    summary: 'Conflict (tests only)',
    tags: ['test'],
    responses: { 409: { description: 'always' } },
    handler: async () => {
      throw new ConflictError('That is not possible now', 'TEST_CONFLICT');
    },
  },
  {
    method: 'GET',
    path: '/api/test/temporal-down',
    summary: 'A Temporal call while no server answers (tests only)',
    tags: ['test'],
    responses: { 503: { description: 'always' } },
    handler: async () => {
      // The real client against a port nobody listens on (free a moment ago); the deadline stops its retries sooner than its own would.
      const connection = Connection.lazy({ address: `127.0.0.1:${await freePort()}` });
      try {
        await connection.withDeadline(Date.now() + 500, () => new Client({ connection }).schedule.getHandle('refresh:x').describe());
      } finally {
        await connection.close();
      }
    },
  },
  {
    method: 'GET',
    path: '/api/test/database-down',
    summary: 'A query while PostgreSQL is away (tests only)',
    tags: ['test'],
    responses: { 503: { description: 'always' } },
    handler: async () => {
      const client = new pg.Client({ connectionString: `postgres://gristmill:s3cretpw@127.0.0.1:${await freePort()}/gristmill` });
      await client.connect();
    },
  },
  {
    method: 'GET',
    path: '/api/test/boom',
    summary: 'Unexpected failure (tests only)',
    tags: ['test'],
    responses: { 500: { description: 'always' } },
    handler: async () => {
      throw new Error('could not reach https://admin:hunter2secret@git.example.com/repo.git');
    },
  },
];

describe('the API without a key', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack({ queues: [], routes: [testRoutes], env: { BODY_LIMIT: '1kb' } });
  });
  afterAll(() => stack?.stop());

  it('answers OPTIONS with 204 and the methods of the route family', async () => {
    const res = await fetch(`${stack.url}/api/test/echo/123`, { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST, DELETE, OPTIONS');
    expect(res.headers.get('access-control-allow-headers')).toContain('Content-Type, Authorization');
    const health = await fetch(`${stack.url}/healthz`, { method: 'OPTIONS' });
    expect(health.status).toBe(204);
    expect(health.headers.get('access-control-allow-methods')).toBe('GET, OPTIONS');
  });

  it('puts CORS headers on ordinary responses too', async () => {
    const res = await fetch(`${stack.url}/healthz`);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('validates bodies against their schema and points at the failing field', async () => {
    const res = await fetch(`${stack.url}/api/test/echo`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ count: 0, extra: true }),
    });
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.error).toMatch(/name/);
    expect(body.details).toEqual(
      expect.arrayContaining([
        { pointer: '/body/name', message: 'is required' },
        { pointer: '/body/count', message: 'must be >= 1' },
        { pointer: '/body/extra', message: 'is not allowed' },
      ]),
    );
  });

  it('accepts a valid body', async () => {
    const res = await fetch(`${stack.url}/api/test/echo`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'x', count: 2 }),
    });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ received: { name: 'x', count: 2 } });
  });

  it('rejects malformed JSON with 400 INVALID_JSON', async () => {
    const res = await fetch(`${stack.url}/api/test/echo`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"name": ',
    });
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({ error: 'Request body is not valid JSON', code: 'INVALID_JSON' });
  });

  it('rejects a body over BODY_LIMIT with 413', async () => {
    const res = await fetch(`${stack.url}/api/test/echo`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'x'.repeat(2000) }),
    });
    expect(res.status).toBe(413);
    const body = await json(res);
    expect(body.code).toBe('PAYLOAD_TOO_LARGE');
    expect(body.error).toContain('1024');
  });

  it('maps error types to their status and code', async () => {
    const res = await fetch(`${stack.url}/api/test/echo/1`, { method: 'DELETE' });
    expect(res.status).toBe(409);
    expect(await json(res)).toEqual({ error: 'That is not possible now', code: 'TEST_CONFLICT' });
  });

  it('answers unexpected failures with 500 INTERNAL_ERROR: a generic message and an error id, no stack, no secret', async () => {
    const res = await fetch(`${stack.url}/api/test/boom`);
    expect(res.status).toBe(500);
    const text = await res.text();
    const body = JSON.parse(text);
    expect(body).toEqual({ error: `Internal error (logged as ${body.errorId})`, code: 'INTERNAL_ERROR', errorId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(text).not.toContain('hunter2secret');
    expect(text).not.toContain('git.example.com');
    expect(text).not.toContain('at ');
  });

  it('answers a Temporal server that cannot be reached with 503 TEMPORAL_UNAVAILABLE and Retry-After, not an internal error', async () => {
    const res = await fetch(`${stack.url}/api/test/temporal-down`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await json(res)).toEqual({ error: 'The Temporal server cannot be reached right now; try again shortly', code: 'TEMPORAL_UNAVAILABLE' });
  });

  it('answers a database that cannot be reached with 503 DATABASE_UNAVAILABLE, without its address or password', async () => {
    const res = await fetch(`${stack.url}/api/test/database-down`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ error: 'The database cannot be reached right now; try again shortly', code: 'DATABASE_UNAVAILABLE' });
    expect(text).not.toContain('s3cretpw');
    expect(text).not.toContain('127.0.0.1');
  });

  it('answers an unknown route with 404 ROUTE_NOT_FOUND', async () => {
    const res = await fetch(`${stack.url}/api/v1/nothing-here`);
    expect(res.status).toBe(404);
    expect(await json(res)).toEqual({ error: 'No route for GET /api/v1/nothing-here', code: 'ROUTE_NOT_FOUND' });
  });

  it('answers a wrong method with 405, the allowed methods and a stable code', async () => {
    const res = await fetch(`${stack.url}/api/test/echo`, { method: 'PUT' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await json(res)).toEqual({ error: 'PUT is not allowed on /api/test/echo; use POST', code: 'METHOD_NOT_ALLOWED' });
  });

  it('validates query parameters', async () => {
    const res = await fetch(`${stack.url}/healthz?deep=maybe`);
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.details[0].pointer).toBe('/query/deep');
  });

  it('serves an OpenAPI 3.1 document built from the route schemas', async () => {
    const res = await fetch(`${stack.url}/api/openapi.json`);
    expect(res.status).toBe(200);
    const doc = await json(res);
    expect(doc.openapi).toBe('3.1.0');
    const health = doc.paths['/healthz'].get;
    expect(health.parameters).toEqual([expect.objectContaining({ name: 'deep', in: 'query', required: false })]);
    expect(health.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Health' });
    expect(doc.components.schemas.Health.required).toEqual(['status', 'checks']);
    const echo = doc.paths['/api/test/echo'].post;
    expect(echo.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/EchoBody' });
    expect(echo.responses['400'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    expect(doc.paths['/api/test/echo/{id}'].delete.parameters[0]).toMatchObject({ name: 'id', in: 'path', required: true });
  });
});

describe('the API with API_KEY set', () => {
  let stack: TestStack;
  const key = 'k3y-for-tests-0123456789';
  beforeAll(async () => {
    stack = await startTestStack({ queues: [], routes: [testRoutes], env: { API_KEY: key } });
  });
  afterAll(() => stack?.stop());
  const post = (headers: Record<string, string>) =>
    fetch(`${stack.url}/api/test/echo`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify({ name: 'x' }),
    });

  it('refuses /api requests without the bearer key', async () => {
    for (const headers of [{}, { Authorization: 'Bearer wrong' }, { Authorization: key }] as Record<string, string>[]) {
      const res = await post(headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(await json(res)).toEqual({ error: 'Missing or invalid API key', code: 'UNAUTHORIZED' });
    }
  });

  it('accepts the key', async () => {
    expect((await post({ Authorization: `Bearer ${key}` })).status).toBe(200);
  });

  it("guards /mcp too, and answers Context7's routes in Context7's error shape", async () => {
    const initialize = (headers: Record<string, string>) =>
      fetch(`${stack.url}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
      });
    const refused = await initialize({});
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer');
    const accepted = await initialize({ Authorization: `Bearer ${key}` });
    expect(accepted.status).toBe(200);
    expect((await json(accepted)).result.serverInfo).toBeDefined();
    const v2 = await fetch(`${stack.url}/api/v2/context?libraryId=/a/b&query=x`, { headers: { Authorization: 'Bearer wrong' } });
    expect(v2.status).toBe(401);
    expect(await json(v2)).toEqual({ error: 'invalid_api_key', message: expect.any(String) });
  });

  it('leaves health, the OpenAPI document and CORS preflight open, but not the deep health check', async () => {
    expect((await fetch(`${stack.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${stack.url}/healthz?deep=1`)).status).toBe(401);
    expect((await fetch(`${stack.url}/healthz?deep=1`, { headers: { Authorization: `Bearer ${key}` } })).status).not.toBe(401);
    expect((await fetch(`${stack.url}/api/openapi.json`)).status).toBe(200);
    expect((await fetch(`${stack.url}/api/test/echo`, { method: 'OPTIONS' })).status).toBe(204);
  });
});
