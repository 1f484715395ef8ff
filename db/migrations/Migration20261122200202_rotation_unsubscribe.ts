import { Migration } from '@mikro-orm/migrations';

// The round-robin turn per campaign and channel (pickAccount no longer counts past actions per
// account), and the contact's unsubscribe record (checked at enrollment and before each send).
export class Migration20261122200202_rotation_unsubscribe extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "campaign_rotations" ("campaign_id" uuid not null, "channel" varchar(20) not null, "turn" bigint not null default 0, constraint "campaign_rotations_pkey" primary key ("campaign_id", "channel"));`,
    );
    this.addSql(
      `alter table "campaign_rotations" add constraint "campaign_rotations_campaign_id_foreign" foreign key ("campaign_id") references "campaigns" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "contacts" add column "unsubscribed_at" timestamptz null, add column "unsubscribe_source" varchar(20) null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "campaign_rotations" cascade;`);
    this.addSql(`alter table "contacts" drop column "unsubscribed_at", drop column "unsubscribe_source";`);
  }
}
