import type { ValidateFunction } from 'ajv/dist/2020.js';
import { createAjv } from '../core/ajv.js';

/**
 * The structured recipe: schema.org `Recipe` as JSON-LD, which Mealie imports as it is and Tandoor's fields are
 * made from. It comes from the language model's answer (validated against `MODEL_ANSWER_SCHEMA`) or from a
 * schema.org Recipe the post's page already carries.
 */
export interface SchemaRecipe {
  '@context': 'https://schema.org';
  '@type': 'Recipe';
  name: string;
  description?: string;
  /** The post's picture. */
  image?: string;
  /** The post the recipe came from. */
  url?: string;
  recipeYield?: string;
  /** ISO 8601 durations, e.g. PT15M. */
  prepTime?: string;
  cookTime?: string;
  totalTime?: string;
  recipeIngredient: string[];
  recipeInstructions: { '@type': 'HowToStep'; text: string }[];
  recipeCategory?: string[];
  recipeCuisine?: string;
  /** Comma-separated, as schema.org has it. */
  keywords?: string;
}

const nullableString = { type: ['string', 'null'] };
const strings = { type: 'array', items: { type: 'string' } };

/** The most recipes one post becomes: a post listing more is a collection, and the rest are left out. */
export const MAX_RECIPES = 10;

const RECIPE_OBJECT = {
  type: 'object',
  additionalProperties: false,
  required: [
    'name', 'description', 'recipeYield', 'prepTime', 'cookTime', 'totalTime', 'recipeIngredient',
    'recipeInstructions', 'recipeCategory', 'recipeCuisine', 'keywords',
  ],
  properties: {
    name: { type: 'string', description: 'The dish.' },
    description: { ...nullableString, description: 'One or two sentences about the dish.' },
    recipeYield: { ...nullableString, description: 'Servings or amount, e.g. "4 servings".' },
    prepTime: { ...nullableString, description: 'ISO 8601 duration, e.g. PT15M.' },
    cookTime: { ...nullableString, description: 'ISO 8601 duration.' },
    totalTime: { ...nullableString, description: 'ISO 8601 duration.' },
    recipeIngredient: { ...strings, description: 'One ingredient per entry, with its quantity and unit.' },
    recipeInstructions: { ...strings, description: 'One step per entry, in order.' },
    recipeCategory: { ...strings, description: 'e.g. "Dinner", "Dessert".' },
    recipeCuisine: { ...nullableString, description: 'e.g. "Italian".' },
    keywords: { ...strings, description: 'A few tags.' },
  },
} as const;

/**
 * What the model must answer (OpenAI structured outputs, strict: every property required, nullable where optional,
 * no other properties). `isRecipe` false (with the reason) when the post holds no recipe; `recipes` has one entry
 * per recipe in the post (a post may hold several).
 */
export const MODEL_ANSWER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['isRecipe', 'notRecipeReason', 'recipes'],
  properties: {
    isRecipe: { type: 'boolean', description: 'Whether the text contains a cooking recipe (ingredients and/or steps).' },
    notRecipeReason: { ...nullableString, description: 'When isRecipe is false: why, in one sentence.' },
    recipes: { type: 'array', items: RECIPE_OBJECT, description: 'Every recipe in the text, one entry each, in the order of the text; empty when isRecipe is false.' },
  },
} as const;

export interface ModelRecipe {
  name: string;
  description: string | null;
  recipeYield: string | null;
  prepTime: string | null;
  cookTime: string | null;
  totalTime: string | null;
  recipeIngredient: string[];
  recipeInstructions: string[];
  recipeCategory: string[];
  recipeCuisine: string | null;
  keywords: string[];
}
export interface ModelAnswer {
  isRecipe: boolean;
  notRecipeReason: string | null;
  recipes: ModelRecipe[];
}

