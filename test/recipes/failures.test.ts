import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createRecipeActivities } from '../../recipes/activities.js';
import { createLogger } from '../../core/log.js';
import { Job } from '../../db/entities/job.js';
import { resetModelCapabilities } from '../../recipes/llm.js';
import { freePort } from '../../fakes/ports.js';
import { json, type Json } from '../support/http.js';
import { BrowserSubscriber } from '../../fakes/push-service.js';
import { enqueue, getItem, recipeCaption, startRecipeHarness, waitForItem, type RecipeHarness } from '../support/recipes.js';

/**
 * Every failure class: recoverable ones (network, timeouts, 5xx, 429, malformed model output) are retried up to
 * QUEUE_RETRY_ATTEMPTS (3 here) and then leave the item `unhealthy`; permanent ones end it `error` at once.
 */
let h: RecipeHarness;
let browser: BrowserSubscriber;
beforeAll(async () => {
  h = await startRecipeHarness({ env: { QUEUE_TIMEOUT_MS: '1000', QUEUE_RETRY_ATTEMPTS: '3', QUEUE_RETRY_BACKOFF_MS: '20' } });
  browser = new BrowserSubscriber(`${h.push.url}/push/phone`);
  await fetch(`${h.url}/api/notifications/subscribe`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ clientId: 'phone', subscription: browser.toJSON() }),
  });
});
afterAll(() => h?.stop());
beforeEach(() => {
  h.llm.reset();
  h.manager.reset();
  resetModelCapabilities();
});

let n = 0;
/** A fresh recipe post (each test its own URL: one item per post). */
const post = (caption = recipeCaption('Lemon pasta')) => h.site.add(`post-${++n}`, { title: `Dish ${n}`, caption, picture: true });
const asksFor = (url: string) => h.llm.requests.filter((r) => r.body.messages.some((m) => m.content.includes(url)));
const phase = (item: Json, name: string) => item.phases.find((p: Json) => p.name === name);

async function run(url: string): Promise<Json> {
  const { body } = await enqueue(h.url, url);
  return waitForItem(h.url, body.id);
}

