import { Migration } from '@mikro-orm/migrations';

export class Migration20261126160000_send_claim extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "scheduled_actions" add column "claimed_at" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "scheduled_actions" drop column "claimed_at";`);
  }
}
