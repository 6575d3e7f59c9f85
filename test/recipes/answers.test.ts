import { describe, expect, it } from 'vitest';
import { PermanentError, RecoverableError } from '../../core/errors.js';
import { answerJson, NO_RECIPE, recipesFromAnswer } from '../../recipes/llm.js';
import { checkModelAnswer, durationFromText, MAX_RECIPES, normalizeModelAnswer } from '../../recipes/recipe.js';
import { ANSWER_STYLES, type StyleRecipe } from '../../fakes/recipe-fakes.js';

/** What language models actually answer, read into one recipe (recipes/llm.ts, recipes/recipe.ts). */
const post = { url: 'https://www.instagram.com/p/Cx1AbC/', thumbnail: 'https://cdn.example/lemon.jpg' };
const recipe: StyleRecipe = {
  name: 'Lemon pasta',
  description: null,
  recipeYield: '2 servings',
  prepTime: 'PT10M',
  cookTime: 'PT12M',
  recipeIngredient: ['200 g spaghetti', '1 lemon, zested', '30 g butter'],
  recipeInstructions: ['Boil the pasta.', 'Toss it with butter and lemon.'],
  recipeCategory: ['Dinner'],
  recipeCuisine: 'Italian',
  keywords: ['quick', 'pasta'],
};
const expected = {
  '@context': 'https://schema.org',
  '@type': 'Recipe',
  name: 'Lemon pasta',
  image: post.thumbnail,
  url: post.url,
  recipeYield: '2 servings',
  prepTime: 'PT10M',
  cookTime: 'PT12M',
  recipeIngredient: ['200 g spaghetti', '1 lemon, zested', '30 g butter'],
  recipeInstructions: [
    { '@type': 'HowToStep', text: 'Boil the pasta.' },
    { '@type': 'HowToStep', text: 'Toss it with butter and lemon.' },
  ],
  recipeCategory: ['Dinner'],
  recipeCuisine: 'Italian',
  keywords: 'quick, pasta',
};

/** The one recipe of an answer (an answer may hold several: recipesFromAnswer). */
function recipeFromAnswer(content: string, p: typeof post) {
  const { recipes, skipped } = recipesFromAnswer(content, p);
  expect([recipes.length, skipped]).toEqual([1, 0]);
  return recipes[0];
}

describe('every way models write an answer', () => {
  it.each(Object.keys(ANSWER_STYLES) as (keyof typeof ANSWER_STYLES)[])('%s gives the same recipe', (style) => {
    const content = ANSWER_STYLES[style](recipe);
    expect(recipeFromAnswer(content, post)).toEqual(expected);
    // Normalised, the answer is what the strict schema asks for.
    expect(checkModelAnswer(normalizeModelAnswer(answerJson(content)))).toMatchObject({ ok: true });
  });

  it('a section of ingredients, one text of numbered steps, an empty name beside a title, and a recipe sent as a JSON string inside the JSON', () => {
    const content = JSON.stringify({
      isRecipe: true,
      recipe: JSON.stringify({
        name: '',
        title: 'Lemon pasta',
        recipeYield: 2,
        totalTime: '1 hr 5 min',
        ingredients: [{ section: 'Pasta', items: ['200 g spaghetti'] }, { name: 'Sauce', ingredients: [{ text: '1 lemon, zested' }, '- 30 g butter'] }],
        instructions: '1. Boil the pasta.\n2) Toss it with butter and lemon.',
      }),
    });
    expect(recipeFromAnswer(content, post)).toMatchObject({
      name: 'Lemon pasta',
      recipeYield: '2',
      totalTime: 'PT1H5M',
      recipeIngredient: ['200 g spaghetti', '1 lemon, zested', '30 g butter'],
      recipeInstructions: [
        { '@type': 'HowToStep', text: 'Boil the pasta.' },
        { '@type': 'HowToStep', text: 'Toss it with butter and lemon.' },
      ],
    });
  });
});

describe('several recipes in one answer', () => {
  const other: StyleRecipe = { ...recipe, name: 'Garlic bread', recipeIngredient: ['1 baguette', '2 cloves garlic'], recipeInstructions: ['Bake.'] };
  const names = (content: string) => recipesFromAnswer(content, post).recipes.map((r) => r.name);

  it('the wrapper with a list, and a bare list of recipes in any style, are several, in order', () => {
    expect(names(JSON.stringify({ isRecipe: true, notRecipeReason: null, recipes: [recipe, other] }))).toEqual(['Lemon pasta', 'Garlic bread']);
    expect(names(JSON.stringify([{ title: 'Lemon pasta', ingredients: ['200 g spaghetti'] }, { title: 'Garlic bread', steps: ['Bake.'] }]))).toEqual(['Lemon pasta', 'Garlic bread']);
    expect(names(JSON.stringify({ recipes: [{ title: 'Lemon pasta', ingredients: ['a'] }, JSON.stringify({ name: 'Garlic bread', steps: ['b'] })] }))).toEqual(['Lemon pasta', 'Garlic bread']);
    expect(checkModelAnswer(normalizeModelAnswer({ recipes: [recipe, other] }))).toMatchObject({ ok: true });
  });

  it('an empty list is no recipe (permanent)', () => {
    for (const answer of [{ isRecipe: true, notRecipeReason: null, recipes: [] }, { recipes: [] }, []]) {
      expect(() => recipesFromAnswer(JSON.stringify(answer), post)).toThrow(PermanentError);
      expect(() => recipesFromAnswer(JSON.stringify(answer), post)).toThrow(/^No recipe in the post/);
    }
  });

  it('a malformed entry beside a usable one is left out and counted; only malformed entries are no recipe', () => {
    const content = JSON.stringify({ isRecipe: true, recipes: [recipe, { name: 'Nothing', recipeIngredient: [], recipeInstructions: [] }, 42, 'oops'] });
    expect(recipesFromAnswer(content, post)).toMatchObject({ recipes: [{ name: 'Lemon pasta' }], skipped: 1 });
    expect(() => recipesFromAnswer(JSON.stringify({ isRecipe: true, recipes: [{ name: '' }, 'oops'] }), post)).toThrow(
      new PermanentError('No recipe in the post: the language model found no name, ingredients or steps', NO_RECIPE),
    );
  });

  it(`keeps at most ${MAX_RECIPES}`, () => {
    const many = Array.from({ length: MAX_RECIPES + 3 }, (_, i) => ({ ...recipe, name: `Dish ${i + 1}` }));
    const got = names(JSON.stringify({ isRecipe: true, recipes: many }));
    expect(got).toHaveLength(MAX_RECIPES);
    expect(got[0]).toBe('Dish 1');
  });
});

