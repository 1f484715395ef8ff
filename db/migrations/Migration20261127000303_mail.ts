import { Migration } from '@mikro-orm/migrations';

export class Migration20261127000303_mail extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "suppressions" ("id" uuid not null, "workspace_id" uuid not null, "kind" text check ("kind" in ('address', 'domain')) not null, "value" varchar(320) not null, "reason" text check ("reason" in ('unsubscribe', 'hard_bounce', 'complaint', 'manual', 'import')) not null, "source" varchar(200) null, "created_by" uuid null, "created_at" timestamptz not null, constraint "suppressions_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "suppressions_workspace_id_created_at_id_index" on "suppressions" ("workspace_id", "created_at", "id");`,
    );
    this.addSql(
      `alter table "suppressions" add constraint "suppressions_workspace_id_kind_value_unique" unique ("workspace_id", "kind", "value");`,
    );

    this.addSql(
      `create table "mailbox_cursors" ("account_id" uuid not null, "uid_validity" bigint null, "last_uid" bigint not null default '0', "mode" varchar(10) not null default 'idle', "synced_at" timestamptz null, "error_message" varchar(500) null, "updated_at" timestamptz not null, constraint "mailbox_cursors_pkey" primary key ("account_id"));`,
    );

    this.addSql(
      `alter table "suppressions" add constraint "suppressions_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "mailbox_cursors" add constraint "mailbox_cursors_account_id_foreign" foreign key ("account_id") references "platform_accounts" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(`alter table "workspaces" add column "email_footer" text null;`);

    this.addSql(
      `alter table "contacts" add column "email_soft_bounces" smallint not null default 0, add column "out_of_office_until" timestamptz null;`,
    );

    this.addSql(`alter table "scheduled_actions" add column "bounce_class" varchar(10) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "suppressions" cascade;`);

    this.addSql(`drop table if exists "mailbox_cursors" cascade;`);

    this.addSql(`alter table "contacts" drop column "email_soft_bounces", drop column "out_of_office_until";`);

    this.addSql(`alter table "scheduled_actions" drop column "bounce_class";`);

    this.addSql(`alter table "workspaces" drop column "email_footer";`);
  }
}
