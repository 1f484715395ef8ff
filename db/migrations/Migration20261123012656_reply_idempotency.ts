import { Migration } from '@mikro-orm/migrations';

// A reply's Idempotency-Key (docs/inbox.md, "Replies"): kept on the queued message with the hash of the
// request, unique per workspace among messages that have one.
export class Migration20261123012656_reply_idempotency extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "inbox_messages" add column "idempotency_key" varchar(200) null, add column "idempotency_hash" varchar(64) null;`,
    );
    this.addSql(
      `create unique index "inbox_messages_idempotency_key_unique" on "inbox_messages" ("workspace_id", "idempotency_key") where "idempotency_key" is not null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "inbox_messages_idempotency_key_unique";`);
    this.addSql(`alter table "inbox_messages" drop column "idempotency_key", drop column "idempotency_hash";`);
  }
}
