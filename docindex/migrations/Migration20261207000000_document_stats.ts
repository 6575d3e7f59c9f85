import { Migration } from '@mikro-orm/migrations';

/**
 * Each indexed file's size and modification time (nanoseconds) as the crawl saw them, so a re-index does not read a
 * file whose stat did not change (docindex/pipeline.ts, `readSelected`). Documents indexed before have none and are
 * read, as before, until a re-index stores theirs. `staged_document` carries them to the swap; a `stat_only` row is
 * a file whose content did not change: the swap only updates its document's stat.
 */
export class Migration20261207000000_document_stats extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "library_document" add column "size" bigint null, add column "mtime_ns" bigint null;`);
    this.addSql(`alter table "staged_document" add column "size" bigint null, add column "mtime_ns" bigint null, add column "stat_only" boolean not null default false;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "staged_document" drop column if exists "stat_only", drop column if exists "mtime_ns", drop column if exists "size";`);
    this.addSql(`alter table "library_document" drop column if exists "mtime_ns", drop column if exists "size";`);
  }
}
