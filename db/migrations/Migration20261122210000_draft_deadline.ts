import { Migration } from '@mikro-orm/migrations';

// The review queue shows when each draft's review ends.
export class Migration20261122210000_draft_deadline extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "message_drafts" add column "deadline_at" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "message_drafts" drop column "deadline_at";`);
  }
}
