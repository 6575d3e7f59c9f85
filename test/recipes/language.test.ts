import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { canonicalLanguage } from '../../core/languages.js';
import { conversionInstruction } from '../../recipes/language.js';
import { resetModelCapabilities } from '../../recipes/llm.js';
import { tandoorRecipe } from '../../recipes/managers.js';
import { readConfig } from '../../runtime/config.js';
import { json, type Json } from '../support/http.js';
import { startRecipeHarness, waitForItem, type RecipeHarness } from '../support/recipes.js';

/**
 * The household's language and units (docs/recipes.md, "Language and units"): RECIPE_LANGUAGE and RECIPE_UNITS, or
 * an item's own `language` and `units`, go to the model, which translates and converts; the post's own text is kept
 * in the recipe's notes.
 */
describe('settings', () => {
  it('an unknown language or unit system stops startup, naming the variable', () => {
    expect(() => readConfig({ RECIPE_LANGUAGE: 'xx' })).toThrow(ConfigError);
    expect(() => readConfig({ RECIPE_LANGUAGE: 'Klingonish' })).toThrow(/RECIPE_LANGUAGE must be a BCP 47 language tag/);
    expect(() => readConfig({ RECIPE_UNITS: 'imperial' })).toThrow(/RECIPE_UNITS must be one of metric, us, keep/);
    const { config } = readConfig({ RECIPE_LANGUAGE: 'EN-gb', RECIPE_UNITS: 'US' });
    expect(config.recipes).toMatchObject({ language: 'en-GB', units: 'us' });
    expect(readConfig({}).config.recipes).toMatchObject({ language: undefined, units: 'keep' });
  });

  it('languages are BCP 47 tags of known languages; the instruction names the language and the units', () => {
    expect(['de', 'pt-br', 'zh-Hant', 'xx', 'German', ''].map(canonicalLanguage)).toEqual(['de', 'pt-BR', 'zh-Hant', undefined, undefined, undefined]);
    expect(conversionInstruction({ language: 'en', units: 'metric' })).toMatch(/^Write every text field .* in English \(en\), translating .* Convert every quantity to metric units/);
    expect(conversionInstruction({ units: 'us' })).toMatch(/^Convert every quantity to US customary units/);
    expect(conversionInstruction({ units: 'keep' })).toBe('');
  });

  it("Tandoor keeps the post's own text as a last step", () => {
    const body = tandoorRecipe(
      { '@context': 'https://schema.org', '@type': 'Recipe', name: 'Pancakes', recipeIngredient: ['200 g flour'], recipeInstructions: [{ '@type': 'HowToStep', text: 'Fry.' }] },
      undefined,
      'Pfannkuchen: 200 g Mehl. Braten.',
    );
    expect(body.steps.map((s) => [s.name, s.instruction])).toEqual([
      [undefined, 'Fry.'],
      ['Original text', 'Pfannkuchen: 200 g Mehl. Braten.'],
    ]);
    expect(body.steps[1]!.ingredients).toEqual([]);
  });
});

let h: RecipeHarness;
beforeAll(async () => {
  h = await startRecipeHarness({ env: { RECIPE_LANGUAGE: 'en', RECIPE_UNITS: 'metric' } });
});
afterAll(() => h?.stop());
beforeEach(() => {
  h.llm.reset();
  h.manager.reset();
  resetModelCapabilities();
});

const GERMAN = 'Pfannkuchen!\n- 2 Tassen Mehl\n- 2 Eier\n- 1 Tasse Milch\n1. Alles verrühren.\n2. In der Pfanne backen.';
const english = {
  name: 'Pancakes', description: null, recipeYield: null, prepTime: null, cookTime: null, totalTime: null,
  recipeIngredient: ['250 g flour', '2 eggs', '240 ml milk'], recipeInstructions: ['Mix everything.', 'Fry in the pan.'],
  recipeCategory: [], recipeCuisine: null, keywords: [],
};
let n = 0;
const system = (i = 0) => h.llm.requests[i]!.body.messages.find((m) => m.role === 'system')!.content;

async function queue(body: Record<string, unknown>): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${h.url}/api/queue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await json(res) };
}

