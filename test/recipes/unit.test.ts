import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../core/errors.js';
import { findRecipeNode, findRecipeNodes, readPage } from '../../recipes/html.js';
import { retryAfterMs } from '../../core/retry-after.js';
import { parseIngredient } from '../../recipes/ingredients.js';
import { tandoorRecipe } from '../../recipes/managers.js';
import { failRunning, initialPhases, overallProgress, withPhase } from '../../recipes/phases.js';
import { checkModelAnswer, durationMinutes, fromJsonLd, isoDuration, MODEL_ANSWER_SCHEMA } from '../../recipes/recipe.js';
import { normalizePostUrl } from '../../recipes/url.js';

describe('post URLs', () => {
  it('drop fragments and tracking parameters, and key one post whatever the spelling', () => {
    const a = normalizePostUrl(' https://www.instagram.com/p/Cx1AbC/?igsh=MTc4&utm_source=ig_web_copy_link#c ');
    expect(a).toEqual({ url: 'https://www.instagram.com/p/Cx1AbC/', key: 'https://instagram.com/p/Cx1AbC' });
    expect(normalizePostUrl('http://instagram.com/p/Cx1AbC').key).toBe(a.key);
    expect(normalizePostUrl('https://m.instagram.com/p/Cx1AbC/?fbclid=x').key).toBe(a.key);
    // Case matters in paths (post ids), not in hosts; other parameters are kept, in one order.
    expect(normalizePostUrl('https://INSTAGRAM.com/p/cx1abc').key).not.toBe(a.key);
    expect(normalizePostUrl('https://www.youtube.com/watch?v=abc&t=10&si=share').key).toBe(normalizePostUrl('https://youtube.com/watch?t=10&v=abc').key);
    expect(normalizePostUrl('https://www.youtube.com/watch?v=abc').key).not.toBe(normalizePostUrl('https://www.youtube.com/watch?v=abd').key);
    expect(normalizePostUrl('https://example.com/').key).toBe('https://example.com/');
  });

  it('refuse what is not an absolute http(s) URL, with INVALID_URL', () => {
    for (const bad of ['', 'example.com/p/1', 'ftp://example.com/x', 'file:///etc/passwd', 'data:text/html,hi', 'https://u:p@example.com/']) {
      expect(() => normalizePostUrl(bad)).toThrow(ValidationError);
    }
    try {
      normalizePostUrl('mailto:a@b.c');
    } catch (err) {
      expect(err).toMatchObject({ code: 'INVALID_URL', details: [{ pointer: '/body/url' }] });
    }
  });
});

