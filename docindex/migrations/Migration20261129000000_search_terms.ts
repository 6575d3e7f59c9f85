import { Migration } from '@mikro-orm/migrations';

/**
 * Per-scope document frequencies of the keyword index's common lexemes (docindex/search/keyword.ts, `search_term`), filled
 * here for every scope already indexed; indexing runs keep them current from now on.
 */
export class Migration20261129000000_search_terms extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "search_term" ("id" bigserial primary key, "repository_id" varchar(255) not null, "version_id" varchar(255) null, "lexeme" text not null, "snippets" int not null);`);
    this.addSql(`create unique index "search_term_scope_lexeme_unique" on "search_term" ("repository_id", coalesce("version_id", ''), "lexeme");`);
    this.addSql(`alter table "search_term" add constraint "search_term_repository_id_foreign" foreign key ("repository_id") references "library" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "search_term" add constraint "search_term_version_id_foreign" foreign key ("version_id") references "library_version" ("id") on update cascade on delete cascade;`);
    // The same statistics refreshTermStatistics writes (20 is its MIN_TERM_SNIPPETS).
    this.addSql(`insert into "search_term" ("repository_id", "version_id", "lexeme", "snippets")
      select sc.repository_id, sc.version_id, st.word, st.ndoc
      from (select distinct repository_id, version_id from snippet) sc,
        lateral ts_stat(format('select search_vector from snippet where repository_id = %L and version_id %s', sc.repository_id,
          case when sc.version_id is null then 'is null' else '= ' || quote_literal(sc.version_id) end)) st
      where st.ndoc >= 20;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "search_term";`);
  }
}