describe('answers that are not a recipe', () => {
  it.each([
    ['isRecipe false, with the reason', { isRecipe: false, notRecipeReason: 'The post is a photo of a cat.', recipe: null }, 'No recipe in the post: The post is a photo of a cat.'],
    ['isRecipe "no", the reason under another name', { is_recipe: 'no', reason: 'Only a restaurant review.' }, 'No recipe in the post: Only a restaurant review.'],
    ['isRecipe false beside a recipe', { isRecipe: false, recipe: { name: 'x', recipeIngredient: ['y'] } }, 'No recipe in the post: the language model found none'],
    ['no isRecipe, a null recipe', { recipe: null, notRecipeReason: 'No ingredients.' }, 'No recipe in the post: No ingredients.'],
    ['a message instead of a recipe', { message: 'This post does not contain a recipe.' }, 'No recipe in the post: This post does not contain a recipe.'],
    ['a name and nothing to cook from', { isRecipe: true, recipe: { name: 'Mystery', recipeIngredient: [], recipeInstructions: [] } }, 'No recipe in the post: the language model found no name, ingredients or steps'],
    ['ingredients without a name', { title: ' ', ingredients: ['1 egg'] }, 'No recipe in the post: the language model found no name, ingredients or steps'],
    ['a JSON string', 'I am sorry, I cannot find a recipe.', 'No recipe in the post: the answer holds no recipe'],
  ])('%s is permanent', (_name, answer, message) => {
    const content = JSON.stringify(answer);
    // Marked as no recipe: the video's speech may still hold one (recipes/speech.ts).
    expect(() => recipeFromAnswer(content, post)).toThrow(new PermanentError(message, NO_RECIPE));
  });

  it('an answer with no JSON to be found (cut off) is recoverable: the next attempt may do better', () => {
    for (const content of ['{"isRecipe": true, "recipe": {"name": "Lemon pasta", "recipeIngredient": ["200 g spaghetti"', 'Sure! Here it is:', '```json\n{"isRecipe": tru\n```']) {
      expect(() => recipeFromAnswer(content, post)).toThrow(RecoverableError);
      expect(() => recipeFromAnswer(content, post)).toThrow(/^The language model answered with malformed JSON/);
    }
  });
});

describe('finding the JSON', () => {
  it('takes the whole answer, a fence (any language tag), or the outermost braces; skips a think block', () => {
    expect(answerJson(' {"a": 1} ')).toEqual({ a: 1 });
    expect(answerJson('Result:\n```JSON\n{"a": 2}\n```\nDone.')).toEqual({ a: 2 });
    expect(answerJson('```\n{"a": 3}```')).toEqual({ a: 3 });
    expect(answerJson('The recipe is {"a": {"b": 4}} as asked.')).toEqual({ a: { b: 4 } });
    expect(answerJson('<think>maybe {"a": 0}?</think>{"a": 5}')).toEqual({ a: 5 });
    expect(answerJson('[{"a": 6}]')).toEqual([{ a: 6 }]);
  });
});

describe('durations as models write them', () => {
  it.each([
    ['PT15M', 'PT15M'],
    ['pt1h', 'PT1H'],
    [15, 'PT15M'],
    [90, 'PT1H30M'],
    ['15', 'PT15M'],
    ['15 minutes', 'PT15M'],
    ['about 15 mins', 'PT15M'],
    ['1 hour 30 minutes', 'PT1H30M'],
    ['1h30m', 'PT1H30M'],
    ['1.5 hours', 'PT1H30M'],
    ['15-20 minutes', 'PT20M'],
    ['1:30', 'PT1H30M'],
    ['2 days', 'P2D'],
    ['45 Minuten', 'PT45M'],
    ['30 seconds', 'PT30S'],
  ])('%j is %s', (value, iso) => {
    expect(durationFromText(value)).toBe(iso);
  });

  it.each([['not a duration'], [''], [0], [-5], [null], [Number.NaN], [{ minutes: 5 }], ['P']])('%j is none', (value) => {
    expect(durationFromText(value)).toBeUndefined();
  });
});
