import { Migration } from '@mikro-orm/migrations';

export class Migration20261122174154_campaigns extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "campaigns" ("id" uuid not null, "workspace_id" uuid not null, "app_id" uuid not null, "name" varchar(200) not null, "description" text null, "status" varchar(20) not null default 'draft', "time_zone" varchar(64) not null, "sending_windows" jsonb not null, "account_ids" jsonb not null default '[]', "rotation" varchar(20) not null default 'round_robin', "daily_new_lead_cap" int null, "stop_on_reply" boolean not null default true, "country_rule" jsonb null, "review_required" boolean not null default false, "message_mode" varchar(20) not null default 'template', "exclusive_leads" boolean not null default true, "step_version" int not null default 1, "created_by" uuid null, "activated_at" timestamptz null, "paused_at" timestamptz null, "completed_at" timestamptz null, "archived_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "campaigns_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "campaigns_app_id_index" on "campaigns" ("app_id");`);
    this.addSql(
      `create index "campaigns_workspace_id_app_id_created_at_index" on "campaigns" ("workspace_id", "app_id", "created_at");`,
    );

    this.addSql(
      `create table "enroll_operations" ("id" uuid not null, "workspace_id" uuid not null, "campaign_id" uuid not null, "list_id" uuid not null, "client_key" varchar(200) not null, "user_id" uuid not null, "status" varchar(20) not null default 'queued', "total" int not null default 0, "processed" int not null default 0, "enrolled" int not null default 0, "skipped" int not null default 0, "cursor" uuid null, "error_code" varchar(60) null, "error_message" varchar(500) null, "started_at" timestamptz null, "finished_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "enroll_operations_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "enroll_operations" add constraint "enroll_operations_campaign_id_client_key_unique" unique ("campaign_id", "client_key");`,
    );

    this.addSql(
      `create table "enroll_skips" ("operation_id" uuid not null, "lead_id" uuid not null, "reason" varchar(40) not null, constraint "enroll_skips_pkey" primary key ("operation_id", "lead_id"));`,
    );

    this.addSql(
      `create table "enrollments" ("id" uuid not null, "workspace_id" uuid not null, "campaign_id" uuid not null, "lead_id" uuid not null, "contact_id" uuid not null, "status" varchar(20) not null default 'active', "step_version" int not null, "current_position" int null, "current_step_id" uuid null, "account_id" uuid null, "operation_id" uuid null, "run" int not null default 1, "stop_reason" varchar(60) null, "replied_at" timestamptz null, "enrolled_at" timestamptz not null, "finished_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "enrollments_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "enrollments_lead_id_index" on "enrollments" ("lead_id");`);
    this.addSql(`create index "enrollments_campaign_id_status_index" on "enrollments" ("campaign_id", "status");`);
    this.addSql(
      `create index "enrollments_workspace_id_contact_id_status_index" on "enrollments" ("workspace_id", "contact_id", "status");`,
    );
    this.addSql(
      `alter table "enrollments" add constraint "enrollments_campaign_id_lead_id_unique" unique ("campaign_id", "lead_id");`,
    );

    this.addSql(
      `create table "scheduled_actions" ("id" uuid not null, "workspace_id" uuid not null, "campaign_id" uuid not null, "enrollment_id" uuid not null, "lead_id" uuid not null, "step_id" uuid not null, "step_position" int not null, "step_version" int not null, "type" varchar(20) not null, "state" varchar(20) not null default 'planned', "due_at" timestamptz not null, "account_id" uuid null, "content" jsonb null, "waiting_reason" varchar(60) null, "approved_at" timestamptz null, "approved_by" uuid null, "executed_at" timestamptz null, "connector_message_id" varchar(200) null, "connector_thread_id" varchar(200) null, "error_code" varchar(60) null, "error_message" varchar(500) null, "attempts" int not null default 0, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "scheduled_actions_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "scheduled_actions_campaign_id_state_due_at_index" on "scheduled_actions" ("campaign_id", "state", "due_at");`,
    );
    this.addSql(
      `create index "scheduled_actions_enrollment_id_created_at_index" on "scheduled_actions" ("enrollment_id", "created_at");`,
    );
    this.addSql(
      `create index "scheduled_actions_workspace_id_lead_id_index" on "scheduled_actions" ("workspace_id", "lead_id");`,
    );

    this.addSql(
      `create table "campaign_step_versions" ("campaign_id" uuid not null, "version" int not null, "steps" jsonb not null, "created_at" timestamptz not null, constraint "campaign_step_versions_pkey" primary key ("campaign_id", "version"));`,
    );

    this.addSql(
      `create table "campaign_steps" ("id" uuid not null, "campaign_id" uuid not null, "position" int not null, "type" varchar(20) not null, "config" jsonb not null default '{}', "message_mode" varchar(20) null, "attachment_name" varchar(255) null, "attachment_type" varchar(100) null, "attachment_size" int null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "campaign_steps_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "campaign_steps_campaign_id_position_index" on "campaign_steps" ("campaign_id", "position");`,
    );

    this.addSql(
      `create table "campaign_step_attachments" ("step_id" uuid not null, "data" bytea not null, "sha256" varchar(64) not null, "created_at" timestamptz not null, constraint "campaign_step_attachments_pkey" primary key ("step_id"));`,
    );

    this.addSql(
      `create table "campaign_signals" ("campaign_id" uuid not null, "signal_id" uuid not null, "created_at" timestamptz not null, constraint "campaign_signals_pkey" primary key ("campaign_id", "signal_id"));`,
    );
    this.addSql(`create index "campaign_signals_signal_id_index" on "campaign_signals" ("signal_id");`);

    this.addSql(
      `alter table "campaigns" add constraint "campaigns_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "campaigns" add constraint "campaigns_app_id_foreign" foreign key ("app_id") references "apps" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "enroll_operations" add constraint "enroll_operations_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "enroll_operations" add constraint "enroll_operations_campaign_id_foreign" foreign key ("campaign_id") references "campaigns" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "enroll_skips" add constraint "enroll_skips_operation_id_foreign" foreign key ("operation_id") references "enroll_operations" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "enrollments" add constraint "enrollments_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "enrollments" add constraint "enrollments_campaign_id_foreign" foreign key ("campaign_id") references "campaigns" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "enrollments" add constraint "enrollments_lead_id_foreign" foreign key ("lead_id") references "leads" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "scheduled_actions" add constraint "scheduled_actions_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "scheduled_actions" add constraint "scheduled_actions_campaign_id_foreign" foreign key ("campaign_id") references "campaigns" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "scheduled_actions" add constraint "scheduled_actions_enrollment_id_foreign" foreign key ("enrollment_id") references "enrollments" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "campaign_step_versions" add constraint "campaign_step_versions_campaign_id_foreign" foreign key ("campaign_id") references "campaigns" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "campaign_steps" add constraint "campaign_steps_campaign_id_foreign" foreign key ("campaign_id") references "campaigns" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "campaign_step_attachments" add constraint "campaign_step_attachments_step_id_foreign" foreign key ("step_id") references "campaign_steps" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "campaign_signals" add constraint "campaign_signals_campaign_id_foreign" foreign key ("campaign_id") references "campaigns" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "campaign_signals" add constraint "campaign_signals_signal_id_foreign" foreign key ("signal_id") references "agent_signals" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "enroll_operations" drop constraint "enroll_operations_campaign_id_foreign";`);

    this.addSql(`alter table "enrollments" drop constraint "enrollments_campaign_id_foreign";`);

    this.addSql(`alter table "scheduled_actions" drop constraint "scheduled_actions_campaign_id_foreign";`);

    this.addSql(`alter table "campaign_step_versions" drop constraint "campaign_step_versions_campaign_id_foreign";`);

    this.addSql(`alter table "campaign_steps" drop constraint "campaign_steps_campaign_id_foreign";`);

    this.addSql(`alter table "campaign_signals" drop constraint "campaign_signals_campaign_id_foreign";`);

    this.addSql(`alter table "enroll_skips" drop constraint "enroll_skips_operation_id_foreign";`);

    this.addSql(`alter table "scheduled_actions" drop constraint "scheduled_actions_enrollment_id_foreign";`);

    this.addSql(`alter table "campaign_step_attachments" drop constraint "campaign_step_attachments_step_id_foreign";`);

    this.addSql(`drop table if exists "campaigns" cascade;`);

    this.addSql(`drop table if exists "enroll_operations" cascade;`);

    this.addSql(`drop table if exists "enroll_skips" cascade;`);

    this.addSql(`drop table if exists "enrollments" cascade;`);

    this.addSql(`drop table if exists "scheduled_actions" cascade;`);

    this.addSql(`drop table if exists "campaign_step_versions" cascade;`);

    this.addSql(`drop table if exists "campaign_steps" cascade;`);

    this.addSql(`drop table if exists "campaign_step_attachments" cascade;`);

    this.addSql(`drop table if exists "campaign_signals" cascade;`);
  }
}
