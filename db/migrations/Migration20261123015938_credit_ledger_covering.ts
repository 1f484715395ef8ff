import { Migration } from '@mikro-orm/migrations';

export class Migration20261123015938_credit_ledger_covering extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop index "credit_ledger_workspace_id_index";`);

    this.addSql(
      `create index "credit_ledger_workspace_id_amount_index" on "credit_ledger" ("workspace_id") include ("amount");`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "credit_ledger_workspace_id_amount_index";`);

    this.addSql(`create index "credit_ledger_workspace_id_index" on "credit_ledger" ("workspace_id");`);
  }
}
