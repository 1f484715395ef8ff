// The `scheduler` booking provider over Cal.com's API v2 (docs/scheduler.md), each workspace with its
// own API key (`Authorization: Bearer cal_live_…`):
//
//   our operation                  Cal.com
//   account (connect, verify)      GET  /v2/me
//   registerWebhook                POST /v2/webhooks {active, subscriberUrl, triggers, secret}
//   deleteWebhook                  DELETE /v2/webhooks/{id} (404: already gone)
//   bookings (backfill)            GET  /v2/bookings?afterStart&sortStart=asc&take&skip, `cal-api-version: 2024-08-13`
//   inbound events (our hook)      BOOKING_CREATED / BOOKING_RESCHEDULED / BOOKING_CANCELLED, signed with
//                                  `X-Cal-Signature-256` (hex HMAC-SHA256 of the raw body with our secret)
//
// Answers are `{status: "success", data, pagination?}`; refusals `{status: "error", error: {code,
// message, details}}` and are mapped by `calcomErrorOf`. Calls keep Cal.com's pace per API key (120
// a minute by default; a 429's reset pauses the key). A reschedule is a new booking at Cal.com (a new
// uid, the old one canceled): an event carries the uid it replaces (`rescheduleUid`) and the iCalUID
// every version shares, so its meeting follows it (domain/booking/events.ts `bookingChain`).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { sha256Hex } from '../crypto.js';
import { isUuid } from '../ids.js';
import { JsonHttpClient, parseWire, type ProviderErrorCode, type ProviderErrorDetails } from '../provider-http.js';
import { PaceExceeded, ProviderPace, type Rate } from '../provider-pace.js';
import { clip } from '../provider-wire.js';
import {
  BookingError,
  type Booking,
  type BookingAttendee,
  type BookingCredentials,
  type BookingEvent,
  type BookingEventType,
  type BookingPage,
  type BookingProvider,
  type ProviderAccount,
  type ProviderWebhooks,
} from './types.js';

/** The provider named in our errors and logs. */
export const CALCOM = 'calcom';

/** `cal-api-version` of the endpoints that require one (`/v2/me` and `/v2/webhooks` take none). */
export const CAL_API_VERSION_BOOKINGS = '2024-08-13';

/** The triggers we subscribe to, and the booking event each one is. */
export const CAL_TRIGGERS: Readonly<Record<string, BookingEventType>> = {
  BOOKING_CREATED: 'booking.created',
  BOOKING_RESCHEDULED: 'booking.rescheduled',
  BOOKING_CANCELLED: 'booking.canceled',
};

export const CAL_SIGNATURE_HEADER = 'x-cal-signature-256';

/** A `createdAt` further ahead of our clock than this is refused: it orders the booking's versions. */
export const FUTURE_TOLERANCE_MS = 5 * 60_000;

/** Bookings per page at most (`take`: 1–250). */
export const CAL_MAX_TAKE = 250;

/** How long a 429 pauses the key when Cal.com names no reset (its documented block duration). */
export const CAL_DEFAULT_BLOCK_SECONDS = 60;

/**
 * The pace for `perMinute` calls a minute: a burst of a sixth of it, then the rest spread over the
 * minute, so no 60-second window holds more than `perMinute` calls.
 */
export function calcomRate(perMinute: number): Rate {
  const burst = Math.max(1, Math.ceil(perMinute / 6));
  return { burst, everyMs: 60_000 / Math.max(1, perMinute - burst) };
}

// --- Wire shapes (what we read; other fields are ignored) -------------------------------------------

// Booking uids are stored in our booking JSON (lib/booking/wire.ts), whose ids take these characters.
const uid = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_.:@-]+$/, 'a booking uid is letters, digits and _ . : @ -');
const instant = z.iso.datetime({ offset: true }).transform((s) => new Date(s));
const text = (max: number) => z.string().max(max).nullish();
const series = z.string().trim().min(1).max(300).nullish();
const attendee = z.object({ email: z.string().trim().min(3).max(320), name: text(1000) });
const metadata = z.record(z.string(), z.unknown()).nullish();

