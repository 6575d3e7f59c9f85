import { Migration } from '@mikro-orm/migrations';

/**
 * `search_stamp` on a library and on a version: when what search reads of the scope (its snippets, documents and
 * vectors) last changed. Each API process keys its caches of a scope (keyword index, vectors) by it
 * (docindex/search/search.ts, `scopeStampOf`); until now they were keyed by the last index's time, so every re-index,
 * a scheduled refresh that found nothing new included, made every API process read the scope's indexes again. Scopes
 * indexed before start from their last index's time, the key they are cached under now.
 */
export class Migration20261211000000_search_stamp extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table library add column search_stamp timestamptz null;`);
    this.addSql(`update library set search_stamp = last_indexed_at;`);
    this.addSql(`alter table library_version add column search_stamp timestamptz null;`);
    this.addSql(`update library_version set search_stamp = indexed_at;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table library drop column search_stamp;`);
    this.addSql(`alter table library_version drop column search_stamp;`);
  }
}
