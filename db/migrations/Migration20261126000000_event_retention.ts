import { Migration } from '@mikro-orm/migrations';

/** Old job events are pruned by age (jobs/housekeeping.ts); the index finds them without scanning the log. */
export class Migration20261126000000_event_retention extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "job_event_created_at_index" on "job_event" ("created_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "job_event_created_at_index";`);
  }
}
