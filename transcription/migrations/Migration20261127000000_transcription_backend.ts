import { Migration } from '@mikro-orm/migrations';

/** Which transcription backend (ASR_BACKEND) and model produced a job's transcript. */
export class Migration20261127000000_transcription_backend extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "transcription" add column "asr_backend" varchar(255) null, add column "asr_model" varchar(255) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "transcription" drop column if exists "asr_backend", drop column if exists "asr_model";`);
  }
}
