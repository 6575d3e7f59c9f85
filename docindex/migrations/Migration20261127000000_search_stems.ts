import { Migration } from '@mikro-orm/migrations';

/**
 * Keyword search with stems and term rarity (docindex/search/keyword.ts). `snippet.search_vector` now holds, per field, the
 * identifier-preserving `simple` lexemes (as before) and the `english` stems beside them (`scaling` also as `scale`,
 * `connections` as `connect`), so a query matches exact identifiers and inflected prose alike. List numbering
 * (`5. Deploy`, `1) Install`) is left out of titles, breadcrumbs and content, so a bare number in a query does not
 * match every numbered heading. Weights as before: title A, breadcrumb B, content C, content with identifiers split D.
 *
 * Existing snippets are re-vectorised here: the generated column is dropped and added again, which rewrites the
 * table and recomputes every vector (about a minute per million snippets), then its GIN index is rebuilt. The
 * heading-only index of Migration20261125000000_search_headings served the all-terms-in-title tier, which ranking
 * no longer has; it is dropped.
 */
export class Migration20261127000000_search_stems extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop index if exists "snippet_heading_vector_index";`);
    this.addSql(`drop function if exists snippet_heading_vector(text, text);`);
    this.addSql(`drop index if exists "snippet_search_vector_index";`);
    this.addSql(`alter table "snippet" drop column if exists "search_vector";`);
    this.addSql(`create or replace function gristmill_unnumbered(t text) returns text language sql immutable parallel safe as $$
  select regexp_replace(coalesce(t, ''), '^([ \\t>]*)[0-9]{1,9}[.)](?=[ \\t]|$)', '\\1', 'gn')
$$;`);
    this.addSql(`create or replace function snippet_search_vector(title text, breadcrumb text, content text) returns tsvector language sql immutable parallel safe as $$
  select setweight(to_tsvector('simple', t || ' ' || gristmill_code_words(t)) || to_tsvector('english', t), 'A')
      || setweight(to_tsvector('simple', b || ' ' || gristmill_code_words(b)) || to_tsvector('english', b), 'B')
      || setweight(to_tsvector('simple', c) || to_tsvector('english', c), 'C')
      || setweight(to_tsvector('simple', gristmill_code_words(c)), 'D')
  from (select gristmill_unnumbered(title) as t, regexp_replace(coalesce(breadcrumb, ''), '(^|> )[0-9]{1,9}[.)](?= )', '\\1', 'g') as b,
               gristmill_unnumbered(content) as c) f
$$;`);
    this.addSql(`alter table "snippet" add column "search_vector" tsvector generated always as (snippet_search_vector(title, breadcrumb, content)) stored;`);
    this.addSql(`create index "snippet_search_vector_index" on "snippet" using gin ("search_vector");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "snippet_search_vector_index";`);
    this.addSql(`alter table "snippet" drop column if exists "search_vector";`);
    this.addSql(`create or replace function snippet_search_vector(title text, breadcrumb text, content text) returns tsvector language sql immutable parallel safe as $$
  select setweight(to_tsvector('simple', coalesce(title, '') || ' ' || gristmill_code_words(title)), 'A')
      || setweight(to_tsvector('simple', coalesce(breadcrumb, '') || ' ' || gristmill_code_words(breadcrumb)), 'B')
      || setweight(to_tsvector('simple', content), 'C')
      || setweight(to_tsvector('simple', gristmill_code_words(content)), 'D')
$$;`);
    this.addSql(`drop function if exists gristmill_unnumbered(text);`);
    this.addSql(`alter table "snippet" add column "search_vector" tsvector generated always as (snippet_search_vector(title, breadcrumb, content)) stored;`);
    this.addSql(`create index "snippet_search_vector_index" on "snippet" using gin ("search_vector");`);
    this.addSql(`create or replace function snippet_heading_vector(title text, breadcrumb text) returns tsvector language sql immutable parallel safe as $$
  select setweight(to_tsvector('simple', coalesce(title, '') || ' ' || gristmill_code_words(title)), 'A')
      || setweight(to_tsvector('simple', coalesce(breadcrumb, '') || ' ' || gristmill_code_words(breadcrumb)), 'B')
$$;`);
    this.addSql(`create index "snippet_heading_vector_index" on "snippet" using gin (snippet_heading_vector(title, breadcrumb));`);
  }
}
