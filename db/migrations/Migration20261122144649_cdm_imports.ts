import { Migration } from '@mikro-orm/migrations';

export class Migration20261122144649_cdm_imports extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "cdm_import_events" ("id" uuid not null, "workspace_id" uuid not null, "client_id" varchar(100) not null, "job_id" uuid not null, "type" varchar(30) not null, "target_id" uuid not null, "occurred_at" text null, "result" varchar(30) not null, "members_changed" int not null default 0, "user_id" uuid not null, "created_at" timestamptz not null, constraint "cdm_import_events_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "cdm_import_events" add constraint "cdm_import_events_workspace_id_client_id_unique" unique ("workspace_id", "client_id");`,
    );

    this.addSql(
      `create table "cdm_imports" ("id" uuid not null, "workspace_id" uuid not null, "app_id" uuid not null, "list_id" uuid null, "created_by_id" uuid null, "state" varchar(20) not null default 'searching', "run" int not null default 1, "titles" jsonb not null default '[]', "seniorities" jsonb not null default '[]', "max_per_company" int not null, "batch_size" int not null, "company_count" int not null, "batch_count" int not null, "duplicates_removed" int not null default 0, "review_cursor" int not null default 0, "credits_charged" int not null default 0, "error_code" varchar(60) null, "error_message" varchar(500) null, "search_started_at" timestamptz null, "search_finished_at" timestamptz null, "confirm_started_at" timestamptz null, "completed_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "cdm_imports_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "cdm_imports_app_id_index" on "cdm_imports" ("app_id");`);
    this.addSql(`create index "cdm_imports_list_id_index" on "cdm_imports" ("list_id");`);
    this.addSql(`create index "cdm_imports_created_by_id_index" on "cdm_imports" ("created_by_id");`);
    this.addSql(
      `create index "cdm_imports_workspace_id_created_at_index" on "cdm_imports" ("workspace_id", "created_at");`,
    );

    this.addSql(
      `create table "cdm_import_companies" ("id" uuid not null, "job_id" uuid not null, "position" int not null, "batch" int not null, "input_name" varchar(200) null, "input_domain" varchar(255) null, "status" varchar(20) not null default 'pending', "reason" varchar(40) null, "message" varchar(500) null, "duplicate_of" uuid null, "resolved_name" varchar(300) null, "resolved_domain" varchar(255) null, "resolved_industry" varchar(200) null, "resolved_size" varchar(20) null, "resolved_key" varchar(320) null, "members_found" int not null default 0, "attempts" int not null default 0, "searched_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "cdm_import_companies_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "cdm_import_companies_job_id_batch_position_index" on "cdm_import_companies" ("job_id", "batch", "position");`,
    );
    this.addSql(
      `create index "cdm_import_companies_job_id_status_index" on "cdm_import_companies" ("job_id", "status");`,
    );
    this.addSql(
      `create index "cdm_import_companies_job_id_resolved_key_index" on "cdm_import_companies" ("job_id", "resolved_key");`,
    );
    this.addSql(
      `alter table "cdm_import_companies" add constraint "cdm_import_companies_job_id_position_unique" unique ("job_id", "position");`,
    );

    this.addSql(
      `create table "cdm_import_members" ("id" uuid not null, "job_id" uuid not null, "company_id" uuid not null, "company_position" int not null, "batch" int not null, "rank" int not null, "external_id" varchar(200) not null, "profile_url" varchar(2048) null, "email" varchar(320) null, "full_name" varchar(400) not null, "first_name" varchar(200) null, "last_name" varchar(200) null, "title" varchar(300) null, "headline" varchar(300) null, "seniority" varchar(20) null, "country" varchar(100) null, "company_name" varchar(300) null, "company_domain" varchar(255) null, "status" varchar(20) not null default 'pending', "decided_at" timestamptz null, "decided_by" uuid null, "lead_id" uuid null, "contact_id" uuid null, "lead_created" boolean null, "contact_created" boolean null, "credits_charged" int not null default 0, "added_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "cdm_import_members_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "cdm_import_members_job_id_company_position_rank_index" on "cdm_import_members" ("job_id", "company_position", "rank");`,
    );
    this.addSql(`create index "cdm_import_members_job_id_status_index" on "cdm_import_members" ("job_id", "status");`);
    this.addSql(`create index "cdm_import_members_company_id_index" on "cdm_import_members" ("company_id");`);
    this.addSql(
      `alter table "cdm_import_members" add constraint "cdm_import_members_job_id_external_id_unique" unique ("job_id", "external_id");`,
    );

    this.addSql(
      `alter table "cdm_import_events" add constraint "cdm_import_events_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "cdm_imports" add constraint "cdm_imports_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "cdm_imports" add constraint "cdm_imports_app_id_foreign" foreign key ("app_id") references "apps" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "cdm_imports" add constraint "cdm_imports_list_id_foreign" foreign key ("list_id") references "lead_lists" ("id") on update cascade on delete set null;`,
    );
    this.addSql(
      `alter table "cdm_imports" add constraint "cdm_imports_created_by_id_foreign" foreign key ("created_by_id") references "users" ("id") on update cascade on delete set null;`,
    );

    this.addSql(
      `alter table "cdm_import_companies" add constraint "cdm_import_companies_job_id_foreign" foreign key ("job_id") references "cdm_imports" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "cdm_import_members" add constraint "cdm_import_members_job_id_foreign" foreign key ("job_id") references "cdm_imports" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "cdm_import_members" add constraint "cdm_import_members_company_id_foreign" foreign key ("company_id") references "cdm_import_companies" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "cdm_import_companies" drop constraint "cdm_import_companies_job_id_foreign";`);

    this.addSql(`alter table "cdm_import_members" drop constraint "cdm_import_members_job_id_foreign";`);

    this.addSql(`alter table "cdm_import_members" drop constraint "cdm_import_members_company_id_foreign";`);

    this.addSql(`drop table if exists "cdm_import_events" cascade;`);

    this.addSql(`drop table if exists "cdm_imports" cascade;`);

    this.addSql(`drop table if exists "cdm_import_companies" cascade;`);

    this.addSql(`drop table if exists "cdm_import_members" cascade;`);
  }
}
