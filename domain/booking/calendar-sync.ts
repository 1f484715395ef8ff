// A calendar's events as booking events (Google Calendar, docs/calendar.md "Mapping"). A calendar
// holds every meeting of its owner, most of them nothing to do with leads, so only these become
// booking events:
// - an event with a lead among its attendees (the booking's lead rule, `matchLead`);
// - an event of a booking we already follow (an event of it stored before, so also one with a
//   meeting), whatever its attendees are now: its new version moves or cancels that meeting;
// - a deleted event that Google reduced to its id: the version we hold, canceled (nothing when we
//   hold none).
// Everything else (internal meetings, personal blocks, a canceled event we never followed) is not
// stored. Each kept version becomes the event `backfillEvent` names (its id is the event id and its
// `updated`, so reading a version again stores nothing), typed `booking.created`,
// `booking.rescheduled` (its times differ from its meeting's) or `booking.canceled`.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { IBookingConnection } from '../../db/entities/BookingConnection.js';
import type { Booking, BookingEvent, BookingPage } from '../../lib/booking/types.js';
import { toBooking, wireBooking } from '../../lib/booking/wire.js';
import { backfillEvent, matchLead } from './events.js';

/** The latest version of a booking we stored, and its meeting's times (null: none of either). */
async function held(
  tx: EntityManager,
  c: Pick<IBookingConnection, 'provider'> & { workspace: { id: string } },
  bookingId: string,
): Promise<{ booking: Booking; meeting: { startsAt: Date; endsAt: Date } | null } | null> {
  const [row] = await tx.execute<{ payload: unknown }[]>(
    `select payload from booking_provider_events where workspace_id = ? and provider = ? and booking_id = ?
      order by booking_updated_at desc, event_id desc limit 1`,
    [c.workspace.id, c.provider, bookingId],
  );
  if (!row) return null;
  const [m] = await tx.execute<{ starts_at: Date; ends_at: Date }[]>(
    `select starts_at, ends_at from meetings where workspace_id = ? and provider = ? and external_id = ?`,
    [c.workspace.id, c.provider, bookingId],
  );
  return {
    booking: toBooking(wireBooking.parse(row.payload)),
    meeting: m ? { startsAt: new Date(m.starts_at), endsAt: new Date(m.ends_at) } : null,
  };
}

function eventOf(b: Booking, meeting: { startsAt: Date; endsAt: Date } | null): BookingEvent {
  const moved =
    meeting && (meeting.startsAt.getTime() !== b.startsAt.getTime() || meeting.endsAt.getTime() !== b.endsAt.getTime());
  return {
    ...backfillEvent(b),
    type: b.status === 'canceled' ? 'booking.canceled' : moved ? 'booking.rescheduled' : 'booking.created',
  };
}

/** The booking events a page of the calendar carries, in the page's order (deleted events last). */
export async function calendarEvents(
  tx: EntityManager,
  c: Pick<IBookingConnection, 'provider'> & { workspace: { id: string } },
  page: Pick<BookingPage, 'items' | 'removed'>,
): Promise<BookingEvent[]> {
  const out: BookingEvent[] = [];
  for (const b of page.items) {
    const h = await held(tx, c, b.bookingId);
    if (!h && (b.status === 'canceled' || !(await matchLead(tx, c.workspace.id, b)))) continue;
    out.push(eventOf(b, h?.meeting ?? null));
  }
  for (const r of page.removed ?? []) {
    const h = await held(tx, c, r.bookingId);
    // Nothing followed, or already canceled (a deletion read again by a later window read).
    if (!h || h.booking.status === 'canceled') continue;
    // A deletion is newer than the version we hold, even when Google gives it no later `updated`.
    const at = Math.max(r.updatedAt.getTime(), h.booking.updatedAt.getTime() + 1);
    out.push(eventOf({ ...h.booking, status: 'canceled', updatedAt: new Date(at) }, h.meeting));
  }
  return out;
}
