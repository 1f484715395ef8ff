import { Migration } from '@mikro-orm/migrations';

// AI-written drafts, one per scheduled action and attempt (docs/message-review.md).
export class Migration20261122204354_message_drafts extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "message_drafts" ("id" uuid not null, "workspace_id" uuid not null, "campaign_id" uuid not null, "step_id" uuid not null, "action_id" uuid not null, "attempt" int not null default 1, "enrollment_id" uuid not null, "lead_id" uuid not null, "channel" varchar(20) not null, "destination" varchar(2048) null, "subject" varchar(400) null, "body" text not null, "status" varchar(20) not null, "review_required" boolean not null, "auto_approved" boolean not null default false, "problems" jsonb not null default '[]', "error_code" varchar(50) null, "model" varchar(100) not null, "credits" int not null default 0, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "message_drafts_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "message_drafts_campaign_id_status_created_at_index" on "message_drafts" ("campaign_id", "status", "created_at");`,
    );
    this.addSql(
      `create index "message_drafts_campaign_id_step_id_review_required_index" on "message_drafts" ("campaign_id", "step_id", "review_required");`,
    );
    this.addSql(
      `alter table "message_drafts" add constraint "message_drafts_action_id_attempt_unique" unique ("action_id", "attempt");`,
    );
    this.addSql(
      `alter table "message_drafts" add constraint "message_drafts_campaign_id_foreign" foreign key ("campaign_id") references "campaigns" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "message_drafts" cascade;`);
  }
}
