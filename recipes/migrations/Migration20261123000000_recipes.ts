import { Migration } from '@mikro-orm/migrations';

/** Recipe queue items' own fields, beside their `job` row (deleted with it). */
export class Migration20261123000000_recipes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table "recipe_item" (
        "job_id" varchar(255) not null,
        "url" text not null,
        "url_key" text not null,
        "phases" jsonb not null,
        "results" jsonb not null default '{}',
        "extraction" jsonb null,
        "manager" varchar(255) null,
        "manager_recipe_id" varchar(255) null,
        "runs" int not null default 1,
        constraint "recipe_item_pkey" primary key ("job_id")
      );`);
    // One item per post: POST /api/queue answers the existing item for a URL it already has.
    this.addSql(`alter table "recipe_item" add constraint "recipe_item_url_key_unique" unique ("url_key");`);
    this.addSql(
      `alter table "recipe_item" add constraint "recipe_item_job_id_foreign" foreign key ("job_id") references "job" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "recipe_item";`);
  }
}
