import { PermanentError } from '../core/errors.js';
import { type CallContext, excerpt, readText, request, statusFailure } from '../outbound/http.js';
import { hintFor, managerHeaders as headers, managerName, type ManagerTarget } from './manager-http.js';
import { durationMinutes, type SchemaRecipe } from './recipe.js';
import { resolveTandoorIngredients, type TandoorIngredient, tandoorIngredient } from './tandoor-ingredients.js';

/**
 * The uploading phase's recipe managers (docs/recipes.md): Mealie by default, Tandoor by configuration, spoken to
 * as recipes/manager-http.ts says.
 */
export { managerName, type ManagerTarget };

export interface Created {
  /** Mealie's slug or Tandoor's id. */
  id: string;
  /** The recipe's page, for `results.recipeManagerUrl`. */
  url: string;
}

/**
 * Creates the recipe. `original`: the post's own text, kept beside a translated or converted recipe (Tandoor: a last
 * step named "Original text"; Mealie gets it as a note afterwards, recipes/mealie-ingredients.ts).
 */
export async function createRecipe(t: ManagerTarget, recipe: SchemaRecipe, ctx: CallContext, o: { original?: string | undefined } = {}): Promise<Created> {
  return t.kind === 'tandoor' ? createInTandoor(t, recipe, ctx, o.original) : createInMealie(t, recipe, ctx);
}

/**
 * The recipe an earlier attempt may have created for this post, found by the post's URL: an attempt that died after
 * the manager created the recipe but before its answer was stored must link that recipe, not create a second one.
 * Neither manager takes an idempotency key, so the lookup searches by the recipe's name and compares each
 * candidate's source URL (Mealie's `orgURL`, Tandoor's `source_url`) with the post's. Undefined: none (or the
 * manager cannot say, in which case creating is the only way on). Recipes in `linked` (this item's other recipes,
 * which may share the name) are passed over.
 */
export async function findRecipe(t: ManagerTarget, recipe: SchemaRecipe, ctx: CallContext, linked: ReadonlySet<string> = new Set()): Promise<Created | undefined> {
  if (!recipe.url) return undefined;
  const what = `${managerName(t.kind)} (looking for a recipe created before)`;
  const get = async (url: string): Promise<unknown> => {
    const res = await request(what, url, { headers: headers(t, false) }, ctx);
    const text = await readText(what, res, ctx, 4 * 1024 * 1024);
    if (!res.ok) throw statusFailure(what, res, text, hintFor(res.status, text));
    return JSON.parse(text) as unknown;
  };
  const sameName = (name: unknown) => typeof name === 'string' && name.trim().toLowerCase() === recipe.name.trim().toLowerCase();
  const name = encodeURIComponent(recipe.name.slice(0, 128));
  if (t.kind === 'mealie') {
    const page = (await get(`${t.baseUrl}/api/recipes?search=${name}&perPage=50`)) as { items?: { slug?: unknown; name?: unknown }[] };
    for (const c of page.items ?? []) {
      if (typeof c.slug !== 'string' || !sameName(c.name) || linked.has(c.slug)) continue;
      const full = (await get(`${t.baseUrl}/api/recipes/${encodeURIComponent(c.slug)}`)) as { orgURL?: unknown };
      if (full.orgURL === recipe.url) return { id: c.slug, url: `${t.publicUrl}/g/${encodeURIComponent(t.mealieGroup)}/r/${encodeURIComponent(c.slug)}` };
    }
    return undefined;
  }
  const page = (await get(`${t.baseUrl}/api/recipe/?query=${name}&page_size=50`)) as { results?: { id?: unknown; name?: unknown }[] };
  for (const c of page.results ?? []) {
    if ((typeof c.id !== 'number' && typeof c.id !== 'string') || !sameName(c.name) || linked.has(String(c.id))) continue;
    const full = (await get(`${t.baseUrl}/api/recipe/${encodeURIComponent(String(c.id))}/`)) as { source_url?: unknown };
    if (full.source_url === recipe.url) return { id: String(c.id), url: `${t.publicUrl}/view/recipe/${encodeURIComponent(String(c.id))}` };
  }
  return undefined;
}

