import { Migration } from '@mikro-orm/migrations';

export class Migration20261122003928_team extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "sent_emails" ("id" uuid not null, "to" varchar(320) not null, "subject" varchar(500) not null, "text" text not null, "html" text null, "created_at" timestamptz not null, constraint "sent_emails_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "sent_emails_to_index" on "sent_emails" ("to");`);

    this.addSql(
      `create table "team_invitations" ("id" uuid not null, "workspace_id" uuid not null, "invited_by_id" uuid null, "email" varchar(320) not null, "role" text check ("role" in ('admin', 'member')) not null, "all_apps" boolean not null default true, "app_ids" jsonb not null default '[]', "token_hash" varchar(64) not null, "expires_at" timestamptz not null, "accepted_at" timestamptz null, "accepted_by_id" uuid null, "revoked_at" timestamptz null, "email_status" text check ("email_status" in ('pending', 'sent', 'failed')) not null default 'pending', "created_at" timestamptz not null, constraint "team_invitations_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "team_invitations_workspace_id_index" on "team_invitations" ("workspace_id");`);
    this.addSql(`create index "team_invitations_email_index" on "team_invitations" ("email");`);
    this.addSql(
      `alter table "team_invitations" add constraint "team_invitations_token_hash_unique" unique ("token_hash");`,
    );

    this.addSql(
      `create table "team_audit_events" ("id" uuid not null, "workspace_id" uuid not null, "actor_id" uuid null, "action" text check ("action" in ('invitation.created', 'invitation.revoked', 'invitation.accepted', 'member.removed', 'member.role_changed', 'member.access_changed')) not null, "target_member_id" uuid null, "target_invitation_id" uuid null, "details" jsonb not null default '{}', "created_at" timestamptz not null, constraint "team_audit_events_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "team_audit_events_workspace_id_index" on "team_audit_events" ("workspace_id");`);

    this.addSql(
      `alter table "team_invitations" add constraint "team_invitations_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "team_invitations" add constraint "team_invitations_invited_by_id_foreign" foreign key ("invited_by_id") references "users" ("id") on update cascade on delete set null;`,
    );
    this.addSql(
      `alter table "team_invitations" add constraint "team_invitations_accepted_by_id_foreign" foreign key ("accepted_by_id") references "users" ("id") on update cascade on delete set null;`,
    );

    this.addSql(
      `alter table "team_audit_events" add constraint "team_audit_events_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "team_audit_events" add constraint "team_audit_events_actor_id_foreign" foreign key ("actor_id") references "users" ("id") on update cascade on delete set null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "sent_emails" cascade;`);

    this.addSql(`drop table if exists "team_invitations" cascade;`);

    this.addSql(`drop table if exists "team_audit_events" cascade;`);
  }
}