let validator: ValidateFunction<ModelAnswer> | undefined;
/** ajv's verdict on a model answer: the answer, or the first problem (with its JSON pointer). */
export function checkModelAnswer(value: unknown): { ok: true; answer: ModelAnswer } | { ok: false; problem: string } {
  validator ??= createAjv({ allowUnionTypes: true, strict: false }).compile<ModelAnswer>(MODEL_ANSWER_SCHEMA);
  if (validator(value)) return { ok: true, answer: value };
  const e = validator.errors?.[0];
  return { ok: false, problem: e ? `${e.instancePath || '/'} ${e.message ?? 'is invalid'}` : 'it does not match the schema' };
}

const ISO_DURATION = /^P(?!$)(\d+(\.\d+)?Y)?(\d+(\.\d+)?M)?(\d+(\.\d+)?W)?(\d+(\.\d+)?D)?(T(?=\d)(\d+(\.\d+)?H)?(\d+(\.\d+)?M)?(\d+(\.\d+)?S)?)?$/;

/** An ISO 8601 duration as given, or undefined when it is not one. */
export function isoDuration(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const v = value.trim().toUpperCase();
  return ISO_DURATION.test(v) ? v : undefined;
}

/** Whole minutes of an ISO 8601 duration (days and hours included; years, months and weeks are not cooking times). */
export function durationMinutes(value: string | undefined): number {
  const m = value ? ISO_DURATION.exec(value) : null;
  if (!m) return 0;
  const n = (i: number) => (m[i] ? parseFloat(m[i]!) : 0);
  return Math.round(n(7) * 24 * 60 + n(10) * 60 + n(12) + n(14) / 60);
}

const UNIT_SECONDS: [RegExp, number][] = [
  [/^(d|days?|tage?n?)$/, 86_400],
  [/^(h|hrs?|hours?|std|stunden?)$/, 3600],
  [/^(m|mins?|minutes?|minuten?)$/, 60],
  [/^(s|secs?|seconds?|sekunden?)$/, 1],
];

/** An ISO 8601 duration of whole seconds, in days, hours, minutes and seconds (PT1H30M). */
function isoFromSeconds(total: number): string | undefined {
  if (!(total > 0)) return undefined;
  const d = Math.floor(total / 86_400);
  const h = Math.floor((total % 86_400) / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = Math.round(total % 60);
  const time = `${h ? `${h}H` : ''}${m ? `${m}M` : ''}${s ? `${s}S` : ''}`;
  return `P${d ? `${d}D` : ''}${time ? `T${time}` : ''}`;
}

/**
 * A cooking time as models write it, as ISO 8601: an ISO duration as it is; a number is minutes; "1 hour 30
 * minutes", "1h30m", "90 min", "15-20 minutes" (the longer), "1:30" (hours and minutes). Undefined when it says
 * no time.
 */
export function durationFromText(value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? isoFromSeconds(Math.round(value * 60)) : undefined;
  if (typeof value !== 'string') return undefined;
  const iso = isoDuration(value);
  if (iso) return iso;
  const v = value.trim().toLowerCase().replace(/,/g, '.');
  if (/^\d+(\.\d+)?$/.test(v)) return isoFromSeconds(Math.round(Number(v) * 60));
  const clock = /^(\d{1,2}):([0-5]\d)$/.exec(v);
  if (clock) return isoFromSeconds(Number(clock[1]) * 3600 + Number(clock[2]) * 60);
  let total = 0;
  for (const m of v.matchAll(/(\d+(?:\.\d+)?)(?:\s*(?:-|–|to|bis)\s*(\d+(?:\.\d+)?))?\s*([a-z]+)/g)) {
    const unit = UNIT_SECONDS.find(([re]) => re.test(m[3]!))?.[1];
    if (unit) total += Number(m[2] ?? m[1]) * unit;
  }
  return isoFromSeconds(Math.round(total));
}

const text = (v: unknown): string | undefined => {
  if (typeof v === 'number') return String(v);
  if (typeof v !== 'string') return undefined;
  const t = v.replace(/\s+/g, ' ').trim();
  return t || undefined;
};
const texts = (vs: readonly unknown[]): string[] => vs.map(text).filter((s): s is string => Boolean(s));

/** Leaves out what is unset, so the JSON carries only what is known. */
function compact(r: SchemaRecipe): SchemaRecipe {
  const keep = ([k, v]: [string, unknown]) =>
    v !== undefined && !(Array.isArray(v) && v.length === 0 && k !== 'recipeIngredient' && k !== 'recipeInstructions');
  return Object.fromEntries(Object.entries(r).filter(keep)) as SchemaRecipe;
}

/** A recipe needs a name and something to cook from. */
export function isUsable(r: Pick<SchemaRecipe, 'name' | 'recipeIngredient' | 'recipeInstructions'>): boolean {
  return Boolean(r.name?.trim()) && (r.recipeIngredient.length > 0 || r.recipeInstructions.length > 0);
}

export interface Origin {
  url: string;
  thumbnail?: string | undefined;
}

export function fromModel(m: ModelRecipe, origin: Origin): SchemaRecipe {
  return compact({
    '@context': 'https://schema.org',
    '@type': 'Recipe',
    name: text(m.name) ?? '',
    description: text(m.description),
    image: origin.thumbnail,
    url: origin.url,
    recipeYield: text(m.recipeYield),
    prepTime: isoDuration(m.prepTime),
    cookTime: isoDuration(m.cookTime),
    totalTime: isoDuration(m.totalTime),
    recipeIngredient: texts(m.recipeIngredient),
    recipeInstructions: texts(m.recipeInstructions).map((t) => ({ '@type': 'HowToStep', text: t })),
    recipeCategory: texts(m.recipeCategory),
    recipeCuisine: text(m.recipeCuisine),
    keywords: texts(m.keywords).join(', ') || undefined,
  });
}

const list = (v: unknown): unknown[] => (v == null ? [] : Array.isArray(v) ? v : [v]);

/** A step's own numbering ("1.", "2)", "Step 3:"): the recipe manager numbers steps itself. */
const STEP_NUMBER = /^(?:step\s*\d+\s*[:.)-]?|\d{1,2}\s*[.)])\s+/i;

