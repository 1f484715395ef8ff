import { Migration } from '@mikro-orm/migrations';

export class Migration20261126170000_waiting_until extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "scheduled_actions" add column "waiting_until" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "scheduled_actions" drop column "waiting_until";`);
  }
}
