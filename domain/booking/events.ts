// Booking events (docs/meetings.md "Booking events"): a provider's event (our hook) or a booking a
// backfill read is stored once per provider event id, then applied under a lock per booking. An
// event's time is its booking's `updated_at` (ties: the event id), compared by domain/event-order.ts:
// - the booking already has a meeting in the workspace → that meeting follows it (time, title,
//   location, status) in one conditional UPDATE, unless the event is not newer than the one the
//   meeting shows (an older one, or a repeat);
// - else a lead is found, by the booking's tracking lead id, or by the attendees' emails through
//   contacts → leads (see `matchLead`) → a meeting is created;
// - else the event waits in `unmatched` until a person attaches it to a lead or dismisses it.
// A booking once dismissed stays dismissed: its later events are dismissed too.
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  BookingProviderEvent,
  type BookingEventEffect,
  type BookingEventState,
  type BookingMatch,
  type IBookingProviderEvent,
} from '../../db/entities/BookingProviderEvent.js';
import type { IBookingConnection } from '../../db/entities/BookingConnection.js';
import { Contact } from '../../db/entities/Contact.js';
import { Lead } from '../../db/entities/Lead.js';
import { Meeting, type IMeeting } from '../../db/entities/Meeting.js';
import type { Booking, BookingEvent } from '../../lib/booking/types.js';
import { toBooking, toWireBooking, wireBooking } from '../../lib/booking/wire.js';
import { sha256Hex } from '../../lib/crypto.js';
import { uuidv7 } from '../../lib/ids.js';
import { normaliseEmail } from '../../lib/normalise.js';
import { keyset, type PageRequest } from '../../lib/pagination.js';
import { assertWritable } from '../demo/demo.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { isNewerThanApplied, stampParams, type EventStamp } from '../event-order.js';
import type { Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';
import { requireMeetingLead } from '../meetings/meetings.js';

export interface StoredBookingEvent {
  id: string;
  /** False when the provider's event id was already stored (a redelivery). */
  inserted: boolean;
  /** Already handled: nothing more to do. */
  handled: boolean;
}

/** Stores an event (idempotent by the provider's event id within the workspace and provider). */
export async function storeBookingEvent(
  em: EntityManager,
  c: Pick<IBookingConnection, 'id' | 'provider'> & { workspace: { id: string } },
  event: BookingEvent,
  source: 'webhook' | 'backfill',
): Promise<StoredBookingEvent> {
  const b = event.booking;
  const rows = await em.execute<{ id: string; inserted: boolean; state: string }[]>(
    `with ins as (
       insert into booking_provider_events (id, workspace_id, booking_provider_id, provider, event_id, source, type, booking_id, payload, title, starts_at, ends_at,
                                            booking_status, booking_updated_at, attendee_email, attendee_name, state, received_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?, ?, 'received', now())
       on conflict (workspace_id, provider, event_id) do nothing returning id, state)
     select id, true as inserted, state from ins
     union all
     select id, false, state from booking_provider_events where workspace_id = ? and provider = ? and event_id = ? and not exists (select 1 from ins)`,
    [
      uuidv7(),
      c.workspace.id,
      c.id,
      c.provider,
      event.eventId,
      source,
      event.type,
      b.bookingId,
      JSON.stringify(toWireBooking(b)),
      b.title,
      b.startsAt,
      b.endsAt,
      b.status,
      b.updatedAt,
      b.attendees[0].email.slice(0, 320),
      b.attendees[0].name,
      c.workspace.id,
      c.provider,
      event.eventId,
    ],
  );
  // A concurrent delivery of the same event committed after this statement's snapshot: read it now.
  const [row] = rows.length
    ? rows
    : await em.execute<{ id: string; inserted: boolean; state: string }[]>(
        `select id, false as inserted, state from booking_provider_events where workspace_id = ? and provider = ? and event_id = ?`,
        [c.workspace.id, c.provider, event.eventId],
      );
  return { id: row.id, inserted: row.inserted, handled: row.state !== 'received' };
}

/**
 * Stores a hook's event and starts its workflow `booking-event:<id>`. A repeat stores nothing more and
 * starts the workflow again only while the event is unhandled (the start is idempotent by workflow
 * id), so an event whose first start failed is not lost.
 */
export async function ingestBookingEvent(
  em: EntityManager,
  jobs: Jobs,
  c: IBookingConnection,
  event: BookingEvent,
): Promise<StoredBookingEvent> {
  const stored = await storeBookingEvent(em, c, event, 'webhook');
  if (!stored.handled) await jobs.start('booking-event', { eventId: stored.id, workspaceId: c.workspace.id });
  return stored;
}

/** The booking an event row carries (its payload was validated when it was stored). */
const bookingOf = (row: Pick<IBookingProviderEvent, 'payload'>): Booking => toBooking(wireBooking.parse(row.payload));

/** One writer per booking at a time (the hook's workflow, a backfill page, attach). */
const lockBooking = (tx: EntityManager, workspaceId: string, provider: string, bookingId: string) =>
  tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`booking:${workspaceId}:${provider}:${bookingId}`]);

