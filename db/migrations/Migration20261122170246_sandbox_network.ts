import { Migration } from '@mikro-orm/migrations';

export class Migration20261122170246_sandbox_network extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "connector_events" ("id" uuid not null, "event_id" varchar(200) not null, "connector" varchar(20) not null, "type" varchar(40) not null, "connector_account_id" varchar(200) not null, "platform_account_id" uuid null, "payload" jsonb not null, "received_at" timestamptz not null, "handled_at" timestamptz null, constraint "connector_events_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "connector_events" add constraint "connector_events_event_id_unique" unique ("event_id");`,
    );
    this.addSql(
      `create index "connector_events_platform_account_id_type_received_at_index" on "connector_events" ("platform_account_id", "type", "received_at");`,
    );

    this.addSql(
      `create table "sandbox_accounts" ("id" varchar(200) not null, "channel" varchar(20) not null, "account_id" varchar(200) not null, "display_name" varchar(200) not null, "state" varchar(20) not null, "reason" varchar(100) null, "address" varchar(2048) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "sandbox_accounts_pkey" primary key ("id"));`,
    );

    this.addSql(
      `create table "sandbox_events" ("id" varchar(200) not null, "connector_account_id" varchar(200) not null, "type" varchar(40) not null, "payload" jsonb not null, "due_at" timestamptz not null, "delivered_at" timestamptz null, "dropped" varchar(100) null, constraint "sandbox_events_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "sandbox_events_due_idx" on "sandbox_events" ("due_at") where "delivered_at" is null;`);

    this.addSql(
      `create table "sandbox_invitations" ("id" varchar(200) not null, "connector_account_id" varchar(200) not null, "recipient" varchar(2048) not null, "idempotency_key" varchar(200) not null, "body" text not null, "state" varchar(20) not null, "sent_at" timestamptz not null, "accepted_at" timestamptz null, constraint "sandbox_invitations_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "sandbox_invitations_connector_account_id_state_id_index" on "sandbox_invitations" ("connector_account_id", "state", "id");`,
    );
    this.addSql(
      `alter table "sandbox_invitations" add constraint "sandbox_invitations_connector_account_id_idempotency_key_unique" unique ("connector_account_id", "idempotency_key");`,
    );

    this.addSql(
      `create table "sandbox_messages" ("id" varchar(200) not null, "connector_account_id" varchar(200) not null, "thread_id" varchar(200) not null, "direction" varchar(3) not null, "kind" varchar(10) not null, "counterpart" varchar(2048) not null, "from_address" varchar(2048) not null, "subject" text null, "body" text not null, "idempotency_key" varchar(200) null, "sent_at" timestamptz not null, "attachments" jsonb not null default '[]', constraint "sandbox_messages_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "sandbox_messages_connector_account_id_thread_id_sent_at_index" on "sandbox_messages" ("connector_account_id", "thread_id", "sent_at");`,
    );
    this.addSql(
      `alter table "sandbox_messages" add constraint "sandbox_messages_connector_account_id_idempotency_key_unique" unique ("connector_account_id", "idempotency_key");`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "connector_events" cascade;`);

    this.addSql(`drop table if exists "sandbox_accounts" cascade;`);

    this.addSql(`drop table if exists "sandbox_events" cascade;`);

    this.addSql(`drop table if exists "sandbox_invitations" cascade;`);

    this.addSql(`drop table if exists "sandbox_messages" cascade;`);
  }
}
