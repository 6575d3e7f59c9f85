import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { resetModelCapabilities } from '../../recipes/llm.js';
import { json, type Json } from '../support/http.js';
import { enqueue, getItem, waitForItem } from '../support/recipes.js';
import { SPOKEN_RECIPE, startSpeechHarness, type SpeechHarness } from './speech-harness.js';

/**
 * The video's speech (docs/recipes.md): a post whose caption holds no recipe has its video transcribed by the
 * transcription service, as a child workflow of the item's, and the model reads the transcript; cancelling the item
 * cancels the transcription; an unreachable backend is `unhealthy` and a retry creates nothing twice.
 */
let h: SpeechHarness;
beforeAll(async () => {
  h = await startSpeechHarness();
}, 300_000);
afterAll(() => h?.stop());
beforeEach(() => {
  h.llm.reset();
  h.manager.reset();
  resetModelCapabilities();
});

let n = 0;
const name = () => `reel-${++n}`;

async function run(url: string, timeoutMs = 60_000): Promise<Json> {
  const { body } = await enqueue(h.url, url);
  return waitForItem(h.url, body.id, undefined, timeoutMs);
}
const phase = (item: Json, p: string) => item.phases.find((x: Json) => x.name === p);
const stepOf = (item: Json, p: string, s: string) => phase(item, p)?.steps?.find((x: Json) => x.name === s);
const transcription = async (id: string) => json(await fetch(`${h.url}/api/jobs/${id}`));

describe("a video post whose caption says only 'recipe in the video'", () => {
  it('becomes a complete recipe in Mealie from the speech; the phases show the speech step and the skipped pictures', async () => {
    const url = await h.videoPost(name(), { caption: 'Recipe in the video! 🍋', title: 'Lemon pasta' });
    const submissions = h.asr.jobs.length;
    const item = await run(url);
    expect(item.status).toBe('success');
    expect(h.manager.created).toHaveLength(1);
    const recipe = h.manager.created[0]!.recipe;
    expect(recipe.name).toBe('Lemon pasta');
    expect(recipe.recipeIngredient).toEqual(['200 g spaghetti', '1 lemon, zested', '30 g butter']);
    expect((recipe.recipeInstructions as Json[]).map((s: Json) => s.text ?? s)).toEqual(['Boil the pasta.', 'Toss it with butter and lemon.']);
    // The model read the caption and the transcript, in one request.
    expect(h.llm.requests).toHaveLength(1);
    const user = h.llm.requests[0]!.body.messages.find((m) => m.role === 'user')!.content;
    expect(user).toContain('Recipe in the video!');
    expect(user).toContain('Spoken in the video');
    expect(user).toContain('1. Boil the pasta.');
    // One backend job, and the transcription job is a job of its own, done.
    expect(h.asr.jobs.length).toBe(submissions + 1);
    expect(item.results.transcript).toBe(SPOKEN_RECIPE.join('\n'));
    const job = await transcription(item.results.transcriptionJobId);
    expect(job).toMatchObject({ status: 'done', source: 'url', sourceUrl: url, transcript_source: 'asr' });
    expect(phase(item, 'extraction')).toMatchObject({ status: 'completed', steps: [expect.objectContaining({ name: 'speech', status: 'completed' })] });
    expect(stepOf(item, 'extraction', 'speech').detail).toContain(item.results.transcriptionJobId);
    expect(stepOf(item, 'parsing', 'pictures')).toMatchObject({ status: 'skipped', detail: expect.stringContaining('LLM_VISION=false') });
    expect(h.llm.requests[0]!.images).toEqual([]);
  });

  it('the model finding no recipe in a caption that says something else: the speech step, then the model again', async () => {
    const url = await h.videoPost(name(), { caption: 'Sunday with the family, the best day of the week', title: 'Sunday pasta' });
    h.llm.script.push({ kind: 'not-recipe', reason: 'The caption holds no ingredients.' });
    const item = await run(url);
    expect(item.status).toBe('success');
    expect(h.llm.requests).toHaveLength(2);
    expect(h.llm.requests[0]!.body.messages.find((m) => m.role === 'user')!.content).not.toContain('Spoken in the video');
    expect(h.llm.requests[1]!.body.messages.find((m) => m.role === 'user')!.content).toContain('- 200 g spaghetti');
    expect(h.manager.created.map((c) => c.recipe.name)).toEqual(['Sunday pasta']);
    expect(stepOf(item, 'extraction', 'speech').status).toBe('completed');
    expect(phase(item, 'parsing').status).toBe('completed');
  });

  it('a caption with the recipe: no speech step', async () => {
    const url = await h.videoPost(name(), { caption: 'Lemon pasta\n- 200 g spaghetti\n- 1 lemon\n1. Boil.\n2. Toss.', title: 'Lemon pasta' });
    const jobs = h.asr.jobs.length;
    const item = await run(url);
    expect(item.status).toBe('success');
    expect(h.asr.jobs.length).toBe(jobs);
    expect(stepOf(item, 'extraction', 'speech')).toBeUndefined();
    expect(item.results.transcript).toBeUndefined();
  });

  it('a video longer than RECIPE_SPEECH_MAX_SECONDS: error, saying so, nothing transcribed or created', async () => {
    const url = await h.videoPost(name(), { caption: 'Full recipe in the reel', seconds: 7200 });
    const jobs = h.asr.jobs.length;
    const item = await run(url);
    expect(item.status).toBe('error');
    expect(item.error).toMatch(/7200 s long; RECIPE_SPEECH_MAX_SECONDS allows 1200 s/);
    expect(h.asr.jobs.length).toBe(jobs);
    expect(h.manager.created).toHaveLength(0);
    expect(stepOf(item, 'extraction', 'speech').status).toBe('error');
    expect(phase(item, 'extraction').status).toBe('error');
  });

  it('a retry after the transcription finished reuses its transcript (no second backend job, no duplicate recipe)', async () => {
    const url = await h.videoPost(name(), { caption: 'Recipe in the video', title: 'Reused pasta' });
    h.manager.script.push({ status: 400, body: { detail: { message: 'Unknown Error', error: true, exception: 'BAD_RECIPE_DATA' } } });
    const failed = await run(url);
    expect(failed.status).toBe('error');
    const jobs = h.asr.jobs.length;
    const first = failed.results.transcriptionJobId;
    const res = await fetch(`${h.url}/api/queue/${failed.id}/retry`, { method: 'POST' });
    expect(res.status).toBe(200);
    const item = await waitForItem(h.url, failed.id, (i) => i.runs === 2 && ['success', 'error', 'unhealthy'].includes(i.status), 60_000);
    expect(item.status).toBe('success');
    expect(h.asr.jobs.length).toBe(jobs);
    expect(item.results.transcriptionJobId).toBe(first);
    expect(item.results.transcript).toBe(SPOKEN_RECIPE.join('\n'));
    expect(h.manager.created.map((c) => c.recipe.name)).toEqual(['Reused pasta']);
  });
});

