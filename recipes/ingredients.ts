/**
 * Splits an ingredient line ("1 1/2 cups flour, sifted") into amount, unit, food and note, for recipe managers that
 * store them apart (Tandoor). Pure and forgiving: what it cannot read stays in `food` with no amount.
 */
export interface Ingredient {
  amount: number | null;
  unit: string | null;
  food: string;
  note: string;
  original: string;
}

const FRACTIONS: Record<string, number> = { '½': 0.5, '⅓': 1 / 3, '⅔': 2 / 3, '¼': 0.25, '¾': 0.75, '⅕': 0.2, '⅛': 0.125, '⅜': 0.375, '⅝': 0.625, '⅞': 0.875 };

const UNITS = [
  'g', 'gr', 'gram', 'grams', 'kg', 'kilogram', 'kilograms', 'mg', 'ml', 'millilitre', 'milliliter', 'millilitres', 'milliliters',
  'l', 'litre', 'liter', 'litres', 'liters', 'cl', 'dl', 'tsp', 'tsps', 'teaspoon', 'teaspoons', 'tbsp', 'tbsps', 'tbs',
  'tablespoon', 'tablespoons', 'cup', 'cups', 'oz', 'ounce', 'ounces', 'fl oz', 'lb', 'lbs', 'pound', 'pounds', 'pinch',
  'pinches', 'dash', 'dashes', 'clove', 'cloves', 'can', 'cans', 'tin', 'tins', 'slice', 'slices', 'piece', 'pieces',
  'bunch', 'bunches', 'handful', 'handfuls', 'stick', 'sticks', 'sprig', 'sprigs', 'pack', 'packs', 'package', 'packages',
  'el', 'tl', 'prise', 'stück', 'bund', 'dose',
].sort((a, b) => b.length - a.length);

/** A quantity: "2½", "1 1/2", "1/2", "0,5", "2". */
const NUMBER = String.raw`(?:\d*\s*[½⅓⅔¼¾⅕⅛⅜⅝⅞]|\d+\s+\d+\/\d+|\d+\/\d+|\d+(?:[.,]\d+)?)`;
const LEADING = new RegExp(String.raw`^(${NUMBER})(?:\s*(?:-|–|to)\s*${NUMBER})?\s*`, 'i');
const UNIT = new RegExp(String.raw`^(${UNITS.map((u) => u.replace(/ /g, '\\s+')).join('|')})\.?(?=\s|$)\s*(?:of\s+)?`, 'i');

function number(raw: string): number | null {
  const s = raw.trim().replace(',', '.');
  let total = 0;
  for (const part of s.split(/\s+/)) {
    const uni = /^(\d*)([½⅓⅔¼¾⅕⅛⅜⅝⅞])$/.exec(part);
    if (uni) total += (uni[1] ? Number(uni[1]) : 0) + FRACTIONS[uni[2]!]!;
    else if (/^\d+\/\d+$/.test(part)) {
      const [a, b] = part.split('/').map(Number) as [number, number];
      if (!b) return null;
      total += a / b;
    } else if (/^\d+(\.\d+)?$/.test(part)) total += Number(part);
    else return null;
  }
  return Math.round(total * 1000) / 1000;
}

export function parseIngredient(line: string): Ingredient {
  const original = line.replace(/\s+/g, ' ').trim();
  let rest = original.replace(/^[-*•·]\s*/, '');
  let amount: number | null = null;
  let unit: string | null = null;
  const lead = LEADING.exec(rest);
  if (lead) {
    amount = number(lead[1]!);
    rest = rest.slice(lead[0].length);
    const u = UNIT.exec(rest);
    if (u) {
      unit = u[1]!.replace(/\s+/g, ' ');
      rest = rest.slice(u[0].length);
    }
  }
  let note = '';
  const paren = /\s*\(([^)]*)\)\s*$/.exec(rest);
  if (paren) {
    note = paren[1]!.trim();
    rest = rest.slice(0, paren.index);
  }
  const comma = rest.indexOf(',');
  if (comma > 0) {
    note = [rest.slice(comma + 1).trim(), note].filter(Boolean).join('; ');
    rest = rest.slice(0, comma);
  }
  const food = rest.trim() || original;
  return { amount, unit, food, note, original };
}
