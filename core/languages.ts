/**
 * Language tags, as users give them for recipes (docs/recipes.md, "Language and units") and for translations and
 * summaries of transcripts (docs/transcription.md): BCP 47 tags whose language Node's ICU knows (`de`, `pt-BR`,
 * `zh-Hant`). Pure.
 */
const names = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });

/** The canonical tag of a language ICU knows, or undefined (`xx`, `German`, `en_US!`). */
export function canonicalLanguage(raw: string): string | undefined {
  try {
    const [tag] = Intl.getCanonicalLocales(raw.trim());
    if (!tag) return undefined;
    return names.of(new Intl.Locale(tag).language) ? tag : undefined;
  } catch {
    return undefined;
  }
}

/** "German (de)": how prompts and messages name a language. */
export function languageName(tag: string): string {
  return `${names.of(tag) ?? tag} (${tag})`;
}
