import { Migration } from '@mikro-orm/migrations';

export class Migration20261122225954_analytics_insights extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "analytics_days" ("workspace_id" uuid not null, "day" timestamptz not null, "app_id" uuid not null, "campaign_id" uuid not null, "step_id" uuid not null, "agent_id" uuid not null, "signal_key" varchar(100) not null, "source" varchar(40) not null, "discovered" int not null default 0, "approved" int not null default 0, "rejected" int not null default 0, "enrolled" int not null default 0, "contacted" int not null default 0, "sent" int not null default 0, "opened" int not null default 0, "accepted" int not null default 0, "replied" int not null default 0, "failed" int not null default 0, "bounced" int not null default 0, "replied_leads" int not null default 0, "meetings" int not null default 0, constraint "analytics_days_pkey" primary key ("workspace_id", "day", "app_id", "campaign_id", "step_id", "agent_id", "signal_key", "source"));`,
    );

    this.addSql(
      `create table "analytics_hours" ("workspace_id" uuid not null, "hour" timestamptz not null, "app_id" uuid not null, "campaign_id" uuid not null, "step_id" uuid not null, "agent_id" uuid not null, "signal_key" varchar(100) not null, "source" varchar(40) not null, "discovered" int not null default 0, "approved" int not null default 0, "rejected" int not null default 0, "enrolled" int not null default 0, "contacted" int not null default 0, "sent" int not null default 0, "opened" int not null default 0, "accepted" int not null default 0, "replied" int not null default 0, "failed" int not null default 0, "bounced" int not null default 0, "replied_leads" int not null default 0, "meetings" int not null default 0, constraint "analytics_hours_pkey" primary key ("workspace_id", "hour", "app_id", "campaign_id", "step_id", "agent_id", "signal_key", "source"));`,
    );

    this.addSql(
      `create table "analytics_series_hours" ("workspace_id" uuid not null, "hour" timestamptz not null, "app_id" uuid not null, "campaign_id" uuid not null, "discovered" int not null default 0, "approved" int not null default 0, "rejected" int not null default 0, "enrolled" int not null default 0, "contacted" int not null default 0, "sent" int not null default 0, "opened" int not null default 0, "accepted" int not null default 0, "replied" int not null default 0, "failed" int not null default 0, "bounced" int not null default 0, "replied_leads" int not null default 0, "meetings" int not null default 0, constraint "analytics_series_hours_pkey" primary key ("workspace_id", "hour", "app_id", "campaign_id"));`,
    );

    this.addSql(
      `create table "insights" ("id" uuid not null, "workspace_id" uuid not null, "app_id" uuid null, "kind" varchar(40) not null, "subject_id" uuid not null, "dedupe_key" varchar(120) not null, "title" varchar(300) not null, "detail" jsonb not null, "action" jsonb not null, "status" varchar(20) not null default 'open', "snoozed_until" timestamptz null, "applied_at" timestamptz null, "applied_by" uuid null, "result" jsonb null, "refreshed_at" timestamptz not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "insights_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "insights_workspace_id_status_id_index" on "insights" ("workspace_id", "status", "id");`);
    this.addSql(
      `alter table "insights" add constraint "insights_workspace_id_dedupe_key_unique" unique ("workspace_id", "dedupe_key");`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "analytics_days" cascade;`);

    this.addSql(`drop table if exists "analytics_hours" cascade;`);

    this.addSql(`drop table if exists "analytics_series_hours" cascade;`);

    this.addSql(`drop table if exists "insights" cascade;`);
  }
}
