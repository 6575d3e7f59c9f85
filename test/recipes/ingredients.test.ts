import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { resetModelCapabilities } from '../../recipes/llm.js';
import type { Json } from '../support/http.js';
import { enqueue, startRecipeHarness, waitForItem, type RecipeHarness } from '../support/recipes.js';

/**
 * Ingredients Mealie understands (docs/recipes.md, "Ingredients the manager understands"): Mealie's own parser,
 * its foods and units found or created, the recipe patched so amounts show; a line the parser cannot read stays a note.
 */
let h: RecipeHarness;
beforeAll(async () => {
  h = await startRecipeHarness({ env: { QUEUE_TIMEOUT_MS: '2000', QUEUE_RETRY_ATTEMPTS: '3', QUEUE_RETRY_BACKOFF_MS: '20' } });
});
afterAll(() => h?.stop());
beforeEach(() => {
  h.llm.reset();
  h.manager.reset();
  resetModelCapabilities();
});

const caption = (name: string) =>
  `${name}!\n- 200 g spaghetti\n- 1 lemon, zested\n- 30 g butter\n- a good glug of your best olive oil\n1. Boil the pasta.\n2. Toss it with butter and lemon.`;
let n = 0;
async function run(): Promise<Json> {
  const url = h.site.add(`ingredients-${++n}`, { title: `Lemon pasta ${n}`, caption: caption(`Lemon pasta ${n}`) });
  const { body } = await enqueue(h.url, url);
  return waitForItem(h.url, body.id);
}

describe('Mealie ingredients', () => {
  it('each line parsed by Mealie, with quantity, unit and food (existing ones reused, missing ones created once); an unreadable line a note', async () => {
    const spaghetti = h.manager.foods.addFood('Spaghetti');
    const item = await run();
    expect(item.status).toBe('success');
    expect(h.manager.foods.parserRequests).toEqual([['200 g spaghetti', '1 lemon, zested', '30 g butter', 'a good glug of your best olive oil']]);
    // "g" once for two lines; Spaghetti found, not created.
    expect(h.manager.foods.createdNames).toEqual(['unit:g', 'food:lemon', 'food:butter']);
    const [created] = h.manager.created;
    const g = h.manager.foods.units.find((u) => u.name === 'g')!;
    const food = (name: string) => h.manager.foods.foods.find((f) => f.name === name)!;
    expect(created!.ingredients).toEqual([
      expect.objectContaining({ quantity: 200, unit: expect.objectContaining({ id: g.id, name: 'g' }), food: expect.objectContaining({ id: spaghetti.id }), note: '', originalText: '200 g spaghetti', disableAmount: false }),
      expect.objectContaining({ quantity: 1, unit: null, food: expect.objectContaining({ id: food('lemon').id }), note: 'zested', originalText: '1 lemon, zested' }),
      expect.objectContaining({ quantity: 30, unit: expect.objectContaining({ id: g.id }), food: expect.objectContaining({ id: food('butter').id }), note: '' }),
      expect.objectContaining({ quantity: 0, unit: null, food: null, note: 'a good glug of your best olive oil', originalText: 'a good glug of your best olive oil' }),
    ]);
    // Amounts shown; the recipe's other settings as Mealie made them.
    expect(created!.settings).toMatchObject({ disableAmount: false, public: true, disableComments: true });
    expect(h.manager.patches).toHaveLength(1);
  });

  it("the parser failing for now: the next attempt links the recipe it created, not a second one", async () => {
    h.manager.foods.script.push({ status: 503, body: { detail: 'busy' } });
    const item = await run();
    expect(item.status).toBe('success');
    expect(item.phases.find((p: Json) => p.name === 'uploading')).toMatchObject({ attempts: 2 });
    expect(h.manager.created).toHaveLength(1);
    expect(h.manager.createRequests).toHaveLength(1);
    expect(h.manager.created[0]!.ingredients).toHaveLength(4);
  });

  it('a Mealie without the parser (404): the recipe is imported with its ingredients as notes', async () => {
    h.manager.foods.script.push({ status: 404, body: { detail: 'Not Found' } });
    const item = await run();
    expect(item.status).toBe('success');
    expect(h.manager.created).toHaveLength(1);
    expect(h.manager.patches).toHaveLength(0);
    expect(h.manager.created[0]!.ingredients).toBeUndefined();
  });

  it('the patch failing for now is retried; refused for good, the recipe stays as Mealie imported it', async () => {
    h.manager.patchScript.push({ status: 502, body: { detail: 'Bad gateway' } });
    const retried = await run();
    expect(retried.status).toBe('success');
    expect(h.manager.created).toHaveLength(1);
    expect(h.manager.patches).toHaveLength(2);
    expect(h.manager.created[0]!.ingredients).toHaveLength(4);

    h.manager.patchScript.push({ status: 422, body: { detail: [{ type: 'uuid_parsing', loc: ['body', 'recipeIngredient', 0, 'food', 'id'], msg: 'Input should be a valid UUID' }] } });
    const kept = await run();
    expect(kept.status).toBe('success');
    expect(h.manager.created).toHaveLength(2);
    expect(h.manager.created[1]!.ingredients).toBeUndefined();
    expect(kept.phases.find((p: Json) => p.name === 'uploading')).toMatchObject({ attempts: 1 });
  });

  it('several recipes: each one patched with its own ingredients', async () => {
    const recipe = (name: string, ingredients: string[]) => ({
      name, description: null, recipeYield: null, prepTime: null, cookTime: null, totalTime: null,
      recipeIngredient: ingredients, recipeInstructions: ['Mix.'], recipeCategory: [], recipeCuisine: null, keywords: [],
    });
    h.llm.script.push({ kind: 'recipes', recipes: [recipe('Dough', ['500 g flour', '300 ml water']), recipe('Topping', ['200 g tomatoes'])] });
    const item = await run();
    expect(item.status).toBe('success');
    expect(h.manager.patches.map((p) => p.id)).toEqual(['dough', 'topping']);
    expect(h.manager.created.map((c) => (c.ingredients ?? []).map((i) => (i.food as { name: string }).name))).toEqual([['flour', 'water'], ['tomatoes']]);
    expect(h.manager.foods.createdNames.filter((x) => x.startsWith('unit:'))).toEqual(['unit:g', 'unit:ml']);
  });
});
