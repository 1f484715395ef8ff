import { Migration } from '@mikro-orm/migrations';

export class Migration20261123015628_bounces extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "contacts" add column "email_bounced_at" timestamptz null;`);

    this.addSql(`alter table "enrollments" add column "bounced_at" timestamptz null;`);

    this.addSql(`alter table "scheduled_actions" add column "bounced_at" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "contacts" drop column "email_bounced_at";`);

    this.addSql(`alter table "enrollments" drop column "bounced_at";`);

    this.addSql(`alter table "scheduled_actions" drop column "bounced_at";`);
  }
}
