import { Migration } from '@mikro-orm/migrations';

// Issue 44: a connector's "rate limited" answer throttles the sender account (docs/governor.md
// "Throttled by the provider"): the governor grants no slot before `throttled_until`. A send keeps the
// recipient's id at the connector (`connector_recipient_id`, a LinkedIn member id): Unipile's
// acceptance event names the member, not the invitation.
export class Migration20261202090000_account_throttle extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "account_governors" add column "throttled_until" timestamptz null;`);
    this.addSql(`alter table "scheduled_actions" add column "connector_recipient_id" varchar(200) null;`);
    this.addSql(
      `create index "scheduled_actions_recipient_index" on "scheduled_actions" ("account_id", "connector_recipient_id") where "connector_recipient_id" is not null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "scheduled_actions_recipient_index";`);
    this.addSql(`alter table "scheduled_actions" drop column "connector_recipient_id";`);
    this.addSql(`alter table "account_governors" drop column "throttled_until";`);
  }
}
