import { Migration } from '@mikro-orm/migrations';

/**
 * A staged snippet's content part of its keyword vector comes from Node as a vector in PostgreSQL's binary form
 * (docindex/content-vectors.ts), which PostgreSQL takes in without parsing, so the column holds vectors instead of
 * their text: parsing the text was most of what was left of the vectors' cost in a first index (bench/README.md,
 * "Index"). Staged rows live minutes; the ones there are converted as they are. The column stays out of line and
 * uncompressed, like the rest of a staged row (Migration20261212000000_staged_storage).
 */
export class Migration20261214000000_binary_content_vectors extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table staged_document alter column content_vectors type tsvector[] using content_vectors::tsvector[];`);
    this.addSql(`alter table staged_document alter column content_vectors set storage external;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table staged_document alter column content_vectors type text[] using content_vectors::text[];`);
    this.addSql(`alter table staged_document alter column content_vectors set storage external;`);
  }
}
