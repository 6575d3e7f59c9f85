import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueue, recipeCaption, type RecipeHarness, startRecipeHarness, waitForItem } from '../support/recipes.js';
import { internalServer, INTERNAL_SECRET, publicServer, type RecordingServer } from './outbound-support.js';

/**
 * Server-side request forgery through the recipe queue: a queued post at an internal address,
 * directly, by a name that resolves to one, or through a redirect, must end `error` with a clear message, with
 * nothing fetched from inside and no text shown. Only 127.0.0.2 (the "public" site here) is allowed; the
 * internal server on 127.0.0.1 must never be hit. The model and the recipe manager are the operator's (trusted).
 */
let h: RecipeHarness;
let internal: RecordingServer;
let pub: RecordingServer;

const UPSTREAM_BODY = 'upstream-error-body: stack trace from inside';

beforeAll(async () => {
  internal = await internalServer();
  pub = await publicServer((req, res) => {
    if (req.url === '/p/forbidden') return res.writeHead(403, { 'content-type': 'text/html' }).end(`<p>${UPSTREAM_BODY}</p>`);
    if (req.url === '/p/picture-inside') {
      return res.writeHead(200, { 'content-type': 'text/html' }).end(
        `<html><head><meta property="og:title" content="Lemon pasta"><meta property="og:description" content="${recipeCaption('Lemon pasta').replace(/\n/g, '&#10;')}">` +
          `<meta property="og:image" content="${internal.url}/picture.jpg"></head><body></body></html>`,
      );
    }
    res.writeHead(404).end();
  });
  h = await startRecipeHarness({ env: { OUTBOUND_ALLOW: '127.0.0.2', QUEUE_RETRY_ATTEMPTS: '2' } });
});
afterAll(async () => {
  await h?.stop();
  await Promise.all([internal?.close(), pub?.close()]);
});

async function run(url: string) {
  const { status, body } = await enqueue(h.url, url);
  expect(status, JSON.stringify(body)).toBe(201);
  return waitForItem(h.url, body.id);
}

describe('recipe posts at internal addresses', () => {
  it('are refused before yt-dlp runs: loopback, private, metadata, by name, mapped IPv6, decimal', async () => {
    const posts: [string, RegExp][] = [
      [`${internal.url}/p/direct`, /127\.0\.0\.1 is a loopback address/],
      ['http://10.20.30.40/p/private', /10\.20\.30\.40 is a private address/],
      ['http://169.254.169.254/latest/meta-data/', /cloud metadata address/],
      [`http://localhost:${internal.port}/p/by-name`, /localhost resolves to a loopback address/],
      [`http://[::ffff:127.0.0.1]:${internal.port}/p/mapped`, /loopback address/],
      [`http://2130706433:${internal.port}/p/decimal`, /127\.0\.0\.1 is a loopback address/],
    ];
    for (const [url, reason] of posts) {
      const item = await run(url);
      expect(item.status, url).toBe('error');
      expect(item.error, url).toMatch(/^The post was refused: /);
      expect(item.error, url).toMatch(reason);
      expect(item.error).toMatch(/OUTBOUND_ALLOW/);
      expect(item.results?.extractedText, url).toBeUndefined();
      expect(item.phases.find((p: { name: string }) => p.name === 'extraction')).toMatchObject({ status: 'error', attempts: 1 });
    }
    // yt-dlp was never started on any of them.
    expect((await h.ytdlp.calls()).filter((args) => posts.some(([url]) => args.includes(url) || args.some((a) => a.includes(`:${internal.port}/`))))).toEqual([]);
    expect(internal.hits).toEqual([]);
  });

  it('through a redirect from a public page: refused at the redirect, nothing fetched', async () => {
    const item = await run(`${pub.url}/to?url=${encodeURIComponent(`${internal.url}/p/redirected`)}`);
    expect(item.status).toBe('error');
    expect(item.error).toMatch(/^The post was refused: 127\.0\.0\.1 is a loopback address/);
    expect(item.results?.extractedText).toBeUndefined();
    expect(JSON.stringify(item)).not.toContain(INTERNAL_SECRET);
    expect(pub.hits.some((hit) => hit.startsWith('GET /to?'))).toBe(true);
    expect(internal.hits).toEqual([]);
  });

  it("an error page's body is not echoed into the item", async () => {
    const item = await run(`${pub.url}/p/forbidden`);
    expect(item.status).toBe('error');
    expect(item.error).toBe('The post answered 403');
    expect(JSON.stringify(item)).not.toContain(UPSTREAM_BODY);
  });

  it("a public post whose picture is inside: the recipe is imported, the picture never fetched", async () => {
    const item = await run(`${pub.url}/p/picture-inside`);
    expect(item.status, JSON.stringify(item)).toBe('success');
    expect(h.manager.pictures).toEqual([]);
    expect(internal.hits).toEqual([]);
  });
});
