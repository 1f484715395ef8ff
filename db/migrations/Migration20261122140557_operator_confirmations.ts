import { Migration } from '@mikro-orm/migrations';

export class Migration20261122140557_operator_confirmations extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "agent_confirmations" add column "executed_at" timestamptz null, add column "result" jsonb null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "agent_confirmations" drop column "executed_at", drop column "result";`);
  }
}
