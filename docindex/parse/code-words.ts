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
const IDENTIFIER = /[^\x00-\x20!"%&'()*+,;<=>?@[\\\]^`{|}~\x7f]+/g;
const SPLITS = /[a-z0-9][A-Z]|[A-Z][A-Z][a-z]|[^_.:/#$-][_.:/#$-]+[^_.:/#$-]/;

export function identifierWords(text: string): string {
  const words: string[] = [];
  for (const [m] of text.matchAll(IDENTIFIER)) if (SPLITS.test(m)) words.push(splitIdentifiers(m));
  return words.join(' ');
}

/** A parsed snippet as the crawl stages it: with its content's `identifierWords`, computed on the parse thread. */
export type IndexedSnippet = ParsedSnippet & { codeWords: string };

export function withCodeWords(snippets: ParsedSnippet[]): IndexedSnippet[] {
  return snippets.map((s) => ({ ...s, codeWords: identifierWords(s.content) }));
}
