import { Migration } from '@mikro-orm/migrations';

export class Migration20261122134912_enrichment extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "enrichments" ("id" uuid not null, "workspace_id" uuid not null, "target_kind" varchar(20) not null, "target_id" uuid not null, "attempt" int not null, "status" varchar(20) not null default 'queued', "provider" varchar(40) null, "found" boolean not null default false, "fields_filled" jsonb not null default '[]', "fields_kept" jsonb not null default '[]', "credits_charged" int not null default 0, "promoted" boolean not null default false, "error_code" varchar(40) null, "error_message" varchar(500) null, "requested_by" uuid null, "created_at" timestamptz not null, "started_at" timestamptz null, "finished_at" timestamptz null, constraint "enrichments_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "enrichments_workspace_id_index" on "enrichments" ("workspace_id");`);
    this.addSql(
      `alter table "enrichments" add constraint "enrichments_target_kind_target_id_attempt_unique" unique ("target_kind", "target_id", "attempt");`,
    );

    this.addSql(
      `alter table "enrichments" add constraint "enrichments_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "contacts" add column "headline" varchar(300) null, add column "phone" varchar(40) null, add column "enriched_fields" jsonb not null default '[]', add column "enriched_at" timestamptz null, add column "network_provider_id" varchar(200) null;`,
    );

    this.addSql(
      `alter table "discovered_leads" add column "headline" varchar(300) null, add column "phone" varchar(40) null, add column "enriched_fields" jsonb not null default '[]', add column "enriched_at" timestamptz null, add column "network_provider_id" varchar(200) null, add column "enrichment_promoted_at" timestamptz null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "enrichments" cascade;`);

    this.addSql(
      `alter table "contacts" drop column "headline", drop column "phone", drop column "enriched_fields", drop column "enriched_at", drop column "network_provider_id";`,
    );

    this.addSql(
      `alter table "discovered_leads" drop column "headline", drop column "phone", drop column "enriched_fields", drop column "enriched_at", drop column "network_provider_id", drop column "enrichment_promoted_at";`,
    );
  }
}
