import { Migration } from '@mikro-orm/migrations';

export class Migration20261122003846_billing extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "subscriptions" ("id" uuid not null, "workspace_id" uuid not null, "plan" varchar(32) not null, "status" text check ("status" in ('active', 'none', 'past_due', 'canceled')) not null, "current_period_end" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "subscriptions_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "subscriptions" add constraint "subscriptions_workspace_id_unique" unique ("workspace_id");`,
    );

    this.addSql(
      `create table "credit_ledger" ("id" uuid not null, "workspace_id" uuid not null, "amount" int not null, "kind" text check ("kind" in ('grant', 'debit', 'expire')) not null, "source" text check ("source" in ('plan', 'admin', 'beta_reward', 'usage', 'expiry')) not null, "reason" varchar(500) not null, "idempotency_key" varchar(200) null, "created_at" timestamptz not null, constraint "credit_ledger_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "credit_ledger_workspace_id_index" on "credit_ledger" ("workspace_id");`);
    this.addSql(
      `alter table "credit_ledger" add constraint "credit_ledger_workspace_id_idempotency_key_unique" unique ("workspace_id", "idempotency_key");`,
    );

    // Grants add, debits and expiries subtract: the sign is part of the row's meaning.
    this.addSql(
      `alter table "credit_ledger" add constraint "credit_ledger_amount_sign" check ((kind = 'grant' and amount > 0) or (kind <> 'grant' and amount < 0));`,
    );

    this.addSql(
      `alter table "subscriptions" add constraint "subscriptions_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "credit_ledger" add constraint "credit_ledger_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "subscriptions" cascade;`);

    this.addSql(`drop table if exists "credit_ledger" cascade;`);
  }
}
