import { Migration } from '@mikro-orm/migrations';

export class Migration20261122120000_discovery extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "contacts" ("id" uuid not null, "workspace_id" uuid not null, "email" varchar(320) null, "email_normalised" varchar(320) null, "profile_url" varchar(2048) null, "profile_url_normalised" varchar(2048) null, "first_name" varchar(200) null, "last_name" varchar(200) null, "full_name" varchar(400) null, "title" varchar(300) null, "company" varchar(300) null, "company_domain" varchar(255) null, "country" varchar(100) null, "edited_fields" jsonb not null default '[]', "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "contacts_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "contacts" add constraint "contacts_workspace_id_email_normalised_unique" unique ("workspace_id", "email_normalised");`,
    );
    this.addSql(
      `alter table "contacts" add constraint "contacts_workspace_id_profile_url_normalised_unique" unique ("workspace_id", "profile_url_normalised");`,
    );

    this.addSql(
      `create table "lead_lists" ("id" uuid not null, "workspace_id" uuid not null, "app_id" uuid not null, "name" varchar(200) not null, "description" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "lead_lists_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "lead_lists_workspace_id_index" on "lead_lists" ("workspace_id");`);
    this.addSql(`create index "lead_lists_app_id_index" on "lead_lists" ("app_id");`);

    this.addSql(
      `create table "leads" ("id" uuid not null, "workspace_id" uuid not null, "list_id" uuid not null, "contact_id" uuid not null, "source" varchar(20) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "leads_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "leads_workspace_id_index" on "leads" ("workspace_id");`);
    this.addSql(`create index "leads_contact_id_index" on "leads" ("contact_id");`);
    this.addSql(
      `alter table "leads" add constraint "leads_list_id_contact_id_unique" unique ("list_id", "contact_id");`,
    );
    // A list's leads are paged by id.
    this.addSql(`create index "leads_list_id_id_index" on "leads" ("list_id", "id");`);

    this.addSql(
      `create table "discovery_agents" ("id" uuid not null, "workspace_id" uuid not null, "app_id" uuid not null, "name" varchar(200) not null, "status" text check ("status" in ('draft', 'active', 'paused', 'archived')) not null default 'draft', "b2b" boolean not null default true, "icp_description" text null, "icp_filters" jsonb null, "config" jsonb null, "list_id" uuid null, "max_signals" int null, "require_current_employer" boolean not null default false, "keywords" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "discovery_agents_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "discovery_agents_workspace_id_index" on "discovery_agents" ("workspace_id");`);
    this.addSql(`create index "discovery_agents_app_id_index" on "discovery_agents" ("app_id");`);
    this.addSql(`create index "discovery_agents_list_id_index" on "discovery_agents" ("list_id");`);

    this.addSql(
      `create table "agent_sources" ("id" uuid not null, "agent_id" uuid not null, "source" varchar(40) not null, "enabled" boolean not null default true, "config" jsonb not null default '{}', "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "agent_sources_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "agent_sources" add constraint "agent_sources_agent_id_source_unique" unique ("agent_id", "source");`,
    );

    this.addSql(
      `create table "agent_signals" ("id" uuid not null, "agent_id" uuid not null, "key" varchar(100) not null, "kind" varchar(40) not null, "name" varchar(200) not null, "keywords" jsonb not null default '[]', "filters" jsonb null, "enabled" boolean not null default true, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "agent_signals_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "agent_signals" add constraint "agent_signals_agent_id_key_unique" unique ("agent_id", "key");`,
    );

    this.addSql(
      `alter table "contacts" add constraint "contacts_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "lead_lists" add constraint "lead_lists_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "lead_lists" add constraint "lead_lists_app_id_foreign" foreign key ("app_id") references "apps" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "leads" add constraint "leads_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "leads" add constraint "leads_list_id_foreign" foreign key ("list_id") references "lead_lists" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "leads" add constraint "leads_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "discovery_agents" add constraint "discovery_agents_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "discovery_agents" add constraint "discovery_agents_app_id_foreign" foreign key ("app_id") references "apps" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "discovery_agents" add constraint "discovery_agents_list_id_foreign" foreign key ("list_id") references "lead_lists" ("id") on update cascade on delete set null;`,
    );

    this.addSql(
      `alter table "agent_sources" add constraint "agent_sources_agent_id_foreign" foreign key ("agent_id") references "discovery_agents" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "agent_signals" add constraint "agent_signals_agent_id_foreign" foreign key ("agent_id") references "discovery_agents" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "apps" add column "value_proposition" text null, add column "icp_description" text null, add column "icp_filters" jsonb null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "leads" drop constraint "leads_contact_id_foreign";`);

    this.addSql(`alter table "leads" drop constraint "leads_list_id_foreign";`);

    this.addSql(`alter table "discovery_agents" drop constraint "discovery_agents_list_id_foreign";`);

    this.addSql(`alter table "agent_sources" drop constraint "agent_sources_agent_id_foreign";`);

    this.addSql(`alter table "agent_signals" drop constraint "agent_signals_agent_id_foreign";`);

    this.addSql(`drop table if exists "contacts" cascade;`);

    this.addSql(`drop table if exists "lead_lists" cascade;`);

    this.addSql(`drop table if exists "leads" cascade;`);

    this.addSql(`drop table if exists "discovery_agents" cascade;`);

    this.addSql(`drop table if exists "agent_sources" cascade;`);

    this.addSql(`drop table if exists "agent_signals" cascade;`);

    this.addSql(
      `alter table "apps" drop column "value_proposition", drop column "icp_description", drop column "icp_filters";`,
    );
  }
}
