import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000944_initial extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "users" ("id" uuid not null, "email" varchar(320) not null, "name" varchar(200) null, "password_hash" text null, "timezone" varchar(64) null, "locale" varchar(16) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "users_pkey" primary key ("id"));`,
    );
    this.addSql(`alter table "users" add constraint "users_email_unique" unique ("email");`);

    this.addSql(
      `create table "sessions" ("id" uuid not null, "user_id" uuid not null, "user_agent" varchar(400) null, "ip" varchar(64) null, "expires_at" timestamptz not null, "revoked_at" timestamptz null, "last_used_at" timestamptz not null, "created_at" timestamptz not null, constraint "sessions_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "sessions_user_id_index" on "sessions" ("user_id");`);
    this.addSql(`create index "sessions_expires_at_index" on "sessions" ("expires_at");`);

    this.addSql(
      `create table "refresh_tokens" ("id" uuid not null, "session_id" uuid not null, "token_hash" varchar(64) not null, "expires_at" timestamptz not null, "used_at" timestamptz null, "created_at" timestamptz not null, constraint "refresh_tokens_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "refresh_tokens_session_id_index" on "refresh_tokens" ("session_id");`);
    this.addSql(
      `alter table "refresh_tokens" add constraint "refresh_tokens_token_hash_unique" unique ("token_hash");`,
    );

    this.addSql(
      `create table "api_tokens" ("id" uuid not null, "user_id" uuid not null, "name" varchar(100) not null, "token_hash" varchar(64) not null, "prefix" varchar(16) not null, "last_used_at" timestamptz null, "revoked_at" timestamptz null, "created_at" timestamptz not null, constraint "api_tokens_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "api_tokens_user_id_index" on "api_tokens" ("user_id");`);
    this.addSql(`alter table "api_tokens" add constraint "api_tokens_token_hash_unique" unique ("token_hash");`);

    this.addSql(
      `create table "workspaces" ("id" uuid not null, "owner_id" uuid not null, "name" varchar(200) not null, "is_demo" boolean not null default false, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "workspaces_pkey" primary key ("id"));`,
    );
    this.addSql(`alter table "workspaces" add constraint "workspaces_owner_id_unique" unique ("owner_id");`);

    this.addSql(
      `create table "team_members" ("id" uuid not null, "workspace_id" uuid not null, "user_id" uuid not null, "role" text check ("role" in ('owner', 'admin', 'member')) not null, "all_apps" boolean not null default true, "app_ids" jsonb not null default '[]', "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "team_members_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "team_members_user_id_index" on "team_members" ("user_id");`);
    this.addSql(
      `alter table "team_members" add constraint "team_members_workspace_id_user_id_unique" unique ("workspace_id", "user_id");`,
    );

    this.addSql(
      `create table "apps" ("id" uuid not null, "workspace_id" uuid not null, "name" varchar(200) not null, "description" text null, "website_url" varchar(2048) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "apps_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "apps_workspace_id_index" on "apps" ("workspace_id");`);

    this.addSql(
      `alter table "sessions" add constraint "sessions_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "refresh_tokens" add constraint "refresh_tokens_session_id_foreign" foreign key ("session_id") references "sessions" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "api_tokens" add constraint "api_tokens_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "workspaces" add constraint "workspaces_owner_id_foreign" foreign key ("owner_id") references "users" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "team_members" add constraint "team_members_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "team_members" add constraint "team_members_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "apps" add constraint "apps_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
  }
}