/**
 * Steps from schema.org's many shapes and what models write: a text (one step a line), texts, HowToStep,
 * HowToSection with itemListElement, `{step: "..."}` or `{instruction: "..."}` objects, sections of steps.
 */
function steps(v: unknown, depth = 0): string[] {
  if (depth > 4) return [];
  if (typeof v === 'string') {
    return v
      .split(/\n+/)
      .map((s) => text(s.replace(/<[^>]+>/g, ' ').trim().replace(STEP_NUMBER, '')))
      .filter((s): s is string => Boolean(s));
  }
  return list(v).flatMap((s) => {
    if (typeof s === 'string') return steps(s, depth + 1);
    if (!s || typeof s !== 'object') return [];
    const o = s as Record<string, unknown>;
    const nested = o.itemListElement ?? o.steps ?? o.instructions;
    if (nested) return steps(nested, depth + 1);
    const t = [o.text, o.instruction, o.step, o.content, o.name, o.description].find((x) => typeof x === 'string' && x.trim());
    return t ? steps(t, depth + 1) : [];
  });
}

function imageUrl(v: unknown): string | undefined {
  for (const i of list(v)) {
    if (typeof i === 'string' && /^https?:\/\//i.test(i)) return i;
    if (i && typeof i === 'object') {
      const u = (i as Record<string, unknown>).url ?? (i as Record<string, unknown>).contentUrl;
      if (typeof u === 'string' && /^https?:\/\//i.test(u)) return u;
    }
  }
  return undefined;
}

const first = (...vs: unknown[]) => vs.find((v) => v !== undefined && v !== null);
/** The first of several fields that holds text (a model may send `"name": ""` beside a `title`). */
const firstText = (...vs: unknown[]) => vs.map(text).find(Boolean);

/** A name out of a string, a number, or an object with a `name` (`{"unit": {"name": "g"}}`). */
const nameOf = (v: unknown): string | undefined =>
  text(v) ?? (v && typeof v === 'object' && !Array.isArray(v) ? text((v as Record<string, unknown>).name) : undefined);

/**
 * Ingredient lines from what models write: strings (a text with one a line; bullets dropped), numbers, objects
 * with the line (`text`, `original`, `display`) or its parts (`quantity`/`amount`, `unit`, `name`/`ingredient`/
 * `item`/`food`, `note`/`preparation`), and sections holding them.
 */
function ingredientLines(v: unknown, depth = 0): string[] {
  if (depth > 4) return [];
  return list(v).flatMap((item): string[] => {
    if (typeof item === 'string') {
      return item
        .split(/\n+/)
        .map((l) => text(l.replace(/^\s*[-*•·]\s*/, '')))
        .filter((l): l is string => Boolean(l));
    }
    if (typeof item === 'number') return [String(item)];
    if (!item || typeof item !== 'object') return [];
    const o = item as Record<string, unknown>;
    const nested = first(o.ingredients, o.items, o.itemListElement, o.recipeIngredient);
    if (nested) return ingredientLines(nested, depth + 1);
    const whole = firstText(o.text, o.original, o.originalText, o.display, o.raw, o.line);
    if (whole) return [whole];
    const food = nameOf(first(o.name, o.ingredient, o.item, o.food, o.product));
    if (!food) return [];
    const note = firstText(o.note, o.notes, o.preparation, o.comment);
    const line = [nameOf(first(o.quantity, o.amount, o.qty)), nameOf(first(o.unit, o.units, o.measurement)), food].filter(Boolean).join(' ');
    return [note ? `${line}, ${note}` : line];
  });
}

/** Servings as text: "4", "4 servings", a number, or the first of a list. */
const yieldText = (v: unknown): string | undefined => texts(list(v))[0];

const keywordList = (v: unknown): string[] => texts(list(v).flatMap((k) => (typeof k === 'string' ? k.split(',') : [k])));

function truthy(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    if (/^(true|yes|y|1)$/i.test(v.trim())) return true;
    if (/^(false|no|n|0)$/i.test(v.trim())) return false;
  }
  return undefined;
}

const RECIPE_KEYS = ['recipeIngredient', 'recipeIngredients', 'ingredients', 'recipeInstructions', 'instructions', 'steps', 'method', 'directions'];

function asObject(v: unknown): Record<string, unknown> | undefined {
  if (typeof v === 'string' && /^\s*\{/.test(v)) {
    // A recipe sent as a JSON string inside the JSON.
    try {
      return asObject(JSON.parse(v));
    } catch {
      return undefined;
    }
  }
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** The recipe fields of a node in any of the shapes above, as the strict schema has them. */
function modelRecipe(node: Record<string, unknown>): ModelRecipe {
  return {
    name: firstText(node.name, node.title, node.recipeName, node.headline) ?? '',
    description: firstText(node.description, node.summary) ?? null,
    recipeYield: yieldText(first(node.recipeYield, node.yield, node.servings, node.serves)) ?? null,
    prepTime: durationFromText(first(node.prepTime, node.prep_time, node.preparationTime)) ?? null,
    cookTime: durationFromText(first(node.cookTime, node.cook_time, node.cookingTime)) ?? null,
    totalTime: durationFromText(first(node.totalTime, node.total_time)) ?? null,
    recipeIngredient: ingredientLines(first(node.recipeIngredient, node.recipeIngredients, node.ingredients)),
    recipeInstructions: steps(first(node.recipeInstructions, node.instructions, node.steps, node.method, node.directions)),
    recipeCategory: texts(list(first(node.recipeCategory, node.category, node.categories))),
    recipeCuisine: texts(list(first(node.recipeCuisine, node.cuisine)))[0] ?? null,
    keywords: keywordList(first(node.keywords, node.tags)),
  };
}

/**
 * A language model's answer, in any shape models actually send, as the strict answer (MODEL_ANSWER_SCHEMA): the
 * `{isRecipe, notRecipeReason, recipes}` wrapper (or `recipe` with one), or a bare recipe (schema.org keys or plain
 * ones such as `title`, `ingredients`, `steps`), in a list or not (a list of recipes is several), `isRecipe` missing
 * or a string, numbers and durations as text or numbers, ingredient objects, HowToStep objects; other keys are
 * ignored. Entries of a list that are no recipe object at all (a string, a number) are dropped here. A missing
 * `isRecipe` means a recipe when there is one. Validate the result with `checkModelAnswer`, then take the usable
 * recipes with `fromModel` and `isUsable`.
 */
export function normalizeModelAnswer(value: unknown): ModelAnswer {
  const none = (reason: string | null): ModelAnswer => ({ isRecipe: false, notRecipeReason: reason, recipes: [] });
  const looksLikeRecipe = (n: Record<string, unknown>) => RECIPE_KEYS.some((k) => k in n) || /recipe/i.test(String(n['@type'] ?? ''));
  const objects = (vs: unknown[]) => vs.map(asObject).filter((o): o is Record<string, unknown> => Boolean(o));
  // A list of bare recipes is several recipes; a list holding the wrapper is the wrapper.
  if (Array.isArray(value)) {
    const listed = objects(value);
    if (listed.length > 1 && listed.every(looksLikeRecipe)) return { isRecipe: true, notRecipeReason: null, recipes: listed.map(modelRecipe) };
  }
  const top = asObject(Array.isArray(value) ? value.find((v) => asObject(v)) : value);
  if (!top) return none('the answer holds no recipe');
  const nodes = Array.isArray(top.recipes)
    ? objects(top.recipes)
    : [asObject(top.recipes) ?? asObject(top.recipe) ?? (looksLikeRecipe(top) ? top : undefined)].filter((o): o is Record<string, unknown> => Boolean(o));
  const said = truthy(first(top.isRecipe, top.is_recipe));
  const reason = firstText(top.notRecipeReason, top.not_recipe_reason, top.reason, top.explanation, top.message) ?? null;
  if (said === false || !nodes.length) return none(reason);
  return { isRecipe: true, notRecipeReason: null, recipes: nodes.map(modelRecipe) };
}

/** A page's schema.org Recipe node, normalised; undefined when it has no name or nothing to cook from. */
export function fromJsonLd(node: Record<string, unknown>, origin: Origin): SchemaRecipe | undefined {
  const recipe = compact({
    '@context': 'https://schema.org',
    '@type': 'Recipe',
    name: text(node.name) ?? text(node.headline) ?? '',
    description: text(node.description),
    image: imageUrl(node.image) ?? origin.thumbnail,
    url: origin.url,
    recipeYield: texts(list(node.recipeYield))[0],
    prepTime: isoDuration(node.prepTime),
    cookTime: isoDuration(node.cookTime),
    totalTime: isoDuration(node.totalTime),
    recipeIngredient: texts(list(node.recipeIngredient ?? node.ingredients)),
    recipeInstructions: steps(node.recipeInstructions).map((t) => ({ '@type': 'HowToStep', text: t })),
    recipeCategory: texts(list(node.recipeCategory)),
    recipeCuisine: texts(list(node.recipeCuisine))[0],
    keywords: keywordList(node.keywords).join(', ') || undefined,
  });
  return isUsable(recipe) ? recipe : undefined;
}

/** A recipe as plain text (what extraction shows as the post's text when the page carried structured recipes). */
export function recipeText(r: SchemaRecipe): string {
  return [
    r.name,
    r.description,
    r.recipeIngredient.length ? `Ingredients:\n${r.recipeIngredient.map((i) => `- ${i}`).join('\n')}` : undefined,
    r.recipeInstructions.length ? `Instructions:\n${r.recipeInstructions.map((s, i) => `${i + 1}. ${s.text}`).join('\n')}` : undefined,
  ]
    .filter(Boolean)
    .join('\n\n');
}
