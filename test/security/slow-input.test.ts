import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Library } from '../../docindex/entities/library.js';
import { contextParams, MAX_QUERY_CHARS } from '../../docindex/search/context.js';
import { splitIdentifiers } from '../../docindex/search/keyword-plan.js';
import { Rng } from '../support/fuzz.js';
import { rawRequest } from '../support/raw-http.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * Heavy text never holds the event loop (before: the identifier split was quadratic, so an 80,000-character
 * `query-docs` query stopped every other request for 15 s).
 */

/** The split as it was, for comparison on short inputs only. */
const quadraticSplit = (text: string) =>
  text
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_.:/\-#$]/g, ' ');

describe('the identifier split', () => {
  it('splits as before on every short input over a small alphabet (seeded)', () => {
    const r = new Rng(1313);
    const alphabet = [...'AABBab01_.-$ '];
    for (let i = 0; i < 20_000; i++) {
      const text = Array.from({ length: 1 + r.int(24) }, () => r.pick(alphabet)).join('');
      expect(splitIdentifiers(text), JSON.stringify(text)).toBe(quadraticSplit(text));
    }
    expect(splitIdentifiers('useEffect snake_case Foo.bar HTTPServer XMLHttpRequest')).toBe('use Effect snake case Foo bar HTTP Server XML Http Request');
  });

  it('is linear: a 300,000-character run of capitals (with no lower-case letter after it) is split at once', () => {
    // The greedy rule backtracked over the whole run from every position: 2 s at 30,000 characters, 200 s here.
    const text = `${'A'.repeat(300_000)} end`;
    expect(splitIdentifiers(text)).toBe(text);
    expect(splitIdentifiers(`${'B'.repeat(300_000)}Cd`)).toBe(`${'B'.repeat(300_000)} Cd`);
  });
});

describe('a query', () => {
  it(`is cut to ${MAX_QUERY_CHARS} characters, at a word boundary when there is one`, () => {
    const words = contextParams({ libraryId: '/a/b', query: 'word '.repeat(1000) }).query;
    expect(words.length).toBeLessThanOrEqual(MAX_QUERY_CHARS);
    expect(words.endsWith('word')).toBe(true);
    expect(contextParams({ libraryId: '/a/b', query: 'x'.repeat(5000) }).query).toHaveLength(MAX_QUERY_CHARS);
    expect(contextParams({ libraryId: '/a/b', query: 'short question' }).query).toBe('short question');
  });
});

describe('over the API', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack({ queues: [] });
    const em = stack.orm.em.fork();
    em.create(Library, { id: '/acme/widgets', title: 'widgets', source: 'local', sourceUrl: '/nowhere', state: 'indexed', totalSnippets: 0, trustScore: 0 });
    await em.flush();
  });
  afterAll(() => stack?.stop());

  it('a huge query-docs query over MCP is answered, and other requests are not held up meanwhile', async () => {
    const query = `useEffect ${'A'.repeat(200_000)}`;
    const call = rawRequest(stack.url, {
      method: 'POST',
      path: '/mcp',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'query-docs', arguments: { libraryId: '/acme/widgets', query } } }),
      timeoutMs: 30_000,
    });
    const health = rawRequest(stack.url, { path: '/healthz', timeoutMs: 30_000 });
    const [answer, healthy] = await Promise.all([call, health]);
    expect(healthy.status).toBe(200);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text).result.content[0].text).toMatch(/^No documentation found in \/acme\/widgets/);
    const rest = await rawRequest(stack.url, { path: `/api/v1/context?libraryId=/acme/widgets&query=${'Q'.repeat(12_000)}`, timeoutMs: 30_000 });
    expect(rest.status).toBe(200);
  });
});
