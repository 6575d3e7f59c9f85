import { Migration } from '@mikro-orm/migrations';

/** Rerank profiles (docindex/entities/rerank-profile.ts); at most one is active. */
export class Migration20261203000000_rerank_profiles extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "rerank_profile" ("id" varchar(255) not null, "name" varchar(255) not null, "provider" varchar(255) not null, "model" varchar(255) null, "active" boolean not null default false, "config" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "rerank_profile_pkey" primary key ("id"));`);
    this.addSql(`create unique index "rerank_profile_one_active" on "rerank_profile" ("active") where "active";`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "rerank_profile";`);
  }
}
