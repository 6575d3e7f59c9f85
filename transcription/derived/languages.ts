/**
 * The languages a transcript is translated into: BCP 47 tags whose language Node's ICU knows (`de`, `pt-BR`,
 * `zh-Hant`), and a rough check that a model answered in the language it was asked for. Pure: the API, the
 * activities and the tests share it.
 */
import { languageName } from '../../core/languages.js';


/** Languages written in a script of their own: an answer with almost none of it is in another language. */
const SCRIPTS: Record<string, RegExp> = {
  ru: /\p{Script=Cyrillic}/u, uk: /\p{Script=Cyrillic}/u, bg: /\p{Script=Cyrillic}/u, be: /\p{Script=Cyrillic}/u,
  mk: /\p{Script=Cyrillic}/u, kk: /\p{Script=Cyrillic}/u, mn: /\p{Script=Cyrillic}/u,
  el: /\p{Script=Greek}/u, he: /\p{Script=Hebrew}/u, yi: /\p{Script=Hebrew}/u,
  ar: /\p{Script=Arabic}/u, fa: /\p{Script=Arabic}/u, ur: /\p{Script=Arabic}/u,
  hi: /\p{Script=Devanagari}/u, mr: /\p{Script=Devanagari}/u, ne: /\p{Script=Devanagari}/u,
  bn: /\p{Script=Bengali}/u, ta: /\p{Script=Tamil}/u, te: /\p{Script=Telugu}/u, th: /\p{Script=Thai}/u,
  ka: /\p{Script=Georgian}/u, hy: /\p{Script=Armenian}/u, ko: /\p{Script=Hangul}/u,
  ja: /[\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Han}]/u, zh: /\p{Script=Han}/u,
};
const LATIN = /\p{Script=Latin}/u;

/** Letters only, lower case, for comparing an answer with its source. */
const bare = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();

/** The share of the letters of `texts` that `script` matches (1 when there are no letters). */
function scriptShare(texts: readonly string[], script: RegExp): number {
  let letters = 0;
  let hits = 0;
  for (const ch of texts.join('')) {
    if (!/\p{L}/u.test(ch)) continue;
    letters++;
    if (script.test(ch)) hits++;
  }
  return letters ? hits / letters : 1;
}

/**
 * Why an answer is not in `language`, or undefined when it may well be. Rough on purpose: a target with a script
 * of its own needs most letters in it (Latin for languages written in Latin letters); any target but English fails
 * when most lines with words came back unchanged (the model repeated the source). A transcript already in the
 * target language fails that way too, and the message says so.
 */
export function wrongLanguage(sources: readonly string[], answers: readonly string[], language: string): string | undefined {
  const base = new Intl.Locale(language).language;
  const script = SCRIPTS[base];
  const share = scriptShare(answers, script ?? LATIN);
  if (share < 0.5) return `most of its letters are not in the script ${languageName(language)} is written in`;
  if (base === 'en') return undefined;
  const worded = sources.map((s, i) => [bare(s), bare(answers[i] ?? '')] as const).filter(([s]) => s.replace(/\s/g, '').length >= 8);
  const unchanged = worded.filter(([s, a]) => s === a).length;
  if (worded.length && unchanged / worded.length > 0.5) {
    return `${unchanged} of ${worded.length} lines came back unchanged (is the transcript already in ${languageName(language)}?)`;
  }
  return undefined;
}
