// A local stand-in for Cal.com's API v2 (docs/scheduler.md): what the tests point CALCOM_BASE_URL at.
// It speaks the documented format, written from Cal.com's docs and their examples:
//
//   GET    /v2/me                 {status: "success", data: {id, username, email, name, timeFormat, …}}
//   GET    /v2/bookings           `cal-api-version: 2024-08-13`; status, afterStart, beforeEnd, sortStart,
//                                 take (1–250, default 100), skip; {status, data: [BookingOutput_2024_08_13],
//                                 pagination: {totalItems, remainingItems, returnedItems, itemsPerPage,
//                                 currentPage, totalPages, hasNextPage, hasPreviousPage}}
//   POST   /v2/webhooks           {active, subscriberUrl, triggers, secret?, payloadTemplate?} → 201
//   DELETE /v2/webhooks/{id}      200, 404 when unknown
//
// Every call needs `Authorization: Bearer <API key>` (else 401); refusals are Cal.com's
// `{status: "error", timestamp, path, error: {code, message, details}}`; every answer carries the
// rate-limit headers `X-RateLimit-{Limit,Remaining,Reset}-Default` (the reset in seconds) and more
// than 120 calls a minute per key are 429 (Cal.com's default). Faults on demand: `failNext`.
//
// Its bookings change as at Cal.com (`book`, `reschedule`: a new booking with a new uid, the old one
// cancelled and pointing to it; `cancel`), and each change queues the webhook Cal.com sends — the
// payloads of the docs' examples (version 2021-10-20) with the booking's values — to every active
// subscription of the user that asked for the trigger, signed with `X-Cal-Signature-256` (hex
// HMAC-SHA256 of the raw body with the subscription's secret). `deliver` posts what is queued: in
// order, or shuffled by a seeded random and each several times.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const CAL_TRIGGERS = ['BOOKING_CREATED', 'BOOKING_RESCHEDULED', 'BOOKING_CANCELLED'] as const;
export type CalTrigger = (typeof CAL_TRIGGERS)[number];
const KNOWN_TRIGGERS = new Set<string>([
  ...CAL_TRIGGERS,
  'BOOKING_REQUESTED',
  'BOOKING_REJECTED',
  'BOOKING_PAYMENT_INITIATED',
  'BOOKING_PAID',
  'BOOKING_NO_SHOW_UPDATED',
  'MEETING_STARTED',
  'MEETING_ENDED',
  'RECORDING_READY',
  'FORM_SUBMITTED',
  'INSTANT_MEETING',
]);

export interface CalUser {
  id: number;
  username: string;
  name: string;
  email: string;
  timeZone: string;
  apiKey: string;
}

export interface CalAttendee {
  name: string;
  email: string;
  timeZone?: string;
}

export interface CalBooking {
  id: number;
  uid: string;
  userId: number;
  title: string;
  status: 'accepted' | 'cancelled' | 'rejected' | 'pending';
  start: Date;
  end: Date;
  attendees: CalAttendee[];
  guests: string[];
  metadata: Record<string, string>;
  iCalUID: string;
  iCalSequence: number;
  createdAt: Date;
  updatedAt: Date;
  rescheduledFromUid?: string;
  rescheduledToUid?: string;
  cancellationReason?: string;
}

export interface CalRequest {
  method: string;
  /** Below `/v2`, e.g. `/bookings`. */
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  json: unknown;
  status: number;
  at: number;
}

export interface CalWebhook {
  id: string;
  userId: number;
  subscriberUrl: string;
  triggers: string[];
  active: boolean;
  secret: string | null;
}

/** A webhook Cal.com would send now: the exact body and its headers, to one subscription. */
export interface QueuedDelivery {
  webhookId: string;
  trigger: CalTrigger;
  uid: string;
  url: string;
  body: string;
  headers: Record<string, string>;
}

export interface DeliveryResult {
  delivery: QueuedDelivery;
  status: number;
  body: unknown;
}