describe('cancelling and failing during the speech step', () => {
  it('cancelling the item cancels the transcription (and its backend job)', async () => {
    h.asr.autoCompleteMs = undefined; // the backend never answers
    try {
      const url = await h.videoPost(name(), { caption: 'Recipe in the video' });
      const jobs = h.asr.jobs.length;
      const { body } = await enqueue(h.url, url);
      const running = await waitForItem(h.url, body.id, () => h.asr.jobs.length > jobs, 60_000);
      expect(stepOf(await getItem(h.url, running.id), 'extraction', 'speech').status).toBe('in_progress');
      const backendJob = h.asr.jobs.at(-1)!.id;
      await h.stack.temporal.workflow.getHandle(`${h.stack.config.taskQueuePrefix}recipe:${body.id}`).cancel();
      const item = await waitForItem(h.url, body.id);
      expect(item.status).toBe('error');
      expect(item.error).toMatch(/cancel/i);
      expect(stepOf(item, 'extraction', 'speech').status).toBe('error');
      const job = await transcription(item.results.transcriptionJobId);
      expect(job.status).toBe('cancelled');
      await expect.poll(() => h.asr.cancels, { timeout: 10_000 }).toContain(backendJob);
      expect(h.manager.created).toHaveLength(0);
    } finally {
      h.asr.autoCompleteMs = 50;
    }
  });

  it('a backend that is down: unhealthy; retried once it is back, the recipe is created once', async () => {
    const url = await h.videoPost(name(), { caption: 'Recipe in the video', title: 'Patient pasta' });
    await h.stopAsr();
    let item: Json;
    try {
      item = await run(url, 120_000);
    } finally {
      await h.restartAsr();
    }
    expect(item.status).toBe('unhealthy');
    expect(item.error).toMatch(/speech could not be transcribed for now/);
    expect(item.error).toMatch(/can be retried/);
    expect(stepOf(item, 'extraction', 'speech').status).toBe('error');
    expect((await transcription(item.results.transcriptionJobId)).status).toBe('failed');
    expect(h.manager.created).toHaveLength(0);

    const res = await fetch(`${h.url}/api/queue/${item.id}/retry`, { method: 'POST' });
    expect(res.status).toBe(200);
    const retried = await waitForItem(h.url, item.id, (i) => i.runs === 2 && ['success', 'error', 'unhealthy'].includes(i.status), 60_000);
    expect(retried.status).toBe('success');
    expect(h.asr.jobs).toHaveLength(1);
    expect(h.manager.created.map((c) => c.recipe.name)).toEqual(['Patient pasta']);
    expect(retried.results.transcriptionJobId).not.toBe(item.results.transcriptionJobId);
  }, 180_000);
});