export interface Applied {
  state: BookingEventState;
  effect: BookingEventEffect | null;
  meetingId: string | null;
}

/** Handles a stored event once (the activity of `booking-event:<id>`). */
export async function handleBookingEvent(
  em: EntityManager,
  eventId: string,
): Promise<Applied | { state: 'unknown_event' }> {
  const first = await em
    .fork()
    .findOne(BookingProviderEvent, { id: eventId }, { fields: ['id', 'workspace', 'provider', 'bookingId'] });
  if (!first) return { state: 'unknown_event' };
  return em.transactional(async (tx) => {
    await lockBooking(tx as EntityManager, first.workspace.id, first.provider, first.bookingId);
    const [row] = await tx.find(BookingProviderEvent, { id: eventId }, { refresh: true });
    if (row.state !== 'received')
      return { state: row.state, effect: row.effect ?? null, meetingId: row.meetingId ?? null };
    return applyBookingEvent(tx as EntityManager, row);
  });
}

/**
 * Applies a `received` event inside the caller's transaction, which holds the booking's lock (the
 * backfill applies a page of them in one transaction).
 */
export async function applyBookingEvent(tx: EntityManager, row: IBookingProviderEvent): Promise<Applied> {
  const booking = bookingOf(row);
  const workspaceId = row.workspace.id;
  const meeting = await tx.findOne(
    Meeting,
    { workspace: workspaceId, provider: row.provider, externalId: booking.bookingId },
    { refresh: true },
  );
  if (meeting) {
    // Reconnected: the meeting is the new connection's again (whatever the event's age).
    if (row.bookingProvider && !meeting.bookingProvider) meeting.bookingProvider = row.bookingProvider;
    const effect = await followBooking(tx, meeting.id, booking, stampOf(row));
    return settle(tx, row, {
      state: 'matched',
      effect,
      matchedBy: 'existing_meeting',
      leadId: meeting.lead.id,
      meetingId: meeting.id,
    });
  }
  const dismissed = await tx.count(BookingProviderEvent, {
    workspace: workspaceId,
    provider: row.provider,
    bookingId: booking.bookingId,
    state: 'dismissed',
  });
  if (dismissed)
    return settle(tx, row, {
      state: 'dismissed',
      effect: null,
      matchedBy: null,
      leadId: null,
      meetingId: null,
      decided: true,
    });
  const lead = await matchLead(tx, workspaceId, booking);
  if (lead) {
    const created = createBookedMeeting(tx, row, booking, lead.leadId, lead.contactId);
    return settle(tx, row, {
      state: 'matched',
      effect: 'created',
      matchedBy: lead.by,
      leadId: lead.leadId,
      meetingId: created.id,
    });
  }
  // Unmatched: the newest version of a booking waits; older unmatched versions of it are superseded.
  const [{ newer }] = await tx.execute<{ newer: boolean }[]>(
    `select exists (select 1 from booking_provider_events where workspace_id = ? and provider = ? and booking_id = ? and state = 'unmatched'
                      and ${isNewerThanApplied('?::timestamptz', '?::text', ['booking_updated_at', 'event_id'])}) as newer`,
    [workspaceId, row.provider, booking.bookingId, ...stampParams(stampOf(row))],
  );
  return settle(tx, row, {
    state: newer ? 'superseded' : 'unmatched',
    effect: null,
    matchedBy: null,
    leadId: null,
    meetingId: null,
  });
}

/** An event's place among the events of its booking: the booking's version time, then the event id. */
const stampOf = (row: Pick<IBookingProviderEvent, 'bookingUpdatedAt' | 'eventId'>): EventStamp => ({
  at: row.bookingUpdatedAt,
  id: row.eventId,
});