export interface CalStandIn {
  /** `http://127.0.0.1:<port>/v2`: CALCOM_BASE_URL. */
  url: string;
  requests: CalRequest[];
  users: Map<number, CalUser>;
  bookings: CalBooking[];
  webhooks: Map<string, CalWebhook>;
  /** The webhooks queued by booking changes, not yet delivered. */
  queued: QueuedDelivery[];
  addUser(opts?: Partial<Pick<CalUser, 'name' | 'email' | 'timeZone'>>): CalUser;
  /** The key no longer works (401 from now on). */
  revoke(apiKey: string): void;
  /** The next `times` calls (optionally only those whose path starts with `path`) answer this fault. */
  failNext(fault: { status: 401 | 429 | 500; times?: number; path?: string; resetSeconds?: number }): void;
  /** A booking made on the user's page (BOOKING_CREATED queued). `metadata` as `?metadata[key]=value` on the link. */
  book(
    user: CalUser,
    b: {
      start: Date;
      minutes?: number;
      title?: string;
      attendees: CalAttendee[];
      guests?: string[];
      metadata?: Record<string, string>;
      at?: Date;
    },
  ): CalBooking;
  /** Moves a booking: a new booking (new uid) replaces it, which is cancelled (BOOKING_RESCHEDULED queued). */
  reschedule(uid: string, to: { start: Date; minutes?: number; at?: Date }): CalBooking;
  /** Cancels a booking (BOOKING_CANCELLED queued). */
  cancel(uid: string, opts?: { reason?: string; at?: Date }): CalBooking;
  /** Takes the queued webhooks out of the queue (to deliver them later, or in another order). */
  take(): QueuedDelivery[];
  /**
   * Posts deliveries (default: the queue, emptied) to their subscriber URLs: `random` shuffles them,
   * each is sent `times` times, `parallel` at once.
   */
  deliver(opts?: {
    deliveries?: QueuedDelivery[];
    random?: () => number;
    times?: number;
    parallel?: number;
  }): Promise<DeliveryResult[]>;
  close(): Promise<void>;
}

const RATE_LIMIT = 120;
const RATE_WINDOW_MS = 60_000;

/** Cal.com's error body (apps/api/v2 HttpExceptionFilter). */
const calError = (status: number, code: string, message: string, path: string) => ({
  status: 'error',
  timestamp: new Date().toISOString(),
  path,
  error: { code, message, details: { message, error: code, statusCode: status } },
});

/** Cal.com's uids are short-uuid strings (22 base58 characters). */
const shortUid = () => {
  const alphabet = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
  return [...randomBytes(22)].map((b) => alphabet[b % alphabet.length]).join('');
};