describe('language and units', () => {
  it('a German post with RECIPE_LANGUAGE=en and RECIPE_UNITS=metric: the model is asked to translate and convert; the original is a note', async () => {
    h.llm.script.push({ kind: 'recipes', recipes: [english] });
    const url = h.site.add(`german-${++n}`, { title: 'Pfannkuchen', caption: GERMAN });
    const { status, body } = await queue({ url });
    expect(status).toBe(201);
    expect(body.options).toBeUndefined();
    const item = await waitForItem(h.url, body.id);
    expect(item.status).toBe('success');
    expect(system()).toContain('in English (en)');
    expect(system()).toContain('Convert every quantity to metric units');
    expect(system()).not.toContain('translate nothing');
    expect(item.results.conversion).toEqual({ language: 'en', units: 'metric' });
    expect(item.results.recipe).toMatchObject({ name: 'Pancakes', recipeIngredient: ['250 g flour', '2 eggs', '240 ml milk'] });
    const [created] = h.manager.created;
    expect(created!.recipe.name).toBe('Pancakes');
    expect(created!.notes).toEqual([{ title: 'Original text', text: GERMAN }]);
    // The translated ingredients are what Mealie parses.
    expect(h.manager.foods.parserRequests).toEqual([['250 g flour', '2 eggs', '240 ml milk']]);
    // The model read the German post; the recipe in Mealie is its English, metric text, the German only in the note.
    expect(h.llm.requests[0]!.body.messages.find((m) => m.role === 'user')!.content).toContain('2 Tassen Mehl');
    expect(created!.recipe).toMatchObject({ recipeIngredient: ['250 g flour', '2 eggs', '240 ml milk'] });
    expect(JSON.stringify(created!.recipe.recipeInstructions)).toMatch(/Mix everything\..*Fry in the pan\./);
    expect(created!.ingredients!.map((i) => [i.quantity, (i.unit as { name?: string } | null)?.name, (i.food as { name?: string } | null)?.name])).toEqual([
      [250, 'g', 'flour'],
      [2, undefined, 'eggs'],
      [240, 'ml', 'milk'],
    ]);
    expect(JSON.stringify({ ...created!.recipe, ingredients: created!.ingredients })).not.toMatch(/Mehl|Tasse|Eier|Pfanne/);
  });

  it("an item's own language and units win over the settings; keep means no conversion", async () => {
    h.llm.script.push({ kind: 'recipes', recipes: [english] });
    const url = h.site.add(`own-${++n}`, { title: 'Pancakes', caption: GERMAN });
    const { status, body } = await queue({ url, language: 'DE', units: 'keep' });
    expect(status).toBe(201);
    expect(body.options).toEqual({ language: 'de', units: 'keep' });
    const item = await waitForItem(h.url, body.id);
    expect(item.status).toBe('success');
    expect(system()).toContain('in German (de)');
    expect(system()).not.toContain('Convert every quantity');
    expect(item.results.conversion).toEqual({ language: 'de', units: 'keep' });
    expect((await json(await fetch(`${h.url}/api/queue/${body.id}`))).options).toEqual({ language: 'de', units: 'keep' });
  });

  it("a page's own schema.org recipe goes through the model when it is to be translated", async () => {
    h.llm.script.push({ kind: 'recipes', recipes: [english] });
    const url = h.site.add(`jsonld-${++n}`, {
      title: 'Pfannkuchen',
      jsonLd: { '@type': 'Recipe', name: 'Pfannkuchen', recipeIngredient: ['2 Tassen Mehl'], recipeInstructions: ['Backen.'] },
    });
    const item = await waitForItem(h.url, (await queue({ url })).body.id);
    expect(item.status).toBe('success');
    expect(h.llm.requests).toHaveLength(1);
    expect(h.llm.requests[0]!.body.messages.find((m) => m.role === 'user')!.content).toContain('2 Tassen Mehl');
    expect(item.results.recipe.name).toBe('Pancakes');
  });

  it('a bad language or unit system for an item is 400, and nothing is queued', async () => {
    const url = h.site.add(`bad-${++n}`, { title: 'x', caption: GERMAN });
    const bad = await queue({ url, language: 'xx' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'INVALID_LANGUAGE' });
    expect(JSON.stringify(bad.body)).toContain('/body/language');
    expect((await queue({ url, units: 'imperial' })).status).toBe(400);
    expect((await queue({ url, language: '' })).status).toBe(400);
    const list = await json(await fetch(`${h.url}/api/queue?limit=100`));
    expect(list.items.some((i: Json) => i.url === url)).toBe(false);
  });
});
