import { Migration } from '@mikro-orm/migrations';

/** What an item asked for beyond its URL (the language and unit system its recipe is written in). */
export class Migration20261126000000_recipe_options extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "recipe_item" add column "options" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "recipe_item" drop column if exists "options";`);
  }
}
