import { Migration } from '@mikro-orm/migrations';

/**
 * Packed vectors of a scope under one embedding profile (docindex/entities/vector-pack.ts), written by the embed
 * stage so the API loads a scope's vectors in a few large reads. Scopes indexed before are read row by row until
 * their next indexing run writes their pack.
 */
export class Migration20261206000000_vector_packs extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "vector_pack" ("id" varchar(255) not null, "repository_id" varchar(255) not null, "version_id" varchar(255) null, "profile_id" varchar(255) not null, "chunk" int not null, "chunks" int not null, "dimensions" int not null, "fingerprint" text not null, "ids" text not null, "pages" bytea not null, "vectors" bytea not null, "created_at" timestamptz not null, constraint "vector_pack_pkey" primary key ("id"));`);
    // Out of line, uncompressed: float vectors barely compress, and decompressing 150 MB would cost every load.
    this.addSql(`alter table "vector_pack" alter column "vectors" set storage external, alter column "pages" set storage external;`);
    this.addSql(`create index "vector_pack_scope_index" on "vector_pack" ("repository_id", coalesce("version_id", ''), "profile_id");`);
    this.addSql(`alter table "vector_pack" add constraint "vector_pack_repository_id_foreign" foreign key ("repository_id") references "library" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "vector_pack" add constraint "vector_pack_version_id_foreign" foreign key ("version_id") references "library_version" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "vector_pack";`);
  }
}
