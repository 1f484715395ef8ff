import { Migration } from '@mikro-orm/migrations';

// Issue 40: credits held before a paid provider call (docs/plans-and-credits.md, "Holds"). A hold is
// a row per (workspace, key) — the key of the debit it becomes — counted against the balance until
// it expires; written only by domain/billing/credits.ts under the workspace's credit lock.
export class Migration20261129110000_credit_holds extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "credit_holds" ("id" uuid not null, "workspace_id" uuid not null, "idempotency_key" varchar(200) not null, "amount" int not null, "reason" varchar(500) not null, "expires_at" timestamptz not null, "created_at" timestamptz not null, constraint "credit_holds_pkey" primary key ("id"), constraint "credit_holds_amount_positive" check (amount > 0));`,
    );
    this.addSql(
      `alter table "credit_holds" add constraint "credit_holds_workspace_id_idempotency_key_unique" unique ("workspace_id", "idempotency_key");`,
    );
    this.addSql(
      `create index "credit_holds_workspace_id_amount_index" on "credit_holds" ("workspace_id") include ("amount", "expires_at");`,
    );
    this.addSql(
      `alter table "credit_holds" add constraint "credit_holds_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "credit_holds" cascade;`);
  }
}
