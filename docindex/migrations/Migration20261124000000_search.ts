import { Migration } from '@mikro-orm/migrations';

/**
 * Keyword search: a generated `tsvector` on snippets with a GIN index. Titles weigh A, breadcrumbs B, content C,
 * and a copy of the content with code identifiers split (`useEffect` -> `use Effect`, `snake_case`, `Foo.bar`) D,
 * so both the identifier and its parts match. The `simple` configuration keeps identifiers as they are (no
 * stemming, no stop words). See docindex/search/keyword.ts.
 */
export class Migration20261124000000_search extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function gristmill_code_words(t text) returns text language sql immutable parallel safe as $$
  select translate(regexp_replace(regexp_replace(coalesce(t, ''), '([A-Z]+)([A-Z][a-z])', '\\1 \\2', 'g'), '([a-z0-9])([A-Z])', '\\1 \\2', 'g'), '_.:/-#$', '       ')
$$;`);
    this.addSql(`create or replace function snippet_search_vector(title text, breadcrumb text, content text) returns tsvector language sql immutable parallel safe as $$
  select setweight(to_tsvector('simple', coalesce(title, '') || ' ' || gristmill_code_words(title)), 'A')
      || setweight(to_tsvector('simple', coalesce(breadcrumb, '') || ' ' || gristmill_code_words(breadcrumb)), 'B')
      || setweight(to_tsvector('simple', content), 'C')
      || setweight(to_tsvector('simple', gristmill_code_words(content)), 'D')
$$;`);
    this.addSql(`alter table "snippet" add column "search_vector" tsvector generated always as (snippet_search_vector(title, breadcrumb, content)) stored;`);
    this.addSql(`create index "snippet_search_vector_index" on "snippet" using gin ("search_vector");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "snippet_search_vector_index";`);
    this.addSql(`alter table "snippet" drop column if exists "search_vector";`);
    this.addSql(`drop function if exists snippet_search_vector(text, text, text);`);
    this.addSql(`drop function if exists gristmill_code_words(text);`);
  }
}
