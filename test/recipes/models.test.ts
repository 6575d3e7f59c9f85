import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MODEL_ANSWER_SCHEMA } from '../../recipes/recipe.js';
import { resetModelCapabilities } from '../../recipes/llm.js';
import { type Json } from '../support/http.js';
import type { AnswerStyle } from '../../fakes/recipe-fakes.js';
import { enqueue, recipeCaption, startRecipeHarness, waitForItem, type RecipeHarness } from '../support/recipes.js';

/**
 * Items parsed by models that answer in their own ways, and by servers that take the schema in their own ways
 * (OpenAI's json_schema, json_object, none; Ollama's native `format`), end to end through the queue.
 */
let n = 0;
async function run(h: RecipeHarness): Promise<Json> {
  const url = h.site.add(`post-${++n}`, { title: 'Lemon pasta', caption: recipeCaption('Lemon pasta'), picture: true });
  const { body } = await enqueue(h.url, url);
  const item = await waitForItem(h.url, body.id);
  return { ...item, url };
}
/** The recipe without what differs from post to post. */
const recipeOf = (item: Json) => {
  const { url: _url, image: _image, ...rest } = item.results.recipe;
  return rest;
};

describe('an OpenAI-compatible server', () => {
  let h: RecipeHarness;
  beforeAll(async () => {
    h = await startRecipeHarness();
  });
  afterAll(() => h?.stop());
  beforeEach(() => {
    h.llm.reset();
    resetModelCapabilities();
  });

  it('every answer style gives the recipe the strict answer gives, on the first attempt', async () => {
    h.llm.fallback = { kind: 'style', style: 'strict' };
    const strict = await run(h);
    expect(strict.status).toBe('success');
    expect(recipeOf(strict)).toMatchObject({ name: 'Lemon pasta', prepTime: 'PT10M', cookTime: 'PT12M', recipeIngredient: ['200 g spaghetti', '1 lemon, zested', '30 g butter'] });
    for (const style of ['prose', 'think', 'schemaOrg', 'plain', 'extraKeys'] as AnswerStyle[]) {
      h.llm.fallback = { kind: 'style', style };
      const item = await run(h);
      expect({ style, status: item.status, error: item.error }).toEqual({ style, status: 'success', error: undefined });
      expect(item.phases.find((p: Json) => p.name === 'parsing')).toMatchObject({ status: 'completed', attempts: 1 });
      expect(recipeOf(item)).toEqual(recipeOf(strict));
      expect(item.results.recipe.url).toBe(item.url);
    }
    expect(h.manager.created.length).toBeGreaterThanOrEqual(6);
  });

  it('a server that takes neither json_schema nor json_object is asked with the schema in the prompt only, and remembered', async () => {
    h.llm.supportsJsonSchema = false;
    h.llm.supportsJsonObject = false;
    h.llm.fallback = { kind: 'style', style: 'prose' };
    const item = await run(h);
    expect(item.status).toBe('success');
    expect(h.llm.requests.map((r) => [r.status, r.body.response_format?.type ?? 'none'])).toEqual([
      [400, 'json_schema'],
      [400, 'json_object'],
      [200, 'none'],
    ]);
    expect(h.llm.requests[2]!.body.messages[0]!.content).toContain(JSON.stringify(MODEL_ANSWER_SCHEMA));
    const again = await run(h);
    expect(again.status).toBe('success');
    expect(h.llm.requests.slice(3).map((r) => r.body.response_format?.type ?? 'none')).toEqual(['none']);
  });
});

describe("Ollama's native API (LLM_API_STYLE=ollama)", () => {
  let h: RecipeHarness;
  beforeAll(async () => {
    h = await startRecipeHarness({ env: { LLM_API_STYLE: 'ollama', LLM_MODEL: 'llama3.2' } });
  });
  afterAll(() => h?.stop());
  beforeEach(() => {
    h.llm.reset();
    resetModelCapabilities();
  });

  it('sends the schema as `format` to /api/chat, not streamed, and reads message.content', async () => {
    h.llm.fallback = { kind: 'style', style: 'prose' };
    const item = await run(h);
    expect(item.status).toBe('success');
    expect(recipeOf(item)).toMatchObject({ name: 'Lemon pasta', recipeInstructions: [{ '@type': 'HowToStep', text: 'Boil the pasta.' }, { '@type': 'HowToStep', text: 'Toss it with butter and lemon.' }] });
    const [ask] = h.llm.requests;
    // The harness's base URL ends in /v1 (the OpenAI-compatible one): the native API is found at the root.
    expect(ask!.path).toBe('/api/chat');
    expect(ask!.body).toMatchObject({ model: 'llama3.2', stream: false, format: MODEL_ANSWER_SCHEMA, options: { temperature: 0 } });
    expect(ask!.body.response_format).toBeUndefined();
    expect(ask!.authorization).toMatch(/^Bearer /);
  });

  it('an Ollama too old for schemas gets format "json" with the schema in the prompt, and is remembered', async () => {
    h.llm.supportsSchemaFormat = false;
    h.llm.fallback = { kind: 'style', style: 'strict' };
    expect((await run(h)).status).toBe('success');
    expect((await run(h)).status).toBe('success');
    expect(h.llm.requests.map((r) => [r.status, r.body.format === 'json' ? 'json' : 'schema'])).toEqual([
      [400, 'schema'],
      [200, 'json'],
      [200, 'json'],
    ]);
    expect(h.llm.requests[1]!.body.messages[0]!.content).toContain('"notRecipeReason"');
  });

  it('a model Ollama does not have is a permanent failure that says what to check', async () => {
    h.llm.script.push({ kind: 'status', status: 404, body: { error: 'model "llama3.2" not found, try pulling it first' } });
    const item = await run(h);
    expect(item).toMatchObject({ status: 'error' });
    expect(item.error).toBe('The language model answered 404: {"error":"model \\"llama3.2\\" not found, try pulling it first"} (check LLM_API_BASE_URL, LLM_API_STYLE and LLM_MODEL)');
  });
});
