// Booking events (docs/meetings.md "Booking events"): a provider's event (our hook) or a booking a
// backfill read is stored once per provider event id, then applied under a lock per workspace and
// provider. An event's time is its booking's `updated_at` (ties: the event id), compared by
// domain/event-order.ts:
// - the booking (or another version of it: `bookingChain`) already has a meeting in the workspace →
//   that meeting follows it (time, title, location, status, booking id) in one conditional UPDATE,
//   unless the event is not newer than the one the meeting shows (an older one, or a repeat);
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
import { stopForBookedMeeting, type StoppedEnrollment } from './meeting-stops.js';

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
                                            booking_status, booking_updated_at, attendee_email, attendee_name, previous_booking_id, series_id, state, received_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'received', now())
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
      b.previousBookingId ?? null,
      b.seriesId ?? null,
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

/**
 * One writer per workspace and provider at a time (the hook's workflow, a backfill page, attach):
 * the versions of a booking may carry different ids, linked only by events that may not have
 * arrived yet (`bookingChain`), so a lock per booking id would not keep them apart. Booking events
 * are few.
 */
const lockBookings = (tx: EntityManager, workspaceId: string, provider: string) =>
  tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`booking:${workspaceId}:${provider}`]);

/**
 * The ids of the versions of one booking, from the workspace's stored events of the provider:
 * linked by `previous_booking_id` (a reschedule that made a new booking: Cal.com) or by a shared
 * `series_id` (Cal.com's iCalUID), in either direction, transitively. Just `bookingId` for providers
 * that never link them.
 */
export async function bookingChain(
  em: EntityManager,
  workspaceId: string,
  provider: string,
  bookingId: string,
): Promise<string[]> {
  const ids = new Set([bookingId]);
  const series = new Set<string>();
  for (let round = 0; round < 50; round++) {
    const size = ids.size + series.size;
    const rows = await em.execute<
      { booking_id: string; previous_booking_id: string | null; series_id: string | null }[]
    >(
      `select distinct booking_id, previous_booking_id, series_id from booking_provider_events
        where workspace_id = ? and provider = ?
          and (booking_id = any(?::text[]) or previous_booking_id = any(?::text[]) or series_id = any(?::text[]))`,
      [workspaceId, provider, pgArray([...ids]), pgArray([...ids]), pgArray([...series])],
    );
    for (const r of rows) {
      ids.add(r.booking_id);
      if (r.previous_booking_id) ids.add(r.previous_booking_id);
      if (r.series_id) series.add(r.series_id);
    }
    if (ids.size + series.size === size) break;
  }
  return [...ids];
}

export interface Applied {
  state: BookingEventState;
  effect: BookingEventEffect | null;
  meetingId: string | null;
  /** Enrollments the new meeting stopped (meeting-stops.ts): their workflows are told after the commit. */
  stopped?: StoppedEnrollment[];
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
    await lockBookings(tx as EntityManager, first.workspace.id, first.provider);
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
  const chain = await bookingChain(tx, workspaceId, row.provider, booking.bookingId);
  const meetings = await tx.find(
    Meeting,
    { workspace: workspaceId, provider: row.provider, externalId: { $in: chain } },
    { orderBy: { createdAt: 'asc', id: 'asc' }, refresh: true },
  );
  const meeting = meetings.length > 1 ? await mergeMeetings(tx, meetings) : meetings[0];
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
    bookingId: { $in: chain },
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
    const applied = await settle(tx, row, {
      state: 'matched',
      effect: 'created',
      matchedBy: lead.by,
      leadId: lead.leadId,
      meetingId: created.id,
    });
    return { ...applied, stopped: await stopsFor(tx, workspaceId, lead.leadId, booking) };
  }
  // Unmatched: the newest version of a booking waits; older unmatched versions of it are superseded.
  const [{ newer }] = await tx.execute<{ newer: boolean }[]>(
    `select exists (select 1 from booking_provider_events where workspace_id = ? and provider = ? and booking_id = any(?::text[]) and state = 'unmatched'
                      and ${isNewerThanApplied('?::timestamptz', '?::text', ['booking_updated_at', 'event_id'])}) as newer`,
    [workspaceId, row.provider, pgArray(chain), ...stampParams(stampOf(row))],
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
  // The booking id is this version's too: a provider that gives a moved booking a new id (Cal.com)
  // shows the current one.
  const clears = `(m.starts_at <> b.starts_at or m.ends_at <> b.ends_at or (b.status = 'canceled' and m.status <> 'canceled'))`;
  const [updated] = await tx.execute<{ id: string }[]>(
    `update meetings m set
       title = b.title, starts_at = b.starts_at, ends_at = b.ends_at, location = b.location,
       outcome = case when ${clears} then null else m.outcome end,
       outcome_at = case when ${clears} then null else m.outcome_at end,
       canceled_at = case when b.status = 'canceled' then b.at end,
       status = b.status, external_id = b.booking_id,
       external_updated_at = b.at, external_event_id = b.eid, updated_at = now()
     from (values (?::text, ?::timestamptz, ?::timestamptz, ?::text, ?::text, ?::text, ?::timestamptz, ?::text)) as b (title, starts_at, ends_at, location, status, booking_id, at, eid)
     where m.id = ? and ${isNewerThanApplied('m.external_updated_at', 'm.external_event_id', ['b.at', 'b.eid'])}
     returning m.id`,
    [b.title, b.startsAt, b.endsAt, b.location, b.status, b.bookingId, ...stampParams(stamp), meetingId],
  );
  return updated ? 'updated' : 'stale';
}

