import { Migration } from '@mikro-orm/migrations';

export class Migration20261127100000_inbox_drain extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "inbox_drains" ("account_id" uuid not null, "until" timestamptz not null, constraint "inbox_drains_pkey" primary key ("account_id"));`,
    );
    this.addSql(
      `alter table "inbox_drains" add constraint "inbox_drains_account_id_foreign" foreign key ("account_id") references "platform_accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `create index "connector_events_inbox_pending_idx" on "connector_events" ("platform_account_id", "received_at", "id") where "handled_at" is null and "type" in ('message.received', 'reaction.received');`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "connector_events_inbox_pending_idx";`);
    this.addSql(`drop table if exists "inbox_drains" cascade;`);
  }
}
