import { splitIdentifiers } from '../search/keyword-plan.js';
import type { ParsedSnippet } from './assemble.js';

/**
 * The words keyword search indexes at weight D for a snippet's content (`snippet.search_vector`,
 * Migration20261208000000_search_identifier_words): each code identifier that splits (`useEffect`, `snake_case`,
 * `Foo.bar`, `HTTPServer`, `v1.2`), split as the query side splits it (search/keyword-plan.ts, `splitIdentifiers`),
 * in content order, joined by spaces. A word that does not split is already indexed as it is (weight C) and is left
 * out, so PostgreSQL parses a short text instead of the whole content a second time.
 *
 * An identifier is a run of characters that are neither ASCII white space nor ASCII punctuation other than the
 * separators `_ . : / - # $` (so non-ASCII letters belong to it); it splits when it holds a lower-case letter or
 * digit before a capital, a capital before a capital and a lower-case letter, or a separator between two other
 * characters. SQL's `gristmill_identifier_words` is the same rule, for rows written without these words.
 */
const DELIMITERS = '\\x00-\\x20!"%&\'()*+,;<=>?@[\\\\\\]^`{|}~\\x7f';
/** Where an identifier splits; a match lies inside one identifier (none of its characters is a delimiter). */
const SPLIT = new RegExp(`[a-z0-9][A-Z]|[A-Z][A-Z][a-z]|[^${DELIMITERS}_.:/#$-][_.:/#$-]+[^${DELIMITERS}_.:/#$-]`, 'g');
const DELIMITER = new RegExp(`[${DELIMITERS}]`);
const isDelimiter = new Uint8Array(128).map((_, c) => (DELIMITER.test(String.fromCharCode(c)) ? 1 : 0));
const delimits = (c: number) => c < 128 && isDelimiter[c] === 1;

/**
 * Finds the places identifiers split, then each one's identifier around it (most words do not split, so they are
 * never matched one by one); linear in the text.
 */
export function identifierWords(text: string): string {
  const words: string[] = [];
  SPLIT.lastIndex = 0;
  for (let m = SPLIT.exec(text); m; m = SPLIT.exec(text)) {
    let start = m.index;
    while (start > 0 && !delimits(text.charCodeAt(start - 1))) start--;
    let end = m.index + m[0].length;
    while (end < text.length && !delimits(text.charCodeAt(end))) end++;
    words.push(splitIdentifiers(text.slice(start, end)));
    SPLIT.lastIndex = end;
  }
  return words.join(' ');
}

/** A parsed snippet as the crawl stages it: with its content's `identifierWords`, computed on the parse thread. */
export type IndexedSnippet = ParsedSnippet & { codeWords: string };

export function withCodeWords(snippets: ParsedSnippet[]): IndexedSnippet[] {
  return snippets.map((s) => ({ ...s, codeWords: identifierWords(s.content) }));
}
