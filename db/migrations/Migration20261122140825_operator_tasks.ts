import { Migration } from '@mikro-orm/migrations';

export class Migration20261122140825_operator_tasks extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "operator_notification_preferences" ("id" uuid not null, "user_id" uuid not null, "task_finished" varchar(10) not null default 'in_app', "confirmation_pending" varchar(10) not null default 'in_app', "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "operator_notification_preferences_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "operator_notification_preferences" add constraint "operator_notification_preferences_user_id_unique" unique ("user_id");`,
    );

    this.addSql(
      `create table "operator_tasks" ("id" uuid not null, "workspace_id" uuid not null, "user_id" uuid not null, "app_id" uuid not null, "acting_as_owner_id" uuid null, "title" varchar(200) not null, "status" varchar(20) not null default 'queued', "on_failure" varchar(10) not null default 'stop', "action_count" int not null, "run" int not null default 1, "event_count" int not null default 0, "created_at" timestamptz not null, "updated_at" timestamptz not null, "started_at" timestamptz null, "finished_at" timestamptz null, constraint "operator_tasks_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "operator_tasks_user_id_index" on "operator_tasks" ("user_id");`);
    this.addSql(`create index "operator_tasks_app_id_index" on "operator_tasks" ("app_id");`);
    this.addSql(
      `create index "operator_tasks_workspace_id_user_id_status_index" on "operator_tasks" ("workspace_id", "user_id", "status");`,
    );
    this.addSql(
      `create index "operator_tasks_workspace_id_user_id_finished_at_index" on "operator_tasks" ("workspace_id", "user_id", "finished_at");`,
    );

    this.addSql(
      `create table "operator_task_events" ("id" uuid not null, "task_id" uuid not null, "seq" int not null, "type" varchar(40) not null, "action_id" uuid null, "position" int null, "from_status" varchar(20) null, "to_status" varchar(20) null, "by" uuid null, "data" jsonb null, "created_at" timestamptz not null, constraint "operator_task_events_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "operator_task_events" add constraint "operator_task_events_task_id_seq_unique" unique ("task_id", "seq");`,
    );

    this.addSql(
      `create table "operator_task_actions" ("id" uuid not null, "task_id" uuid not null, "position" int not null, "tool" varchar(100) not null, "args" jsonb not null, "status" varchar(20) not null default 'pending', "attempts" int not null default 0, "result" jsonb null, "error_code" varchar(60) null, "error_message" varchar(1000) null, "started_at" timestamptz null, "finished_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "operator_task_actions_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "operator_task_actions_tool_status_index" on "operator_task_actions" ("tool", "status");`,
    );
    this.addSql(
      `alter table "operator_task_actions" add constraint "operator_task_actions_task_id_position_unique" unique ("task_id", "position");`,
    );

    this.addSql(
      `create table "operator_memories" ("id" uuid not null, "workspace_id" uuid not null, "user_id" uuid not null, "app_id" uuid null, "scope" varchar(36) not null, "key" varchar(100) not null, "value" text not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "operator_memories_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "operator_memories_app_id_index" on "operator_memories" ("app_id");`);
    this.addSql(
      `create index "operator_memories_user_id_workspace_id_updated_at_index" on "operator_memories" ("user_id", "workspace_id", "updated_at");`,
    );
    this.addSql(
      `alter table "operator_memories" add constraint "operator_memories_workspace_id_user_id_scope_key_unique" unique ("workspace_id", "user_id", "scope", "key");`,
    );

    this.addSql(
      `alter table "operator_notification_preferences" add constraint "operator_notification_preferences_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "operator_tasks" add constraint "operator_tasks_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "operator_tasks" add constraint "operator_tasks_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "operator_tasks" add constraint "operator_tasks_app_id_foreign" foreign key ("app_id") references "apps" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "operator_task_events" add constraint "operator_task_events_task_id_foreign" foreign key ("task_id") references "operator_tasks" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "operator_task_actions" add constraint "operator_task_actions_task_id_foreign" foreign key ("task_id") references "operator_tasks" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "operator_memories" add constraint "operator_memories_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "operator_memories" add constraint "operator_memories_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "operator_memories" add constraint "operator_memories_app_id_foreign" foreign key ("app_id") references "apps" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "operator_task_events" drop constraint "operator_task_events_task_id_foreign";`);

    this.addSql(`alter table "operator_task_actions" drop constraint "operator_task_actions_task_id_foreign";`);

    this.addSql(`drop table if exists "operator_notification_preferences" cascade;`);

    this.addSql(`drop table if exists "operator_tasks" cascade;`);

    this.addSql(`drop table if exists "operator_task_events" cascade;`);

    this.addSql(`drop table if exists "operator_task_actions" cascade;`);

    this.addSql(`drop table if exists "operator_memories" cascade;`);
  }
}
