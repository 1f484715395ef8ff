import { Migration } from '@mikro-orm/migrations';

export class Migration20261122230131_mcp extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "mcp_clients" ("id" uuid not null, "client_name" varchar(200) not null, "client_uri" varchar(2048) null, "redirect_uris" jsonb not null, "created_at" timestamptz not null, constraint "mcp_clients_pkey" primary key ("id"));`,
    );

    this.addSql(
      `create table "mcp_grants" ("id" uuid not null, "client_id" uuid not null, "user_id" uuid not null, "workspace_id" uuid not null, "scope" varchar(200) not null, "resource" varchar(2048) not null, "redirect_uri" varchar(2048) not null, "code_hash" varchar(64) not null, "code_challenge" varchar(128) not null, "code_expires_at" timestamptz not null, "code_used_at" timestamptz null, "revoked_at" timestamptz null, "created_at" timestamptz not null, constraint "mcp_grants_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "mcp_grants_client_id_index" on "mcp_grants" ("client_id");`);
    this.addSql(`create index "mcp_grants_user_id_index" on "mcp_grants" ("user_id");`);
    this.addSql(`create index "mcp_grants_workspace_id_index" on "mcp_grants" ("workspace_id");`);
    this.addSql(`alter table "mcp_grants" add constraint "mcp_grants_code_hash_unique" unique ("code_hash");`);

    this.addSql(
      `create table "mcp_tokens" ("id" uuid not null, "grant_id" uuid not null, "kind" varchar(10) not null, "token_hash" varchar(64) not null, "expires_at" timestamptz not null, "used_at" timestamptz null, "created_at" timestamptz not null, constraint "mcp_tokens_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "mcp_tokens_grant_id_index" on "mcp_tokens" ("grant_id");`);
    this.addSql(`alter table "mcp_tokens" add constraint "mcp_tokens_token_hash_unique" unique ("token_hash");`);

    this.addSql(
      `create table "mcp_approvals" ("id" uuid not null, "workspace_id" uuid not null, "user_id" uuid not null, "client_id" uuid not null, "grant_id" uuid not null, "tool_name" varchar(100) not null, "risk" varchar(10) not null, "args" jsonb not null, "args_hash" varchar(64) not null, "status" varchar(10) not null default 'pending', "expires_at" timestamptz not null, "decided_at" timestamptz null, "executed_at" timestamptz null, "result" jsonb null, "created_at" timestamptz not null, constraint "mcp_approvals_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "mcp_approvals_workspace_id_index" on "mcp_approvals" ("workspace_id");`);
    this.addSql(
      `create index "mcp_approvals_user_id_client_id_tool_name_args_hash_index" on "mcp_approvals" ("user_id", "client_id", "tool_name", "args_hash");`,
    );

    this.addSql(
      `alter table "mcp_grants" add constraint "mcp_grants_client_id_foreign" foreign key ("client_id") references "mcp_clients" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "mcp_grants" add constraint "mcp_grants_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "mcp_grants" add constraint "mcp_grants_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "mcp_tokens" add constraint "mcp_tokens_grant_id_foreign" foreign key ("grant_id") references "mcp_grants" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "mcp_approvals" add constraint "mcp_approvals_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "mcp_approvals" add constraint "mcp_approvals_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "mcp_approvals" add constraint "mcp_approvals_client_id_foreign" foreign key ("client_id") references "mcp_clients" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "mcp_grants" drop constraint "mcp_grants_client_id_foreign";`);

    this.addSql(`alter table "mcp_approvals" drop constraint "mcp_approvals_client_id_foreign";`);

    this.addSql(`alter table "mcp_tokens" drop constraint "mcp_tokens_grant_id_foreign";`);

    this.addSql(`drop table if exists "mcp_clients" cascade;`);

    this.addSql(`drop table if exists "mcp_grants" cascade;`);

    this.addSql(`drop table if exists "mcp_tokens" cascade;`);

    this.addSql(`drop table if exists "mcp_approvals" cascade;`);
  }
}