/** The push notification about `itemId`, decrypted. */
async function notification(itemId: string): Promise<Json> {
  for (let i = 0; i < 100; i++) {
    const found = h.push.requests.map((r) => JSON.parse(browser.decrypt(r.body)) as Json).find((m) => m.data.itemId === itemId);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no notification for ${itemId}`);
}

describe('recoverable failures, retried up to QUEUE_RETRY_ATTEMPTS, then unhealthy', () => {
  it('a model answering 500 every time: 3 attempts, then unhealthy at parsing, with a notification', async () => {
    h.llm.fallback = { kind: 'status', status: 500, body: { error: { message: 'upstream overloaded' } } };
    const url = post();
    const item = await run(url);
    expect(item.status).toBe('unhealthy');
    expect(asksFor(url)).toHaveLength(3);
    expect(item.error).toMatch(/^The language model answered 500: .*upstream overloaded.* \(gave up after 3 attempts; the item can be retried\)$/);
    expect(phase(item, 'extraction')).toMatchObject({ status: 'completed', attempts: 1 });
    expect(phase(item, 'parsing')).toMatchObject({ status: 'error', attempts: 3 });
    expect(phase(item, 'parsing').completedAt).toEqual(expect.any(String));
    expect(phase(item, 'uploading')).toMatchObject({ status: 'pending' });
    expect(h.manager.createRequests).toHaveLength(0);
    expect(item.results).toMatchObject({ extractedText: recipeCaption('Lemon pasta') });
    expect(await notification(item.id)).toMatchObject({ title: 'Recipe import interrupted', tag: `recipe:${item.id}`, data: { status: 'unhealthy', postUrl: url } });
  });

  it('malformed JSON from the model is retried like any recoverable failure', async () => {
    h.llm.fallback = { kind: 'malformed' };
    const url = post();
    const item = await run(url);
    expect(item.status).toBe('unhealthy');
    expect(asksFor(url)).toHaveLength(3);
    expect(item.error).toMatch(/^The language model answered with malformed JSON/);

    // ...and once the model behaves, the next attempt succeeds.
    h.llm.script.push({ kind: 'malformed' }, { kind: 'fenced' });
    h.llm.fallback = { kind: 'status', status: 500 };
    const url2 = post();
    const ok = await run(url2);
    expect(ok.status).toBe('success');
    expect(phase(ok, 'parsing')).toMatchObject({ status: 'completed', attempts: 2 });
  });

  it('a model slower than QUEUE_TIMEOUT_MS: each attempt is cut off (the request aborted), then unhealthy', async () => {
    h.llm.delayMs = 2500;
    const url = post();
    const item = await run(url);
    expect(item.status).toBe('unhealthy');
    const asks = asksFor(url);
    expect(asks).toHaveLength(3);
    await expect.poll(() => asks.every((r) => r.aborted)).toBe(true);
    expect(asks.every((r) => r.status === undefined)).toBe(true);
    expect(item.error).toMatch(/^The language model did not answer within \d+ ms \(QUEUE_TIMEOUT_MS\)/);
    expect(h.manager.createRequests).toHaveLength(0);
  });

  it('429 waits for Retry-After before the next attempt, then succeeds', async () => {
    h.llm.script.push({ kind: 'status', status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'rate limited' } } });
    const url = post();
    const item = await run(url);
    expect(item.status).toBe('success');
    const [first, second] = asksFor(url);
    // The backoff is 20 ms: only Retry-After explains the wait.
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(950);
    expect(phase(item, 'parsing').attempts).toBe(2);
  });

  it('a model server without json_schema support is asked in json_object mode, and remembered', async () => {
    h.llm.supportsJsonSchema = false;
    const url = post();
    const item = await run(url);
    expect(item.status).toBe('success');
    const [first, second] = asksFor(url);
    expect(first!.status).toBe(400);
    expect(first!.body.response_format?.type).toBe('json_schema');
    expect(second!.body.response_format).toEqual({ type: 'json_object' });
    expect(second!.body.messages[0]!.content).toContain('"isRecipe"');
    expect(phase(item, 'parsing').attempts).toBe(1);
    // The next item goes straight to json_object.
    const url2 = post();
    expect((await run(url2)).status).toBe('success');
    expect(asksFor(url2).map((r) => r.body.response_format?.type)).toEqual(['json_object']);
  });

  it('a yt-dlp that hangs is stopped within its share of the attempt, and the page is read instead', async () => {
    const url = post();
    await h.ytdlp.set({ [url]: { info: { description: 'never printed' }, sleepMs: 10_000 } });
    const item = await run(url);
    expect(item.status).toBe('success');
    expect(phase(item, 'extraction').attempts).toBe(1);
    expect(item.results.extractedText).toBe(recipeCaption('Lemon pasta'));
    expect(Date.parse(phase(item, 'extraction').completedAt) - Date.parse(phase(item, 'extraction').startedAt)).toBeLessThan(1000);
  });

  it('a recipe manager answering 503 is retried; created once when it recovers', async () => {
    h.manager.script.push({ status: 503, body: { detail: 'maintenance' } });
    const item = await run(post());
    expect(item.status).toBe('success');
    expect(h.manager.createRequests).toHaveLength(2);
    expect(h.manager.created).toHaveLength(1);
    expect(phase(item, 'uploading').attempts).toBe(2);
  });

  it('a post whose site is unreachable: network errors, 3 attempts, unhealthy at extraction', async () => {
    const url = `http://127.0.0.1:${await freePort()}/p/gone`;
    const item = await run(url);
    expect(item.status).toBe('unhealthy');
    expect(phase(item, 'extraction')).toMatchObject({ status: 'error', attempts: 3 });
    expect(item.error).toMatch(/^The post could not be reached: ECONNREFUSED/);
    expect(h.llm.requests).toHaveLength(0);
  });
});

