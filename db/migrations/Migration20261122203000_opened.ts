import { Migration } from '@mikro-orm/migrations';

// Email opens reported by the connector (`message.opened`): condition steps on `opened` and stats read them.
export class Migration20261122203000_opened extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "scheduled_actions" add column "opened_at" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "scheduled_actions" drop column "opened_at";`);
  }
}
