import { Migration } from '@mikro-orm/migrations';

// The unified inbox and follow-ups (docs/inbox.md, docs/follow-ups.md).
export class Migration20261122221915_inbox extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "follow_up_reminders" ("id" uuid not null, "workspace_id" uuid not null, "lead_id" uuid not null, "kind" varchar(20) not null, "conversation_id" uuid null, "meeting_id" uuid null, "state" varchar(20) not null default 'open', "due_at" timestamptz not null, "summary" varchar(300) not null default '', "resolved_at" timestamptz null, "resolved_by" uuid null, "created_at" timestamptz not null, constraint "follow_up_reminders_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "follow_up_reminders_workspace_state_due_index" on "follow_up_reminders" ("workspace_id", "state", "due_at", "id");`,
    );
    this.addSql(
      `create index "follow_up_reminders_lead_id_state_index" on "follow_up_reminders" ("lead_id", "state");`,
    );
    this.addSql(
      `create table "inbox_syncs" ("account_id" uuid not null, "workspace_id" uuid not null, "state" varchar(20) not null, "run" int not null default 1, "cursor" varchar(2000) null, "pages" int not null default 0, "chats_seen" int not null default 0, "messages_stored" int not null default 0, "error_message" varchar(500) null, "started_at" timestamptz not null, "finished_at" timestamptz null, "updated_at" timestamptz not null, constraint "inbox_syncs_pkey" primary key ("account_id"));`,
    );
    this.addSql(
      `create table "lead_notes" ("id" uuid not null, "workspace_id" uuid not null, "lead_id" uuid not null, "author_id" uuid not null, "body" text not null, "created_at" timestamptz not null, constraint "lead_notes_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "lead_notes_lead_id_created_at_id_index" on "lead_notes" ("lead_id", "created_at", "id");`,
    );
    this.addSql(
      `create table "conversations" ("id" uuid not null, "workspace_id" uuid not null, "platform_account_id" uuid not null, "channel" varchar(20) not null, "connector_thread_id" varchar(200) not null, "counterpart" varchar(2048) not null, "counterpart_name" varchar(400) null, "contact_id" uuid null, "lead_id" uuid null, "campaign_id" uuid null, "last_message_at" timestamptz not null, "last_message_preview" varchar(300) not null default '', "last_direction" varchar(3) not null default 'in', "last_inbound_at" timestamptz null, "last_outbound_at" timestamptz null, "unread_count" int not null default 0, "read_at" timestamptz null, "ai_reply" jsonb null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "conversations_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "conversations_workspace_last_index" on "conversations" ("workspace_id", "last_message_at", "id");`,
    );
    this.addSql(`create index "conversations_lead_id_index" on "conversations" ("lead_id");`);
    this.addSql(
      `alter table "conversations" add constraint "conversations_platform_account_id_connector_thread_id_unique" unique ("platform_account_id", "connector_thread_id");`,
    );
    this.addSql(
      `create table "inbox_messages" ("id" uuid not null, "workspace_id" uuid not null, "conversation_id" uuid not null, "platform_account_id" uuid not null, "connector_message_id" varchar(200) null, "direction" varchar(3) not null, "kind" varchar(20) not null, "origin" varchar(20) null, "state" varchar(20) null, "sender" varchar(2048) not null, "sender_name" varchar(400) null, "subject" varchar(400) null, "body" text not null, "sent_at" timestamptz not null, "attachments" jsonb not null default '[]', "lead_id" uuid null, "scheduled_action_id" uuid null, "historical" boolean not null default false, "error_code" varchar(60) null, "created_by" uuid null, "created_at" timestamptz not null, constraint "inbox_messages_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "inbox_messages_conversation_sent_index" on "inbox_messages" ("conversation_id", "sent_at", "id");`,
    );
    this.addSql(`create index "inbox_messages_lead_kind_index" on "inbox_messages" ("lead_id", "kind");`);
    this.addSql(
      `alter table "inbox_messages" add constraint "inbox_messages_platform_account_id_connector_message_id_unique" unique ("platform_account_id", "connector_message_id");`,
    );
    this.addSql(
      `alter table "conversations" add constraint "conversations_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "conversations" add constraint "conversations_platform_account_id_foreign" foreign key ("platform_account_id") references "platform_accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "inbox_messages" add constraint "inbox_messages_conversation_id_foreign" foreign key ("conversation_id") references "conversations" ("id") on update cascade on delete cascade;`,
    );
    // One open reply reminder per conversation, one reminder per meeting.
    this.addSql(
      `create unique index "follow_up_reminders_open_reply_unique" on "follow_up_reminders" ("conversation_id") where "kind" = 'reply_waiting' and "state" = 'open';`,
    );
    this.addSql(
      `create unique index "follow_up_reminders_meeting_unique" on "follow_up_reminders" ("meeting_id") where "kind" = 'meeting_outcome';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "inbox_messages" cascade;`);
    this.addSql(`drop table if exists "conversations" cascade;`);
    this.addSql(`drop table if exists "follow_up_reminders" cascade;`);
    this.addSql(`drop table if exists "inbox_syncs" cascade;`);
    this.addSql(`drop table if exists "lead_notes" cascade;`);
  }
}
