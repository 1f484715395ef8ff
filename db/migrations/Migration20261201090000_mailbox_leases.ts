import { Migration } from '@mikro-orm/migrations';

// Issue 43: a fleet of mailboxes followed by the mailbox-session service of each worker
// (workers/mailbox-sessions.ts, domain/mailbox/leases.ts). `mailbox_followers` lists the live
// processes (each renews its row); `mailbox_leases` says which process follows a mailbox, until when,
// and under which fence: a number taken from one sequence at every claim, checked in the transaction
// that stores mail, so a process that lost a mailbox can no longer store for it. A trigger announces a
// mail account's status change so the followers claim or let go at once. A mailbox belongs to the
// fleet of the task queue its `mailbox-sync` lifecycle runs on (`platform_accounts.mailbox_fleet`,
// stamped by that workflow's activity; none yet: any fleet may follow it).
export class Migration20261201090000_mailbox_leases extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "mailbox_followers" (
      "holder" varchar(80) not null,
      "fleet" varchar(200) not null,
      "started_at" timestamptz not null default now(),
      "seen_at" timestamptz not null default now(),
      constraint "mailbox_followers_pkey" primary key ("holder"));`);
    this.addSql(`create index "mailbox_followers_fleet_index" on "mailbox_followers" ("fleet", "seen_at");`);
    this.addSql(`alter table "platform_accounts" add column "mailbox_fleet" varchar(200) null;`);
    this.addSql(`create sequence "mailbox_lease_fence";`);
    this.addSql(`create table "mailbox_leases" (
      "account_id" uuid not null,
      "holder" varchar(80) not null,
      "fence" bigint not null,
      "claimed_at" timestamptz not null default now(),
      "expires_at" timestamptz not null,
      constraint "mailbox_leases_pkey" primary key ("account_id"));`);
    this.addSql(
      `alter table "mailbox_leases" add constraint "mailbox_leases_account_id_foreign" foreign key ("account_id") references "platform_accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`create index "mailbox_leases_holder_index" on "mailbox_leases" ("holder");`);
    this.addSql(`create or replace function mailbox_account_changed() returns trigger language plpgsql as $$
      begin
        if (tg_op = 'INSERT' and new.connector = 'mail')
           or (tg_op = 'UPDATE' and (new.connector = 'mail' or old.connector = 'mail')
               and (new.status is distinct from old.status or new.connector is distinct from old.connector
                    or new.credentials_sealed is distinct from old.credentials_sealed
                    or new.mailbox_fleet is distinct from old.mailbox_fleet)) then
          perform pg_notify('mailbox_accounts', new.id::text);
        end if;
        return null;
      end $$;`);
    this.addSql(`create trigger "platform_accounts_mailbox_changed" after insert or update on "platform_accounts"
      for each row execute function mailbox_account_changed();`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists "platform_accounts_mailbox_changed" on "platform_accounts";`);
    this.addSql(`drop function if exists mailbox_account_changed();`);
    this.addSql(`drop table if exists "mailbox_leases" cascade;`);
    this.addSql(`drop sequence if exists "mailbox_lease_fence";`);
    this.addSql(`drop table if exists "mailbox_followers" cascade;`);
    this.addSql(`alter table "platform_accounts" drop column if exists "mailbox_fleet";`);
  }
}
