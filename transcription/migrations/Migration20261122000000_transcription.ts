import { Migration } from '@mikro-orm/migrations';

/** Transcription jobs' own fields (beside their `job` row) and the webhook calls they received. */
export class Migration20261122000000_transcription extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table "transcription" (
        "job_id" varchar(255) not null primary key,
        "title" text not null,
        "title_from_user" boolean not null default false,
        "source_kind" varchar(255) not null,
        "source_url" text null,
        "upload_file_name" text null,
        "upload_stored_name" varchar(255) null,
        "upload_bytes" bigint null,
        "mode" varchar(255) not null,
        "applied_mode" varchar(255) null,
        "mode_reason" text null,
        "asr_job_id" varchar(255) null,
        "callback_token_hash" varchar(255) null,
        "submitted_at" timestamptz null,
        "model_waits" int not null default 0,
        "transcript_source" varchar(255) null,
        "segments_json" text null,
        "segment_count" int null,
        "output_dir" text null,
        "runs" int not null default 1
      );`);
    this.addSql(`create index "transcription_asr_job_id_index" on "transcription" ("asr_job_id");`);

    this.addSql(`
      create table "transcription_webhook" (
        "id" varchar(255) not null primary key,
        "job_id" varchar(255) not null,
        "asr_job_id" varchar(255) null,
        "backend_status" varchar(255) not null,
        "payload" jsonb null,
        "outcome" varchar(255) not null default 'pending',
        "detail" text null,
        "received_at" timestamptz not null,
        "handled_at" timestamptz null
      );`);
    this.addSql(`create index "transcription_webhook_job_id_index" on "transcription_webhook" ("job_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "transcription_webhook";`);
    this.addSql(`drop table if exists "transcription";`);
  }
}
