import { Migration } from '@mikro-orm/migrations';

export class Migration20261122225921_integrations extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "partner_sandbox_records" ("id" uuid not null, "account_id" varchar(200) not null, "record_kind" varchar(20) not null, "external_id" varchar(200) not null, "partner_id" varchar(200) not null, "fields" jsonb not null, "versions" int not null default 1, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "partner_sandbox_records_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "partner_sandbox_records" add constraint "partner_sandbox_records_account_id_record_kind_ex_e056b_unique" unique ("account_id", "record_kind", "external_id");`,
    );

    this.addSql(
      `create table "partner_oauth_states" ("id" uuid not null, "workspace_id" uuid not null, "user_id" uuid not null, "provider" varchar(40) not null, "state_hash" varchar(64) not null, "code_verifier_sealed" text null, "redirect_uri" varchar(2048) not null, "expires_at" timestamptz not null, "used_at" timestamptz null, "created_at" timestamptz not null, constraint "partner_oauth_states_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "partner_oauth_states_workspace_id_index" on "partner_oauth_states" ("workspace_id");`);
    this.addSql(
      `alter table "partner_oauth_states" add constraint "partner_oauth_states_state_hash_unique" unique ("state_hash");`,
    );

    this.addSql(
      `create table "partner_sync_cursors" ("id" uuid not null, "integration_id" uuid not null, "record_kind" varchar(20) not null, "cursor_at" timestamptz null, "cursor_id" uuid null, "pushed" int not null default 0, "updated_at" timestamptz not null, constraint "partner_sync_cursors_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "partner_sync_cursors" add constraint "partner_sync_cursors_integration_id_record_kind_unique" unique ("integration_id", "record_kind");`,
    );

    this.addSql(
      `create table "partner_pushes" ("id" uuid not null, "integration_id" uuid not null, "record_kind" varchar(20) not null, "record_id" uuid not null, "hash" varchar(64) not null, "partner_id" varchar(200) null, "pushed_at" timestamptz not null, constraint "partner_pushes_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "partner_pushes" add constraint "partner_pushes_integration_id_record_kind_record_id_unique" unique ("integration_id", "record_kind", "record_id");`,
    );

    this.addSql(
      `create table "partner_events" ("id" uuid not null, "workspace_id" uuid not null, "integration_id" uuid not null, "kind" varchar(30) not null, "record_kind" varchar(20) not null, "record_id" uuid not null, "state" varchar(20) not null default 'pending', "details" jsonb not null, "resolution" varchar(30) null, "confirmed_by_user_id" uuid null, "confirmed_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "partner_events_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "partner_events_integration_id_index" on "partner_events" ("integration_id");`);
    this.addSql(`create index "partner_events_workspace_id_id_index" on "partner_events" ("workspace_id", "id");`);
    this.addSql(
      `create unique index "partner_events_pending_unique" on "partner_events" ("integration_id", "record_kind", "record_id") where "state" = 'pending';`,
    );

    this.addSql(
      `alter table "partner_oauth_states" add constraint "partner_oauth_states_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "partner_sync_cursors" add constraint "partner_sync_cursors_integration_id_foreign" foreign key ("integration_id") references "integrations" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "partner_pushes" add constraint "partner_pushes_integration_id_foreign" foreign key ("integration_id") references "integrations" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "partner_events" add constraint "partner_events_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "partner_events" add constraint "partner_events_integration_id_foreign" foreign key ("integration_id") references "integrations" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "integrations" add column "status" varchar(30) not null default 'active', add column "status_reason" varchar(300) null, add column "credentials_sealed" text null, add column "credential_hint" varchar(300) null, add column "account_id" varchar(200) null, add column "account_name" varchar(300) null, add column "created_by_user_id" uuid null, add column "last_verified_at" timestamptz null, add column "last_tested_at" timestamptz null, add column "last_test_ok" boolean null, add column "last_sync_at" timestamptz null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "partner_sandbox_records" cascade;`);

    this.addSql(`drop table if exists "partner_oauth_states" cascade;`);

    this.addSql(`drop table if exists "partner_sync_cursors" cascade;`);

    this.addSql(`drop table if exists "partner_pushes" cascade;`);

    this.addSql(`drop table if exists "partner_events" cascade;`);

    this.addSql(
      `alter table "integrations" drop column "status", drop column "status_reason", drop column "credentials_sealed", drop column "credential_hint", drop column "account_id", drop column "account_name", drop column "created_by_user_id", drop column "last_verified_at", drop column "last_tested_at", drop column "last_test_ok", drop column "last_sync_at";`,
    );
  }
}
