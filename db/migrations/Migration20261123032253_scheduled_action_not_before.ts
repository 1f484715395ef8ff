import { Migration } from '@mikro-orm/migrations';

export class Migration20261123032253_scheduled_action_not_before extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "scheduled_actions" add column "not_before" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "scheduled_actions" drop column "not_before";`);
  }
}
