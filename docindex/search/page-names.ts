/**
 * The words of a page's file name (docs/ranking.md, "A page named for the question's words"): documentation is often
 * filed by topic (`WebSocket.md`, `Testing.md`, `benchmarks.md`, `_faq.rs`), and a question using that word is
 * more often about that page than about one that only mentions it. The words are compared with the query's terms
 * after a light stemming of both (`tests` / `Testing`, `logs` / `Logging`), in JavaScript: a file name is not
 * in the keyword index. Only documentation files are named so (not source files).
 */
import { detectKind } from '../parse/languages.js';
import { splitIdentifiers } from './keyword-plan.js';

/** File names that say nothing about their page: their folder names it instead (`guide/index.md`, `derive/mod.rs`). */
const GENERIC = new Set(['index', 'readme', 'mod', 'lib', 'main', '__init__', 'init', 'api', 'docs', 'doc']);

/** Suffixes stripped by `stem`, longest first. */
const SUFFIXES = ['ations', 'ation', 'ings', 'ing', 'ates', 'ated', 'ate', 'ers', 'er', 'ies', 'es', 's', 'ed', 'e'];

/**
 * A light stemming for comparing file-name words with query words: one suffix off (not the `s` of `ss`: `class`,
 * `process`), a final `y` read as `i` (`query` / `queries`, `cookie` / `cookies`), a doubled last consonant undone.
 */
export function stem(word: string): string {
  let w = word.toLowerCase();
  for (const s of SUFFIXES) {
    if (w.endsWith(s) && w.length - s.length >= 3 && !(s === 's' && w.endsWith('ss'))) {
      w = w.slice(0, -s.length) + (s === 'ies' ? 'i' : '');
      break;
    }
  }
  if (w.length >= 4 && w.endsWith('y')) w = `${w.slice(0, -1)}i`;
  if (w.length >= 4 && w[w.length - 1] === w[w.length - 2] && !/[aeiou]/.test(w[w.length - 1]!)) w = w.slice(0, -1);
  return w;
}

/** The words of a text as stems: split at identifier boundaries and punctuation, and the whole joined (`websocket`). */
export function stems(text: string): string[] {
  const words = splitIdentifiers(text)
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length >= 3 && !/^\d+$/.test(w));
  const joined = text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
  return [...new Set([...words, ...(joined.length >= 3 ? [joined] : [])].map(stem))];
}

/**
 * The stems naming a documentation page: its file's base name without extension, or its folder's when the name is
 * generic; none for a source file.
 */
export function pageNameStems(filePath: string): string[] {
  // A source file's name is its module's, and its snippets already hold the names it defines: crediting it put
  // `lib/decorate.js` above the page documenting `decorateRequest` (docs/ranking.md).
  if (detectKind(filePath) === 'source') return [];
  const parts = filePath.split('/').filter(Boolean);
  let at = parts.length - 1;
  const base = (p: string) => p.replace(/\.[^.]*$/, '').replace(/^_+|_+$/g, '');
  while (at > 0 && GENERIC.has(base(parts[at]!).toLowerCase())) at--;
  const name = parts[at] ? base(parts[at]!) : '';
  return GENERIC.has(name.toLowerCase()) ? [] : stems(name);
}

/**
 * Whether a file only declares types (`.d.ts`, `.d.mts`, `.d.cts`, Python's `.pyi` stubs): it holds the API's names and
 * signatures, as its implementation and docs do, without what a question asks (what they do, how to use them).
 */
export function isDeclarationFile(filePath: string): boolean {
  return /\.d\.[cm]?ts$|\.pyi$/i.test(filePath);
}

/**
 * Whether a query term names the page: its whole form or one of its words (its `stems`, computed once per query) is a
 * word of the page's name.
 */
export function stemsNamePage(stemsOfTerm: readonly string[], names: readonly string[]): boolean {
  return names.length > 0 && stemsOfTerm.some((s) => names.includes(s));
}