/** A meeting booked (not one canceled before we saw it) stops the lead's running sequences. */
const stopsFor = (tx: EntityManager, workspaceId: string, leadId: string, b: Booking) =>
  b.status === 'scheduled' ? stopForBookedMeeting(tx, { workspaceId, leadId, startsAt: b.startsAt }) : [];

/**
 * Versions of one booking that each got a meeting before an event linked them (Cal.com: a moved
 * booking's cancellation delivered before its reschedule, with no iCalUID to tie them): the oldest
 * meeting is kept with the newest version any of them shows (an outcome goes with a moved time),
 * their events and notes move to it, and the others are deleted with their outcome reminders.
 */
async function mergeMeetings(tx: EntityManager, meetings: IMeeting[]): Promise<IMeeting> {
  const [keep, ...rest] = meetings;
  const all = pgArray(meetings.map((m) => m.id));
  const dups = pgArray(rest.map((m) => m.id));
  const [newest] = await tx.execute<Record<string, unknown>[]>(
    `select id, title, starts_at, ends_at, location, status, canceled_at, external_id, external_updated_at, external_event_id,
            (select string_agg(notes, E'\n\n' order by created_at) from meetings where id = any(?::uuid[]) and notes is not null) as notes
       from meetings where id = any(?::uuid[])
      order by coalesce(external_updated_at, '-infinity'::timestamptz) desc, coalesce(external_event_id, '') collate "C" desc limit 1`,
    [dups, all],
  );
  await tx.execute(`update booking_provider_events set meeting_id = ? where meeting_id = any(?::uuid[])`, [
    keep.id,
    dups,
  ]);
  await tx.execute(`delete from follow_up_reminders where meeting_id = any(?::uuid[])`, [dups]);
  await tx.execute(`delete from meetings where id = any(?::uuid[])`, [dups]);
  const moved = newest.id !== keep.id;
  await tx.execute(
    `update meetings set
       notes = case when ?::text is null then notes when notes is null then ?::text else notes || E'\n\n' || ?::text end,
       title = case when ? then ?::text else title end, starts_at = case when ? then ?::timestamptz else starts_at end,
       ends_at = case when ? then ?::timestamptz else ends_at end, location = case when ? then ?::text else location end,
       status = case when ? then ?::text else status end, canceled_at = case when ? then ?::timestamptz else canceled_at end,
       external_id = case when ? then ?::text else external_id end,
       external_updated_at = case when ? then ?::timestamptz else external_updated_at end,
       external_event_id = case when ? then ?::text else external_event_id end,
       outcome = case when ? then null else outcome end, outcome_at = case when ? then null else outcome_at end,
       updated_at = now()
     where id = ?`,
    [
      newest.notes,
      newest.notes,
      newest.notes,
      ...(
        [
          'title',
          'starts_at',
          'ends_at',
          'location',
          'status',
          'canceled_at',
          'external_id',
          'external_updated_at',
          'external_event_id',
        ] as const
      ).flatMap((k) => [moved, newest[k]]),
      moved,
      moved,
      keep.id,
    ],
  );
  const [merged] = await tx.find(Meeting, { id: keep.id }, { refresh: true });
  return merged;
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
    const chain = await bookingChain(tx, row.workspace.id, row.provider, row.bookingId);
    await tx.execute(
      `update booking_provider_events set state = 'superseded' where workspace_id = ? and provider = ? and booking_id = any(?::text[]) and state = 'unmatched' and id <> ? ${older}`,
      [row.workspace.id, row.provider, pgArray(chain), row.id, ...(older ? stampParams(stampOf(row)) : [])],
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
  await lockBookings(tx, c.workspace.id, c.provider);
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
): Promise<{ event: IBookingProviderEvent; meeting: IMeeting; stopped: StoppedEnrollment[] }> {
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
    await lockBookings(tx as EntityManager, actor.workspaceId, event.provider);
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
    return { event: row, meeting, stopped: await stopsFor(tx as EntityManager, actor.workspaceId, lead.id, booking) };
  });
}

/** Dismisses an unmatched event: its booking's later events are dismissed too. 409 `invalid_transition` unless unmatched. */
export async function dismissEvent(em: EntityManager, actor: Actor, id: string): Promise<IBookingProviderEvent> {
  assertWritable(actor);
  const event = await requireEvent(em, actor, id);
  return em.transactional(async (tx) => {
    await lockBookings(tx as EntityManager, actor.workspaceId, event.provider);
    const [row] = await tx.find(BookingProviderEvent, { id }, { refresh: true });
    if (row.state !== 'unmatched') throw notUnmatched(row);
    row.state = 'dismissed';
    row.decidedAt = new Date();
    row.decidedByUserId = actor.userId;
    await tx.flush();
    return row;
  });
}
