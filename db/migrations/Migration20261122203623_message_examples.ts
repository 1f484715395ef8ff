import { Migration } from '@mikro-orm/migrations';

// Message review (docs/message-review.md): a campaign's example messages and its review policy.
export class Migration20261122203623_message_examples extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "message_examples" ("id" uuid not null, "workspace_id" uuid not null, "campaign_id" uuid not null, "step_id" uuid null, "subject" varchar(200) null, "body" text not null, "source" varchar(20) not null default 'user', "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "message_examples_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "message_examples_workspace_id_index" on "message_examples" ("workspace_id");`);
    this.addSql(`create index "message_examples_campaign_id_index" on "message_examples" ("campaign_id");`);
    this.addSql(
      `alter table "message_examples" add constraint "message_examples_campaign_id_foreign" foreign key ("campaign_id") references "campaigns" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`alter table "campaigns" add column "review_policy" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "message_examples" cascade;`);
    this.addSql(`alter table "campaigns" drop column "review_policy";`);
  }
}
