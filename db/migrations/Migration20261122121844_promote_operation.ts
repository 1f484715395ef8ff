import { Migration } from '@mikro-orm/migrations';

export class Migration20261122121844_promote_operation extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "rejected_profiles" add column "promote_operation_id" uuid null;`);
    this.addSql(
      `create index "rejected_profiles_promote_operation_id_id_index" on "rejected_profiles" ("promote_operation_id", "id");`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "rejected_profiles_promote_operation_id_id_index";`);
    this.addSql(`alter table "rejected_profiles" drop column "promote_operation_id";`);
  }
}