const envelope = z.object({ triggerEvent: z.string().min(1).max(100), createdAt: instant, payload: z.unknown() });

const webhookBooking = z.object({
  uid,
  title: text(2000),
  startTime: instant,
  endTime: instant,
  attendees: z.array(attendee).min(1).max(100),
  location: z.unknown(),
  metadata,
  videoCallData: z.object({ url: z.unknown() }).partial().nullish().catch(null),
  status: text(40),
  rescheduleUid: uid.nullish(),
  iCalUID: series,
});

const listBooking = z.object({
  uid,
  title: text(2000),
  status: z.string().max(40),
  start: instant,
  end: instant,
  attendees: z.array(attendee).max(100),
  guests: z.array(z.string().trim().min(3).max(320)).max(100).nullish(),
  location: z.unknown(),
  meetingUrl: z.unknown(),
  metadata,
  rescheduledFromUid: uid.nullish(),
  rescheduledToUid: z.string().max(200).nullish(),
  icsUid: series,
  createdAt: instant,
  updatedAt: instant.nullish(),
});

const success = <T extends z.ZodType>(data: T) => z.object({ status: z.literal('success'), data });
const meOutput = success(
  z.object({
    id: z.union([z.number().int(), z.string().trim().min(1).max(200)]),
    email: text(320),
    name: text(1000),
    username: text(1000),
  }),
);
const webhookOutput = success(z.object({ id: z.union([z.number().int(), z.string().trim().min(1).max(200)]) }));
const bookingsOutput = success(z.array(z.unknown()).max(1000)).extend({
  pagination: z.object({ hasNextPage: z.boolean() }).nullish(),
});

// --- Mapping ----------------------------------------------------------------------------------------

const string = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null);

/** The booking page's `?metadata[lead_id]=<uuid>` (the link we send a lead), when it names a lead id. */
function trackingLead(meta: Record<string, unknown> | null | undefined): string | null {
  const lead = string(meta?.lead_id)?.toLowerCase();
  return lead && isUuid(lead) ? lead : null;
}

/** Where the meeting happens: the video link when there is one, else the location as Cal.com gives it. */
const whereOf = (...candidates: unknown[]) => clip(candidates.map(string).find((s) => s) ?? null, 500);

/** Attendees in Cal.com's order (the booker first), then guests not already among them. */
function attendeesOf(list: { email: string; name?: string | null }[], guests: string[] = []): BookingAttendee[] {
  const seen = new Set<string>();
  const out: BookingAttendee[] = [];
  for (const a of [...list, ...guests.map((email) => ({ email, name: null }))]) {
    const key = a.email.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ email: a.email, name: clip(a.name, 200) });
  }
  return out;
}

/**
 * Our event id for a delivery: trigger, booking uid and the trigger's time, so a redelivery of the
 * same event is stored once (Cal.com's payloads carry no event id).
 */
export function calEventId(trigger: string, bookingUid: string, createdAt: Date): string {
  const id = bookingUid.length <= 120 ? bookingUid : sha256Hex(bookingUid).slice(0, 40);
  return `cal:${trigger}:${id}:${createdAt.getTime()}`;
}

/**
 * A Cal.com webhook body as our booking events: none for a trigger we do not follow (a ping, a
 * meeting that ended), else one, or the first problem as text.
 */
