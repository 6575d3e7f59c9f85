import { Migration } from '@mikro-orm/migrations';

/**
 * Keyword search ranks snippets whose title or breadcrumb match every term first (docindex/search/keyword.ts). An expression
 * GIN index over just those two fields finds them without visiting the (far more numerous) content matches, which
 * keeps common-word queries fast at 100k snippets. The function repeats the A and B parts of
 * `snippet_search_vector`, so a heading match there is a heading match here.
 */
export class Migration20261125000000_search_headings extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function snippet_heading_vector(title text, breadcrumb text) returns tsvector language sql immutable parallel safe as $$
  select setweight(to_tsvector('simple', coalesce(title, '') || ' ' || gristmill_code_words(title)), 'A')
      || setweight(to_tsvector('simple', coalesce(breadcrumb, '') || ' ' || gristmill_code_words(breadcrumb)), 'B')
$$;`);
    this.addSql(`create index "snippet_heading_vector_index" on "snippet" using gin (snippet_heading_vector(title, breadcrumb));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "snippet_heading_vector_index";`);
    this.addSql(`drop function if exists snippet_heading_vector(text, text);`);
  }
}
