import { Migration } from '@mikro-orm/migrations';

/** Browser push subscriptions, shared by every service that sends notifications. */
export class Migration20261122000100_push extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table "push_subscription" (
        "id" varchar(255) not null primary key,
        "client_id" varchar(255) not null,
        "endpoint" text not null,
        "p256dh" varchar(255) not null,
        "auth" varchar(255) not null,
        "expiration_time" bigint null,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "last_success_at" timestamptz null,
        "last_error" text null
      );`);
    this.addSql(
      `alter table "push_subscription" add constraint "push_subscription_client_id_endpoint_unique" unique ("client_id", "endpoint");`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "push_subscription";`);
  }
}
