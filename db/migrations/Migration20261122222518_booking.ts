import { Migration } from '@mikro-orm/migrations';

// Meetings and booking providers (docs/meetings.md).
export class Migration20261122222518_booking extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "booking_oauth_states" ("id" uuid not null, "workspace_id" uuid not null, "user_id" uuid not null, "provider" varchar(40) not null, "state_hash" varchar(64) not null, "code_verifier_sealed" text null, "redirect_uri" varchar(2048) not null, "expires_at" timestamptz not null, "used_at" timestamptz null, "created_at" timestamptz not null, constraint "booking_oauth_states_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "booking_oauth_states_workspace_id_index" on "booking_oauth_states" ("workspace_id");`);
    this.addSql(
      `alter table "booking_oauth_states" add constraint "booking_oauth_states_state_hash_unique" unique ("state_hash");`,
    );

    this.addSql(
      `create table "booking_providers" ("id" uuid not null, "workspace_id" uuid not null, "provider" text check ("provider" in ('scheduler', 'calendar')) not null, "auth_kind" text check ("auth_kind" in ('api_key', 'oauth')) not null, "status" text check ("status" in ('connected', 'invalid_credentials')) not null default 'connected', "status_reason" varchar(300) null, "account_id" varchar(200) not null, "account_name" varchar(200) null, "account_email" varchar(320) null, "credentials_sealed" text not null, "credential_hint" varchar(40) not null, "connected_by_user_id" uuid not null, "webhook_id" varchar(200) null, "webhook_secret_sealed" text null, "webhook_secret_hint" varchar(40) null, "webhook_registered_at" timestamptz null, "last_verified_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "booking_providers_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "booking_providers_workspace_id_index" on "booking_providers" ("workspace_id");`);
    this.addSql(
      `alter table "booking_providers" add constraint "booking_providers_workspace_id_provider_account_id_unique" unique ("workspace_id", "provider", "account_id");`,
    );

    this.addSql(
      `create table "booking_provider_events" ("id" uuid not null, "workspace_id" uuid not null, "booking_provider_id" uuid null, "provider" varchar(40) not null, "event_id" varchar(200) not null, "source" text check ("source" in ('webhook', 'backfill')) not null, "type" varchar(40) not null, "booking_id" varchar(200) not null, "payload" jsonb not null, "title" varchar(300) not null, "starts_at" timestamptz not null, "ends_at" timestamptz not null, "booking_status" varchar(20) not null, "booking_updated_at" timestamptz not null, "attendee_email" varchar(320) not null, "attendee_name" varchar(200) null, "state" text check ("state" in ('received', 'matched', 'unmatched', 'attached', 'dismissed', 'superseded')) not null default 'received', "effect" text check ("effect" in ('created', 'updated', 'stale')) null, "matched_by" text check ("matched_by" in ('existing_meeting', 'tracking_lead_id', 'attendee_email', 'attached')) null, "lead_id" uuid null, "meeting_id" uuid null, "received_at" timestamptz not null, "handled_at" timestamptz null, "decided_at" timestamptz null, "decided_by_user_id" uuid null, constraint "booking_provider_events_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "booking_provider_events_booking_provider_id_index" on "booking_provider_events" ("booking_provider_id");`,
    );
    this.addSql(
      `create index "booking_provider_events_workspace_id_state_id_index" on "booking_provider_events" ("workspace_id", "state", "id");`,
    );
    this.addSql(
      `create index "booking_provider_events_workspace_id_provider_booking_id_index" on "booking_provider_events" ("workspace_id", "provider", "booking_id");`,
    );
    this.addSql(
      `alter table "booking_provider_events" add constraint "booking_provider_events_workspace_id_provider_event_id_unique" unique ("workspace_id", "provider", "event_id");`,
    );

    this.addSql(
      `create table "booking_backfills" ("id" uuid not null, "workspace_id" uuid not null, "booking_provider_id" uuid not null, "client_key" varchar(200) null, "user_id" uuid not null, "since" timestamptz not null, "status" text check ("status" in ('queued', 'running', 'completed', 'failed')) not null default 'queued', "cursor" varchar(1000) null, "pages" int not null default 0, "bookings" int not null default 0, "created" int not null default 0, "updated" int not null default 0, "unchanged" int not null default 0, "unmatched" int not null default 0, "invalid" int not null default 0, "error_code" varchar(60) null, "error_message" varchar(500) null, "started_at" timestamptz null, "finished_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "booking_backfills_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "booking_backfills_booking_provider_id_index" on "booking_backfills" ("booking_provider_id");`,
    );
    this.addSql(
      `alter table "booking_backfills" add constraint "booking_backfills_booking_provider_id_client_key_unique" unique ("booking_provider_id", "client_key");`,
    );

    this.addSql(
      `create table "meetings" ("id" uuid not null, "workspace_id" uuid not null, "lead_id" uuid not null, "contact_id" uuid not null, "title" varchar(300) not null, "starts_at" timestamptz not null, "ends_at" timestamptz not null, "status" text check ("status" in ('scheduled', 'canceled')) not null default 'scheduled', "outcome" text check ("outcome" in ('held', 'no_show', 'rescheduled')) null, "outcome_at" timestamptz null, "location" varchar(500) null, "notes" text null, "source" text check ("source" in ('manual', 'booking')) not null, "booking_provider_id" uuid null, "provider" varchar(40) null, "external_id" varchar(200) null, "external_updated_at" timestamptz null, "created_by_user_id" uuid null, "canceled_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "meetings_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "meetings_contact_id_index" on "meetings" ("contact_id");`);
    this.addSql(`create index "meetings_booking_provider_id_index" on "meetings" ("booking_provider_id");`);
    this.addSql(`create index "meetings_workspace_id_starts_at_index" on "meetings" ("workspace_id", "starts_at");`);
    this.addSql(`create index "meetings_lead_id_starts_at_index" on "meetings" ("lead_id", "starts_at");`);
    this.addSql(
      `alter table "meetings" add constraint "meetings_workspace_id_provider_external_id_unique" unique ("workspace_id", "provider", "external_id");`,
    );
    this.addSql(`alter table "meetings" add constraint "meetings_ends_after_starts" check ("ends_at" > "starts_at");`);

    this.addSql(
      `alter table "booking_oauth_states" add constraint "booking_oauth_states_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "booking_providers" add constraint "booking_providers_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "booking_provider_events" add constraint "booking_provider_events_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "booking_provider_events" add constraint "booking_provider_events_booking_provider_id_foreign" foreign key ("booking_provider_id") references "booking_providers" ("id") on update cascade on delete set null;`,
    );

    this.addSql(
      `alter table "booking_backfills" add constraint "booking_backfills_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "booking_backfills" add constraint "booking_backfills_booking_provider_id_foreign" foreign key ("booking_provider_id") references "booking_providers" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "meetings" add constraint "meetings_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "meetings" add constraint "meetings_lead_id_foreign" foreign key ("lead_id") references "leads" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "meetings" add constraint "meetings_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "meetings" add constraint "meetings_booking_provider_id_foreign" foreign key ("booking_provider_id") references "booking_providers" ("id") on update cascade on delete set null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(
      `alter table "booking_provider_events" drop constraint "booking_provider_events_booking_provider_id_foreign";`,
    );

    this.addSql(`alter table "booking_backfills" drop constraint "booking_backfills_booking_provider_id_foreign";`);

    this.addSql(`alter table "meetings" drop constraint "meetings_booking_provider_id_foreign";`);

    this.addSql(`drop table if exists "booking_oauth_states" cascade;`);

    this.addSql(`drop table if exists "booking_providers" cascade;`);

    this.addSql(`drop table if exists "booking_provider_events" cascade;`);

    this.addSql(`drop table if exists "booking_backfills" cascade;`);

    this.addSql(`drop table if exists "meetings" cascade;`);
  }
}