export function parseCalWebhook(json: unknown, now = new Date()): { events: BookingEvent[] } | { error: string } {
  const first = (e: z.ZodError, at: string) => {
    const issue = e.issues[0];
    return {
      error: `not a Cal.com webhook: ${[at, ...issue.path].filter(Boolean).join('.') || '(root)'}: ${issue.message}`,
    };
  };
  const env = envelope.safeParse(json);
  if (!env.success) return first(env.error, '');
  const type = CAL_TRIGGERS[env.data.triggerEvent];
  if (!type) return { events: [] };
  const p = webhookBooking.safeParse(env.data.payload);
  if (!p.success) return first(p.error, 'payload');
  const b = p.data;
  const at = env.data.createdAt;
  if (at.getTime() > now.getTime() + FUTURE_TOLERANCE_MS)
    return { error: 'not a Cal.com webhook: createdAt: more than 5 minutes in the future' };
  if (b.endTime <= b.startTime) return { error: 'not a Cal.com webhook: payload.endTime: not after startTime' };
  const canceled =
    type === 'booking.canceled' || b.status?.toUpperCase() === 'CANCELLED' || b.status?.toUpperCase() === 'REJECTED';
  const booking: Booking = {
    bookingId: b.uid,
    status: canceled ? 'canceled' : 'scheduled',
    title: clip(b.title, 300) ?? 'Meeting',
    startsAt: b.startTime,
    endsAt: b.endTime,
    location: whereOf(b.metadata?.videoCallUrl, b.videoCallData?.url, b.location),
    attendees: attendeesOf(b.attendees),
    trackingLeadId: trackingLead(b.metadata),
    updatedAt: at,
    previousBookingId: b.rescheduleUid && b.rescheduleUid !== b.uid ? b.rescheduleUid : null,
    seriesId: b.iCalUID ?? null,
  };
  return { events: [{ eventId: calEventId(env.data.triggerEvent, b.uid, at), type, createdAt: at, booking }] };
}

/** `X-Cal-Signature-256`: the hex HMAC-SHA256 of the raw body keyed with the webhook's secret, compared in constant time. */
export function verifyCalSignature(
  secret: string,
  raw: Buffer,
  headers: Readonly<Record<string, string | string[] | undefined>>,
): { ok: true } | { ok: false; reason: string } {
  const h = headers[CAL_SIGNATURE_HEADER];
  const given = (Array.isArray(h) ? h[0] : h)?.trim();
  if (!given) return { ok: false, reason: 'X-Cal-Signature-256 missing' };
  if (!/^[0-9a-f]{64}$/i.test(given)) return { ok: false, reason: 'X-Cal-Signature-256 malformed' };
  const expected = createHmac('sha256', secret).update(raw).digest();
  return timingSafeEqual(Buffer.from(given, 'hex'), expected)
    ? { ok: true }
    : { ok: false, reason: 'X-Cal-Signature-256 does not match' };
}

/**
 * A booking of `GET /v2/bookings` as ours; null when it is not one (counted invalid) and `moved` for
 * the old version of a rescheduled booking (its new booking carries it: `rescheduledFromUid`).
 */
export function toCalBooking(raw: unknown): Booking | null | 'moved' {
  const r = listBooking.safeParse(raw);
  if (!r.success) return null;
  const b = r.data;
  if (b.rescheduledToUid) return 'moved';
  const attendees = attendeesOf(b.attendees, b.guests ?? []);
  if (!attendees.length || b.end <= b.start) return null;
  const status = b.status.toLowerCase();
  return {
    bookingId: b.uid,
    status: status === 'cancelled' || status === 'rejected' ? 'canceled' : 'scheduled',
    title: clip(b.title, 300) ?? 'Meeting',
    startsAt: b.start,
    endsAt: b.end,
    location: whereOf(b.meetingUrl, b.location),
    attendees,
    trackingLeadId: trackingLead(b.metadata),
    updatedAt: b.updatedAt ?? b.createdAt,
    previousBookingId: b.rescheduledFromUid && b.rescheduledFromUid !== b.uid ? b.rescheduledFromUid : null,
    seriesId: b.icsUid ?? null,
  };
}

// --- Errors -----------------------------------------------------------------------------------------

