import { Migration } from '@mikro-orm/migrations';

/** Playlists: a group of transcription jobs made from one playlist or channel URL. */
export class Migration20261128121000_transcription_groups extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table "transcription_group" (
        "id" varchar(255) not null primary key,
        "source_url" text not null,
        "title" text not null,
        "mode" varchar(255) not null,
        "status" varchar(255) not null,
        "error" text null,
        "entry_count" int null,
        "job_count" int not null default 0,
        "skipped" jsonb not null default '[]',
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "cancelled_at" timestamptz null
      );`);
    this.addSql(`create index "transcription_group_source_url_index" on "transcription_group" ("source_url");`);
    this.addSql(`alter table "transcription" add column "group_id" varchar(255) null, add column "group_index" int null;`);
    this.addSql(`create index "transcription_group_id_index" on "transcription" ("group_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "transcription" drop column if exists "group_id", drop column if exists "group_index";`);
    this.addSql(`drop table if exists "transcription_group";`);
  }
}
