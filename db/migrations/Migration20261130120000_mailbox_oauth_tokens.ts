import { Migration } from '@mikro-orm/migrations';

// Issue 42: mailboxes connected with Google or Microsoft OAuth. One row per account holds its tokens
// (sealed JSON: access and refresh token), the access token's expiry, and when the grant was found
// revoked. The refresh runs under this row's lock (domain/mailbox/oauth-tokens.ts), so one process at
// a time refreshes an account and a rotated refresh token is never lost.
export class Migration20261130120000_mailbox_oauth_tokens extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "mailbox_oauth_tokens" (
      "account_id" uuid not null,
      "provider" varchar(20) not null,
      "tokens_sealed" text not null,
      "expires_at" timestamptz not null,
      "refreshed_at" timestamptz null,
      "refreshes" int not null default 0,
      "revoked_at" timestamptz null,
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null,
      constraint "mailbox_oauth_tokens_pkey" primary key ("account_id"));`);
    this.addSql(
      `alter table "mailbox_oauth_tokens" add constraint "mailbox_oauth_tokens_account_id_foreign" foreign key ("account_id") references "platform_accounts" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "mailbox_oauth_tokens" cascade;`);
  }
}
