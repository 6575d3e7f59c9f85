import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueue, recipeCaption, startRecipeHarness, waitForItem, type RecipeHarness } from '../support/recipes.js';

/** Tandoor as the recipe manager (RECIPE_MANAGER=tandoor), with the real yt-dlp in front of the page reader. */
let h: RecipeHarness;
beforeAll(async () => {
  h = await startRecipeHarness({ manager: 'tandoor', realYtDlp: true, env: { QUEUE_TIMEOUT_MS: '8000', RECIPE_MANAGER_PUBLIC_URL: 'https://recipes.example.org/' } });
});
afterAll(() => h?.stop());

/** A recipe blog's JSON-LD, the way sites (Yoast, WP Recipe Maker) nest it: in @graph, sections, an image object. */
const blogJsonLd = (picture: string) => ({
  '@context': 'https://schema.org',
  '@graph': [
    { '@type': 'WebSite', name: 'Ana cooks' },
    { '@type': 'Article', headline: 'Shakshuka for two' },
    {
      '@type': ['Recipe', 'NewsArticle'],
      name: 'Shakshuka',
      description: 'Eggs poached in a spiced tomato sauce.',
      image: { '@type': 'ImageObject', url: picture },
      recipeYield: ['2', '2 servings'],
      prepTime: 'PT10M',
      cookTime: 'PT1H5M',
      recipeIngredient: ['1 1/2 tbsp olive oil', '400 g tinned tomatoes', '4 eggs', 'salt, to taste', '½ tsp cumin', 'a splash of whatever wine is open'],
      recipeInstructions: [
        { '@type': 'HowToSection', name: 'Sauce', itemListElement: [{ '@type': 'HowToStep', text: 'Warm the oil and cumin.' }, { '@type': 'HowToStep', text: 'Simmer the tomatoes.' }] },
        { '@type': 'HowToStep', text: 'Crack in the eggs and cover.' },
      ],
      recipeCategory: 'Breakfast',
      keywords: 'eggs, tomato',
    },
  ],
});

