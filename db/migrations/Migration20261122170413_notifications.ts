import { Migration } from '@mikro-orm/migrations';

export class Migration20261122170413_notifications extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "notifications" ("id" uuid not null, "workspace_id" uuid not null, "kind" varchar(60) not null, "title" varchar(200) not null, "body" text not null, "data" jsonb not null default '{}', "created_at" timestamptz not null, "read_at" timestamptz null, constraint "notifications_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "notifications_workspace_id_created_at_index" on "notifications" ("workspace_id", "created_at");`,
    );

    this.addSql(
      `alter table "notifications" add constraint "notifications_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "notifications" cascade;`);
  }
}