/** Seconds until the latest `X-RateLimit-Reset-<name>` (Cal.com sends seconds; a Unix time is read as one). */
export function rateLimitReset(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  now = Date.now(),
): number | null {
  let out: number | null = null;
  for (const [name, value] of Object.entries(headers)) {
    if (!/^x-ratelimit-reset(-[a-z0-9_-]+)?$/i.test(name)) continue;
    const n = Number(Array.isArray(value) ? value[0] : value);
    if (!Number.isFinite(n) || n < 0) continue;
    const seconds = n > 1e9 ? Math.max(0, Math.ceil(n - now / 1000)) : Math.ceil(n);
    out = Math.max(out ?? 0, seconds);
  }
  return out;
}

/**
 * Cal.com's refusals as ours (the `errorOf` of our client):
 *
 *   HTTP (Cal.com's error.code)                 → code            details.reason
 *   401 (UnauthorizedException)                 → auth            api_key_refused
 *   403 (ForbiddenException)                    → auth            forbidden
 *   404 (NotFoundException)                     → invalid_request not_found
 *   402 (a plan's limit)                        → invalid_request quota_exhausted
 *   429 (ThrottlerException)                    → rate_limited    rate_limited, retryAfterSeconds from Retry-After,
 *                                                                 else X-RateLimit-Reset-*, else 60
 *   408, 504                                    → timeout
 *   other 5xx                                   → unavailable
 *   400, 422 (BadRequestException, …)           → invalid_request the error code
 */
export function calcomErrorOf(
  status: number,
  body: unknown,
  retryAfterSeconds: number | null,
  headers: Readonly<Record<string, string | string[] | undefined>> = {},
): BookingError | null {
  const e = (body && typeof body === 'object' ? (body as { error?: unknown }).error : null) as {
    code?: unknown;
    message?: unknown;
  } | null;
  const code = typeof e?.code === 'string' ? e.code.slice(0, 80) : null;
  const said = typeof e?.message === 'string' ? e.message.replace(/\s+/g, ' ').slice(0, 300) : null;
  const message = `${said ?? code ?? 'refused'} (HTTP ${status}${code ? `, ${code}` : ''})`;
  const make = (c: ProviderErrorCode, reason: string, extra: ProviderErrorDetails = {}) =>
    new BookingError(CALCOM, c, message, { status, reason, ...extra });
  if (status === 401) return make('auth', 'api_key_refused');
  if (status === 403) return make('auth', 'forbidden');
  if (status === 404) return make('invalid_request', 'not_found');
  if (status === 402) return make('invalid_request', 'quota_exhausted');
  if (status === 429)
    return make('rate_limited', 'rate_limited', {
      retryAfterSeconds: retryAfterSeconds ?? rateLimitReset(headers) ?? CAL_DEFAULT_BLOCK_SECONDS,
    });
  if (status === 408 || status === 504) return make('timeout', code ?? 'timeout');
  if (status >= 500) return make('unavailable', code ?? 'unavailable', { retryAfterSeconds });
  if (status === 400 || status === 422) return make('invalid_request', code ?? 'invalid_request');
  return null;
}

// --- The provider -----------------------------------------------------------------------------------

export interface CalcomOptions {
  /** CALCOM_BASE_URL: Cal.com's API v2 (`https://api.cal.com/v2`). */
  baseUrl: string;
  /** CALCOM_REQUESTS_PER_MINUTE: calls a minute per API key (Cal.com's default: 120). */
  requestsPerMinute?: number;
  timeoutMs?: number;
  /** Tests: the pace's clock. */
  pace?: ProviderPace;
}

const apiKeyOf = (creds: BookingCredentials): string => {
  if (creds.kind !== 'api_key') throw new BookingError(CALCOM, 'invalid_request', 'Cal.com connects with an API key');
  return creds.apiKey;
};

export class CalcomBookingProvider implements BookingProvider {
  readonly name = 'scheduler' as const;
  readonly auth = 'api_key' as const;
  readonly pkce = false;
  readonly webhooks: ProviderWebhooks = { verify: verifyCalSignature, parse: parseCalWebhook };
  private readonly http: JsonHttpClient;
  private readonly pace: ProviderPace;

