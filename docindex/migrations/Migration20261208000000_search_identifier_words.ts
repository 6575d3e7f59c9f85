import { Migration } from '@mikro-orm/migrations';

/** Term statistics as refreshTermStatistics writes them (docindex/search/keyword.ts; 20 is its MIN_TERM_SNIPPETS). */
const REFRESH_TERMS = `insert into "search_term" ("repository_id", "version_id", "lexeme", "snippets")
  select sc.repository_id, sc.version_id, st.word, st.ndoc
  from (select distinct repository_id, version_id from snippet) sc,
    lateral ts_stat(format('select search_vector from snippet where repository_id = %L and version_id %s', sc.repository_id,
      case when sc.version_id is null then 'is null' else '= ' || quote_literal(sc.version_id) end)) st
  where st.ndoc >= 20;`;

/** Every stored and staged vector computed again with the current `snippet_search_vector`, and the statistics from them. */
const REVECTORISE = [
  `update "snippet" set "search_vector" = snippet_search_vector(title, breadcrumb, content);`,
  `update "staged_document" set "vectors" = null;`,
  `delete from "search_term";`,
  REFRESH_TERMS,
];

/**
 * A cheaper keyword vector (issue 24, indexing at 400 files/s): weight D of `snippet.search_vector` no longer holds
 * the whole content again with its identifiers split, only the identifiers that split, split
 * (`gristmill_identifier_words`; docindex/parse/code-words.ts computes the same words on the parse threads and the
 * staged vectors use those, docindex/staged-vectors.ts). The content's other words were already there as they are,
 * at weight C: PostgreSQL parsed the content three times per snippet, now twice and a short text, and runs no
 * regular expression over it. A split identifier still matches its query's phrase (`use effect`), as before.
 *
 * Identifiers are split with a linear expression (as docindex/search/keyword-plan.ts, `splitIdentifiers`), not
 * `gristmill_code_words`' backtracking one, which gives the same words. Titles and breadcrumbs are indexed as before.
 * Stored vectors are computed again (the trigger of Migration20261205000000_staged_search_vectors calls the
 * three-argument function, whose identifier words SQL finds itself: about 5 minutes per million snippets here, on
 * one core), staged ones emptied, and the term statistics rebuilt from the new vectors.
 */
export class Migration20261208000000_search_identifier_words extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function gristmill_split_identifiers(t text) returns text language sql immutable parallel safe as $$
  select translate(regexp_replace(regexp_replace(coalesce(t, ''), '([A-Z])(?=[A-Z][a-z])', '\\1 ', 'g'), '([a-z0-9])([A-Z])', '\\1 \\2', 'g'), '_.:/-#$', '       ')
$$;`);
    this.addSql(`create or replace function gristmill_identifier_words(t text) returns text language sql immutable parallel safe as $$
  select coalesce(string_agg(gristmill_split_identifiers(m[1]), ' '), '')
  from regexp_matches(coalesce(t, ''), '[^\\x01-\\x20!"%&''()*+,;<=>?@[\\\\\\]^\`{|}~\\x7f]+', 'g') as m
  where m[1] ~ '[a-z0-9][A-Z]|[A-Z][A-Z][a-z]|[^_.:/#$-][_.:/#$-]+[^_.:/#$-]'
$$;`);
    this.addSql(`create or replace function snippet_search_vector(title text, breadcrumb text, content text, code_words text) returns tsvector language sql immutable parallel safe as $$
  select setweight(to_tsvector('simple', t || ' ' || gristmill_split_identifiers(t)) || to_tsvector('english', t), 'A')
      || setweight(to_tsvector('simple', b || ' ' || gristmill_split_identifiers(b)) || to_tsvector('english', b), 'B')
      || setweight(to_tsvector('simple', c) || to_tsvector('english', c), 'C')
      || setweight(to_tsvector('simple', coalesce(code_words, '')), 'D')
  from (select gristmill_unnumbered(title) as t, regexp_replace(coalesce(breadcrumb, ''), '(^|> )[0-9]{1,9}[.)](?= )', '\\1', 'g') as b,
               gristmill_unnumbered(content) as c) f
$$;`);
    this.addSql(`create or replace function snippet_search_vector(title text, breadcrumb text, content text) returns tsvector language sql immutable parallel safe as $$
  select snippet_search_vector(title, breadcrumb, content, gristmill_identifier_words(content))
$$;`);
    for (const q of REVECTORISE) this.addSql(q);
  }

  override async down(): Promise<void> {
    // Migration20261127000000_search_stems' function.
    this.addSql(`create or replace function snippet_search_vector(title text, breadcrumb text, content text) returns tsvector language sql immutable parallel safe as $$
  select setweight(to_tsvector('simple', t || ' ' || gristmill_code_words(t)) || to_tsvector('english', t), 'A')
      || setweight(to_tsvector('simple', b || ' ' || gristmill_code_words(b)) || to_tsvector('english', b), 'B')
      || setweight(to_tsvector('simple', c) || to_tsvector('english', c), 'C')
      || setweight(to_tsvector('simple', gristmill_code_words(c)), 'D')
  from (select gristmill_unnumbered(title) as t, regexp_replace(coalesce(breadcrumb, ''), '(^|> )[0-9]{1,9}[.)](?= )', '\\1', 'g') as b,
               gristmill_unnumbered(content) as c) f
$$;`);
    this.addSql(`drop function if exists snippet_search_vector(text, text, text, text);`);
    this.addSql(`drop function if exists gristmill_identifier_words(text);`);
    this.addSql(`drop function if exists gristmill_split_identifiers(text);`);
    for (const q of REVECTORISE) this.addSql(q);
  }
}
