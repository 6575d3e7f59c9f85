import { randomUUID } from 'node:crypto';
import { PermanentError } from '../core/errors.js';
import type { CallContext } from '../outbound/http.js';
import { callManager, type ManagerTarget } from './manager-http.js';
import { type ManagerObject, ManagerObjects } from './manager-foods.js';

/**
 * Mealie's ingredients (docs/recipes.md, "Ingredients the manager understands"). Mealie's create from schema.org
 * JSON stores each ingredient as a note; this turns them into quantity, unit and food the way Mealie's own "Parse"
 * button does: `POST /api/parser/ingredients {parser: "nlp", ingredients}` answers one ParsedIngredient each
 * (`{input, confidence, ingredient: {quantity, unit, food, note, ...}}`, a unit or food with an `id` when Mealie
 * has it, without one when not); missing foods and units are created (recipes/manager-foods.ts); then
 * `PATCH /api/recipes/{slug}` with the ingredients and the recipe's `settings.disableAmount` false (otherwise Mealie
 * shows the notes only). A line the parser finds no food in stays a note.
 */
interface ParsedIngredient {
  input?: string | null;
  ingredient?: {
    quantity?: number | null;
    unit?: { id?: string; name?: string } | null;
    food?: { id?: string; name?: string } | null;
    note?: string | null;
    referenceId?: string;
  };
}

export interface MealieIngredient {
  quantity: number;
  unit: ManagerObject | null;
  food: ManagerObject | null;
  note: string;
  isFood: boolean;
  disableAmount: boolean;
  display: string;
  title: null;
  originalText: string;
  referenceId: string;
}

const named = (o: { name?: unknown } | null | undefined): string | undefined =>
  typeof o?.name === 'string' && o.name.trim() ? o.name.trim() : undefined;

/** A line kept as it is: no food, no unit, the text as the note. */
const asNote = (line: string, referenceId: string): MealieIngredient => ({
  quantity: 0, unit: null, food: null, note: line, isFood: false, disableAmount: true, display: line, title: null, originalText: line, referenceId,
});

/** The recipe's lines as Mealie ingredients, parsed by Mealie, with their foods and units found or created. */
export async function mealieIngredients(t: ManagerTarget, lines: readonly string[], ctx: CallContext): Promise<{ ingredients: MealieIngredient[]; notes: number }> {
  const what = 'Mealie (ingredient parser)';
  const parsed = await callManager(t, what, 'POST', '/api/parser/ingredients', { parser: 'nlp', ingredients: lines }, ctx);
  if (!Array.isArray(parsed) || parsed.length !== lines.length) throw new PermanentError(`${what} answered ${Array.isArray(parsed) ? parsed.length : 'no'} ingredients for ${lines.length} lines`);
  const objects = new ManagerObjects(t, ctx);
  const ingredients: MealieIngredient[] = [];
  let notes = 0;
  for (const [n, p] of (parsed as ParsedIngredient[]).entries()) {
    const line = lines[n]!;
    const i = p?.ingredient;
    const referenceId = i?.referenceId ?? randomUUID();
    const foodName = named(i?.food);
    if (!i || !foodName) {
      notes++;
      ingredients.push(asNote(line, referenceId));
      continue;
    }
    const unitName = named(i.unit);
    const food = i.food?.id ? (i.food as ManagerObject) : await objects.get('food', foodName);
    const unit = unitName ? (i.unit?.id ? (i.unit as ManagerObject) : await objects.get('unit', unitName)) : null;
    const quantity = typeof i.quantity === 'number' && Number.isFinite(i.quantity) ? i.quantity : 0;
    ingredients.push({ quantity, unit, food, note: i.note ?? '', isFood: true, disableAmount: false, display: '', title: null, originalText: line, referenceId });
  }
  return { ingredients, notes };
}

/** The title of the note that keeps the post's own text when the recipe was translated or converted. */
export const ORIGINAL_NOTE = 'Original text';
/** The longest original text kept in a note. */
const MAX_ORIGINAL = 10_000;

/**
 * The recipe `slug` finished in Mealie: its ingredients as Mealie understands them (see above) and, when the model
 * translated or converted it, the post's own text as a note (`notes: [{title, text}]`, replacing an earlier one).
 * Answers how many lines stayed notes, and why none could be parsed when Mealie's parser failed for good (the
 * recipe then keeps its ingredients as notes); a recoverable failure is thrown.
 */
export async function finishMealieRecipe(
  t: ManagerTarget,
  slug: string,
  { lines, original }: { lines: readonly string[]; original?: string | undefined },
  ctx: CallContext,
): Promise<{ notes: number; parserFailure?: string }> {
  let parsed: Awaited<ReturnType<typeof mealieIngredients>> | undefined;
  let parserFailure: string | undefined;
  try {
    if (lines.length) parsed = await mealieIngredients(t, lines, ctx);
  } catch (err) {
    if (!(err instanceof PermanentError)) throw err;
    parserFailure = err.message;
  }
  if (!parsed && !original) return { notes: lines.length, ...(parserFailure && { parserFailure }) };
  const path = `/api/recipes/${encodeURIComponent(slug)}`;
  const current = (await callManager(t, 'Mealie', 'GET', path, undefined, ctx)) as { settings?: Record<string, unknown> | null; notes?: { title?: unknown }[] | null };
  const notes = original && [...(current.notes ?? []).filter((n) => n.title !== ORIGINAL_NOTE), { title: ORIGINAL_NOTE, text: original.slice(0, MAX_ORIGINAL) }];
  await callManager(
    t,
    'Mealie',
    'PATCH',
    path,
    { ...(parsed && { recipeIngredient: parsed.ingredients, settings: { ...(current.settings ?? {}), disableAmount: false } }), ...(notes && { notes }) },
    ctx,
  );
  return { notes: parsed?.notes ?? lines.length, ...(parserFailure && { parserFailure }) };
}
