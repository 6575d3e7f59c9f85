/**
 * `snippet_search_vector(title, breadcrumb, content, code_words)` as Migration20261208000000_search_identifier_words
 * wrote it, in one expression over SQL expressions: what a snippet's vector must stay, byte for byte, however it is
 * computed now (Migration20261210000000_search_vector_parts, docindex/staged-vectors.ts).
 */
export const referenceVector = (title: string, breadcrumb: string, content: string, codeWords: string): string => `(
  select setweight(to_tsvector('simple', t || ' ' || gristmill_split_identifiers(t)) || to_tsvector('english', t), 'A')
      || setweight(to_tsvector('simple', b || ' ' || gristmill_split_identifiers(b)) || to_tsvector('english', b), 'B')
      || setweight(to_tsvector('simple', c) || to_tsvector('english', c), 'C')
      || setweight(to_tsvector('simple', coalesce(w, '')), 'D')
  from (select gristmill_unnumbered(${title}) as t, regexp_replace(coalesce(${breadcrumb}, ''), '(^|> )[0-9]{1,9}[.)](?= )', '\\1', 'g') as b,
               gristmill_unnumbered(${content}) as c, (${codeWords})::text as w) f)`;

/** Snippets whose vectors are easy to get wrong: numbered, null and empty parts, identifiers, words shared by parts, positions past their limits. */
export const TRICKY_SNIPPETS: { title: string | null; breadcrumb: string | null; content: string }[] = [
  { title: '1. Getting started', breadcrumb: 'Guide > 2. Setup > connectionPool', content: '1. Install it.\n2. Run `deployAll()` before the HTTPServer starts.' },
  { title: null, breadcrumb: null, content: 'No title, no breadcrumb: connection pools.' },
  { title: '', breadcrumb: '', content: 'Empty title and breadcrumb, scaling connections.' },
  { title: 'Überblick: naïve café', breadcrumb: 'Docs > Überblick', content: 'Die `connectionPool` hält Verbindungen offen 🚀.' },
  { title: 'word snake_case_name HTTPServer', breadcrumb: 'word > word', content: 'word '.repeat(20_000) + 'last' },
  { title: 'Retries', breadcrumb: 'Guide > Retries', content: 'Retried activities are idempotent: retries retry.' },
];
