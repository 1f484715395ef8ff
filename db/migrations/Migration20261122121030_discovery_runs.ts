import { Migration } from '@mikro-orm/migrations';

export class Migration20261122121030_discovery_runs extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "rejected_profiles" ("id" uuid not null, "workspace_id" uuid not null, "app_id" uuid not null, "agent_id" uuid not null, "run_id" uuid null, "signal_key" varchar(100) not null, "dedupe_key" varchar(2048) not null, "candidate" jsonb not null, "score" int not null, "primary_reason" varchar(100) not null, "reasons" jsonb not null, "promoted_at" timestamptz null, "promoted_lead_id" uuid null, "created_at" timestamptz not null, constraint "rejected_profiles_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "rejected_profiles_workspace_id_index" on "rejected_profiles" ("workspace_id");`);
    this.addSql(`create index "rejected_profiles_run_id_index" on "rejected_profiles" ("run_id");`);
    this.addSql(`create index "rejected_profiles_agent_id_id_index" on "rejected_profiles" ("agent_id", "id");`);
    this.addSql(
      `alter table "rejected_profiles" add constraint "rejected_profiles_agent_id_dedupe_key_unique" unique ("agent_id", "dedupe_key");`,
    );

    this.addSql(
      `create table "discovery_runs" ("id" uuid not null, "workspace_id" uuid not null, "app_id" uuid not null, "agent_id" uuid not null, "signal_keys" jsonb not null, "trigger" varchar(20) not null, "status" text check ("status" in ('running', 'completed', 'canceled', 'failed')) not null default 'running', "candidates" int not null default 0, "qualified" int not null default 0, "rejected" int not null default 0, "duplicates" int not null default 0, "pages" int not null default 0, "error" text null, "started_at" timestamptz not null, "finished_at" timestamptz null, constraint "discovery_runs_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "discovery_runs_app_id_index" on "discovery_runs" ("app_id");`);
    this.addSql(`create index "discovery_runs_agent_id_id_index" on "discovery_runs" ("agent_id", "id");`);
    this.addSql(`create index "discovery_runs_workspace_id_id_index" on "discovery_runs" ("workspace_id", "id");`);

    this.addSql(
      `create table "discovered_leads" ("id" uuid not null, "workspace_id" uuid not null, "app_id" uuid not null, "agent_id" uuid not null, "run_id" uuid null, "signal_key" varchar(100) not null, "evidence_key" varchar(64) not null, "source" varchar(40) not null, "external_id" varchar(200) not null, "dedupe_key" varchar(2048) not null, "profile_url" varchar(2048) null, "email" varchar(320) null, "full_name" varchar(400) not null, "first_name" varchar(200) null, "last_name" varchar(200) null, "title" varchar(300) null, "company" varchar(300) null, "company_domain" varchar(255) null, "country" varchar(100) null, "evidence" jsonb not null, "score" int not null, "reasons" jsonb not null, "status" varchar(20) not null default 'new', "promoted" boolean not null default false, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "discovered_leads_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "discovered_leads_app_id_index" on "discovered_leads" ("app_id");`);
    this.addSql(`create index "discovered_leads_run_id_index" on "discovered_leads" ("run_id");`);
    this.addSql(`create index "discovered_leads_workspace_id_id_index" on "discovered_leads" ("workspace_id", "id");`);
    this.addSql(
      `alter table "discovered_leads" add constraint "discovered_leads_agent_id_dedupe_key_unique" unique ("agent_id", "dedupe_key");`,
    );

    this.addSql(
      `alter table "rejected_profiles" add constraint "rejected_profiles_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "rejected_profiles" add constraint "rejected_profiles_app_id_foreign" foreign key ("app_id") references "apps" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "rejected_profiles" add constraint "rejected_profiles_agent_id_foreign" foreign key ("agent_id") references "discovery_agents" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "discovery_runs" add constraint "discovery_runs_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "discovery_runs" add constraint "discovery_runs_app_id_foreign" foreign key ("app_id") references "apps" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "discovery_runs" add constraint "discovery_runs_agent_id_foreign" foreign key ("agent_id") references "discovery_agents" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "discovered_leads" add constraint "discovered_leads_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "discovered_leads" add constraint "discovered_leads_app_id_foreign" foreign key ("app_id") references "apps" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "discovered_leads" add constraint "discovered_leads_agent_id_foreign" foreign key ("agent_id") references "discovery_agents" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "rejected_profiles" cascade;`);

    this.addSql(`drop table if exists "discovery_runs" cascade;`);

    this.addSql(`drop table if exists "discovered_leads" cascade;`);
  }
}
