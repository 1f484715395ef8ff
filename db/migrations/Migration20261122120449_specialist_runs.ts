import { Migration } from '@mikro-orm/migrations';

export class Migration20261122120449_specialist_runs extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "specialist_runs" ("id" uuid not null, "workspace_id" uuid not null, "app_id" uuid null, "agent_id" uuid null, "kind" varchar(100) not null, "model" varchar(200) not null, "input_summary" varchar(500) not null, "status" text check ("status" in ('running', 'succeeded', 'failed')) not null, "error_code" varchar(40) null, "error_message" text null, "started_at" timestamptz not null, "finished_at" timestamptz null, "duration_ms" int null, "input_tokens" int not null default 0, "output_tokens" int not null default 0, "cost_micros" int not null default 0, "result" jsonb null, "created_at" timestamptz not null, constraint "specialist_runs_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "specialist_runs_app_id_id_index" on "specialist_runs" ("app_id", "id");`);
    this.addSql(`create index "specialist_runs_workspace_id_id_index" on "specialist_runs" ("workspace_id", "id");`);

    this.addSql(
      `alter table "specialist_runs" add constraint "specialist_runs_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "specialist_runs" add constraint "specialist_runs_app_id_foreign" foreign key ("app_id") references "apps" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "specialist_runs" cascade;`);
  }
}
