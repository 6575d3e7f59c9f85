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

/**
 * What the model must answer (OpenAI structured outputs, strict: every property required, nullable where optional,
 * no other properties). `isRecipe` false (with the reason) when the post holds no recipe.
 */
export const MODEL_ANSWER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['isRecipe', 'notRecipeReason', 'recipe'],
  properties: {
    isRecipe: { type: 'boolean', description: 'Whether the text contains a cooking recipe (ingredients and/or steps).' },
    notRecipeReason: { ...nullableString, description: 'When isRecipe is false: why, in one sentence.' },
    recipe: {
      anyOf: [
        { type: 'null' },
        {
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
            recipeIngredient: { ...strings, description: 'One ingredient per entry, with its quantity and unit, as written.' },
            recipeInstructions: { ...strings, description: 'One step per entry, in order.' },
            recipeCategory: { ...strings, description: 'e.g. "Dinner", "Dessert".' },
            recipeCuisine: { ...nullableString, description: 'e.g. "Italian".' },
            keywords: { ...strings, description: 'A few tags.' },
          },
        },
      ],
    },
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
  recipe: ModelRecipe | null;
}

let validator: ValidateFunction | undefined;
/** ajv's verdict on a model answer: the answer, or the first problem (with its JSON pointer). */
export function checkModelAnswer(value: unknown): { ok: true; answer: ModelAnswer } | { ok: false; problem: string } {
  validator ??= createAjv({ allowUnionTypes: true, strict: false }).compile(MODEL_ANSWER_SCHEMA);
  if (validator(value)) return { ok: true, answer: value as unknown as ModelAnswer };
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
  return Object.fromEntries(Object.entries(r).filter(keep)) as unknown as SchemaRecipe;
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

/** Steps from schema.org's many shapes: a text, texts, HowToStep, HowToSection with itemListElement. */
function steps(v: unknown, depth = 0): string[] {
  if (depth > 4) return [];
  if (typeof v === 'string') {
    return v
      .split(/\n+/)
      .map((s) => text(s.replace(/<[^>]+>/g, ' ')))
      .filter((s): s is string => Boolean(s));
  }
  return list(v).flatMap((s) => {
    if (typeof s === 'string') return steps(s, depth + 1);
    if (!s || typeof s !== 'object') return [];
    const o = s as Record<string, unknown>;
    if (o.itemListElement) return steps(o.itemListElement, depth + 1);
    const t = text(o.text) ?? text(o.name) ?? text(o.description);
    return t ? [t] : [];
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

/** A page's schema.org Recipe node, normalised; undefined when it has no name or nothing to cook from. */
export function fromJsonLd(node: Record<string, unknown>, origin: Origin): SchemaRecipe | undefined {
  const keywords = list(node.keywords).flatMap((k) => (typeof k === 'string' ? k.split(',') : []));
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
    keywords: texts(keywords).join(', ') || undefined,
  });
  return isUsable(recipe) ? recipe : undefined;
}

/** A recipe as plain text (what extraction shows as the post's text when the page carried a structured recipe). */
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
