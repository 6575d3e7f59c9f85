import { Migration } from '@mikro-orm/migrations';

/** Translations and summaries of transcripts (transcription/derived/entities.ts). */
export class Migration20261130000000_transcript_extras extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "transcript_extra" (
      "job_id" varchar(255) not null primary key,
      "transcription_job_id" varchar(255) not null,
      "task" varchar(255) not null,
      "language" varchar(255) null,
      "result_json" text null,
      "output_dir" text null,
      "units" int null,
      "chunks" int null,
      "runs" int not null default 1
    );`);
    this.addSql(`create index "transcript_extra_transcription_job_id_index" on "transcript_extra" ("transcription_job_id");`);
    // One translation per transcript and language, one summary per transcript and language (or none).
    this.addSql(`create unique index "transcript_extra_unique" on "transcript_extra" ("transcription_job_id", "task", coalesce("language", ''));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "transcript_extra";`);
  }
}
