import { Migration } from '@mikro-orm/migrations';

/**
 * A snippet's `repository_id` and `version_id` lose their foreign keys: they are copies of its document's, kept for the
 * scope's index (`snippet_repository_id_version_id_index`), and the document's key already removes a snippet with its
 * library or version (library_document's keys cascade to the document, and the document's to its snippets). PostgreSQL
 * checks a foreign key row by row with a query of its own: the checks of a snippet's three keys were about a tenth of
 * PostgreSQL's time in a first index, and these two are two of its three lookups (bench/README.md, "Index"). Nothing
 * else reads them as keys; a library being deleted still waits for a swap in progress, on the library row its
 * documents' keys lock.
 */
export class Migration20261215000000_snippet_scope_keys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "snippet" drop constraint if exists "snippet_repository_id_foreign", drop constraint if exists "snippet_version_id_foreign";`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "snippet" add constraint "snippet_repository_id_foreign" foreign key ("repository_id") references "library" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "snippet" add constraint "snippet_version_id_foreign" foreign key ("version_id") references "library_version" ("id") on update cascade on delete cascade;`);
  }
}
