import { Migration } from '@mikro-orm/migrations';

// Notification retention (docs/notifications.md, "Retention"): read rows by id, so the daily purge of
// read notifications past 90 days walks only read rows.
export class Migration20261123013900_notification_retention extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "notifications_read_index" on "notifications" ("id") where "read_at" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "notifications_read_index";`);
  }
}
