import { Migration } from '@mikro-orm/migrations';

// Events about one thing apply in the order they happened (domain/event-order.ts): the rows that
// state derived from events lives on record the (time, id) of the event they last applied. Rows from
// before recorded none: the next event about them applies.
export class Migration20261129100000_event_order extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "platform_accounts" add column "status_event_at" timestamptz null, add column "status_event_id" varchar(200) null;`,
    );

    this.addSql(`alter table "meetings" add column "external_event_id" varchar(200) null;`);
    // The event that brought each booked meeting to its version, so a later tie is decided by id.
    this.addSql(`update "meetings" m set "external_event_id" = e."event_id"
      from (select distinct on ("meeting_id", "booking_updated_at") "meeting_id", "booking_updated_at", "event_id" from booking_provider_events
             where "meeting_id" is not null and "effect" in ('created', 'updated') order by "meeting_id", "booking_updated_at", "event_id" collate "C" desc) e
     where e."meeting_id" = m."id" and e."booking_updated_at" = m."external_updated_at";`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "meetings" drop column if exists "external_event_id";`);
    this.addSql(
      `alter table "platform_accounts" drop column if exists "status_event_at", drop column if exists "status_event_id";`,
    );
  }
}
