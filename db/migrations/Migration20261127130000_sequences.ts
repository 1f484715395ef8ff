import { Migration } from '@mikro-orm/migrations';

// Issue 31: A/B variants with a winner, recipient-local sending windows, open and click tracking.
export class Migration20261127130000_sequences extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "campaigns" add column "window_time_zone" varchar(20) not null default 'campaign', add column "track_opens" boolean not null default false, add column "track_clicks" boolean not null default false;`,
    );
    this.addSql(`alter table "campaign_steps" add column "variants" jsonb null, add column "winner_rule" jsonb null;`);
    this.addSql(`alter table "contacts" add column "time_zone" varchar(64) null;`);
    this.addSql(
      `alter table "scheduled_actions" add column "variant_id" uuid null, add column "clicked_at" timestamptz null;`,
    );
    this.addSql(
      `create index "scheduled_actions_step_variant_idx" on "scheduled_actions" ("step_id", "variant_id") where "variant_id" is not null;`,
    );
    this.addSql(
      `create table "step_winners" ("step_id" uuid not null, "campaign_id" uuid not null, "workspace_id" uuid not null, "variant_id" uuid not null, "chosen_by" varchar(10) not null, "user_id" uuid null, "evidence" jsonb null, "chosen_at" timestamptz not null, constraint "step_winners_pkey" primary key ("step_id"));`,
    );
    this.addSql(
      `alter table "step_winners" add constraint "step_winners_campaign_id_foreign" foreign key ("campaign_id") references "campaigns" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`create index "step_winners_campaign_id_index" on "step_winners" ("campaign_id");`);
    this.addSql(
      `create table "tracking_events" ("id" uuid not null, "workspace_id" uuid not null, "campaign_id" uuid not null, "action_id" uuid not null, "kind" varchar(10) not null, "link_index" smallint null, "class" varchar(10) not null, "reason" varchar(40) null, "source" varchar(40) null, "occurred_at" timestamptz not null, constraint "tracking_events_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "tracking_events" add constraint "tracking_events_action_id_foreign" foreign key ("action_id") references "scheduled_actions" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`create index "tracking_events_action_idx" on "tracking_events" ("action_id", "occurred_at");`);
    this.addSql(`create index "tracking_events_campaign_idx" on "tracking_events" ("campaign_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "tracking_events" cascade;`);
    this.addSql(`drop table if exists "step_winners" cascade;`);
    this.addSql(`drop index if exists "scheduled_actions_step_variant_idx";`);
    this.addSql(`alter table "scheduled_actions" drop column "variant_id", drop column "clicked_at";`);
    this.addSql(`alter table "contacts" drop column "time_zone";`);
    this.addSql(`alter table "campaign_steps" drop column "variants", drop column "winner_rule";`);
    this.addSql(
      `alter table "campaigns" drop column "window_time_zone", drop column "track_opens", drop column "track_clicks";`,
    );
  }
}