describe('reading a page', () => {
  it('takes meta tags (entities decoded), the title, JSON-LD blocks and visible text', () => {
    const page = readPage(`<html><head><title> Post &amp; more </title>
      <meta property="og:description" content="Caf&eacute; au lait &quot;recipe&quot;">
      <meta name="description" content="second">
      <meta property="og:description" content="ignored: the first wins">
      <script type="application/ld+json">{"@type": "Recipe", "name": "Line
break"}</script>
      <script type="application/ld+json">{ not json</script>
      <style>.x{}</style></head>
      <body><nav>Menu</nav><script>var hidden = 1;</script><p>First paragraph.</p><div>Second<br>line</div><noscript>no</noscript></body></html>`);
    expect(page.title).toBe('Post & more');
    expect(page.meta.get('og:description')).toBe('Café au lait "recipe"');
    expect(page.meta.get('description')).toBe('second');
    expect(page.jsonLd).toEqual([{ '@type': 'Recipe', name: 'Line break' }]);
    expect(page.text).toBe('Menu\nFirst paragraph.\nSecond\nline');
  });

  it('finds the schema.org Recipe at the top, in arrays, in @graph, or as mainEntity', () => {
    const recipe = { '@type': 'Recipe', name: 'R' };
    expect(findRecipeNode([recipe])).toBe(recipe);
    expect(findRecipeNode([[{ '@type': 'Person' }, recipe]])).toBe(recipe);
    expect(findRecipeNode([{ '@graph': [{ '@type': 'WebPage' }, recipe] }])).toBe(recipe);
    expect(findRecipeNode([{ '@type': 'WebPage', mainEntity: recipe }])).toBe(recipe);
    const typed = { '@type': ['HowTo', 'http://schema.org/Recipe'], name: 'T' };
    expect(findRecipeNode([typed])).toBe(typed);
    expect(findRecipeNode([{ '@type': 'Article' }])).toBeUndefined();
  });

  it('finds every schema.org Recipe of a page, in order, once each, not inside a Recipe', () => {
    const a = { '@type': 'Recipe', name: 'A', recipeIngredient: ['x'] };
    const b = { '@type': 'Recipe', name: 'B', recipeIngredient: ['y'] };
    const inner = { '@type': 'Recipe', name: 'inner' };
    expect(findRecipeNodes([{ '@type': 'ItemList', itemListElement: [{ '@type': 'ListItem', item: a }, { '@type': 'ListItem', item: b }] }])).toEqual([a, b]);
    expect(findRecipeNodes([{ '@graph': [{ '@type': 'WebPage', mainEntity: a }, a, b] }])).toEqual([a, b]);
    expect(findRecipeNodes([a, [b]])).toEqual([a, b]);
    expect(findRecipeNodes([{ ...a, hasPart: inner }])).toHaveLength(1);
    expect(findRecipeNodes([{ '@type': 'Article' }])).toEqual([]);
  });

  it('normalises a page recipe, and refuses one with nothing to cook from', () => {
    const r = fromJsonLd(
      {
        '@type': 'Recipe',
        name: '  Bread ',
        image: ['https://x.example/a.jpg'],
        recipeYield: 4,
        totalTime: 'P0DT1H30M',
        cookTime: '90 minutes',
        recipeIngredient: ['500 g flour', '', '10 g salt'],
        recipeInstructions: 'Mix.\nKnead.\n\n<b>Bake.</b>',
        recipeCuisine: ['French', 'Italian'],
        keywords: ['crusty', 'loaf'],
      },
      { url: 'https://blog.example/bread' },
    );
    expect(r).toEqual({
      '@context': 'https://schema.org',
      '@type': 'Recipe',
      name: 'Bread',
      image: 'https://x.example/a.jpg',
      url: 'https://blog.example/bread',
      recipeYield: '4',
      totalTime: 'P0DT1H30M',
      recipeIngredient: ['500 g flour', '10 g salt'],
      recipeInstructions: [
        { '@type': 'HowToStep', text: 'Mix.' },
        { '@type': 'HowToStep', text: 'Knead.' },
        { '@type': 'HowToStep', text: 'Bake.' },
      ],
      recipeCuisine: 'French',
      keywords: 'crusty, loaf',
    });
    expect(fromJsonLd({ '@type': 'Recipe', name: 'Empty' }, { url: 'https://x' })).toBeUndefined();
    expect(fromJsonLd({ '@type': 'Recipe', recipeIngredient: ['x'] }, { url: 'https://x' })).toBeUndefined();
  });
});

