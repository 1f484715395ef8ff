import { Migration } from '@mikro-orm/migrations';

// Issue 46: Cal.com as the `scheduler` booking provider (docs/scheduler.md). A reschedule there makes
// a new booking (a new uid; the event names the old one in `rescheduleUid`), and every version keeps
// one iCalUID: an event records both, so the versions of a booking are found as one meeting
// (domain/booking/events.ts `bookingChain`), whatever order their events arrive in.
export class Migration20261204121500_booking_event_chain extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "booking_provider_events" add column "previous_booking_id" varchar(200) null;`);
    this.addSql(`alter table "booking_provider_events" add column "series_id" varchar(300) null;`);
    this.addSql(
      `create index "booking_provider_events_previous_booking_index" on "booking_provider_events" ("workspace_id", "provider", "previous_booking_id") where "previous_booking_id" is not null;`,
    );
    this.addSql(
      `create index "booking_provider_events_series_index" on "booking_provider_events" ("workspace_id", "provider", "series_id") where "series_id" is not null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "booking_provider_events_series_index";`);
    this.addSql(`drop index if exists "booking_provider_events_previous_booking_index";`);
    this.addSql(`alter table "booking_provider_events" drop column "series_id";`);
    this.addSql(`alter table "booking_provider_events" drop column "previous_booking_id";`);
  }
}