/** Brings the meeting to the booking's version, when the event is newer than the one it shows; else `stale`. */
async function followBooking(
  tx: EntityManager,
  meetingId: string,
  b: Booking,
  stamp: EventStamp,
): Promise<BookingEventEffect> {
  // A moved meeting has not happened yet at its new time, and a canceled one has no outcome: an
  // outcome recorded for the old time goes. Like every field here, `canceled_at` comes from this
  // version alone (its `updated_at` when it is canceled), so the result does not depend on which
  // older versions were applied before.
  const clears = `(m.starts_at <> b.starts_at or m.ends_at <> b.ends_at or (b.status = 'canceled' and m.status <> 'canceled'))`;
  const [updated] = await tx.execute<{ id: string }[]>(
    `update meetings m set
       title = b.title, starts_at = b.starts_at, ends_at = b.ends_at, location = b.location,
       outcome = case when ${clears} then null else m.outcome end,
       outcome_at = case when ${clears} then null else m.outcome_at end,
       canceled_at = case when b.status = 'canceled' then b.at end,
       status = b.status,
       external_updated_at = b.at, external_event_id = b.eid, updated_at = now()
     from (values (?::text, ?::timestamptz, ?::timestamptz, ?::text, ?::text, ?::timestamptz, ?::text)) as b (title, starts_at, ends_at, location, status, at, eid)
     where m.id = ? and ${isNewerThanApplied('m.external_updated_at', 'm.external_event_id', ['b.at', 'b.eid'])}
     returning m.id`,
    [b.title, b.startsAt, b.endsAt, b.location, b.status, ...stampParams(stamp), meetingId],
  );
  return updated ? 'updated' : 'stale';
}

function createBookedMeeting(
  tx: EntityManager,
  row: IBookingProviderEvent,
  b: Booking,
  leadId: string,
  contactId: string,
): IMeeting {
  return tx.create(Meeting, {
    id: uuidv7(), // known before the flush: the event records it
    workspace: row.workspace,
    lead: tx.getReference(Lead, leadId),
    contact: tx.getReference(Contact, contactId),
    title: b.title,
    startsAt: b.startsAt,
    endsAt: b.endsAt,
    status: b.status,
    outcome: null,
    location: b.location,
    source: 'booking',
    bookingProvider: row.bookingProvider ?? null,
    provider: row.provider,
    externalId: b.bookingId,
    externalUpdatedAt: b.updatedAt,
    externalEventId: row.eventId,
    canceledAt: b.status === 'canceled' ? b.updatedAt : null,
  });
}

/**
 * The event's end state; a matched (or attached) booking supersedes its other unmatched events, so
 * the unmatched list shows each booking once and only while it has no meeting.
 */
async function settle(
  tx: EntityManager,
  row: IBookingProviderEvent,
  to: {
    state: BookingEventState;
    effect: BookingEventEffect | null;
    matchedBy: BookingMatch | null;
    leadId: string | null;
    meetingId: string | null;
    decided?: boolean;
  },
): Promise<Applied> {
  row.state = to.state;
  row.effect = to.effect;
  row.matchedBy = to.matchedBy;
  row.leadId = to.leadId;
  row.meetingId = to.meetingId;
  row.handledAt ??= new Date();
  if (to.decided) row.decidedAt = new Date();
  await tx.flush();
  if (to.state === 'matched' || to.state === 'attached' || to.state === 'unmatched') {
    const older = to.state === 'unmatched' ? `and ${isNewerThanApplied('booking_updated_at', 'event_id')}` : '';
    await tx.execute(
      `update booking_provider_events set state = 'superseded' where workspace_id = ? and provider = ? and booking_id = ? and state = 'unmatched' and id <> ? ${older}`,
      [row.workspace.id, row.provider, row.bookingId, row.id, ...(older ? stampParams(stampOf(row)) : [])],
    );
  }
  return { state: to.state, effect: to.effect, meetingId: to.meetingId };
}

/**
 * The lead a booking belongs to:
 * 1. the booking's tracking lead id, when it names a lead of the workspace;
 * 2. else the first attendee (in the booking's order: the person who booked, then guests) whose
 *    normalised email is a contact of the workspace; of that contact's leads (one per list) the one
 *    whose enrollment replied last, else the one enrolled last, else the newest lead.
 */
export async function matchLead(
  em: EntityManager,
  workspaceId: string,
  b: Booking,
): Promise<{ leadId: string; contactId: string; by: BookingMatch } | null> {
  if (b.trackingLeadId) {
    const [hit] = await em.execute<{ id: string; contact_id: string }[]>(
      `select id, contact_id from leads where id = ? and workspace_id = ?`,
      [b.trackingLeadId, workspaceId],
    );
    if (hit) return { leadId: hit.id, contactId: hit.contact_id, by: 'tracking_lead_id' };
  }
  const emails = [...new Set(b.attendees.map((a) => normaliseEmail(a.email)).filter((e): e is string => !!e))];
  if (!emails.length) return null;
  const [hit] = await em.execute<{ id: string; contact_id: string }[]>(
    `select l.id, l.contact_id from contacts c join leads l on l.contact_id = c.id
       left join lateral (select max(e.replied_at) as replied_at, max(e.enrolled_at) as enrolled_at from enrollments e where e.lead_id = l.id) e on true
      where c.workspace_id = ? and c.email_normalised = any(?::text[])
      order by array_position(?::text[], c.email_normalised::text), e.replied_at desc nulls last, e.enrolled_at desc nulls last, l.created_at desc, l.id desc
      limit 1`,
    [workspaceId, pgArray(emails), pgArray(emails)],
  );
  return hit ? { leadId: hit.id, contactId: hit.contact_id, by: 'attendee_email' } : null;
}

