import { Migration } from '@mikro-orm/migrations';

/** A result's neighbours are read by file and position (docindex/search/neighbourhood.ts): an index, not a scan of every snippet. */
export class Migration20261128000000_snippet_neighbours extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index if not exists "snippet_document_id_ordinal_index" on "snippet" ("document_id", "ordinal");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "snippet_document_id_ordinal_index";`);
  }
}
