// A booking as JSON, as stored (booking_provider_events.payload) whichever service it came from, and
// the signed event envelope of the local providers (the offline default's hook; Cal.com's webhooks are
// verified in lib/booking/calcom.ts as Cal.com documents them, Google Calendar is polled).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { isUuid } from '../ids.js';
import { clip } from '../provider-wire.js';
import { BOOKING_EVENT_TYPES, BOOKING_STATUSES, type Booking, type BookingEvent } from './types.js';

export const BOOKING_SIGNATURE_HEADER = 'x-booking-signature';
/** A signature older (or further in the future) than this is refused: a replayed request is stale. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

const id = z.string().trim().min(1).max(200);
const isoDate = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

export const wireBooking = z
  .object({
    id: id.regex(/^[A-Za-z0-9_.:@-]+$/, 'booking ids are letters, digits and _ . : @ -'),
    status: z.enum(BOOKING_STATUSES),
    title: z.string().max(2000).nullish(),
    start_time: isoDate,
    end_time: isoDate,
    location: z.string().max(4000).nullish(),
    attendees: z
      .array(z.object({ email: z.string().trim().min(3).max(320), name: z.string().max(1000).nullish() }))
      .min(1)
      .max(100),
    tracking: z.object({ lead_id: z.string().max(200).nullish() }).nullish(),
    updated_at: isoDate,
  })
  .refine((b) => b.end_time > b.start_time, { message: 'end_time must be after start_time', path: ['end_time'] });

export type WireBooking = z.input<typeof wireBooking>;

/** A validated wire booking as a Booking: free text clipped, a tracking value that is not a lead id dropped. */
export function toBooking(b: z.output<typeof wireBooking>): Booking {
  const lead = b.tracking?.lead_id?.trim().toLowerCase();
  return {
    bookingId: b.id,
    status: b.status,
    title: clip(b.title, 300) ?? 'Meeting',
    startsAt: b.start_time,
    endsAt: b.end_time,
    location: clip(b.location, 500),
    attendees: b.attendees.map((a) => ({ email: a.email, name: clip(a.name, 200) })),
    trackingLeadId: lead && isUuid(lead) ? lead : null,
    updatedAt: b.updated_at,
  };
}

export function toWireBooking(b: Booking): WireBooking {
  return {
    id: b.bookingId,
    status: b.status,
    title: b.title,
    start_time: b.startsAt.toISOString(),
    end_time: b.endsAt.toISOString(),
    location: b.location,
    attendees: b.attendees.map((a) => ({ email: a.email, name: a.name })),
    tracking: b.trackingLeadId ? { lead_id: b.trackingLeadId } : null,
    updated_at: b.updatedAt.toISOString(),
  };
}

export const wireBookingEvent = z.object({
  id: id.regex(/^[A-Za-z0-9_.:-]+$/, 'event ids are letters, digits and _ . : -'),
  type: z.enum(BOOKING_EVENT_TYPES),
  created_at: isoDate.nullish(),
  data: z.object({ booking: wireBooking }),
});

/**
 * The parsed event, or the first problem as text. With `now` (an event received now) a booking whose
 * `updated_at` is later than the signature window allows is refused: that time orders the booking's
 * events, so a future one would make every real later version look older.
 */
export function parseBookingEvent(json: unknown, now?: Date): { event: BookingEvent } | { error: string } {
  const r = wireBookingEvent.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0];
    return { error: `not a booking event: ${issue.path.join('.') || '(root)'}: ${issue.message}` };
  }
  if (now && r.data.data.booking.updated_at.getTime() > now.getTime() + SIGNATURE_TOLERANCE_SECONDS * 1000) {
    return { error: 'not a booking event: data.booking.updated_at: more than 5 minutes in the future' };
  }
  return {
    event: {
      eventId: r.data.id,
      type: r.data.type,
      createdAt: r.data.created_at ?? null,
      booking: toBooking(r.data.data.booking),
    },
  };
}

const mac = (secret: string, t: number, raw: Buffer | string) =>
  createHmac('sha256', secret).update(`${t}.`).update(raw).digest();

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, as a provider signs an event. */
export function signBookingEvent(secret: string, raw: Buffer | string, at = new Date()): string {
  const t = Math.floor(at.getTime() / 1000);
  return `t=${t},v1=${mac(secret, t, raw).toString('hex')}`;
}

/**
 * Whether the signature header is valid for the body: well formed, within 5 minutes of now, and one
 * `v1` value equal to our HMAC (compared in constant time). The reason is for our logs only.
 */
export function checkBookingSignature(
  secret: string,
  raw: Buffer,
  header: string | undefined,
  now = new Date(),
): { ok: true } | { ok: false; reason: string } {
  if (!header) return { ok: false, reason: 'signature header missing' };
  let t: number | undefined;
  const given: Buffer[] = [];
  for (const part of header.split(',').slice(0, 10)) {
    const [k, v] = part.trim().split('=', 2);
    if (k === 't' && /^\d{1,12}$/.test(v ?? '')) t = Number(v);
    else if (k === 'v1' && /^[0-9a-f]{64}$/i.test(v ?? '')) given.push(Buffer.from(v, 'hex'));
  }
  if (t === undefined || given.length === 0) return { ok: false, reason: 'signature header malformed' };
  if (Math.abs(now.getTime() / 1000 - t) > SIGNATURE_TOLERANCE_SECONDS)
    return { ok: false, reason: 'signature timestamp outside the 5-minute window' };
  const expected = mac(secret, t, raw);
  return given.some((g) => timingSafeEqual(g, expected))
    ? { ok: true }
    : { ok: false, reason: 'signature does not match' };
}
