import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BrowserSubscriber } from '../../fakes/push-service.js';
import { resetModelCapabilities } from '../../recipes/llm.js';
import type { Json } from '../support/http.js';
import { enqueue, startRecipeHarness, waitForItem, type RecipeHarness } from '../support/recipes.js';

/**
 * A post or page with several recipes becomes several recipes in the manager, each created once (also across
 * attempts and retries), all linked from `results.recipes` (docs/recipes.md, "Several recipes in one post").
 */
let h: RecipeHarness;
let browser: BrowserSubscriber;
beforeAll(async () => {
  h = await startRecipeHarness({ env: { QUEUE_TIMEOUT_MS: '2000', QUEUE_RETRY_ATTEMPTS: '3', QUEUE_RETRY_BACKOFF_MS: '20' } });
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

const modelRecipe = (name: string, ingredients: string[], steps: string[]) => ({
  name, description: null, recipeYield: '2 servings', prepTime: 'PT5M', cookTime: null, totalTime: null,
  recipeIngredient: ingredients, recipeInstructions: steps, recipeCategory: [], recipeCuisine: null, keywords: [],
});
const pancakes = modelRecipe('Pancakes', ['200 g flour', '2 eggs', '300 ml milk'], ['Whisk.', 'Fry.']);
const syrup = modelRecipe('Blueberry syrup', ['150 g blueberries', '50 g sugar'], ['Simmer until thick.']);

let n = 0;
const post = () => h.site.add(`several-${++n}`, { title: `Brunch ${n}`, caption: 'Two recipes for brunch: pancakes and a blueberry syrup.', picture: true });

async function run(url: string): Promise<Json> {
  const { body } = await enqueue(h.url, url);
  return waitForItem(h.url, body.id);
}

const base = () => h.manager.url;

/** The push notification about `itemId`, decrypted. */
async function notification(itemId: string): Promise<Json> {
  for (let i = 0; i < 100; i++) {
    const found = h.push.requests.map((r) => JSON.parse(browser.decrypt(r.body)) as Json).find((m) => m.data.itemId === itemId);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no notification for ${itemId}`);
}
const names = () => h.manager.created.map((c) => c.recipe.name);

describe('several recipes in one post', () => {
  it('the model answering two recipes: two recipes in Mealie, both linked, the first as recipeManagerUrl', async () => {
    h.llm.script.push({ kind: 'recipes', recipes: [pancakes, syrup] });
    const url = post();
    const item = await run(url);
    expect(item.status).toBe('success');
    expect(names()).toEqual(['Pancakes', 'Blueberry syrup']);
    expect(h.manager.created.map((c) => c.recipe.url)).toEqual([url, url]);
    expect(item.results.recipes).toEqual([
      { recipe: expect.objectContaining({ name: 'Pancakes' }), managerRecipeId: 'pancakes', recipeManagerUrl: `${base()}/g/home/r/pancakes` },
      { recipe: expect.objectContaining({ name: 'Blueberry syrup' }), managerRecipeId: 'blueberry-syrup', recipeManagerUrl: `${base()}/g/home/r/blueberry-syrup` },
    ]);
    expect(item.results.recipeManagerUrl).toBe(`${base()}/g/home/r/pancakes`);
    expect(item.results.recipe).toMatchObject({ name: 'Pancakes' });
    // The post's picture on each.
    expect(h.manager.pictures.map((p) => p.id).sort()).toEqual(['blueberry-syrup', 'pancakes']);
    expect(await notification(item.id)).toMatchObject({ title: '2 recipes imported', body: 'Pancakes, Blueberry syrup', data: { url: `${base()}/g/home/r/pancakes` } });
  });

  it('a page with two schema.org Recipes in an ItemList: two recipes, without asking the model', async () => {
    const node = (name: string, ingredient: string) => ({ '@type': 'Recipe', name, recipeIngredient: [ingredient], recipeInstructions: [{ '@type': 'HowToStep', text: `Make ${name}.` }] });
    const url = h.site.add(`page-${++n}`, {
      title: 'Two sauces',
      jsonLd: { '@context': 'https://schema.org', '@type': 'ItemList', itemListElement: [{ '@type': 'ListItem', position: 1, item: node('Pesto', '50 g basil') }, { '@type': 'ListItem', position: 2, item: node('Salsa verde', '30 g parsley') }] },
    });
    const item = await run(url);
    expect(item.status).toBe('success');
    expect(h.llm.requests).toHaveLength(0);
    expect(names()).toEqual(['Pesto', 'Salsa verde']);
    expect(item.results.recipes.map((e: Json) => e.recipeManagerUrl)).toEqual([`${base()}/g/home/r/pesto`, `${base()}/g/home/r/salsa-verde`]);
    expect(item.results.extractedText).toMatch(/^Pesto[\s\S]*---[\s\S]*Salsa verde/);
  });
});

describe('bad input', () => {
  it('an answer with an empty list of recipes is no recipe: error, nothing created', async () => {
    h.llm.script.push({ kind: 'recipes', recipes: [] });
    const item = await run(post());
    expect(item.status).toBe('error');
    expect(item.error).toBe('No recipe in the post: the language model found none');
    expect(h.llm.requests).toHaveLength(1);
    expect(h.manager.createRequests).toHaveLength(0);
  });

  it('a malformed second recipe is left out; the first is imported', async () => {
    h.llm.script.push({ kind: 'recipes', recipes: [pancakes, { name: '', recipeIngredient: [], recipeInstructions: [] }, 'oops'] });
    const item = await run(post());
    expect(item.status).toBe('success');
    expect(names()).toEqual(['Pancakes']);
    expect(item.results.recipes).toHaveLength(1);
  });

  it('the manager failing on the second recipe for now: the next attempt creates only the second', async () => {
    h.llm.script.push({ kind: 'recipes', recipes: [pancakes, syrup] });
    // The first create goes through; the second is 503 once.
    h.manager.script.push({ kind: 'create' }, { status: 503, body: { detail: 'busy' } });
    const item = await run(post());
    expect(item.status).toBe('success');
    expect(item.phases.find((p: Json) => p.name === 'uploading')).toMatchObject({ attempts: 2 });
    expect(h.manager.createRequests).toHaveLength(3);
    expect(names()).toEqual(['Pancakes', 'Blueberry syrup']);
    expect(item.results.recipes.map((e: Json) => e.managerRecipeId)).toEqual(['pancakes', 'blueberry-syrup']);
  });

  it('an attempt cut off while the manager created the second recipe: the next one finds it and links it', async () => {
    h.llm.script.push({ kind: 'recipes', recipes: [pancakes, syrup] });
    // The syrup is stored at once but answered after QUEUE_TIMEOUT_MS (2 s): the attempt ends without its id.
    h.manager.script.push({ kind: 'create' }, { kind: 'create', answerAfterMs: 3000 });
    const item = await run(post());
    expect(item.status).toBe('success');
    expect(item.phases.find((p: Json) => p.name === 'uploading')).toMatchObject({ attempts: 2 });
    expect(h.manager.createRequests).toHaveLength(2);
    expect(names()).toEqual(['Pancakes', 'Blueberry syrup']);
    expect(item.results.recipes.map((e: Json) => e.managerRecipeId)).toEqual(['pancakes', 'blueberry-syrup']);
  });

  it('the manager refusing the second recipe: error; a retry links the first and creates the second', async () => {
    h.llm.fallback = { kind: 'recipes', recipes: [pancakes, syrup] };
    // The first create goes through; the second is refused.
    h.manager.script.push({ kind: 'create' }, { status: 400, body: { detail: { message: 'Unable to parse recipe', error: true, details: 'BAD_RECIPE_DATA' } } });
    const failed = await run(post());
    expect(failed.status).toBe('error');
    expect(failed.error).toMatch(/^Mealie answered 400: .*BAD_RECIPE_DATA/);
    expect(h.manager.createRequests).toHaveLength(2);
    expect(names()).toEqual(['Pancakes']);
    // What was created is linked even though the item failed.
    expect(failed.results.recipes[0]).toMatchObject({ managerRecipeId: 'pancakes' });

    const res = await fetch(`${h.url}/api/queue/${failed.id}/retry`, { method: 'POST' });
    expect(res.status).toBe(200);
    const done = await waitForItem(h.url, failed.id);
    expect(done.status).toBe('success');
    // Pancakes found (by name and the post's URL) and linked, not created again.
    expect(names()).toEqual(['Pancakes', 'Blueberry syrup']);
    expect(done.results.recipes.map((e: Json) => e.managerRecipeId)).toEqual(['pancakes', 'blueberry-syrup']);
  });
});
