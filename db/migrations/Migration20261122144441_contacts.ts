import { Migration } from '@mikro-orm/migrations';

export class Migration20261122144441_contacts extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "contact_exports" ("id" uuid not null, "workspace_id" uuid not null, "requested_by" uuid not null, "filters" jsonb not null default '{}', "scope_app_ids" jsonb null, "status" varchar(20) not null default 'queued', "row_count" int not null default 0, "byte_count" bigint not null default 0, "next_seq" int not null default 0, "last_contact_id" uuid null, "error_code" varchar(40) null, "error_message" varchar(500) null, "created_at" timestamptz not null, "started_at" timestamptz null, "finished_at" timestamptz null, constraint "contact_exports_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "contact_exports_workspace_id_id_index" on "contact_exports" ("workspace_id", "id");`);

    this.addSql(
      `create table "export_file_chunks" ("export_id" uuid not null, "seq" int not null, "data" bytea not null, constraint "export_file_chunks_pkey" primary key ("export_id", "seq"));`,
    );

    this.addSql(
      `alter table "contact_exports" add constraint "contact_exports_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "export_file_chunks" add constraint "export_file_chunks_export_id_foreign" foreign key ("export_id") references "contact_exports" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "contacts" add column "fit_score" smallint null, add column "fit_label" varchar(10) null, add column "fit_updated_at" timestamptz null, add column "pinned_at" timestamptz null;`,
    );
    this.addSql(`create index "contacts_workspace_id_id_index" on "contacts" ("workspace_id", "id");`);
    this.addSql(
      `alter table "contacts" add constraint "contacts_fit_score_range" check ("fit_score" between 0 and 100), add constraint "contacts_fit_label_values" check ("fit_label" in ('good', 'maybe', 'bad'));`,
    );
    // CSV chunks are written once and read whole: stored out of line without compression (pglz would
    // cost more CPU than the space it saves on an export that is downloaded and then deleted).
    this.addSql(`alter table "export_file_chunks" alter column "data" set storage external;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "export_file_chunks" drop constraint "export_file_chunks_export_id_foreign";`);

    this.addSql(`drop table if exists "contact_exports" cascade;`);

    this.addSql(`drop table if exists "export_file_chunks" cascade;`);

    this.addSql(`drop index "contacts_workspace_id_id_index";`);
    this.addSql(
      `alter table "contacts" drop constraint "contacts_fit_score_range", drop constraint "contacts_fit_label_values";`,
    );
    this.addSql(
      `alter table "contacts" drop column "fit_score", drop column "fit_label", drop column "fit_updated_at", drop column "pinned_at";`,
    );
  }
}
