import { Migration } from '@mikro-orm/migrations';

// Issue 42: a delivery-delay warning (a DSN's `Action: delayed`) is a delay, not a soft bounce. The
// send records the first warning's time here; `bounced_at` / `bounce_class` stay for failed deliveries.
export class Migration20261130100000_delivery_delay extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "scheduled_actions" add column "delayed_at" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "scheduled_actions" drop column if exists "delayed_at";`);
  }
}
