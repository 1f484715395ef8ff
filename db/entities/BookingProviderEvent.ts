import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { BookingConnection } from './BookingConnection.js';
import { Workspace } from './Workspace.js';

/** docs/meetings.md "Booking events": received → matched | unmatched; unmatched → attached | dismissed | superseded. */
export const BOOKING_EVENT_STATES = [
  'received',
  'matched',
  'unmatched',
  'attached',
  'dismissed',
  'superseded',
] as const;
export type BookingEventState = (typeof BOOKING_EVENT_STATES)[number];
/** What a matched event did to its meeting. */
export const BOOKING_EVENT_EFFECTS = ['created', 'updated', 'stale'] as const;
export type BookingEventEffect = (typeof BOOKING_EVENT_EFFECTS)[number];
export const BOOKING_MATCHES = ['existing_meeting', 'tracking_lead_id', 'attendee_email', 'attached'] as const;
export type BookingMatch = (typeof BOOKING_MATCHES)[number];

// A booking event as received (POST /hooks/booking/{providerId}) or read by a backfill, stored once
// per provider event id (a backfill's ids are `backfill:<bookingId>:<updated_at ms>`), then handled:
// applied to the booking's meeting, matched to a lead, or left unmatched for a person to attach or
// dismiss. The booking's main fields are copied out of the payload for the unmatched list.
export const BookingProviderEvent = defineEntity({
  name: 'BookingProviderEvent',
  tableName: 'booking_provider_events',
  uniques: [{ properties: ['workspace', 'provider', 'eventId'] }],
  indexes: [
    { name: 'booking_provider_events_workspace_id_state_id_index', properties: ['workspace', 'state', 'id'] },
    {
      name: 'booking_provider_events_workspace_id_provider_booking_id_index',
      properties: ['workspace', 'provider', 'bookingId'],
    },
  ],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    bookingProvider: p.manyToOne(BookingConnection).ref().nullable().deleteRule('set null').index(),
    provider: p.string().length(40),
    eventId: p.string().length(200),
    source: p.enum(['webhook', 'backfill']),
    type: p.string().length(40),
    bookingId: p.string().length(200),
    /** The booking as the provider sent it (wire JSON, docs/meetings.md). */
    payload: p.json<Record<string, unknown>>(),
    title: p.string().length(300),
    startsAt: p.datetime(),
    endsAt: p.datetime(),
    bookingStatus: p.string().length(20),
    bookingUpdatedAt: p.datetime(),
    /** The first attendee (the person who booked), as given. */
    attendeeEmail: p.string().length(320),
    attendeeName: p.string().length(200).nullable(),
    /** The booking this one replaced (Cal.com's reschedule makes a new booking): they are one meeting. */
    previousBookingId: p.string().length(200).nullable(),
    /** An id all versions of a booking share (Cal.com's iCalUID): they are one meeting. */
    seriesId: p.string().length(300).nullable(),
    state: p.enum([...BOOKING_EVENT_STATES]).default('received'),
    effect: p.enum([...BOOKING_EVENT_EFFECTS]).nullable(),
    matchedBy: p.enum([...BOOKING_MATCHES]).nullable(),
    leadId: p.uuid().nullable(),
    meetingId: p.uuid().nullable(),
    receivedAt: p.datetime().onCreate(() => new Date()),
    handledAt: p.datetime().nullable(),
    decidedAt: p.datetime().nullable(),
    decidedByUserId: p.uuid().nullable(),
  }),
});
export type IBookingProviderEvent = InferEntity<typeof BookingProviderEvent>;
