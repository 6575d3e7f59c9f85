import { Migration } from '@mikro-orm/migrations';

/**
 * A staged snippet's content part of its keyword vector may come from Node (docindex/content-vectors.ts), put
 * together from the vectors of its words, as a tsvector literal in `staged_document.content_vectors` (one per staged
 * snippet, in order; null where PostgreSQL computes it). The five-argument `snippet_search_vector_of` takes that part
 * as given and is otherwise the four-argument one, which it calls when the part is null: the vectors are the same.
 * The literals are kept out of line but not compressed, like the rest of a staged row
 * (Migration20261212000000_staged_storage).
 */
export class Migration20261213000000_content_vectors extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "staged_document" add column "content_vectors" text[] null;`);
    this.addSql(`alter table staged_document alter column content_vectors set storage external;`);
    this.addSql(`create or replace function snippet_search_vector_of(title_vector tsvector, breadcrumb_vector tsvector, content_vector tsvector, content text, code_words text) returns tsvector language sql immutable parallel safe as $$
  select case when content_vector is null then snippet_search_vector_of(title_vector, breadcrumb_vector, content, code_words)
    else title_vector || breadcrumb_vector || setweight(content_vector, 'C') || setweight(to_tsvector('simple', coalesce(code_words, '')), 'D') end
$$;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop function if exists snippet_search_vector_of(tsvector, tsvector, tsvector, text, text);`);
    this.addSql(`alter table "staged_document" drop column if exists "content_vectors";`);
  }
}
