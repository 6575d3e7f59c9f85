import { Migration } from '@mikro-orm/migrations';

/** Jobs of all services and their append-only progress events. */
export class Migration20261121000000_jobs extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table "job" (
        "id" varchar(255) not null primary key,
        "kind" varchar(255) not null,
        "workflow_id" varchar(255) not null,
        "run_id" varchar(255) null,
        "status" varchar(255) not null,
        "progress" int not null default 0,
        "stage" varchar(255) null,
        "stage_detail" text null,
        "error" text null,
        "topics" text[] not null default '{}',
        "active_key" varchar(255) null,
        "detail" jsonb not null default '{}',
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "started_at" timestamptz null,
        "completed_at" timestamptz null
      );`);
    this.addSql(`create index "job_kind_status_index" on "job" ("kind", "status");`);
    this.addSql(`create index "job_workflow_id_index" on "job" ("workflow_id");`);
    // One unfinished job per key: the database backs up Temporal's workflow-id dedupe (docs/jobs.md, "Launching and retrying").
    this.addSql(`create unique index "job_active_key_unique" on "job" ("active_key") where "completed_at" is null;`);
    // The reconciler scans unfinished jobs only.
    this.addSql(`create index "job_unfinished_index" on "job" ("created_at") where "completed_at" is null;`);

    this.addSql(`
      create table "event_stream" (
        "name" varchar(255) not null primary key,
        "last_seq" bigint not null
      );`);
    this.addSql(`
      create table "job_event" (
        "stream" varchar(255) not null,
        "seq" bigint not null,
        "event" varchar(255) not null,
        "data" jsonb not null,
        "created_at" timestamptz not null default now(),
        primary key ("stream", "seq")
      );`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "job_event";`);
    this.addSql(`drop table if exists "event_stream";`);
    this.addSql(`drop table if exists "job";`);
  }
}
