import { Migration } from '@mikro-orm/migrations';

// The executor's records of what happened after a send: the invitation's acceptance and the lead's
// reply (condition steps and stats read them), and the lookup of a reply by its thread.
export class Migration20261122180000_executor extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "scheduled_actions" add column "accepted_at" timestamptz null, add column "replied_at" timestamptz null;`,
    );
    this.addSql(
      `create index "scheduled_actions_connector_thread_id_index" on "scheduled_actions" ("connector_thread_id") where connector_thread_id is not null;`,
    );
    this.addSql(
      `create index "scheduled_actions_connector_message_id_index" on "scheduled_actions" ("connector_message_id") where connector_message_id is not null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "scheduled_actions_connector_message_id_index";`);
    this.addSql(`drop index if exists "scheduled_actions_connector_thread_id_index";`);
    this.addSql(`alter table "scheduled_actions" drop column "accepted_at", drop column "replied_at";`);
  }
}
