import { Migration } from '@mikro-orm/migrations';

// Issue 46: Google Calendar as the `calendar` booking provider is read by polling with a sync token
// (docs/calendar.md): the token of the connection's last complete read, which the next read starts
// from (null: the next read lists the window again). Not a secret: it reads nothing without the
// connection's access token.
export class Migration20261204113700_booking_sync_token extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "booking_providers" add column "sync_token" varchar(1000) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "booking_providers" drop column "sync_token";`);
  }
}
