import { Migration } from '@mikro-orm/migrations';

export class Migration20261122231711_analytics_series extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "analytics_app_hours" ("workspace_id" uuid not null, "app_id" uuid not null, "hour" timestamptz not null, "discovered" int not null default 0, "approved" int not null default 0, "rejected" int not null default 0, "enrolled" int not null default 0, "contacted" int not null default 0, "sent" int not null default 0, "opened" int not null default 0, "accepted" int not null default 0, "replied" int not null default 0, "failed" int not null default 0, "bounced" int not null default 0, "replied_leads" int not null default 0, "meetings" int not null default 0, constraint "analytics_app_hours_pkey" primary key ("workspace_id", "app_id", "hour"));`,
    );

    this.addSql(`alter table "analytics_series_hours" drop constraint "analytics_series_hours_pkey";`);

    this.addSql(
      `alter table "analytics_series_hours" add constraint "analytics_series_hours_pkey" primary key ("workspace_id", "campaign_id", "app_id", "hour");`,
    );
    // The product series from the rollup already there (the next rollups keep it up to date).
    this.addSql(
      `insert into "analytics_app_hours" (workspace_id, app_id, hour, discovered, approved, rejected, enrolled, contacted, sent, opened, accepted, replied, failed, bounced, replied_leads, meetings) select workspace_id, app_id, hour, sum(discovered), sum(approved), sum(rejected), sum(enrolled), sum(contacted), sum(sent), sum(opened), sum(accepted), sum(replied), sum(failed), sum(bounced), sum(replied_leads), sum(meetings) from analytics_hours group by 1, 2, 3;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "analytics_app_hours" cascade;`);

    this.addSql(`alter table "analytics_series_hours" drop constraint "analytics_series_hours_pkey";`);

    this.addSql(
      `alter table "analytics_series_hours" add constraint "analytics_series_hours_pkey" primary key ("workspace_id", "hour", "app_id", "campaign_id");`,
    );
  }
}
