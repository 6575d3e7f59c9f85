import { Migration } from '@mikro-orm/migrations';

/** Embedding profiles; at most one is the default. */
export class Migration20261122010000_embedding_profiles extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "embedding_profile" ("id" varchar(255) not null, "name" varchar(255) not null, "provider" varchar(255) not null, "model" varchar(255) null, "dimensions" int null, "is_default" boolean not null default false, "enabled" boolean not null default true, "config" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "embedding_profile_pkey" primary key ("id"));`);
    this.addSql(`create unique index "embedding_profile_one_default" on "embedding_profile" ("is_default") where "is_default";`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "embedding_profile";`);
  }
}
