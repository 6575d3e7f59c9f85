import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.js';
import { findFfmpeg } from '../../core/tools.js';
import { resetModelCapabilities } from '../../recipes/llm.js';
import type { Json } from '../support/http.js';
import { enqueue, waitForItem } from '../support/recipes.js';
import { startSpeechHarness, type SpeechHarness } from './speech-harness.js';

/**
 * Pictures and frames with a vision model (docs/recipes.md, "Pictures and frames"), in Tandoor, with the video's
 * speech: the post's pictures (fetched through the outbound guard, sent as data URLs) and frames of its video
 * (ffmpeg, scene changes) go to the model as `image_url` parts; a model that refuses images fails the item saying
 * what to set.
 */
let h: SpeechHarness;
let video: string;
beforeAll(async () => {
  h = await startSpeechHarness({ manager: 'tandoor', env: { LLM_VISION: 'true', RECIPE_VISION_MAX_IMAGES: '6', RECIPE_VISION_MAX_FRAMES: '3' } });
  // Three seconds of three colours: the first frame and two scene changes.
  const ffmpeg = await findFfmpeg(createLogger('silent'));
  video = path.join(h.dir, 'video.mp4');
  const colour = (c: string) => ['-f', 'lavfi', '-i', `color=c=${c}:s=320x240:d=1:r=10`];
  await promisify(execFile)(ffmpeg.command, [...ffmpeg.args, '-hide_banner', '-loglevel', 'error', ...colour('red'), ...colour('blue'), ...colour('green'),
    '-filter_complex', '[0][1][2]concat=n=3:v=1:a=0', '-c:v', 'mpeg4', '-y', video]);
}, 300_000);
afterAll(() => h?.stop());
beforeEach(() => {
  h.llm.reset();
  h.manager.reset();
  resetModelCapabilities();
});

let n = 0;
const name = () => `carousel-${++n}`;
const stepOf = (item: Json, p: string, s: string) => item.phases.find((x: Json) => x.name === p)?.steps?.find((x: Json) => x.name === s);

describe('a vision model', () => {
  it("'recipe in the video' becomes a complete Tandoor recipe from the speech, and the model sees the pictures and frames", async () => {
    const url = await h.videoPost(name(), {
      caption: 'Recipe in the video',
      title: 'Lemon pasta',
      video,
      // A carousel: one more picture of the site, and one at an internal address, never fetched nor sent.
      pictures: [h.site.pictureUrl('second'), 'http://10.20.30.40/secret.jpg'],
    });
    const { body } = await enqueue(h.url, url);
    const item = await waitForItem(h.url, body.id, undefined, 60_000);
    expect(item.status).toBe('success');

    const [created] = h.manager.created;
    const steps = created!.raw.steps as { instruction: string; ingredients: { food: { name: string } | null; amount: number }[] }[];
    expect(created!.raw.name).toBe('Lemon pasta');
    expect(steps.map((s) => s.instruction)).toEqual(['Boil the pasta.', 'Toss it with butter and lemon.']);
    expect(steps[0]!.ingredients.map((i) => [i.amount, i.food?.name])).toEqual([[200, 'spaghetti'], [1, 'lemon'], [30, 'butter']]);

    const [ask] = h.llm.requests;
    // Two pictures (the thumbnail and the carousel's other one) and three frames, all as data URLs.
    expect(ask!.images).toHaveLength(5);
    expect(ask!.images.every((u) => u.startsWith('data:image/jpeg;base64,'))).toBe(true);
    expect(JSON.stringify(ask!.raw)).not.toContain('10.20.30.40');
    const parts = ask!.raw.messages.find((m) => m.role === 'user')!.content as { type: string }[];
    expect(parts.map((p) => p.type)).toEqual(['text', 'image_url', 'image_url', 'image_url', 'image_url', 'image_url']);
    expect(ask!.body.messages.find((m) => m.role === 'user')!.content).toContain('2 pictures of the post and 3 frames of its video');
    expect(stepOf(item, 'parsing', 'pictures')).toMatchObject({ status: 'completed', detail: 'Sent 2 pictures and 3 frames of the video to the model' });
    expect(stepOf(item, 'extraction', 'speech').status).toBe('completed');
  });

  it('a model that refuses images: error, saying to set LLM_VISION=false or a vision model', async () => {
    h.llm.supportsImages = false;
    const url = await h.videoPost(name(), { caption: 'Lemon pasta\n- 200 g spaghetti\n- 1 lemon\n1. Boil.\n2. Toss.', title: 'Lemon pasta', video });
    const { body } = await enqueue(h.url, url);
    const item = await waitForItem(h.url, body.id, undefined, 60_000);
    expect(item.status).toBe('error');
    expect(item.error).toMatch(/does not take images: set LLM_VISION=false/);
    expect(h.llm.requests).toHaveLength(1);
    expect(h.manager.created).toHaveLength(0);
  });

  it('frames of a video made private since: error, saying so, nothing created', async () => {
    const url = await h.videoPost(name(), { caption: 'Lemon pasta\n- 200 g spaghetti\n- 1 lemon\n1. Boil.\n2. Toss.', title: 'Lemon pasta', video, downloadError: '[Instagram] abc: Private video. Sign in if you have access' });
    const { body } = await enqueue(h.url, url);
    const item = await waitForItem(h.url, body.id, undefined, 60_000);
    expect(item.status).toBe('error');
    expect(item.error).toMatch(/^The video's frames could not be read: .*Private video/);
    expect(h.llm.requests).toHaveLength(0);
    expect(h.manager.created).toHaveLength(0);
  });

  it('the model finding no recipe in the caption and pictures: the speech step, the model again with the same frames, the video downloaded once', async () => {
    const url = await h.videoPost(name(), { caption: 'Sunday with the family', title: 'Sunday pasta', video });
    h.llm.script.push({ kind: 'not-recipe' });
    const downloads = async () => (await h.ytdlp.calls()).filter((a) => a.includes('best[height<=720]/best') && a.at(-1) === url).length;
    const { body } = await enqueue(h.url, url);
    const item = await waitForItem(h.url, body.id, undefined, 60_000);
    expect(item.status).toBe('success');
    expect(h.llm.requests).toHaveLength(2);
    expect(h.llm.requests.map((r) => r.images.length)).toEqual([4, 4]);
    expect(h.llm.requests[1]!.images).toEqual(h.llm.requests[0]!.images);
    expect(await downloads()).toBe(1);
    expect(h.manager.created.map((c) => c.raw.name)).toEqual(['Sunday pasta']);
    // The model asked twice records the pictures step once, the second time's.
    const parsing = item.phases.find((p: Json) => p.name === 'parsing');
    expect(parsing.steps.map((s: Json) => [s.name, s.status])).toEqual([['pictures', 'completed']]);
  });
});
