import { Migration } from '@mikro-orm/migrations';

/** Packages and sites as sources (docindex/sources/), and each library's refresh schedule and version policy. */
export class Migration20261201000000_library_sources extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "library" add column "repository_url" text null, add column "latest_version" varchar(255) null,
      add column "refresh_every" varchar(255) null, add column "version_policy" varchar(255) null,
      add column "on_demand" boolean not null default false;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "library" drop column "repository_url", drop column "latest_version", drop column "refresh_every",
      drop column "version_policy", drop column "on_demand";`);
  }
}
