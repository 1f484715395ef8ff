import { Migration } from '@mikro-orm/migrations';

// Issue 45: one Idempotency-Key mechanism for every POST that creates something or starts work
// (docs/idempotency.md). A key is unique per user and acting workspace; the first request claims it
// (insert … on conflict), its 2xx answer is stored sealed for replays, and the row expires after 24
// hours (purged hourly with the expired sessions). The inbox reply's own copy of the key
// (inbox_messages.idempotency_key / idempotency_hash) goes: the reply uses this table like the rest.
export class Migration20261203090000_idempotency_keys extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "idempotency_keys" ("user_id" uuid not null, "workspace_id" uuid not null, "key" varchar(255) not null, "operation_id" varchar(120) not null, "fingerprint" varchar(64) not null, "state" text check ("state" in ('in_flight', 'done')) not null, "owner" uuid not null, "locked_until" timestamptz null, "status" smallint null, "headers" jsonb null, "body" text null, "created_at" timestamptz not null, "expires_at" timestamptz not null, constraint "idempotency_keys_pkey" primary key ("user_id", "workspace_id", "key"));`,
    );
    this.addSql(`create index "idempotency_keys_workspace_id_index" on "idempotency_keys" ("workspace_id");`);
    this.addSql(`create index "idempotency_keys_expires_at_index" on "idempotency_keys" ("expires_at");`);
    this.addSql(
      `alter table "idempotency_keys" add constraint "idempotency_keys_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "idempotency_keys" add constraint "idempotency_keys_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`drop index if exists "inbox_messages_idempotency_key_unique";`);
    this.addSql(
      `alter table "inbox_messages" drop column if exists "idempotency_key", drop column if exists "idempotency_hash";`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(
      `alter table "inbox_messages" add column "idempotency_key" varchar(200) null, add column "idempotency_hash" varchar(64) null;`,
    );
    this.addSql(
      `create unique index "inbox_messages_idempotency_key_unique" on "inbox_messages" ("workspace_id", "idempotency_key") where "idempotency_key" is not null;`,
    );
    this.addSql(`drop table if exists "idempotency_keys" cascade;`);
  }
}