describe('Tandoor', () => {
  it('imports a page that carries a schema.org Recipe without asking the model, into Tandoor fields', async () => {
    h.manager.foods.addFood('Eggs');
    const picture = h.site.pictureUrl('shakshuka');
    const url = h.site.add('shakshuka', { title: 'Shakshuka for two', jsonLd: blogJsonLd(picture), bodyText: 'A long story about breakfast.' });
    const { body } = await enqueue(h.url, url);
    const item = await waitForItem(h.url, body.id);
    expect(item.status).toBe('success');
    expect(h.llm.requests).toHaveLength(0);
    expect(item.results.recipeManagerUrl).toBe('https://recipes.example.org/view/recipe/1');
    expect(item.results.thumbnail).toBe(picture);
    expect(h.manager.pictures).toEqual([expect.objectContaining({ id: '1', hasImageField: true })]);
    expect(item.results.extractedText).toContain('Ingredients:\n- 1 1/2 tbsp olive oil');
    expect(item.results.recipe).toMatchObject({
      name: 'Shakshuka',
      recipeYield: '2',
      recipeInstructions: [{ text: 'Warm the oil and cumin.' }, { text: 'Simmer the tomatoes.' }, { text: 'Crack in the eggs and cover.' }],
    });

    const [created] = h.manager.created;
    expect(created!.raw).toMatchObject({
      name: 'Shakshuka',
      description: 'Eggs poached in a spiced tomato sauce.',
      servings: 2,
      working_time: 10,
      waiting_time: 65,
      source_url: url,
      internal: true,
      keywords: [{ name: 'eggs' }, { name: 'tomato' }, { name: 'Breakfast' }],
    });
    const steps = created!.raw.steps as { instruction: string; ingredients: unknown[] }[];
    expect(steps.map((s) => s.instruction)).toEqual(['Warm the oil and cumin.', 'Simmer the tomatoes.', 'Crack in the eggs and cover.']);
    // Each food and unit as Tandoor's own object: found (eggs, made beforehand) or created.
    const id = (kind: 'food' | 'unit', name: string) => (kind === 'food' ? h.manager.foods.foods : h.manager.foods.units).find((o) => o.name === name)!.id;
    const ing = (food: string | null, unit: string | null, amount: number, note: string, original: string) => ({
      food: food ? { id: id('food', food), name: food } : null,
      unit: unit ? { id: id('unit', unit), name: unit } : null,
      amount,
      no_amount: amount === 0,
      note,
      original_text: original,
      is_header: false,
    });
    expect(steps[0]!.ingredients).toEqual([
      ing('olive oil', 'tbsp', 1.5, '', '1 1/2 tbsp olive oil'),
      ing('tinned tomatoes', 'g', 400, '', '400 g tinned tomatoes'),
      ing('Eggs', null, 4, '', '4 eggs'),
      ing('salt', null, 0, 'to taste', 'salt, to taste'),
      ing('cumin', 'tsp', 0.5, '', '½ tsp cumin'),
      // A line that cannot be read stays a note, with no food.
      ing(null, null, 0, 'a splash of whatever wine is open', 'a splash of whatever wine is open'),
    ]);
    expect(h.manager.foods.createdNames).toEqual(['food:olive oil', 'unit:tbsp', 'food:tinned tomatoes', 'unit:g', 'food:salt', 'food:cumin', 'unit:tsp']);
    expect(steps[1]!.ingredients).toEqual([]);
    expect(h.manager.createRequests[0]!.authorization).toBe(`Bearer ${h.manager.token}`);
  });

  it('reads a caption post through the model and uploads its picture to Tandoor', async () => {
    const url = h.site.add('caption', { title: 'Lemon pasta', caption: recipeCaption('Lemon pasta'), picture: true });
    const { body } = await enqueue(h.url, url);
    const item = await waitForItem(h.url, body.id);
    expect(item.status).toBe('success');
    expect(h.llm.requests).toHaveLength(1);
    const id = item.results.recipeManagerUrl.split('/').at(-1);
    const uploaded = h.manager.pictures.find((p) => p.id === id);
    expect(uploaded).toMatchObject({ hasImageField: true, contentType: expect.stringMatching(/^multipart\/form-data; boundary=/) });
  });

  it('a food lookup failing for now is retried before the recipe is created; a Tandoor refusing lookups gets names', async () => {
    h.manager.foods.script.push({ status: 502, body: { detail: 'Bad gateway' } });
    const retried = await waitForItem(h.url, (await enqueue(h.url, h.site.add('lookup-502', { title: 'Toast', caption: recipeCaption('Toast') }))).body.id);
    expect(retried.status).toBe('success');
    expect(retried.phases.find((p: { name: string }) => p.name === 'uploading')).toMatchObject({ attempts: 2 });
    const toast = h.manager.created.find((c) => c.recipe.name === 'Toast')!;
    const first = (c: typeof toast) => (c.raw.steps as { ingredients: { food: { id?: number; name: string } }[] }[])[0]!.ingredients[0]!;
    expect(first(toast).food).toEqual({ id: expect.any(Number), name: 'spaghetti' });

    h.manager.foods.script.push({ status: 403, body: { detail: 'You do not have permission to perform this action.' } });
    const named = await waitForItem(h.url, (await enqueue(h.url, h.site.add('lookup-403', { title: 'Soup', caption: recipeCaption('Soup') }))).body.id);
    expect(named.status).toBe('success');
    const soup = h.manager.created.find((c) => c.recipe.name === 'Soup')!;
    expect(first(soup).food).toEqual({ name: 'spaghetti' });
  });

  it('a post with two recipes: two recipes in Tandoor, both linked', async () => {
    const recipe = (name: string, ingredient: string) => ({
      name, description: null, recipeYield: null, prepTime: null, cookTime: null, totalTime: null,
      recipeIngredient: [ingredient], recipeInstructions: ['Cook.'], recipeCategory: [], recipeCuisine: null, keywords: [],
    });
    h.llm.script.push({ kind: 'recipes', recipes: [recipe('Dal', '200 g lentils'), recipe('Rice', '150 g rice')] });
    const item = await waitForItem(h.url, (await enqueue(h.url, h.site.add('two', { title: 'Dinner', caption: 'Dal and rice.' }))).body.id);
    expect(item.status).toBe('success');
    const ids = item.results.recipes.map((e: { managerRecipeId: string }) => e.managerRecipeId);
    expect(ids.map((id: string) => h.manager.created.find((c) => c.id === id)!.recipe.name)).toEqual(['Dal', 'Rice']);
    expect(item.results.recipes.map((e: { recipeManagerUrl: string }) => e.recipeManagerUrl)).toEqual(ids.map((id: string) => `https://recipes.example.org/view/recipe/${id}`));
    expect(item.results.recipeManagerUrl).toBe(`https://recipes.example.org/view/recipe/${ids[0]}`);
  });

  it("Tandoor's 400 and 401 are permanent", async () => {
    h.manager.script.push({ status: 400, body: { name: ['This field is required.'] } }, { status: 401, body: { detail: 'Invalid token.' } });
    const bad = await waitForItem(h.url, (await enqueue(h.url, h.site.add('bad', { title: 'Bad', caption: recipeCaption('Bad') }))).body.id);
    expect(bad).toMatchObject({ status: 'error' });
    expect(bad.error).toMatch(/^Tandoor answered 400/);
    const denied = await waitForItem(h.url, (await enqueue(h.url, h.site.add('denied', { title: 'Denied', caption: recipeCaption('Denied') }))).body.id);
    expect(denied.status).toBe('error');
    expect(denied.error).toMatch(/^Tandoor answered 401: .*\(check RECIPE_MANAGER_TOKEN\)$/);
  });
});
