import { Migration } from '@mikro-orm/migrations';

// The rate governor (docs/governor.md): a lockable row per account and slots granted per local day.
export class Migration20261122170258_governor extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "account_usage" ("account_id" uuid not null, "action" varchar(20) not null, "day" date not null, "count" int not null default 0, constraint "account_usage_pkey" primary key ("account_id", "action", "day"), constraint "account_usage_count_non_negative" check ("count" >= 0));`,
    );

    this.addSql(
      `create table "account_governors" ("account_id" uuid not null, "version" int not null default 0, "last_action_at" timestamptz null, "next_allowed_at" timestamptz null, "updated_at" timestamptz not null, constraint "account_governors_pkey" primary key ("account_id"));`,
    );

    this.addSql(
      `alter table "account_usage" add constraint "account_usage_account_id_foreign" foreign key ("account_id") references "platform_accounts" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "account_governors" add constraint "account_governors_account_id_foreign" foreign key ("account_id") references "platform_accounts" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "account_usage" cascade;`);

    this.addSql(`drop table if exists "account_governors" cascade;`);
  }
}