describe('permanent failures end the item in error at once', () => {
  it('a post with no recipe: one question to the model, error, notified', async () => {
    const url = post('Not a recipe: our cat Miso asleep in the sun.');
    const item = await run(url);
    expect(item.status).toBe('error');
    expect(asksFor(url)).toHaveLength(1);
    expect(item.error).toBe('No recipe in the post: The post shows no ingredients or steps.');
    expect(phase(item, 'parsing')).toMatchObject({ status: 'error', attempts: 1 });
    expect(await notification(item.id)).toMatchObject({ title: 'Recipe not imported', body: item.error, data: { status: 'error' } });
  });

  it('a refusal, an empty recipe, and a rejected key are permanent', async () => {
    h.llm.script.push({ kind: 'refusal', text: 'I cannot help with that.' });
    const refused = await run(post());
    expect(refused).toMatchObject({ status: 'error', error: 'The language model declined: I cannot help with that.' });

    h.llm.script.push({ kind: 'recipe', recipe: { name: 'Mystery', description: null, recipeYield: null, prepTime: null, cookTime: null, totalTime: null, recipeIngredient: [], recipeInstructions: [], recipeCategory: [], recipeCuisine: null, keywords: [] } });
    const empty = await run(post());
    expect(empty.status).toBe('error');
    expect(empty.error).toMatch(/^No recipe in the post/);

    h.llm.script.push({ kind: 'status', status: 401, body: { error: { message: 'Incorrect API key provided' } } });
    const url = post();
    const unauthorized = await run(url);
    expect(unauthorized.status).toBe('error');
    expect(unauthorized.error).toMatch(/^The language model answered 401: .*Incorrect API key provided.*\(check LLM_API_KEY\)$/);
    expect(asksFor(url)).toHaveLength(1);
  });

  it("Mealie's 400 BAD_RECIPE_DATA and 401 are permanent: one request each", async () => {
    h.manager.script.push({ status: 400, body: { detail: { message: 'Unable to parse recipe', error: true, details: 'BAD_RECIPE_DATA' } } });
    const bad = await run(post());
    expect(bad.status).toBe('error');
    expect(bad.error).toMatch(/^Mealie answered 400: .*BAD_RECIPE_DATA.*\(the recipe manager rejected the recipe as incomplete or malformed\)$/);
    expect(phase(bad, 'uploading')).toMatchObject({ status: 'error', attempts: 1 });
    expect(bad.results.recipe).toBeDefined();
    expect(bad.results.recipeManagerUrl).toBeUndefined();

    h.manager.script.push({ status: 401, body: { detail: 'Not authenticated' } });
    const denied = await run(post());
    expect(denied.status).toBe('error');
    expect(denied.error).toMatch(/^Mealie answered 401: .*\(check RECIPE_MANAGER_TOKEN\)$/);
    expect(h.manager.createRequests).toHaveLength(2);
    expect(h.manager.created).toHaveLength(0);
  });

  it('pages that are missing, not HTML, or say nothing', async () => {
    const missing = await run(`${h.site.url}/p/deleted-post`);
    expect(missing).toMatchObject({ status: 'error', error: 'The post answered 404' });
    expect(phase(missing, 'extraction')).toMatchObject({ status: 'error', attempts: 1 });

    const picture = await run(h.site.pictureUrl('just-a-photo'));
    expect(picture).toMatchObject({ status: 'error', error: 'The URL is not a web page (image/jpeg); send the link of the post' });

    const silent = await run(h.site.add(`silent-${++n}`, {}));
    expect(silent.status).toBe('error');
    // On a loaded machine the stand-in yt-dlp may not start within its share of the 1 s attempt; the error then
    // says so after the page's own reason.
    expect(silent.error).toMatch(/^No text in the post: the page has no caption, description or recipe to read( \(and yt-dlp did not finish in its share of QUEUE_TIMEOUT_MS\))?$/);
    expect(h.llm.requests).toHaveLength(0);
  });

  it('a site yt-dlp wants a login for, with no page to read either, says how to fix it', async () => {
    const url = `${h.site.url}/p/private-reel`;
    await h.ytdlp.set({ [url]: { error: '[Instagram] private-reel: Requested content is not available, rate-limit reached or login required. Use --cookies' } });
    const item = await run(url);
    expect(item.status).toBe('error');
    expect(item.error).toMatch(/^The post answered 404 \(and yt-dlp failed: .*login required.*\(the site wants a logged-in session: set RECIPE_COOKIES_FILE\)\)$/);
  });
});

