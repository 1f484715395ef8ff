import { Migration } from '@mikro-orm/migrations';

// The governor's grant recorded on the action: the executor's local activities may run again after a
// lost workflow task, and a repeated slot request must reuse the grant instead of taking a second slot.
export class Migration20261122201500_slot_grant extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "scheduled_actions" add column "slot_granted_at" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "scheduled_actions" drop column "slot_granted_at";`);
  }
}