  constructor(opts: CalcomOptions) {
    this.http = new JsonHttpClient(
      CALCOM,
      // The key is each workspace's own: sent per call (below), none at construction.
      { baseUrl: opts.baseUrl, apiKey: '', timeoutMs: opts.timeoutMs, errorOf: calcomErrorOf },
      (code, message, details) => new BookingError(CALCOM, code, message, details),
    );
    this.pace = opts.pace ?? new ProviderPace(calcomRate(opts.requestsPerMinute ?? 120));
  }

  /** One call with the workspace's key, at Cal.com's pace for that key; a 429 pauses the key until its reset. */
  private async call(
    creds: BookingCredentials,
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    opts: { query?: URLSearchParams; body?: unknown; version?: string; notFoundIsNull?: boolean } = {},
  ): Promise<unknown> {
    const key = apiKeyOf(creds);
    try {
      await this.pace.take(key);
    } catch (err) {
      if (err instanceof PaceExceeded)
        throw new BookingError(CALCOM, 'rate_limited', err.message, {
          reason: 'paced',
          retryAfterSeconds: Math.ceil(err.waitMs / 1000),
        });
      throw err;
    }
    try {
      return await this.http.json(method, path, {
        query: opts.query,
        body: opts.body,
        notFoundIsNull: opts.notFoundIsNull,
        headers: { authorization: `Bearer ${key}`, ...(opts.version ? { 'cal-api-version': opts.version } : {}) },
      });
    } catch (err) {
      if (err instanceof BookingError && err.code === 'rate_limited' && err.retryAfterSeconds)
        this.pace.pause(key, new Date(Date.now() + err.retryAfterSeconds * 1000));
      throw err;
    }
  }

  async account(creds: BookingCredentials): Promise<ProviderAccount> {
    const me = parseWire(this.http, meOutput, await this.call(creds, 'GET', 'me')).data;
    return {
      accountId: String(me.id),
      name: me.name?.trim() || me.username?.trim() || null,
      email: me.email?.trim() || null,
    };
  }

  async registerWebhook(
    creds: BookingCredentials,
    input: { url: string; secret: string },
  ): Promise<{ webhookId: string }> {
    const body = { active: true, subscriberUrl: input.url, triggers: Object.keys(CAL_TRIGGERS), secret: input.secret };
    const w = parseWire(this.http, webhookOutput, await this.call(creds, 'POST', 'webhooks', { body })).data;
    return { webhookId: String(w.id) };
  }

  async deleteWebhook(creds: BookingCredentials, webhookId: string): Promise<void> {
    await this.call(creds, 'DELETE', `webhooks/${encodeURIComponent(webhookId)}`, { notFoundIsNull: true });
  }

  /**
   * Bookings starting after `since`, by start time, `limit` at a time. Our cursor is Cal.com's `skip`
   * (a number); a page says whether another follows (`pagination.hasNextPage`; without it, a full page does).
   */
  async bookings(
    creds: BookingCredentials,
    page: { since: Date; cursor: string | null; limit: number },
  ): Promise<BookingPage> {
    const take = Math.min(Math.max(1, page.limit), CAL_MAX_TAKE);
    const skip = page.cursor && /^\d{1,7}$/.test(page.cursor) ? Number(page.cursor) : 0;
    const query = new URLSearchParams({
      afterStart: page.since.toISOString(),
      sortStart: 'asc',
      take: String(take),
      skip: String(skip),
    });
    const out = parseWire(
      this.http,
      bookingsOutput,
      await this.call(creds, 'GET', 'bookings', { query, version: CAL_API_VERSION_BOOKINGS }),
    );
    const items: Booking[] = [];
    let invalid = 0;
    for (const raw of out.data) {
      const b = toCalBooking(raw);
      if (b === null) invalid++;
      else if (b !== 'moved') items.push(b);
    }
    const more = out.pagination ? out.pagination.hasNextPage : out.data.length >= take;
    return { items, cursor: more && out.data.length > 0 ? String(skip + take) : null, invalid };
  }

  async close(): Promise<void> {
    await this.http.close();
  }
}
