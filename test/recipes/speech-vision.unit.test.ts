import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeLlm } from '../../fakes/recipe-fakes.js';
import { NO_RECIPE, parseWithModel, resetModelCapabilities } from '../../recipes/llm.js';
import { PermanentError } from '../../core/errors.js';
import { failRunning, initialPhases, withStep } from '../../recipes/phases.js';
import { onlyPointsToVideo, speechPlan } from '../../recipes/speech.js';

/** The speech step's plan, phases' steps, and images sent the way each API style takes them, without a stack. */
describe('when the speech step runs', () => {
  it('a caption that only points to the video (or says nothing) needs the speech; one with a recipe does not', () => {
    for (const text of ['Recipe in the video!', 'Full recipe in the reel 👇', 'ingredients in the video, enjoy', 'Watch the video for the recipe', '']) {
      expect(onlyPointsToVideo(text), text).toBe(true);
    }
    for (const text of ['Sunday with the family', 'Lemon pasta\n- 200 g spaghetti\n- 1 lemon\nRecipe in the video too', 'A video of my cat']) {
      expect(onlyPointsToVideo(text), text).toBe(false);
    }
  });

  it('RECIPE_SPEECH: auto (now, or after the model finds none), always, off; never without a video or with a page recipe', () => {
    const video = { seconds: 30 };
    expect(speechPlan('auto', { text: 'Recipe in the video', video })).toBe('now');
    expect(speechPlan('auto', { text: 'Sunday with the family', video })).toBe('fallback');
    expect(speechPlan('auto', { text: 'Recipe in the video' })).toBeUndefined();
    expect(speechPlan('auto', { text: 'x', video, structured: [{ name: 'Pesto' } as never] })).toBeUndefined();
    expect(speechPlan('always', { text: 'Lemon pasta\n- 200 g spaghetti\n- 1 lemon', video })).toBe('now');
    expect(speechPlan('off', { text: 'Recipe in the video', video })).toBeUndefined();
  });

  it("a phase's steps: set in place, and a run that ends marks a running one failed", () => {
    let phases = withStep(initialPhases(), 'extraction', { name: 'speech', status: 'in_progress', startedAt: 't0' });
    phases = withStep(phases, 'extraction', { name: 'speech', status: 'in_progress', detail: 'job 1', startedAt: 't0' });
    expect(phases[0]!.steps).toEqual([{ name: 'speech', status: 'in_progress', detail: 'job 1', startedAt: 't0' }]);
    const ended = failRunning(phases, 't1');
    expect(ended[0]!.steps).toEqual([{ name: 'speech', status: 'error', detail: 'job 1', startedAt: 't0', completedAt: 't1' }]);
  });

  it('parsing asked again (after the speech step, or a retried attempt) records its pictures step once, the latest', () => {
    const first = { name: 'pictures' as const, status: 'completed' as const, detail: 'Sent 1 picture to the model', completedAt: 't0' };
    const again = { ...first, detail: 'Sent 1 picture and 2 frames of the video to the model', completedAt: 't1' };
    const phases = withStep(withStep(initialPhases(), 'parsing', first), 'parsing', again);
    expect(phases[1]!.steps).toEqual([again]);
    expect(phases[0]!.steps).toBeUndefined();
  });
});

describe('images for the model', () => {
  let llm: FakeLlm;
  beforeAll(async () => {
    llm = await FakeLlm.start();
  });
  afterAll(() => llm?.close());
  beforeEach(() => {
    llm.reset();
    resetModelCapabilities();
  });
  const ctx = () => ({ signal: new AbortController().signal, deadline: Date.now() + 5000 });
  const images = [
    { url: 'data:image/jpeg;base64,AAAA', kind: 'picture' as const },
    { url: 'data:image/jpeg;base64,BBBB', kind: 'frame' as const },
  ];
  const post = { url: 'https://example.org/p/1', title: 'Lemon pasta', text: '- 200 g spaghetti\n1. Boil.', images };

  it('OpenAI-compatible: image_url content parts after the text', async () => {
    const answer = await parseWithModel({ baseUrl: llm.baseUrl, apiKey: 'k', model: 'vision' }, post, ctx());
    expect(answer.recipes[0]!.name).toBe('Lemon pasta');
    const user = llm.requests[0]!.raw.messages.find((m) => m.role === 'user')!;
    expect(user.content).toEqual([
      { type: 'text', text: expect.stringContaining('1 picture of the post and 1 frame of its video') },
      { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA' } },
      { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,BBBB' } },
    ]);
  });

  it("Ollama's native API: base64 `images` beside the text", async () => {
    await parseWithModel({ baseUrl: llm.url, apiKey: undefined, model: 'llava', style: 'ollama' }, post, ctx());
    const user = llm.requests[0]!.raw.messages.find((m) => m.role === 'user')!;
    expect(typeof user.content).toBe('string');
    expect(user.images).toEqual(['AAAA', 'BBBB']);
    expect(llm.requests[0]!.images).toEqual(['AAAA', 'BBBB']);
  });

  it('an answer with no recipe is a PermanentError (never retried) whose code says so (the speech step may follow)', async () => {
    llm.script.push({ kind: 'not-recipe' });
    const failed = parseWithModel({ baseUrl: llm.baseUrl, apiKey: 'k', model: 'm' }, { url: 'https://example.org/p/2', text: 'A cat' }, ctx());
    await expect(failed).rejects.toBeInstanceOf(PermanentError);
    await expect(failed).rejects.toMatchObject({ code: NO_RECIPE, constructor: PermanentError });
  });
});
