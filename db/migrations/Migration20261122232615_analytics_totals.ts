import { Migration } from '@mikro-orm/migrations';

export class Migration20261122232615_analytics_totals extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "analytics_app_days" ("workspace_id" uuid not null, "app_id" uuid not null, "day" timestamptz not null, "discovered" int not null default 0, "approved" int not null default 0, "rejected" int not null default 0, "enrolled" int not null default 0, "contacted" int not null default 0, "sent" int not null default 0, "opened" int not null default 0, "accepted" int not null default 0, "replied" int not null default 0, "failed" int not null default 0, "bounced" int not null default 0, "replied_leads" int not null default 0, "meetings" int not null default 0, constraint "analytics_app_days_pkey" primary key ("workspace_id", "app_id", "day"));`,
    );

    this.addSql(
      `create table "analytics_series_days" ("workspace_id" uuid not null, "campaign_id" uuid not null, "app_id" uuid not null, "day" timestamptz not null, "discovered" int not null default 0, "approved" int not null default 0, "rejected" int not null default 0, "enrolled" int not null default 0, "contacted" int not null default 0, "sent" int not null default 0, "opened" int not null default 0, "accepted" int not null default 0, "replied" int not null default 0, "failed" int not null default 0, "bounced" int not null default 0, "replied_leads" int not null default 0, "meetings" int not null default 0, constraint "analytics_series_days_pkey" primary key ("workspace_id", "campaign_id", "app_id", "day"));`,
    );

    // From the hours already rolled up (the next rollups keep them up to date).
    this.addSql(
      `insert into "analytics_series_days" (workspace_id, campaign_id, app_id, day, discovered, approved, rejected, enrolled, contacted, sent, opened, accepted, replied, failed, bounced, replied_leads, meetings) select workspace_id, campaign_id, app_id, date_trunc('day', hour, 'UTC'), sum(discovered), sum(approved), sum(rejected), sum(enrolled), sum(contacted), sum(sent), sum(opened), sum(accepted), sum(replied), sum(failed), sum(bounced), sum(replied_leads), sum(meetings) from analytics_series_hours group by 1, 2, 3, 4;`,
    );
    this.addSql(
      `insert into "analytics_app_days" (workspace_id, app_id, day, discovered, approved, rejected, enrolled, contacted, sent, opened, accepted, replied, failed, bounced, replied_leads, meetings) select workspace_id, app_id, date_trunc('day', hour, 'UTC'), sum(discovered), sum(approved), sum(rejected), sum(enrolled), sum(contacted), sum(sent), sum(opened), sum(accepted), sum(replied), sum(failed), sum(bounced), sum(replied_leads), sum(meetings) from analytics_app_hours group by 1, 2, 3;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "analytics_app_days" cascade;`);

    this.addSql(`drop table if exists "analytics_series_days" cascade;`);
  }
}
