import { Migration } from '@mikro-orm/migrations';

export class Migration20261122130122_review extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "discovered_leads" add column "approved_lead_id" uuid null, add column "approved_list_id" uuid null, add column "reviewed_at" timestamptz null, add column "reviewed_by" uuid null, add column "reject_reason" varchar(200) null;`,
    );
    this.addSql(
      `create index "discovered_leads_workspace_id_status_agent_id_index" on "discovered_leads" ("workspace_id", "status", "agent_id");`,
    );
    this.addSql(`create index "discovered_leads_agent_id_status_index" on "discovered_leads" ("agent_id", "status");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "discovered_leads_workspace_id_status_agent_id_index";`);
    this.addSql(`drop index "discovered_leads_agent_id_status_index";`);
    this.addSql(
      `alter table "discovered_leads" drop column "approved_lead_id", drop column "approved_list_id", drop column "reviewed_at", drop column "reviewed_by", drop column "reject_reason";`,
    );
  }
}
