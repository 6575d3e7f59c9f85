import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Job } from '../../db/entities/job.js';
import { RecipeItem } from '../../recipes/entities.js';
import { json, type Json } from '../support/http.js';
import { BrowserSubscriber, verifyVapid } from '../../fakes/push-service.js';
import { enqueue, getItem, LLM_KEY, recipeCaption, startRecipeHarness, storedUpdates, waitForItem, type RecipeHarness } from '../support/recipes.js';
import { SseClient } from '../support/sse.js';

let h: RecipeHarness;
let browser: BrowserSubscriber;
let cookies: string;
const COOKIES = '# Netscape HTTP Cookie File\n.instagram.com\tTRUE\t/\tTRUE\t0\tsessionid\tabc\n';
beforeAll(async () => {
  cookies = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'gristmill-cookies-')), 'cookies.txt');
  await fs.writeFile(cookies, COOKIES);
  h = await startRecipeHarness({ env: { RECIPE_COOKIES_FILE: cookies } });
  browser = new BrowserSubscriber(`${h.push.url}/push/browser-1`);
  const res = await fetch(`${h.url}/api/notifications/subscribe`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ clientId: 'kitchen-tablet', subscription: browser.toJSON() }),
  });
  expect(await json(res)).toEqual({ success: true, subscriptionCount: 1 });
});
afterAll(async () => {
  await h?.stop();
  if (cookies) await fs.rm(path.dirname(cookies), { recursive: true, force: true });
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const updatesOf = (sse: SseClient, itemId?: string) =>
  sse.frames.filter((f) => f.event === 'queue-update').map((f) => JSON.parse(f.data!) as Json).filter((d) => !itemId || d.itemId === itemId);
const phaseStates = (u: Json) => u.progress.map((p: Json) => `${p.name}:${p.status}`).join(' ');

describe('a post, queued', () => {
  it('answers at once, then goes extraction -> parsing -> uploading to success, streams every step and notifies', async () => {
    const all = await SseClient.open(`${h.url}/api/queue/stream`);
    const url = h.site.add('lemon-pasta', { title: 'Lemon pasta', caption: recipeCaption('Lemon pasta'), picture: true });

    const created = await enqueue(h.url, `${url}?utm_source=ig_web_copy_link&igsh=MXh2#comments`);
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect(id).toMatch(UUID);
    expect(created.location).toBe(`/api/queue/${id}`);
    expect(created.body).toMatchObject({ id, url, status: 'pending', runs: 1 });
    expect(created.body.createdAt).toEqual(expect.any(String));
    expect(created.body.phases).toEqual([
      { name: 'extraction', status: 'pending', progress: 0 },
      { name: 'parsing', status: 'pending', progress: 0 },
      { name: 'uploading', status: 'pending', progress: 0 },
    ]);
    expect(created.body.results).toBeUndefined();

    const item = await waitForItem(h.url, id);
    expect(item.status).toBe('success');
    expect(item.error).toBeUndefined();
    const link = `${h.manager.url}/g/home/r/lemon-pasta`;
    expect(item.results).toMatchObject({
      recipeManagerUrl: link,
      extractedText: recipeCaption('Lemon pasta'),
      thumbnail: h.site.pictureUrl('lemon-pasta'),
      recipe: {
        '@context': 'https://schema.org',
        '@type': 'Recipe',
        name: 'Lemon pasta',
        url,
        image: h.site.pictureUrl('lemon-pasta'),
        recipeYield: '2 servings',
        prepTime: 'PT10M',
        cookTime: 'PT12M',
        recipeIngredient: ['200 g spaghetti', '1 lemon, zested', '30 g butter'],
        recipeInstructions: [
          { '@type': 'HowToStep', text: 'Boil the pasta.' },
          { '@type': 'HowToStep', text: 'Toss it with butter and lemon.' },
        ],
        keywords: 'quick, pasta',
      },
    });
    // The model's "not a duration" is dropped, not passed on.
    expect(item.results.recipe.totalTime).toBeUndefined();
    for (const p of item.phases) {
      expect(p).toMatchObject({ status: 'completed', progress: 100, attempts: 1 });
      expect(Date.parse(p.startedAt)).toBeLessThanOrEqual(Date.parse(p.completedAt));
    }
    expect(Date.parse(item.phases[0].completedAt)).toBeLessThanOrEqual(Date.parse(item.phases[1].startedAt));
    expect(Date.parse(item.phases[1].completedAt)).toBeLessThanOrEqual(Date.parse(item.phases[2].startedAt));

    // The model was asked with a strict JSON schema, with the key; the caption went to it.
    const [ask] = h.llm.requests;
    expect(ask!.authorization).toBe(`Bearer ${LLM_KEY}`);
    expect(ask!.body.model).toBe('fake-model');
    expect(ask!.body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'recipe', strict: true } });
    expect(ask!.body.messages.find((m) => m.role === 'user')!.content).toContain('- 200 g spaghetti');

    // Mealie got the schema.org JSON as a string, with the token, and the post's picture before the item was done.
    expect(h.manager.created).toHaveLength(1);
    expect(h.manager.created[0]!.raw.includeTags).toBe(true);
    expect(h.manager.created[0]!.recipe).toMatchObject({ '@type': 'Recipe', name: 'Lemon pasta' });
    expect(h.manager.createRequests[0]!.authorization).toBe(`Bearer ${h.manager.token}`);
    expect(h.manager.pictures).toEqual([expect.objectContaining({ id: 'lemon-pasta', hasImageField: true })]);

    // The stream: `connection` first, then this item's updates: pending, in_progress, each phase starting and
    // completing in order, success last with the results.
    await all.waitFor((c) => updatesOf(c, id).some((u) => u.status === 'success'));
    expect(all.frames[0]).toMatchObject({ event: 'connection' });
    const updates = updatesOf(all, id);
    expect(updates.map(phaseStates)).toEqual([
      'extraction:pending parsing:pending uploading:pending',
      'extraction:pending parsing:pending uploading:pending',
      'extraction:in_progress parsing:pending uploading:pending',
      'extraction:completed parsing:pending uploading:pending',
      'extraction:completed parsing:in_progress uploading:pending',
      'extraction:completed parsing:completed uploading:pending',
      'extraction:completed parsing:completed uploading:in_progress',
      'extraction:completed parsing:completed uploading:completed',
    ]);
    expect(updates.map((u) => u.status)).toEqual(['pending', 'in_progress', 'in_progress', 'in_progress', 'in_progress', 'in_progress', 'in_progress', 'success']);
    expect(updates.at(-1)).toMatchObject({ itemId: id, status: 'success', results: { recipeManagerUrl: link } });
    expect(updates.every((u) => typeof u.timestamp === 'string' && u.error === undefined)).toBe(true);
    // What streams is what is stored: a reconnecting client replays the same.
    expect((await storedUpdates(h.stack, `job:${id}`)).map((u) => u.data)).toEqual(updates);
    all.close();

    // The push notification, decrypted as the browser would.
    const [request] = await h.push.waitForRequests(1);
    expect(request!.path).toBe('/push/browser-1');
    expect(verifyVapid(request!.headers.authorization as string, h.push.url).sub).toBe('mailto:gristmill@localhost');
    expect(JSON.parse(browser.decrypt(request!.body))).toEqual({
      title: 'Recipe imported',
      body: 'Lemon pasta',
      tag: `recipe:${id}`,
      data: { kind: 'recipe', itemId: id, status: 'success', postUrl: url, url: link },
    });

    // Secrets never reach an item or an event.
    const everything = JSON.stringify([item, await storedUpdates(h.stack, 'kind:recipe')]);
    expect(everything).not.toContain(LLM_KEY);
    expect(everything).not.toContain(h.manager.token);
  });

  it('reads the caption from yt-dlp when a site extractor takes the URL, without fetching the page', async () => {
    const url = `${h.site.url}/reel/DAbC123`;
    await h.ytdlp.set({
      [url]: {
        info: {
          title: 'Video by chef.ana',
          description: recipeCaption('Crispy gnocchi'),
          thumbnail: h.site.pictureUrl('reel'),
          extractor_key: 'Instagram',
        },
      },
    });
    const { body } = await enqueue(h.url, url);
    const item = await waitForItem(h.url, body.id);
    expect(item).toMatchObject({ status: 'success', results: { extractedText: recipeCaption('Crispy gnocchi'), thumbnail: h.site.pictureUrl('reel') } });
    expect(item.results.recipe.name).toBe('Video by chef.ana');
    expect(h.site.hitsOf('/reel/DAbC123')).toBe(0);
    const args = (await h.ytdlp.calls()).find((a) => a.at(-1) === url)!;
    expect(args).toEqual(expect.arrayContaining(['-J', '--skip-download', '--use-extractors', 'default,-generic']));
    // RECIPE_COOKIES_FILE reaches yt-dlp as a copy of its own (yt-dlp writes its jar back), removed afterwards.
    const copy = args[args.indexOf('--cookies') + 1]!;
    expect(copy.startsWith(path.join(h.stack.dataDir, 'tmp', 'recipes', body.id))).toBe(true);
    await expect(fs.stat(copy)).rejects.toThrow();
    expect(await fs.readFile(cookies, 'utf8')).toBe(COOKIES);
  });

  it('answers the item it already has for the same post, however the link is spelled', async () => {
    const url = h.site.add('same-post', { title: 'Risotto', caption: recipeCaption('Risotto') });
    const first = await enqueue(h.url, url);
    expect(first.status).toBe(201);
    for (const variant of [url, `${url}/`, `${url}?utm_medium=share&fbclid=abc`, `${url}#top`, `  ${url.replace('http://', 'HTTP://')}  `]) {
      const again = await enqueue(h.url, variant);
      expect(again.status).toBe(200);
      expect(again.body.id).toBe(first.body.id);
      expect(again.location).toBe(`/api/queue/${first.body.id}`);
    }
    // Many requests for a new post at once: one item.
    const fresh = h.site.add('rush', { title: 'Pesto', caption: recipeCaption('Pesto') });
    const answers = await Promise.all(Array.from({ length: 6 }, () => enqueue(h.url, fresh)));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(await h.stack.orm.em.fork().count(RecipeItem, { url: fresh })).toBe(1);
    // Once done, the same post is still that item.
    await waitForItem(h.url, first.body.id);
    const done = await enqueue(h.url, url);
    expect(done).toMatchObject({ status: 200, body: { id: first.body.id, status: 'success' } });
  });

  it('refuses what is not an absolute http(s) URL', async () => {
    for (const url of ['not a url', 'ftp://example.com/post', 'javascript:alert(1)', '/p/relative', 'https://user:pw@example.com/p/1']) {
      const res = await enqueue(h.url, url);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'INVALID_URL', details: [{ pointer: '/body/url' }] });
    }
    const missing = await fetch(`${h.url}/api/queue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(missing.status).toBe(400);
    expect(await json(missing)).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ pointer: '/body/url', message: 'is required' }] });
  });

  it('lists items newest first, by status, a page at a time', async () => {
    const total = await h.stack.orm.em.fork().count(Job, { kind: 'recipe' });
    const page = await json(await fetch(`${h.url}/api/queue?limit=2`));
    expect(page).toMatchObject({ total, hasMore: total > 2, limit: 2, offset: 0 });
    expect(page.items).toHaveLength(2);
    expect(Date.parse(page.items[0].createdAt)).toBeGreaterThanOrEqual(Date.parse(page.items[1].createdAt));
    const rest = await json(await fetch(`${h.url}/api/queue?limit=100&offset=2`));
    expect(rest).toMatchObject({ total, hasMore: false, offset: 2 });
    expect(rest.items.map((i: Json) => i.id)).not.toContain(page.items[0].id);
    // An item of an earlier test may still finish meanwhile: the answer's count lies between the counts around it.
    const succeeded = () => h.stack.orm.em.fork().count(Job, { kind: 'recipe', status: 'success' });
    const before = await succeeded();
    const done = await json(await fetch(`${h.url}/api/queue?status=success&limit=100`));
    const after = await succeeded();
    expect(done.items.length).toBeGreaterThan(0);
    expect(done.items.every((i: Json) => i.status === 'success' && i.results.recipeManagerUrl)).toBe(true);
    expect(done.total).toBeGreaterThanOrEqual(before);
    expect(done.total).toBeLessThanOrEqual(after);
    expect(done.items).toHaveLength(done.total);
    const bad = await fetch(`${h.url}/api/queue?status=finished`);
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ pointer: '/query/status' }] });
  });

  it('answers 404 for items it does not have', async () => {
    for (const id of [randomUUID(), 'not-a-uuid']) {
      const res = await fetch(`${h.url}/api/queue/${id}`);
      expect(res.status).toBe(404);
      expect(await json(res)).toMatchObject({ code: 'ITEM_NOT_FOUND' });
    }
    const stream = await fetch(`${h.url}/api/queue/stream?itemId=${randomUUID()}`);
    expect(stream.status).toBe(404);
  });

  it('answers retry with {success, message}: 409 unless the item failed, 404 for none', async () => {
    const [done] = (await json(await fetch(`${h.url}/api/queue?status=success&limit=1`))).items;
    const refused = await fetch(`${h.url}/api/queue/${done.id}/retry`, { method: 'POST' });
    expect(refused.status).toBe(409);
    expect(await json(refused)).toEqual({ success: false, message: `Item ${done.id} is success; only items in error or unhealthy can be retried`, code: 'ITEM_NOT_RETRYABLE' });
    const none = await fetch(`${h.url}/api/queue/${randomUUID()}/retry`, { method: 'POST' });
    expect(none.status).toBe(404);
    expect(await json(none)).toMatchObject({ success: false, code: 'ITEM_NOT_FOUND' });
  });
});

describe('the queue stream', () => {
  it('with itemId sends that item only, starting with its state; Last-Event-ID replays exactly what was missed', async () => {
    h.llm.delayMs = 400;
    try {
      const a = await enqueue(h.url, h.site.add('stream-a', { title: 'Soup', caption: recipeCaption('Soup') }));
      const one = await SseClient.open(`${h.url}/api/queue/stream?itemId=${a.body.id}`);
      const b = await enqueue(h.url, h.site.add('stream-b', { title: 'Salad', caption: recipeCaption('Salad') }));
      await one.waitFor((c) => updatesOf(c).some((u) => u.status === 'success'));
      await waitForItem(h.url, b.body.id);

      expect(one.status).toBe(200);
      expect(one.frames[0]).toMatchObject({ event: 'connection' });
      expect(JSON.parse(one.frames[0]!.data!)).toMatchObject({ connected: true, itemId: a.body.id });
      const seen = updatesOf(one);
      expect(seen.every((u) => u.itemId === a.body.id)).toBe(true);
      expect(seen.at(-1)).toMatchObject({ status: 'success' });
      // Heartbeats are `ping` events (SSE_HEARTBEAT_MS is 500 ms in tests; the slow model takes longer).
      expect(one.frames.some((f) => f.event === 'ping')).toBe(true);
      one.close();

      // Resume from the middle: exactly the events after it, no repeats, no gaps, and no current-state message.
      const stored = await storedUpdates(h.stack, `job:${a.body.id}`);
      const middle = stored[3]!;
      const resumed = await SseClient.open(`${h.url}/api/queue/stream?itemId=${a.body.id}`, { 'Last-Event-ID': String(middle.seq) });
      await resumed.waitFor((c) => updatesOf(c).some((u) => u.status === 'success'));
      const replay = resumed.frames.filter((f) => f.event === 'queue-update');
      expect(replay.map((f) => Number(f.id))).toEqual(stored.slice(4).map((u) => u.seq));
      expect(replay.map((f) => JSON.parse(f.data!))).toEqual(stored.slice(4).map((u) => u.data));
      resumed.close();

      // The whole queue's stream resumes the same way (?lastEventId= for clients that cannot set the header).
      const kind = await storedUpdates(h.stack, 'kind:recipe');
      const from = kind[kind.length - 5]!.seq;
      const tail = await SseClient.open(`${h.url}/api/queue/stream?lastEventId=${from}`);
      await tail.waitFor((c) => c.frames.filter((f) => f.event === 'queue-update').length >= 4);
      expect(tail.frames.filter((f) => f.event === 'queue-update').map((f) => Number(f.id))).toEqual(kind.slice(-4).map((u) => u.seq));
      tail.close();
    } finally {
      h.llm.delayMs = 0;
    }
  });
});

describe('the deprecated synchronous endpoints', () => {
  const expectDeprecated = (headers: Headers | Record<string, unknown>) => {
    const get = (name: string) => (headers instanceof Headers ? headers.get(name) : (headers[name] as string | undefined));
    expect(get('deprecation')).toBe('true');
    expect(get('sunset')).toBe('Wed, 30 Jun 2027 23:59:59 GMT');
    expect(get('link')).toMatch(/^<\/api\/queue(\/stream)?>; rel="successor-version"$/);
  };

  it('POST /api/extract runs the same pipeline and answers when the item has ended', async () => {
    const url = h.site.add('sync', { title: 'Pancakes', caption: recipeCaption('Pancakes') });
    const res = await fetch(`${h.url}/api/extract`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }) });
    expect(res.status).toBe(200);
    expectDeprecated(res.headers);
    expect(res.headers.get('link')).toBe('</api/queue>; rel="successor-version"');
    const item = await json(res);
    expect(item).toMatchObject({ url, status: 'success', results: { recipe: { name: 'Pancakes' }, recipeManagerUrl: `${h.manager.url}/g/home/r/pancakes` } });
    expect(await getItem(h.url, item.id)).toMatchObject({ status: 'success' });

    const cat = h.site.add('sync-cat', { title: 'My cat', caption: 'Not a recipe: my cat sleeping in the sun.' });
    const failed = await fetch(`${h.url}/api/extract`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: cat }) });
    expect(failed.status).toBe(422);
    expectDeprecated(failed.headers);
    const body = await json(failed);
    expect(body).toMatchObject({ code: 'EXTRACTION_FAILED', item: { status: 'error', url: cat } });
    expect(body.error).toMatch(/^No recipe in the post/);
  });

  it('GET /api/extract-stream follows one post with the queue events and ends with it', async () => {
    const url = h.site.add('sync-stream', { title: 'Tacos', caption: recipeCaption('Tacos') });
    const sse = await SseClient.open(`${h.url}/api/extract-stream?url=${encodeURIComponent(url)}`);
    expect(sse.status).toBe(200);
    expectDeprecated(sse.headers);
    await sse.waitFor((c) => c.ended);
    expect(sse.frames[0]).toMatchObject({ event: 'connection' });
    const updates = updatesOf(sse);
    expect(updates[0]).toMatchObject({ status: 'pending' });
    expect(updates.at(-1)).toMatchObject({ status: 'success', results: { recipe: { name: 'Tacos' } } });
    const itemId = updates[0].itemId;
    expect((await getItem(h.url, itemId)).url).toBe(url);

    // Reconnecting after the end: 204, which stops EventSource.
    const lastId = sse.frames.filter((f) => f.id !== undefined).at(-1)!.id!;
    const again = await fetch(`${h.url}/api/extract-stream?itemId=${itemId}`, { headers: { 'Last-Event-ID': lastId } });
    expect(again.status).toBe(204);
    expectDeprecated(again.headers);
    const nothing = await fetch(`${h.url}/api/extract-stream`);
    expect(nothing.status).toBe(400);
  });

  it('are in the OpenAPI document, marked deprecated', async () => {
    const doc = await json(await fetch(`${h.url}/api/openapi.json`));
    for (const [p, m] of [['/api/queue', 'post'], ['/api/queue', 'get'], ['/api/queue/{id}', 'get'], ['/api/queue/{id}/retry', 'post'], ['/api/queue/stream', 'get']]) {
      expect(doc.paths[p!][m!]).toBeDefined();
    }
    expect(doc.paths['/api/extract'].post.deprecated).toBe(true);
    expect(doc.paths['/api/extract-stream'].get.deprecated).toBe(true);
    expect(doc.paths['/api/queue'].post.deprecated).toBeUndefined();
    expect(doc.components.schemas.RecipeQueueItem.properties.status.enum).toEqual(['pending', 'in_progress', 'success', 'error', 'unhealthy']);
  });
});
