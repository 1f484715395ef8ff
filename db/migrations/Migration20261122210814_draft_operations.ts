import { Migration } from '@mikro-orm/migrations';

// Batch generations of drafts (docs/message-review.md).
export class Migration20261122210814_draft_operations extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "draft_operations" ("id" uuid not null, "workspace_id" uuid not null, "campaign_id" uuid not null, "client_key" varchar(200) not null, "scope" varchar(20) not null, "step_id" uuid null, "action_ids" jsonb not null, "status" varchar(20) not null default 'queued', "total" int not null default 0, "processed" int not null default 0, "written" int not null default 0, "failed" int not null default 0, "credits" int not null default 0, "error_message" varchar(500) null, "started_at" timestamptz null, "finished_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "draft_operations_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "draft_operations" add constraint "draft_operations_campaign_id_client_key_unique" unique ("campaign_id", "client_key");`,
    );
    this.addSql(
      `alter table "draft_operations" add constraint "draft_operations_campaign_id_foreign" foreign key ("campaign_id") references "campaigns" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "draft_operations" cascade;`);
  }
}
