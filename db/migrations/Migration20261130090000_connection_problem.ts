import { Migration } from '@mikro-orm/migrations';

// Issue 42: only refused credentials and revoked grants disconnect a sender account; any other failed
// check (a host unreachable or refused by the outbound policy, a TLS failure) is retried, and the last
// one is kept on the account for its setup status until the next successful check clears it.
export class Migration20261130090000_connection_problem extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "platform_accounts" add column "connection_problem" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "platform_accounts" drop column if exists "connection_problem";`);
  }
}
