import { Migration } from '@mikro-orm/migrations';

// Notifications per person, announcements, the ideas board, table views, and the indexes that keep
// onboarding progress cheap (docs/notifications.md, docs/ideas-views-onboarding.md).
export class Migration20261122231500_notifications_ideas_views extends Migration {
  override async up(): Promise<void> {
    // Notifications: one row per recipient. Rows written before this migration were per workspace;
    // they go to the workspace's owner.
    this.addSql(
      `alter table "notifications" add column "user_id" uuid null, add column "dedupe_key" varchar(200) null, add column "email_state" varchar(10) null, add column "email_attempts" smallint not null default 0, add column "emailed_at" timestamptz null;`,
    );
    this.addSql(
      `update "notifications" n set "user_id" = w."owner_id" from workspaces w where w."id" = n."workspace_id";`,
    );
    this.addSql(`alter table "notifications" alter column "user_id" set not null;`);
    this.addSql(
      `alter table "notifications" add constraint "notifications_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "notifications" add constraint "notifications_user_id_dedupe_key_unique" unique ("user_id", "dedupe_key");`,
    );
    this.addSql(`drop index if exists "notifications_workspace_id_created_at_index";`);
    this.addSql(
      `create index "notifications_user_workspace_id_index" on "notifications" ("user_id", "workspace_id", "id");`,
    );
    this.addSql(
      `create index "notifications_unread_index" on "notifications" ("user_id", "workspace_id", "id") where "read_at" is null;`,
    );
    this.addSql(
      `create index "notifications_email_pending_index" on "notifications" ("id") where "email_state" = 'pending';`,
    );

    // A channel per topic.
    this.addSql(
      `alter table "operator_notification_preferences" add column "account_disconnected" varchar(10) not null default 'in_app', add column "reply_received" varchar(10) not null default 'in_app', add column "import_finished" varchar(10) not null default 'in_app', add column "review_overdue" varchar(10) not null default 'in_app';`,
    );

    this.addSql(
      `create table "announcements" ("id" uuid not null, "title" varchar(200) not null, "body" text not null, "cta_label" varchar(60) null, "cta_url" varchar(2048) null, "plans" jsonb null, "starts_at" timestamptz not null, "ends_at" timestamptz null, "created_by" varchar(200) null, "created_at" timestamptz not null, "unpublished_at" timestamptz null, constraint "announcements_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "announcements_published_index" on "announcements" ("starts_at", "id") where "unpublished_at" is null;`,
    );
    this.addSql(
      `create table "announcement_receipts" ("announcement_id" uuid not null, "user_id" uuid not null, "dismissed_at" timestamptz null, "cta_clicked_at" timestamptz null, constraint "announcement_receipts_pkey" primary key ("announcement_id", "user_id"));`,
    );
    this.addSql(`create index "announcement_receipts_user_id_index" on "announcement_receipts" ("user_id");`);
    this.addSql(
      `alter table "announcement_receipts" add constraint "announcement_receipts_announcement_id_foreign" foreign key ("announcement_id") references "announcements" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "announcement_receipts" add constraint "announcement_receipts_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `create table "ideas" ("id" uuid not null, "author_id" uuid null, "title" varchar(200) not null, "body" text not null, "vote_count" int not null default 0, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "ideas_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "ideas_vote_count_id_index" on "ideas" ("vote_count", "id");`);
    this.addSql(`create index "ideas_author_id_created_at_index" on "ideas" ("author_id", "created_at");`);
    this.addSql(
      `alter table "ideas" add constraint "ideas_author_id_foreign" foreign key ("author_id") references "users" ("id") on update cascade on delete set null;`,
    );
    this.addSql(
      `create table "idea_votes" ("idea_id" uuid not null, "user_id" uuid not null, "created_at" timestamptz not null, constraint "idea_votes_pkey" primary key ("idea_id", "user_id"));`,
    );
    this.addSql(`create index "idea_votes_user_id_index" on "idea_votes" ("user_id");`);
    this.addSql(
      `alter table "idea_votes" add constraint "idea_votes_idea_id_foreign" foreign key ("idea_id") references "ideas" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "idea_votes" add constraint "idea_votes_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `create table "table_views" ("id" uuid not null, "workspace_id" uuid not null, "user_id" uuid not null, "table" varchar(40) not null, "name" varchar(100) not null, "layout" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "table_views_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create unique index "table_views_name_unique" on "table_views" ("workspace_id", "user_id", "table", lower("name"));`,
    );
    this.addSql(
      `create index "table_views_user_workspace_id_index" on "table_views" ("user_id", "workspace_id", "id");`,
    );
    this.addSql(
      `alter table "table_views" add constraint "table_views_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "table_views" add constraint "table_views_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );

    // Onboarding progress (domain/onboarding/onboarding.ts): the first reply of a workspace without scanning
    // its messages or enrollments. Partial: only replies are in them.
    this.addSql(
      `create index "inbox_messages_first_reply_index" on "inbox_messages" ("workspace_id", "sent_at") where "kind" = 'reply' and "lead_id" is not null and not "historical";`,
    );
    this.addSql(
      `create index "enrollments_replied_index" on "enrollments" ("workspace_id", "replied_at") where "replied_at" is not null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "enrollments_replied_index";`);
    this.addSql(`drop index if exists "inbox_messages_first_reply_index";`);
    this.addSql(`drop table if exists "table_views" cascade;`);
    this.addSql(`drop table if exists "idea_votes" cascade;`);
    this.addSql(`drop table if exists "ideas" cascade;`);
    this.addSql(`drop table if exists "announcement_receipts" cascade;`);
    this.addSql(`drop table if exists "announcements" cascade;`);
    this.addSql(
      `alter table "operator_notification_preferences" drop column "account_disconnected", drop column "reply_received", drop column "import_finished", drop column "review_overdue";`,
    );
    this.addSql(`drop index if exists "notifications_email_pending_index";`);
    this.addSql(`drop index if exists "notifications_unread_index";`);
    this.addSql(`drop index if exists "notifications_user_workspace_id_index";`);
    this.addSql(
      `create index "notifications_workspace_id_created_at_index" on "notifications" ("workspace_id", "created_at");`,
    );
    this.addSql(`alter table "notifications" drop constraint "notifications_user_id_dedupe_key_unique";`);
    this.addSql(`alter table "notifications" drop constraint "notifications_user_id_foreign";`);
    this.addSql(
      `alter table "notifications" drop column "user_id", drop column "dedupe_key", drop column "email_state", drop column "email_attempts", drop column "emailed_at";`,
    );
  }
}
