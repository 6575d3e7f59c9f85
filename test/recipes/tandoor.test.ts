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
      recipeIngredient: ['1 1/2 tbsp olive oil', '400 g tinned tomatoes', '4 eggs', 'salt, to taste', '½ tsp cumin'],
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
    expect(steps[0]!.ingredients).toEqual([
      { food: { name: 'olive oil' }, unit: { name: 'tbsp' }, amount: 1.5, no_amount: false, note: '', original_text: '1 1/2 tbsp olive oil' },
      { food: { name: 'tinned tomatoes' }, unit: { name: 'g' }, amount: 400, no_amount: false, note: '', original_text: '400 g tinned tomatoes' },
      { food: { name: 'eggs' }, unit: null, amount: 4, no_amount: false, note: '', original_text: '4 eggs' },
      { food: { name: 'salt' }, unit: null, amount: 0, no_amount: true, note: 'to taste', original_text: 'salt, to taste' },
      { food: { name: 'cumin' }, unit: { name: 'tsp' }, amount: 0.5, no_amount: false, note: '', original_text: '½ tsp cumin' },
    ]);
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