/** A text[] literal (values quoted: emails may hold characters the unquoted form treats specially). */
const pgArray = (values: string[]) =>
  `{${values.map((v) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;

/**
 * Stores a backfilled booking's event and applies it, inside the caller's transaction (a backfill
 * page). Null when it was stored before (the same version of the booking read again).
 */
export async function storeAndApply(
  tx: EntityManager,
  c: IBookingConnection,
  event: BookingEvent,
): Promise<Applied | null> {
  const stored = await storeBookingEvent(tx, c, event, 'backfill');
  if (!stored.inserted) return null;
  await lockBooking(tx, c.workspace.id, c.provider, event.booking.bookingId);
  const [row] = await tx.find(BookingProviderEvent, { id: stored.id }, { refresh: true });
  return applyBookingEvent(tx, row);
}

/** A backfilled booking as an event: its id is derived from the booking and its version, so a re-read stores nothing new. */
export function backfillEvent(b: Booking): BookingEvent {
  return {
    eventId: `backfill:${sha256Hex(b.bookingId).slice(0, 32)}:${b.updatedAt.getTime()}`,
    type: b.status === 'canceled' ? 'booking.canceled' : 'booking.created',
    createdAt: null,
    booking: b,
  };
}

/** The workspace's events waiting for a person, oldest first. */
export async function listUnmatched(
  em: EntityManager,
  actor: Actor,
  page: PageRequest,
): Promise<IBookingProviderEvent[]> {
  const k = keyset(page);
  return em.find(BookingProviderEvent, { workspace: actor.workspaceId, state: 'unmatched', ...k.where }, k.options);
}

async function requireEvent(em: EntityManager, actor: Actor, id: string): Promise<IBookingProviderEvent> {
  const e = await em.findOne(BookingProviderEvent, { id, workspace: actor.workspaceId });
  if (!e) throw notFound('booking event');
  return e;
}

const notUnmatched = (e: IBookingProviderEvent) =>
  conflict('invalid_transition', `the event is ${e.state}; only an unmatched event can be attached or dismissed`);

/**
 * Attaches an unmatched event to a lead: the booking's meeting is created for it, and its later
 * events follow that meeting. 400 `invalid_lead` for a lead that is not the workspace's; 409
 * `invalid_transition` unless the event is unmatched.
 */
export async function attachEvent(
  em: EntityManager,
  actor: Actor,
  id: string,
  leadId: string,
): Promise<{ event: IBookingProviderEvent; meeting: IMeeting }> {
  assertWritable(actor);
  const event = await requireEvent(em, actor, id);
  const lead = await requireMeetingLead(em, actor, leadId).catch((err) => {
    if (err?.code === 'not_found')
      throw badRequest('invalid_lead', 'lead_id must name a lead of the workspace', [
        { path: 'lead_id', message: 'unknown lead' },
      ]);
    throw err;
  });
  return em.transactional(async (tx) => {
    await lockBooking(tx as EntityManager, actor.workspaceId, event.provider, event.bookingId);
    const [row] = await tx.find(BookingProviderEvent, { id }, { refresh: true });
    if (row.state !== 'unmatched') throw notUnmatched(row);
    const booking = bookingOf(row);
    // Under the booking's lock no meeting can exist for it: an event that made one superseded this one.
    const meeting = createBookedMeeting(tx as EntityManager, row, booking, lead.id, lead.contactId);
    row.decidedAt = new Date();
    row.decidedByUserId = actor.userId;
    await settle(tx as EntityManager, row, {
      state: 'attached',
      effect: 'created',
      matchedBy: 'attached',
      leadId: lead.id,
      meetingId: meeting.id,
    });
    return { event: row, meeting };
  });
}

/** Dismisses an unmatched event: its booking's later events are dismissed too. 409 `invalid_transition` unless unmatched. */
export async function dismissEvent(em: EntityManager, actor: Actor, id: string): Promise<IBookingProviderEvent> {
  assertWritable(actor);
  const event = await requireEvent(em, actor, id);
  return em.transactional(async (tx) => {
    await lockBooking(tx as EntityManager, actor.workspaceId, event.provider, event.bookingId);
    const [row] = await tx.find(BookingProviderEvent, { id }, { refresh: true });
    if (row.state !== 'unmatched') throw notUnmatched(row);
    row.state = 'dismissed';
    row.decidedAt = new Date();
    row.decidedByUserId = actor.userId;
    await tx.flush();
    return row;
  });
}