describe('recipe details', () => {
  it('ISO 8601 durations: kept when valid, in minutes for Tandoor', () => {
    expect(isoDuration('pt15m')).toBe('PT15M');
    expect(isoDuration('15 minutes')).toBeUndefined();
    expect(isoDuration('P')).toBeUndefined();
    expect(durationMinutes('PT1H30M')).toBe(90);
    expect(durationMinutes('P1DT2H')).toBe(26 * 60);
    expect(durationMinutes('PT90S')).toBe(2);
    expect(durationMinutes(undefined)).toBe(0);
  });

  it('ingredient lines split into amount, unit, food and note', () => {
    expect(parseIngredient('1 1/2 cups flour, sifted')).toEqual({ amount: 1.5, unit: 'cups', food: 'flour', note: 'sifted', original: '1 1/2 cups flour, sifted' });
    expect(parseIngredient('- 2-3 cloves garlic (minced)')).toMatchObject({ amount: 2, unit: 'cloves', food: 'garlic', note: 'minced' });
    expect(parseIngredient('¾ cup of milk')).toMatchObject({ amount: 0.75, unit: 'cup', food: 'milk' });
    expect(parseIngredient('2½ tbsp. sugar')).toMatchObject({ amount: 2.5, unit: 'tbsp', food: 'sugar' });
    expect(parseIngredient('0,5 l Milch')).toMatchObject({ amount: 0.5, unit: 'l', food: 'Milch' });
    expect(parseIngredient('3 large eggs')).toMatchObject({ amount: 3, unit: null, food: 'large eggs' });
    expect(parseIngredient('Salt and pepper')).toMatchObject({ amount: null, unit: null, food: 'Salt and pepper', note: '' });
    expect(parseIngredient('200g gnocchi')).toMatchObject({ amount: 200, unit: 'g', food: 'gnocchi' });
    // A unit needs a word boundary: "3 large" is not litres.
    expect(parseIngredient('1 lemon')).toMatchObject({ amount: 1, unit: null, food: 'lemon' });
  });

  it("Tandoor's body: a step per instruction, ingredients on the first, servings from the yield", () => {
    const body = tandoorRecipe({
      '@context': 'https://schema.org',
      '@type': 'Recipe',
      name: 'Soup',
      recipeYield: 'Serves 6',
      recipeIngredient: ['1 l stock'],
      recipeInstructions: [],
      keywords: 'warm, winter',
      recipeCategory: ['Dinner', 'warm'],
    });
    expect(body).toMatchObject({ name: 'Soup', servings: 6, servings_text: 'Serves 6', working_time: 0, waiting_time: 0, internal: true, source_url: '' });
    expect(body.steps).toEqual([{ instruction: '', ingredients: [expect.objectContaining({ amount: 1, unit: { name: 'l' }, food: { name: 'stock' } })] }]);
    expect(body.keywords).toEqual([{ name: 'warm' }, { name: 'winter' }, { name: 'Dinner' }]);
  });

  it('model answers are checked against the strict schema', () => {
    const recipe = {
      name: 'X', description: null, recipeYield: null, prepTime: null, cookTime: null, totalTime: null,
      recipeIngredient: ['a'], recipeInstructions: ['b'], recipeCategory: [], recipeCuisine: null, keywords: [],
    };
    expect(checkModelAnswer({ isRecipe: true, notRecipeReason: null, recipes: [recipe, recipe] })).toMatchObject({ ok: true });
    expect(checkModelAnswer({ isRecipe: false, notRecipeReason: 'a cat', recipes: [] })).toMatchObject({ ok: true });
    expect(checkModelAnswer({ isRecipe: true, recipes: [recipe] })).toMatchObject({ ok: false, problem: "/ must have required property 'notRecipeReason'" });
    expect(checkModelAnswer({ isRecipe: true, notRecipeReason: null, recipes: [{ ...recipe, recipeIngredient: 'a' }] }).ok).toBe(false);
    expect(checkModelAnswer({ isRecipe: true, notRecipeReason: null, recipes: [recipe, { ...recipe, extra: 1 }] }).ok).toBe(false);
    // Strict structured outputs: every property required, no others, at every level.
    expect([...MODEL_ANSWER_SCHEMA.required].sort()).toEqual(Object.keys(MODEL_ANSWER_SCHEMA.properties).sort());
    const inner = MODEL_ANSWER_SCHEMA.properties.recipes.items;
    expect([...inner.required].sort()).toEqual(Object.keys(inner.properties).sort());
    expect(inner.additionalProperties).toBe(false);
  });
});

describe('phases', () => {
  it('change one at a time, in order, and a run that ends leaves none running', () => {
    let phases = initialPhases();
    phases = withPhase(phases, 'parsing', (p) => ({ ...p, status: 'in_progress', startedAt: 't1', completedAt: undefined, attempts: 2 }));
    expect(phases.map((p) => p.name)).toEqual(['extraction', 'parsing', 'uploading']);
    expect(phases[1]).toEqual({ name: 'parsing', status: 'in_progress', progress: 0, startedAt: 't1', attempts: 2 });
    expect(failRunning(phases, 't2')[1]).toEqual({ name: 'parsing', status: 'error', progress: 0, startedAt: 't1', completedAt: 't2', attempts: 2 });
    expect(failRunning(phases, 't2')[0]).toEqual(phases[0]);
    expect([overallProgress('extraction', false), overallProgress('parsing', true), overallProgress('uploading', true)]).toEqual([0, 67, 100]);
  });
});

describe('Retry-After', () => {
  it('is read in seconds or as an HTTP date', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs('0.5')).toBe(500);
    expect(retryAfterMs(new Date(Date.UTC(2030, 0, 1, 0, 0, 10)).toUTCString(), Date.UTC(2030, 0, 1))).toBe(10_000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });
});