/** `POST /api/recipes/create/html-or-json` with the schema.org JSON: 201 and the new recipe's slug (a JSON string). */
async function createInMealie(t: ManagerTarget, recipe: SchemaRecipe, ctx: CallContext): Promise<Created> {
  const what = 'Mealie';
  const res = await request(
    what,
    `${t.baseUrl}/api/recipes/create/html-or-json`,
    { method: 'POST', headers: headers(t), body: JSON.stringify({ data: JSON.stringify(recipe), includeTags: true }) },
    ctx,
  );
  const text = await readText(what, res, ctx, 1024 * 1024);
  if (!res.ok) throw statusFailure(what, res, text, hintFor(res.status, text));
  let slug: unknown;
  try {
    slug = JSON.parse(text);
  } catch {
    slug = text.trim();
  }
  if (slug && typeof slug === 'object') slug = (slug as { slug?: unknown }).slug;
  if (typeof slug !== 'string' || !slug.trim()) throw new PermanentError(`Mealie answered ${res.status} without a recipe slug: ${excerpt(text, 200)}`);
  const s = slug.trim();
  return { id: s, url: `${t.publicUrl}/g/${encodeURIComponent(t.mealieGroup)}/r/${encodeURIComponent(s)}` };
}

/**
 * Tandoor's recipe body: one step per instruction, the ingredients (amount, unit, food, note; recipes/tandoor-ingredients.ts)
 * on the first. Without `ingredients` resolved in Tandoor, foods and units go by name.
 */
export function tandoorRecipe(recipe: SchemaRecipe, resolved?: TandoorIngredient[], original?: string) {
  const ingredients = resolved ?? recipe.recipeIngredient.map((line) => tandoorIngredient(line));
  const instructions = recipe.recipeInstructions.map((s) => s.text);
  const steps: { name?: string; instruction: string; ingredients: TandoorIngredient[] }[] = (instructions.length ? instructions : ['']).map((instruction, n) => ({
    instruction,
    ingredients: n === 0 ? ingredients : [],
  }));
  if (original) steps.push({ name: 'Original text', instruction: original.slice(0, 10_000), ingredients: [] });
  const servings = Number(/\d+/.exec(recipe.recipeYield ?? '')?.[0] ?? 1) || 1;
  const keywords = (recipe.keywords ?? '')
    .split(',')
    .concat(recipe.recipeCategory ?? [])
    .map((k) => k.trim())
    .filter(Boolean);
  return {
    name: recipe.name.slice(0, 128),
    description: (recipe.description ?? '').slice(0, 512),
    keywords: [...new Set(keywords)].map((name) => ({ name: name.slice(0, 64) })),
    steps,
    servings,
    servings_text: recipe.recipeYield ?? '',
    working_time: durationMinutes(recipe.prepTime),
    waiting_time: durationMinutes(recipe.cookTime),
    source_url: recipe.url ?? '',
    internal: true,
  };
}

/** `POST /api/recipe/` with Tandoor's fields: 201 and the recipe with its `id`. */
async function createInTandoor(t: ManagerTarget, recipe: SchemaRecipe, ctx: CallContext, original?: string): Promise<Created> {
  const what = 'Tandoor';
  const ingredients = await resolveTandoorIngredients(t, recipe.recipeIngredient, ctx);
  const res = await request(what, `${t.baseUrl}/api/recipe/`, { method: 'POST', headers: headers(t), body: JSON.stringify(tandoorRecipe(recipe, ingredients, original)) }, ctx);
  const text = await readText(what, res, ctx, 1024 * 1024);
  if (!res.ok) throw statusFailure(what, res, text, hintFor(res.status, text));
  let id: unknown;
  try {
    id = (JSON.parse(text) as { id?: unknown }).id;
  } catch {
    /* checked below */
  }
  if ((typeof id !== 'number' && typeof id !== 'string') || id === '') {
    throw new PermanentError(`Tandoor answered ${res.status} without a recipe id: ${excerpt(text, 200)}`);
  }
  return { id: String(id), url: `${t.publicUrl}/view/recipe/${encodeURIComponent(String(id))}` };
}

export interface Picture {
  bytes: Buffer;
  contentType: string;
  extension: string;
}

/** Sets the recipe's picture: Mealie `PUT /api/recipes/{slug}/image`, Tandoor `PUT /api/recipe/{id}/image/` (multipart). */
export async function putImage(t: ManagerTarget, id: string, picture: Picture, ctx: CallContext): Promise<void> {
  const what = `${managerName(t.kind)} (recipe picture)`;
  const form = new FormData();
  form.set('image', new Blob([new Uint8Array(picture.bytes)], { type: picture.contentType }), `image.${picture.extension}`);
  if (t.kind === 'mealie') form.set('extension', picture.extension);
  const path = t.kind === 'mealie' ? `/api/recipes/${encodeURIComponent(id)}/image` : `/api/recipe/${encodeURIComponent(id)}/image/`;
  const res = await request(what, `${t.baseUrl}${path}`, { method: 'PUT', headers: headers(t, false), body: form }, ctx);
  const text = await readText(what, res, ctx, 64 * 1024);
  if (!res.ok) throw statusFailure(what, res, text, hintFor(res.status, text));
}

