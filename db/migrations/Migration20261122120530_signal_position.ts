import { Migration } from '@mikro-orm/migrations';

export class Migration20261122120530_signal_position extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "agent_signals" add column "position" int not null default 0;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "agent_signals" drop column "position";`);
  }
}