describe('retry', () => {
  it('runs an unhealthy item again as the same item, and creates the recipe once', async () => {
    h.llm.fallback = { kind: 'status', status: 502 };
    const url = post();
    const failed = await run(url);
    expect(failed.status).toBe('unhealthy');
    // The queue answers the failed item for its post; retry is how it runs again.
    expect(await enqueue(h.url, url)).toMatchObject({ status: 200, body: { id: failed.id, status: 'unhealthy' } });

    h.llm.fallback = { kind: 'read' };
    const res = await fetch(`${h.url}/api/queue/${failed.id}/retry`, { method: 'POST' });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ success: true, message: `Item ${failed.id} is queued again (run 2)`, item: { id: failed.id, status: 'pending', runs: 2 } });
    expect(body.item.error).toBeUndefined();
    expect(body.item.results).toBeUndefined();
    expect(body.item.phases.every((p: Json) => p.status === 'pending')).toBe(true);

    // Retrying what is already queued again is refused.
    const twice = await fetch(`${h.url}/api/queue/${failed.id}/retry`, { method: 'POST' });
    if ((await getItem(h.url, failed.id)).status !== 'success') {
      expect(twice.status).toBe(409);
      expect(await json(twice)).toMatchObject({ success: false, code: 'ITEM_NOT_RETRYABLE' });
    }

    const done = await waitForItem(h.url, failed.id);
    expect(done).toMatchObject({ status: 'success', runs: 2 });
    expect(done.phases.every((p: Json) => p.status === 'completed' && p.attempts === 1)).toBe(true);
    expect(h.manager.created).toHaveLength(1);
    expect(await h.stack.orm.em.fork().count(Job, { kind: 'recipe', id: failed.id })).toBe(1);
  });

  it('an error item too; an upload run again for a finished run creates nothing', async () => {
    h.manager.script.push({ status: 400, body: { detail: { details: 'BAD_RECIPE_DATA' } } });
    const failed = await run(post());
    expect(failed.status).toBe('error');
    const res = await fetch(`${h.url}/api/queue/${failed.id}/retry`, { method: 'POST' });
    expect(res.status).toBe(200);
    const done = await waitForItem(h.url, failed.id);
    expect(done.status).toBe('success');
    expect(h.manager.created).toHaveLength(1);

    // The upload step again for the run that finished (Temporal retrying an activity whose completion was lost):
    // it answers what it created, and the recipe manager sees nothing new.
    const job = await h.stack.orm.em.fork().findOneOrFail(Job, { id: failed.id });
    const steps = createRecipeActivities({ config: h.stack.config, orm: h.stack.orm, jobs: h.stack.jobs, log: createLogger('silent'), temporal: h.stack.temporal });
    const activity = new MockActivityEnvironment();
    const again = activity.run(steps.recipeUpload, { itemId: failed.id, runId: job.runId!, timeoutMs: 1000 });
    await expect(again).resolves.toMatchObject({ recipeManagerUrl: done.results.recipeManagerUrl });
    expect(h.manager.createRequests).toHaveLength(2);
    expect(h.manager.created).toHaveLength(1);
    // A stale run may not write at all.
    await expect(activity.run(steps.recipeExtract, { itemId: failed.id, runId: 'another-run', timeoutMs: 1000 })).rejects.toMatchObject({ type: 'JobStopped' });
  });

  it('a picture that cannot be fetched never fails an imported recipe', async () => {
    const url = h.site.add(`no-picture-${++n}`, { title: 'Toast', caption: recipeCaption('Toast') });
    // og:image pointing nowhere.
    const page = h.site.pages.get(`no-picture-${n}`)!;
    page.picture = false;
    await h.ytdlp.set({ [url]: { info: { description: recipeCaption('Toast'), thumbnail: `${h.site.url}/missing.jpg`, extractor_key: 'TikTok' } } });
    const item = await run(url);
    expect(item).toMatchObject({ status: 'success', results: { thumbnail: `${h.site.url}/missing.jpg` } });
    expect(h.manager.pictures).toHaveLength(0);
    expect(h.manager.created).toHaveLength(1);
  });
});
