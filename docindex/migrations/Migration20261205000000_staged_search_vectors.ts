import { Migration } from '@mikro-orm/migrations';

/**
 * `snippet.search_vector` becomes a plain column kept by a trigger, so indexing can compute the vectors while it
 * stages the parsed files, on other connections, instead of in the swap's one transaction on one backend
 * (docindex/pipeline.ts, `Staging`; docs/documentation-index.md). The vectors are the same function's
 * (`snippet_search_vector`) as before: `drop expression` keeps every stored vector and rewrites nothing.
 *
 * The trigger computes the vector of a row inserted without one (every writer but the swap) and again whenever
 * the title, breadcrumb or content change. The swap inserts the vectors staged in `staged_document.vectors`
 * (one per staged snippet, in order; null until computed). A later migration that changes
 * `snippet_search_vector` must also empty `staged_document.vectors`.
 */
export class Migration20261205000000_staged_search_vectors extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "snippet" alter column "search_vector" drop expression;`);
    this.addSql(`create or replace function snippet_search_vector_fill() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' or new.search_vector is null then
    new.search_vector := snippet_search_vector(new.title, new.breadcrumb, new.content);
  end if;
  return new;
end
$$;`);
    this.addSql(`create trigger "snippet_search_vector_fill" before insert or update of "title", "breadcrumb", "content" on "snippet"
  for each row execute function snippet_search_vector_fill();`);
    this.addSql(`alter table "staged_document" add column "vectors" tsvector[] null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "staged_document" drop column if exists "vectors";`);
    this.addSql(`drop trigger if exists "snippet_search_vector_fill" on "snippet";`);
    this.addSql(`drop function if exists snippet_search_vector_fill();`);
    this.addSql(`drop index if exists "snippet_search_vector_index";`);
    this.addSql(`alter table "snippet" drop column if exists "search_vector";`);
    this.addSql(`alter table "snippet" add column "search_vector" tsvector generated always as (snippet_search_vector(title, breadcrumb, content)) stored;`);
    this.addSql(`create index "snippet_search_vector_index" on "snippet" using gin ("search_vector");`);
  }
}
