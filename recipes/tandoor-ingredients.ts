import { PermanentError } from '../core/errors.js';
import type { CallContext } from '../outbound/http.js';
import { type Ingredient, parseIngredient } from './ingredients.js';
import type { ManagerTarget } from './manager-http.js';
import { type ManagerObject, ManagerObjects } from './manager-foods.js';

/**
 * Tandoor's ingredients (docs/recipes.md, "Ingredients the manager understands"): each line split into amount, unit,
 * food and note (recipes/ingredients.ts), the food and the unit as Tandoor's own objects (found or created,
 * recipes/manager-foods.ts), so shopping lists and scaling work. A line that cannot be read stays a note, with no
 * food: one with no amount and no unit whose food would be more than four words ("a good glug of whatever oil you
 * have").
 */
export interface TandoorIngredient {
  food: { id?: number | string; name: string } | null;
  unit: { id?: number | string; name: string } | null;
  amount: number;
  no_amount: boolean;
  note: string;
  original_text: string;
  is_header: false;
}

/** A line no parser can make an ingredient of: kept as it is, in the note. */
export function unreadable(i: Ingredient): boolean {
  return i.amount == null && i.unit == null && !i.note && i.food.split(/\s+/).length > 4;
}

/** One line as Tandoor's ingredient, with the food and unit by name (or the objects `objects` found). */
export function tandoorIngredient(line: string, objects?: { food: ManagerObject | null; unit: ManagerObject | null }): TandoorIngredient {
  const i = parseIngredient(line);
  if (unreadable(i)) return { food: null, unit: null, amount: 0, no_amount: true, note: i.original.slice(0, 256), original_text: i.original, is_header: false };
  const ref = (o: ManagerObject | null | undefined, name: string | null) => (o ? { id: o.id, name: o.name } : name ? { name: name.slice(0, 128) } : null);
  return {
    food: ref(objects?.food, i.food),
    unit: ref(objects?.unit, i.unit),
    amount: i.amount ?? 0,
    no_amount: i.amount == null,
    note: i.note.slice(0, 256),
    original_text: i.original,
    is_header: false,
  };
}

/**
 * Every line as Tandoor's ingredient with its food and unit found or created in Tandoor. When Tandoor refuses the
 * lookups (a permanent failure: an old server, a token without the scope), the foods and units go by name, which
 * Tandoor's recipe endpoint also takes; a recoverable failure is thrown, for the next attempt.
 */
export async function resolveTandoorIngredients(t: ManagerTarget, lines: readonly string[], ctx: CallContext): Promise<TandoorIngredient[]> {
  const objects = new ManagerObjects(t, ctx);
  try {
    const out: TandoorIngredient[] = [];
    for (const line of lines) {
      const i = parseIngredient(line);
      if (unreadable(i)) {
        out.push(tandoorIngredient(line));
        continue;
      }
      const food = await objects.get('food', i.food);
      const unit = i.unit ? await objects.get('unit', i.unit) : null;
      out.push(tandoorIngredient(line, { food, unit }));
    }
    return out;
  } catch (err) {
    if (err instanceof PermanentError) return lines.map((l) => tandoorIngredient(l));
    throw err;
  }
}
