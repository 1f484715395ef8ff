import { Migration } from '@mikro-orm/migrations';

export class Migration20261122140340_operator_threads extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "agent_threads" ("id" uuid not null, "workspace_id" uuid not null, "user_id" uuid not null, "app_id" uuid not null, "title" varchar(200) null, "message_count" int not null default 0, "last_message_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "agent_threads_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "agent_threads_workspace_id_index" on "agent_threads" ("workspace_id");`);
    this.addSql(`create index "agent_threads_app_id_index" on "agent_threads" ("app_id");`);
    this.addSql(
      `create index "agent_threads_user_id_app_id_updated_at_index" on "agent_threads" ("user_id", "app_id", "updated_at");`,
    );

    this.addSql(
      `create table "agent_turns" ("id" uuid not null, "thread_id" uuid not null, "workspace_id" uuid not null, "user_id" uuid not null, "app_id" uuid not null, "status" varchar(30) not null default 'running', "model_calls" int not null default 0, "input_tokens" int not null default 0, "output_tokens" int not null default 0, "cost_micros" bigint not null default 0, "credits" int not null default 0, "error_code" varchar(60) null, "error_message" varchar(500) null, "started_at" timestamptz not null, "finished_at" timestamptz null, constraint "agent_turns_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "agent_turns_thread_id_index" on "agent_turns" ("thread_id");`);
    this.addSql(`create index "agent_turns_workspace_id_index" on "agent_turns" ("workspace_id");`);

    this.addSql(
      `create table "agent_messages" ("id" uuid not null, "thread_id" uuid not null, "turn_id" uuid null, "seq" int not null, "role" varchar(20) not null, "content" text null, "tool_calls" jsonb null, "tool_call_id" varchar(100) null, "tool_name" varchar(100) null, "tool_status" varchar(30) null, "tool_result" jsonb null, "attachment_ids" jsonb not null default '[]', "created_at" timestamptz not null, constraint "agent_messages_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "agent_messages_turn_id_index" on "agent_messages" ("turn_id");`);
    this.addSql(
      `alter table "agent_messages" add constraint "agent_messages_thread_id_seq_unique" unique ("thread_id", "seq");`,
    );

    this.addSql(
      `create table "agent_confirmations" ("id" uuid not null, "thread_id" uuid not null, "turn_id" uuid not null, "user_id" uuid not null, "token_hash" varchar(64) not null, "tool_call_id" varchar(100) not null, "tool_name" varchar(100) not null, "args" jsonb not null, "args_hash" varchar(64) not null, "status" varchar(20) not null default 'pending', "expires_at" timestamptz not null, "decided_at" timestamptz null, "created_at" timestamptz not null, constraint "agent_confirmations_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "agent_confirmations_thread_id_index" on "agent_confirmations" ("thread_id");`);
    this.addSql(`create index "agent_confirmations_turn_id_index" on "agent_confirmations" ("turn_id");`);
    this.addSql(
      `alter table "agent_confirmations" add constraint "agent_confirmations_token_hash_unique" unique ("token_hash");`,
    );

    this.addSql(
      `create table "agent_attachments" ("id" uuid not null, "workspace_id" uuid not null, "thread_id" uuid not null, "user_id" uuid not null, "filename" varchar(255) not null, "content_type" varchar(100) not null, "size_bytes" int not null, "sha256" varchar(64) not null, "extraction_status" varchar(20) not null, "text" text null, "created_at" timestamptz not null, constraint "agent_attachments_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "agent_attachments_workspace_id_index" on "agent_attachments" ("workspace_id");`);
    this.addSql(`create index "agent_attachments_thread_id_index" on "agent_attachments" ("thread_id");`);

    this.addSql(
      `alter table "agent_threads" add constraint "agent_threads_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "agent_threads" add constraint "agent_threads_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "agent_threads" add constraint "agent_threads_app_id_foreign" foreign key ("app_id") references "apps" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "agent_turns" add constraint "agent_turns_thread_id_foreign" foreign key ("thread_id") references "agent_threads" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "agent_turns" add constraint "agent_turns_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "agent_messages" add constraint "agent_messages_thread_id_foreign" foreign key ("thread_id") references "agent_threads" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "agent_messages" add constraint "agent_messages_turn_id_foreign" foreign key ("turn_id") references "agent_turns" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "agent_confirmations" add constraint "agent_confirmations_thread_id_foreign" foreign key ("thread_id") references "agent_threads" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "agent_confirmations" add constraint "agent_confirmations_turn_id_foreign" foreign key ("turn_id") references "agent_turns" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "agent_attachments" add constraint "agent_attachments_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "agent_attachments" add constraint "agent_attachments_thread_id_foreign" foreign key ("thread_id") references "agent_threads" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "agent_turns" drop constraint "agent_turns_thread_id_foreign";`);

    this.addSql(`alter table "agent_messages" drop constraint "agent_messages_thread_id_foreign";`);

    this.addSql(`alter table "agent_confirmations" drop constraint "agent_confirmations_thread_id_foreign";`);

    this.addSql(`alter table "agent_attachments" drop constraint "agent_attachments_thread_id_foreign";`);

    this.addSql(`alter table "agent_messages" drop constraint "agent_messages_turn_id_foreign";`);

    this.addSql(`alter table "agent_confirmations" drop constraint "agent_confirmations_turn_id_foreign";`);

    this.addSql(`drop table if exists "agent_threads" cascade;`);

    this.addSql(`drop table if exists "agent_turns" cascade;`);

    this.addSql(`drop table if exists "agent_messages" cascade;`);

    this.addSql(`drop table if exists "agent_confirmations" cascade;`);

    this.addSql(`drop table if exists "agent_attachments" cascade;`);
  }
}
