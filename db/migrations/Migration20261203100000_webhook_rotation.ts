import { Migration } from '@mikro-orm/migrations';

// Issue 45: webhook secret rotation with an overlap (the replaced secret, sealed, kept until it expires)
// and the delivery log (GET /api/webhooks/outbound/{id}/deliveries: a subscription's rows by id, newest
// first; the index replaces the one on subscription_id alone, of which it is a prefix). A response
// excerpt is shown only for deliveries recorded as visible (not to an OUTBOUND_ALLOW_HOSTS destination):
// rows recorded before this migration stay hidden.
export class Migration20261203100000_webhook_rotation extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "webhook_subscriptions" add column "previous_secret_encrypted" text null, add column "previous_secret_expires_at" timestamptz null;`,
    );
    this.addSql(
      `alter table "webhook_deliveries" add column "response_excerpt_visible" boolean not null default false;`,
    );
    this.addSql(
      `create index "webhook_deliveries_subscription_id_id_index" on "webhook_deliveries" ("subscription_id", "id");`,
    );
    this.addSql(`drop index if exists "webhook_deliveries_subscription_id_index";`);
  }

  override async down(): Promise<void> {
    this.addSql(
      `create index if not exists "webhook_deliveries_subscription_id_index" on "webhook_deliveries" ("subscription_id");`,
    );
    this.addSql(`drop index if exists "webhook_deliveries_subscription_id_id_index";`);
    this.addSql(`alter table "webhook_deliveries" drop column "response_excerpt_visible";`);
    this.addSql(
      `alter table "webhook_subscriptions" drop column "previous_secret_encrypted", drop column "previous_secret_expires_at";`,
    );
  }
}
