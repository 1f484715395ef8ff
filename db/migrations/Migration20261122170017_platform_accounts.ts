import { Migration } from '@mikro-orm/migrations';

export class Migration20261122170017_platform_accounts extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "platform_accounts" ("id" uuid not null, "workspace_id" uuid not null, "channel" varchar(20) not null, "display_name" varchar(200) not null, "time_zone" varchar(64) not null, "working_hours" jsonb not null, "status" varchar(20) not null default 'pending', "connector" varchar(20) not null, "connector_account_id" varchar(200) null, "address" varchar(2048) null, "status_reason" varchar(100) null, "status_checked_at" timestamptz null, "connected_at" timestamptz null, "disconnected_at" timestamptz null, "credentials_sealed" text null, "signature" text null, "profile" jsonb null, "profile_fetched_at" timestamptz null, "caps" jsonb not null default '{}', "min_gap_seconds" int not null default 90, "jitter_seconds" int not null default 60, "warmup_started_at" timestamptz null, "warmup_skipped_at" timestamptz null, "invite_withdrawal_days" int null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "platform_accounts_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "platform_accounts_workspace_id_created_at_index" on "platform_accounts" ("workspace_id", "created_at");`,
    );
    this.addSql(`create index "platform_accounts_status_id_index" on "platform_accounts" ("status", "id");`);
    this.addSql(
      `alter table "platform_accounts" add constraint "platform_accounts_connector_connector_account_id_unique" unique ("connector", "connector_account_id");`,
    );

    this.addSql(
      `alter table "platform_accounts" add constraint "platform_accounts_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "platform_accounts" cascade;`);
  }
}
