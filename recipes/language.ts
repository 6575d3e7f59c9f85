/**
 * The household's language and unit system (docs/recipes.md, "Language and units"): what the model is asked to
 * write the recipe in. A language is a BCP 47 tag whose language Node's ICU knows (`de`, `en`, `pt-BR`); units are
 * `metric`, `us` or `keep`. Pure: the configuration, the API and the activities share it.
 */
import { languageName } from '../core/languages.js';

export const UNIT_SYSTEMS = ['metric', 'us', 'keep'] as const;
export type UnitSystem = (typeof UNIT_SYSTEMS)[number];

/** What the model is asked to do to the post's recipe. */
export interface Conversion {
  /** The language to write in (a canonical tag); undefined: the post's own. */
  language?: string;
  units: UnitSystem;
}


export const converts = (c: Conversion): boolean => Boolean(c.language) || c.units !== 'keep';

const UNIT_RULES: Record<Exclude<UnitSystem, 'keep'>, string> = {
  metric:
    'Convert every quantity to metric units (g, kg, ml, l, cm, °C): weigh dry ingredients given in cups or ounces in grams, liquids in ml, and round to sensible kitchen amounts; keep teaspoons, tablespoons, pinches and pieces as they are.',
  us: 'Convert every quantity to US customary units (cups, tablespoons, teaspoons, fl oz, oz, lb, inches, °F), rounded to sensible kitchen amounts; keep pinches and pieces as they are.',
};

/** The prompt's instruction for a conversion (empty when nothing changes). */
export function conversionInstruction(c: Conversion): string {
  return [
    c.language
      ? `Write every text field (name, description, ingredients, steps, categories, keywords) in ${languageName(c.language)}, translating from the post's language when it differs.`
      : undefined,
    c.units !== 'keep' ? UNIT_RULES[c.units] : undefined,
  ]
    .filter(Boolean)
    .join(' ');
}
