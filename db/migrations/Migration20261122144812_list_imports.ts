import { Migration } from '@mikro-orm/migrations';

export class Migration20261122144812_list_imports extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "list_imports" ("id" uuid not null, "workspace_id" uuid not null, "app_id" uuid not null, "user_id" uuid not null, "status" varchar(20) not null, "source" varchar(20) not null, "attachment_id" uuid null, "filename" varchar(255) not null, "size_bytes" int not null default 0, "sha256" varchar(64) null, "chunk_bytes" int not null, "encoding" varchar(20) null, "bom" boolean not null default false, "delimiter" varchar(1) null, "has_header" boolean not null default true, "header_row" int not null default 0, "column_count" int not null default 0, "columns" jsonb null, "sample" jsonb null, "suggested_mapping" jsonb null, "mapping" jsonb null, "dedupe_mode" varchar(20) null, "list_id" uuid null, "list_name" varchar(200) null, "cursor_bytes" int not null default 0, "cursor_row" int not null default 0, "rows_read" int not null default 0, "created" int not null default 0, "updated" int not null default 0, "duplicate" int not null default 0, "invalid" int not null default 0, "leads_added" int not null default 0, "chunks" int not null default 0, "write_ms" int not null default 0, "error_code" varchar(60) null, "error_message" varchar(1000) null, "committed_at" timestamptz null, "started_at" timestamptz null, "finished_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "list_imports_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "list_imports_app_id_index" on "list_imports" ("app_id");`);
    this.addSql(`create index "list_imports_list_id_index" on "list_imports" ("list_id");`);
    this.addSql(
      `create index "list_imports_workspace_id_status_created_at_index" on "list_imports" ("workspace_id", "status", "created_at");`,
    );

    this.addSql(
      `create table "list_import_problems" ("list_import_id" uuid not null, "row" int not null, "reasons" jsonb not null, "values" jsonb not null, constraint "list_import_problems_pkey" primary key ("list_import_id", "row"));`,
    );

    this.addSql(
      `create table "import_file_chunks" ("list_import_id" uuid not null, "seq" int not null, "data" bytea not null, constraint "import_file_chunks_pkey" primary key ("list_import_id", "seq"));`,
    );

    this.addSql(
      `alter table "list_imports" add constraint "list_imports_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "list_imports" add constraint "list_imports_app_id_foreign" foreign key ("app_id") references "apps" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "list_imports" add constraint "list_imports_list_id_foreign" foreign key ("list_id") references "lead_lists" ("id") on update cascade on delete set null;`,
    );

    this.addSql(
      `alter table "list_import_problems" add constraint "list_import_problems_list_import_id_foreign" foreign key ("list_import_id") references "list_imports" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "import_file_chunks" add constraint "import_file_chunks_list_import_id_foreign" foreign key ("list_import_id") references "list_imports" ("id") on update cascade on delete cascade;`,
    );
    // Stored uncompressed: the chunks live only until the import ends, and compressing 1 MiB per chunk
    // would cost the upload and every read more CPU than the space is worth.
    this.addSql(`alter table "import_file_chunks" alter column "data" set storage external;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "list_import_problems" drop constraint "list_import_problems_list_import_id_foreign";`);

    this.addSql(`alter table "import_file_chunks" drop constraint "import_file_chunks_list_import_id_foreign";`);

    this.addSql(`drop table if exists "list_imports" cascade;`);

    this.addSql(`drop table if exists "list_import_problems" cascade;`);

    this.addSql(`drop table if exists "import_file_chunks" cascade;`);
  }
}