export async function startCalStandIn(): Promise<CalStandIn> {
  const requests: CalRequest[] = [];
  const users = new Map<number, CalUser>();
  const byKey = new Map<string, CalUser>();
  const bookings: CalBooking[] = [];
  const webhooks = new Map<string, CalWebhook>();
  const queued: QueuedDelivery[] = [];
  const faults: { status: 401 | 429 | 500; times: number; path?: string; resetSeconds?: number }[] = [];
  const calls = new Map<string, number[]>();
  let nextUserId = 1200;
  let nextBookingId = 9100;

  const organizer = (u: CalUser) => ({
    id: u.id,
    name: u.name,
    email: u.email,
    username: u.username,
    usernameInOrg: u.username,
    timeZone: u.timeZone,
    language: { locale: 'en' },
    timeFormat: 'h:mma',
    utcOffset: 0,
  });
  const responses = (b: CalBooking) => ({
    name: { label: 'your_name', value: b.attendees[0]?.name ?? '', isHidden: false },
    email: { label: 'email_address', value: b.attendees[0]?.email ?? '', isHidden: false },
    attendeePhoneNumber: { label: 'phone_number', isHidden: true },
    location: { label: 'location', value: { optionValue: '', value: 'integrations:daily' }, isHidden: false },
    title: { label: 'what_is_this_meeting_about', isHidden: true },
    notes: { label: 'additional_notes', isHidden: false },
    guests: { label: 'additional_guests', value: b.guests, isHidden: false },
    rescheduleReason: { label: 'reason_for_reschedule', isHidden: false },
  });
  const videoUrl = (b: CalBooking) => `https://app.cal.com/video/${b.uid}`;
  const minutes = (b: CalBooking) => Math.round((b.end.getTime() - b.start.getTime()) / 60_000);
  const people = (b: CalBooking) => [
    ...b.attendees.map((a) => ({ email: a.email, name: a.name, timeZone: a.timeZone ?? 'UTC' })),
    ...b.guests.map((email) => ({ email, name: '', timeZone: 'UTC' })),
  ];

  /** The payload of the docs' BOOKING_CREATED / BOOKING_RESCHEDULED examples, with this booking's values. */
  function scheduledPayload(b: CalBooking, u: CalUser, from?: CalBooking) {
    return {
      bookerUrl: 'https://cal.com',
      title: b.title,
      startTime: b.start.toISOString(),
      endTime: b.end.toISOString(),
      additionalNotes: '',
      type: 'intro-call',
      description: '',
      eventTypeId: 4242,
      hideCalendarNotes: false,
      hideCalendarEventDetails: false,
      hideOrganizerEmail: false,
      schedulingType: null,
      seatsPerTimeSlot: null,
      seatsShowAttendees: true,
      seatsShowAvailabilityCount: true,
      customReplyToEmail: null,
      disableRescheduling: false,
      disableCancelling: false,
      organizer: organizer(u),
      attendees: people(b).map((a) => ({
        email: a.email,
        name: a.name,
        firstName: a.name.split(' ')[0] ?? '',
        lastName: a.name.split(' ').slice(1).join(' '),
        timeZone: a.timeZone,
        language: { locale: 'en' },
        utcOffset: 0,
      })),
      customInputs: {},
      responses: responses(b),
      userFieldsResponses: {},
      location: 'integrations:daily',
      destinationCalendar: null,
      // The docs' BOOKING_RESCHEDULED example has no iCalUID (only iCalSequence): nor does ours.
      ...(from ? {} : { iCalUID: b.iCalUID }),
      iCalSequence: b.iCalSequence,
      requiresConfirmation: false,
      oneTimePassword: null,
      organizationId: null,
      hashedLink: null,
      uid: b.uid,
      conferenceData: { createRequest: { requestId: randomUUID() } },
      videoCallData: { type: 'daily_video', id: b.uid, password: 'redacted', url: videoUrl(b) },
      appsStatus: [{ appName: 'Cal Video', type: 'daily_video', success: 1, failures: 0, errors: [] }],
      eventTitle: 'Intro call',
      eventDescription: '',
      price: 0,
      currency: 'usd',
      length: minutes(b),
      bookingId: b.id,
      ...(from
        ? {
            rescheduleId: from.id,
            rescheduleUid: from.uid,
            rescheduleStartTime: from.start.toISOString(),
            rescheduleEndTime: from.end.toISOString(),
          }
        : {}),
      metadata: { videoCallUrl: videoUrl(b), ...b.metadata },
      status: 'ACCEPTED',
    };
  }

  /** The payload of the docs' BOOKING_CANCELLED example, with this booking's values. */
  function cancelledPayload(b: CalBooking, u: CalUser) {
    return {
      bookerUrl: 'https://cal.com',
      title: b.title,
      length: minutes(b),
      type: 'intro-call',
      additionalNotes: '',
      description: '',
      customInputs: {},
      eventTypeId: 4242,
      userFieldsResponses: {},
      responses: {
        name: { label: 'name', value: b.attendees[0]?.name ?? '' },
        email: { label: 'email', value: b.attendees[0]?.email ?? '' },
        guests: { label: 'guests', value: b.guests },
      },
      startTime: b.start.toISOString(),
      endTime: b.end.toISOString(),
      organizer: organizer(u),
      attendees: people(b).map((a) => ({
        name: a.name,
        email: a.email,
        timeZone: a.timeZone,
        phoneNumber: null,
        language: { locale: 'en' },
        utcOffset: 0,
      })),
      uid: b.uid,
      bookingId: b.id,
      location: 'integrations:daily',
      destinationCalendar: [],
      cancellationReason: b.cancellationReason ?? null,
      seatsPerTimeSlot: null,
      seatsShowAttendees: false,
      iCalUID: b.iCalUID,
      iCalSequence: b.iCalSequence,
      hideOrganizerEmail: false,
      customReplyToEmail: null,
      organizationId: null,
      eventTitle: 'Intro call',
      eventDescription: null,
      requiresConfirmation: false,
      price: null,
      currency: 'usd',
      status: 'CANCELLED',
      requestReschedule: false,
    };
  }

  function queue(trigger: CalTrigger, b: CalBooking, payload: unknown, at: Date) {
    const body = JSON.stringify({ triggerEvent: trigger, createdAt: at.toISOString(), payload });
    for (const w of webhooks.values()) {
      if (w.userId !== b.userId || !w.active || !w.triggers.includes(trigger)) continue;
      queued.push({
        webhookId: w.id,
        trigger,
        uid: b.uid,
        url: w.subscriberUrl,
        body,
        headers: {
          'content-type': 'application/json',
          'x-cal-webhook-version': '2021-10-20',
          'x-cal-signature-256': w.secret
            ? createHmac('sha256', w.secret).update(body).digest('hex')
            : 'no-secret-provided',
        },
      });
    }
  }

  /** BookingOutput_2024_08_13 (packages/platform/types/bookings/2024-08-13/outputs/booking.output.ts). */
  function bookingOutput(b: CalBooking) {
    const u = users.get(b.userId)!;
    return {
      id: b.id,
      uid: b.uid,
      title: b.title,
      description: '',
      hosts: [
        { id: u.id, name: u.name, email: u.email, displayEmail: u.email, username: u.username, timeZone: u.timeZone },
      ],
      status: b.status,
      ...(b.cancellationReason ? { cancellationReason: b.cancellationReason } : {}),
      ...(b.rescheduledFromUid ? { rescheduledFromUid: b.rescheduledFromUid } : {}),
      ...(b.rescheduledToUid ? { rescheduledToUid: b.rescheduledToUid } : {}),
      start: b.start.toISOString(),
      end: b.end.toISOString(),
      duration: minutes(b),
      eventTypeId: 4242,
      eventType: { id: 4242, slug: 'intro-call' },
      meetingUrl: videoUrl(b),
      location: videoUrl(b),
      absentHost: false,
      createdAt: b.createdAt.toISOString(),
      updatedAt: b.updatedAt.toISOString(),
      metadata: b.metadata,
      icsUid: b.iCalUID,
      attendees: b.attendees.map((a) => ({
        name: a.name,
        email: a.email,
        displayEmail: a.email,
        timeZone: a.timeZone ?? 'UTC',
        language: 'en',
        absent: false,
      })),
      guests: b.guests,
      bookingFieldsResponses: { name: b.attendees[0]?.name ?? '', email: b.attendees[0]?.email ?? '' },
    };
  }

  const statusOf = (b: CalBooking, now: number): string[] => {
    if (b.status === 'cancelled' || b.status === 'rejected') return ['cancelled'];
    if (b.status === 'pending') return ['unconfirmed'];
    return b.end.getTime() >= now ? ['upcoming'] : ['past'];
  };

  type Reply = { status: number; body?: unknown; headers?: Record<string, string> };

  function route(
    method: string,
    path: string,
    query: URLSearchParams,
    headers: IncomingMessage['headers'],
    json: unknown,
    user: CalUser,
  ): Reply {
    const fullPath = `/v2${path}${query.size ? `?${query}` : ''}`;
    if (method === 'GET' && path === '/me') {
      return {
        status: 200,
        body: {
          status: 'success',
          data: {
            id: user.id,
            username: user.username,
            email: user.email,
            name: user.name,
            timeFormat: 12,
            defaultScheduleId: user.id * 10,
            weekStart: 'Monday',
            timeZone: user.timeZone,
            locale: 'en',
            organizationId: null,
          },
        },
      };
    }
    if (method === 'GET' && path === '/bookings') {
      // Without this exact version Cal.com answers an older version's shape; the stand-in refuses, so a missing header shows.
      if (headers['cal-api-version'] !== '2024-08-13')
        return {
          status: 400,
          body: calError(400, 'BadRequestException', 'cal-api-version must be 2024-08-13 (stand-in)', fullPath),
        };
      const take = query.has('take') ? Number(query.get('take')) : 100;
      const skip = query.has('skip') ? Number(query.get('skip')) : 0;
      if (!Number.isInteger(take) || take < 1 || take > 250 || !Number.isInteger(skip) || skip < 0)
        return { status: 400, body: calError(400, 'BadRequestException', 'take must be 1–250 and skip ≥ 0', fullPath) };
      const statuses = query.get('status')?.split(',').filter(Boolean) ?? [];
      const afterStart = query.get('afterStart') ? Date.parse(query.get('afterStart')!) : null;
      const beforeEnd = query.get('beforeEnd') ? Date.parse(query.get('beforeEnd')!) : null;
      const now = Date.now();
      const mine = bookings
        .filter((b) => b.userId === user.id)
        .filter((b) => !statuses.length || statusOf(b, now).some((s) => statuses.includes(s)))
        .filter((b) => afterStart === null || b.start.getTime() >= afterStart)
        .filter((b) => beforeEnd === null || b.end.getTime() <= beforeEnd)
        .sort((a, b) =>
          query.get('sortStart') === 'desc'
            ? b.start.getTime() - a.start.getTime() || b.id - a.id
            : a.start.getTime() - b.start.getTime() || a.id - b.id,
        );
      const data = mine.slice(skip, skip + take);
      return {
        status: 200,
        body: {
          status: 'success',
          data: data.map(bookingOutput),
          pagination: {
            totalItems: mine.length,
            remainingItems: Math.max(0, mine.length - (skip + take)),
            returnedItems: data.length,
            itemsPerPage: take,
            currentPage: Math.floor(skip / take) + 1,
            totalPages: Math.ceil(mine.length / take),
            hasNextPage: skip + take < mine.length,
            hasPreviousPage: skip > 0,
          },
        },
      };
    }
    if (method === 'POST' && path === '/webhooks') {
      const b = (json ?? {}) as Record<string, unknown>;
      const triggers = Array.isArray(b.triggers) ? b.triggers : [];
      if (
        typeof b.subscriberUrl !== 'string' ||
        !URL.canParse(b.subscriberUrl) ||
        typeof b.active !== 'boolean' ||
        !triggers.length ||
        !triggers.every((x) => typeof x === 'string' && KNOWN_TRIGGERS.has(x)) ||
        (b.secret !== undefined && typeof b.secret !== 'string')
      )
        return { status: 400, body: calError(400, 'BadRequestException', 'invalid webhook', fullPath) };
      const w: CalWebhook = {
        id: randomUUID(),
        userId: user.id,
        subscriberUrl: b.subscriberUrl,
        triggers: triggers as string[],
        active: b.active,
        secret: (b.secret as string | undefined) ?? null,
      };
      webhooks.set(w.id, w);
      return {
        status: 201,
        body: {
          status: 'success',
          data: {
            payloadTemplate: null,
            userId: user.id,
            id: w.id,
            triggers: w.triggers,
            subscriberUrl: w.subscriberUrl,
            active: w.active,
            secret: w.secret,
          },
        },
      };
    }
    const del = /^\/webhooks\/([^/]+)$/.exec(path);
    if (method === 'DELETE' && del) {
      const w = webhooks.get(decodeURIComponent(del[1]));
      if (!w || w.userId !== user.id)
        return { status: 404, body: calError(404, 'NotFoundException', `Webhook (${del[1]}) not found`, fullPath) };
      webhooks.delete(w.id);
      return { status: 200, body: { status: 'success', data: { ...w, payloadTemplate: null } } };
    }
    return { status: 404, body: calError(404, 'NotFoundException', `Cannot ${method} ${fullPath}`, fullPath) };
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const raw = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = raw ? JSON.parse(raw) : undefined;
      } catch {
        json = undefined;
      }
      const path = url.pathname.replace(/^\/v2/, '');
      const method = req.method ?? 'GET';
      const key = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      const user = byKey.get(key);
      const now = Date.now();
      // The limit counts every authenticated call of the key in the last minute (Cal.com: 120, then 429 for a minute).
      const window = (calls.get(key) ?? []).filter((t) => t > now - RATE_WINDOW_MS);
      window.push(now);
      calls.set(key, window);
      const resetSeconds = Math.max(1, Math.ceil((window[0] + RATE_WINDOW_MS - now) / 1000));
      const rateHeaders = {
        'x-ratelimit-limit-default': String(RATE_LIMIT),
        'x-ratelimit-remaining-default': String(Math.max(0, RATE_LIMIT - window.length)),
        'x-ratelimit-reset-default': String(resetSeconds),
      };
      let reply: Reply;
      const fault = faults.find((f) => f.times > 0 && (!f.path || path.startsWith(f.path)));
      const fullPath = `/v2${path}${url.search}`;
      if (!url.pathname.startsWith('/v2/'))
        reply = { status: 404, body: calError(404, 'NotFoundException', `Cannot ${method} ${url.pathname}`, fullPath) };
      else if (!user)
        reply = { status: 401, body: calError(401, 'UnauthorizedException', 'Invalid API Key', fullPath) };
      else if (fault) {
        fault.times--;
        const reset = fault.resetSeconds ?? resetSeconds;
        reply =
          fault.status === 429
            ? {
                status: 429,
                body: calError(429, 'ThrottlerException', 'ThrottlerException: Too Many Requests', fullPath),
                headers: { 'x-ratelimit-remaining-default': '0', 'x-ratelimit-reset-default': String(reset) },
              }
            : fault.status === 401
              ? { status: 401, body: calError(401, 'UnauthorizedException', 'Invalid API Key', fullPath) }
              : { status: 500, body: calError(500, 'InternalServerErrorException', 'Internal server error', fullPath) };
      } else if (window.length > RATE_LIMIT)
        reply = {
          status: 429,
          body: calError(429, 'ThrottlerException', 'ThrottlerException: Too Many Requests', fullPath),
        };
      else reply = route(method, path, url.searchParams, req.headers, json, user);
      requests.push({
        method,
        path,
        query: url.searchParams,
        headers: req.headers,
        json,
        status: reply.status,
        at: now,
      });
      res.writeHead(reply.status, {
        'content-type': 'application/json; charset=utf-8',
        ...(user ? rateHeaders : {}),
        ...reply.headers,
      });
      res.end(reply.body === undefined ? undefined : JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));

  const find = (uid: string) => {
    const b = bookings.find((x) => x.uid === uid);
    if (!b) throw new Error(`no booking ${uid} at the stand-in`);
    return b;
  };

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2`,
    requests,
    users,
    bookings,
    webhooks,
    queued,
    addUser(opts = {}) {
      const id = nextUserId++;
      const u: CalUser = {
        id,
        username: `organizer${id}`,
        name: opts.name ?? `Organizer ${id}`,
        email: opts.email ?? `organizer${id}@example.test`,
        timeZone: opts.timeZone ?? 'Europe/Paris',
        apiKey: `cal_live_${randomBytes(16).toString('hex')}`,
      };
      users.set(id, u);
      byKey.set(u.apiKey, u);
      return u;
    },
    revoke(apiKey) {
      byKey.delete(apiKey);
    },
    failNext(fault) {
      faults.push({ ...fault, times: fault.times ?? 1 });
    },
    book(user, b) {
      const at = b.at ?? new Date();
      const uid = shortUid();
      const booking: CalBooking = {
        id: nextBookingId++,
        uid,
        userId: user.id,
        title: b.title ?? `Intro call between ${user.name} and ${b.attendees[0]?.name ?? 'Guest'}`,
        status: 'accepted',
        start: b.start,
        end: new Date(b.start.getTime() + (b.minutes ?? 30) * 60_000),
        attendees: b.attendees,
        guests: b.guests ?? [],
        metadata: b.metadata ?? {},
        iCalUID: `${uid}@Cal.com`,
        iCalSequence: 0,
        createdAt: at,
        updatedAt: at,
      };
      bookings.push(booking);
      queue('BOOKING_CREATED', booking, scheduledPayload(booking, user), at);
      return booking;
    },
    reschedule(uid, to) {
      const from = find(uid);
      const at = to.at ?? new Date();
      const user = users.get(from.userId)!;
      const next: CalBooking = {
        ...from,
        id: nextBookingId++,
        uid: shortUid(),
        status: 'accepted',
        start: to.start,
        end: new Date(to.start.getTime() + (to.minutes ?? minutes(from)) * 60_000),
        iCalSequence: from.iCalSequence + 1,
        createdAt: at,
        updatedAt: at,
        rescheduledFromUid: from.uid,
        rescheduledToUid: undefined,
      };
      // Cal.com cancels the old booking and points it to the new one.
      from.status = 'cancelled';
      from.rescheduledToUid = next.uid;
      from.updatedAt = at;
      bookings.push(next);
      queue('BOOKING_RESCHEDULED', next, scheduledPayload(next, user, from), at);
      return next;
    },
    cancel(uid, opts = {}) {
      const b = find(uid);
      const at = opts.at ?? new Date();
      b.status = 'cancelled';
      b.cancellationReason = opts.reason ?? 'I am no longer able to attend this session.';
      b.updatedAt = at;
      queue('BOOKING_CANCELLED', b, cancelledPayload(b, users.get(b.userId)!), at);
      return b;
    },
    take() {
      return queued.splice(0);
    },
    async deliver(opts = {}) {
      const list = [...(opts.deliveries ?? queued.splice(0))];
      const copies = list.flatMap((d) => Array.from({ length: opts.times ?? 1 }, () => d));
      if (opts.random) {
        for (let i = copies.length - 1; i > 0; i--) {
          const j = Math.floor(opts.random() * (i + 1));
          [copies[i], copies[j]] = [copies[j], copies[i]];
        }
      }
      const results: DeliveryResult[] = [];
      const parallel = Math.max(1, opts.parallel ?? 1);
      for (let i = 0; i < copies.length; i += parallel) {
        results.push(
          ...(await Promise.all(
            copies.slice(i, i + parallel).map(async (delivery) => {
              const r = await fetch(delivery.url, { method: 'POST', headers: delivery.headers, body: delivery.body });
              const text = await r.text();
              let body: unknown = text;
              try {
                body = JSON.parse(text);
              } catch {
                /* not JSON */
              }
              return { delivery, status: r.status, body };
            }),
          )),
        );
      }
      return results;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
