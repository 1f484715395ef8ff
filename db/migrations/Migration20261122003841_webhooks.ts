import { Migration } from '@mikro-orm/migrations';

export class Migration20261122003841_webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "webhook_deliveries" ("id" uuid not null, "subscription_id" uuid not null, "workspace_id" uuid not null, "event_id" uuid null, "event_name" varchar(100) not null, "success" boolean not null, "status_code" int null, "duration_ms" int not null, "error_class" varchar(40) null, "error" text null, "response_excerpt" text null, "created_at" timestamptz not null, constraint "webhook_deliveries_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "webhook_deliveries_subscription_id_index" on "webhook_deliveries" ("subscription_id");`);
    this.addSql(`create index "webhook_deliveries_workspace_id_index" on "webhook_deliveries" ("workspace_id");`);
    this.addSql(`create index "webhook_deliveries_event_id_index" on "webhook_deliveries" ("event_id");`);
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_subscription_id_event_id_unique" unique ("subscription_id", "event_id");`,
    );

    this.addSql(
      `create table "webhook_events" ("id" uuid not null, "workspace_id" uuid not null, "name" varchar(100) not null, "body" text not null, "created_at" timestamptz not null, "dispatched_at" timestamptz null, constraint "webhook_events_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "webhook_events_workspace_id_index" on "webhook_events" ("workspace_id");`);
    this.addSql(`create index "webhook_events_pending_idx" on "webhook_events" ("id") where "dispatched_at" is null;`);

    this.addSql(
      `create table "integrations" ("id" uuid not null, "workspace_id" uuid not null, "provider" varchar(100) not null, "name" varchar(200) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "integrations_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "integrations_workspace_id_index" on "integrations" ("workspace_id");`);

    this.addSql(
      `create table "webhook_subscriptions" ("id" uuid not null, "workspace_id" uuid not null, "integration_id" uuid null, "url" varchar(2048) not null, "events" jsonb not null, "active" boolean not null default true, "secret_encrypted" text not null, "secret_last4" varchar(4) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "webhook_subscriptions_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "webhook_subscriptions_workspace_id_index" on "webhook_subscriptions" ("workspace_id");`);
    this.addSql(
      `create index "webhook_subscriptions_integration_id_index" on "webhook_subscriptions" ("integration_id");`,
    );

    this.addSql(
      `alter table "integrations" add constraint "integrations_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "webhook_subscriptions" add constraint "webhook_subscriptions_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_subscriptions" add constraint "webhook_subscriptions_integration_id_foreign" foreign key ("integration_id") references "integrations" ("id") on update cascade on delete set null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "webhook_subscriptions" drop constraint "webhook_subscriptions_integration_id_foreign";`);

    this.addSql(`drop table if exists "webhook_deliveries" cascade;`);

    this.addSql(`drop table if exists "webhook_events" cascade;`);

    this.addSql(`drop table if exists "integrations" cascade;`);

    this.addSql(`drop table if exists "webhook_subscriptions" cascade;`);
  }
}
