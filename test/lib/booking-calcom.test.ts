// The scheduler over Cal.com's API v2 (lib/booking/calcom.ts, docs/scheduler.md): webhooks read from
// the docs' own examples, their signature accepted and refused, Cal.com's refusals mapped to ours,
// the key's pace (a 429's reset pauses it), and the bookings list's take/skip pages as our cursor,
// against the stand-in (test/helpers/calcom). No database.
import test from 'ava';
import { createHmac } from 'node:crypto';
import {
  CAL_API_VERSION_BOOKINGS,
  CalcomBookingProvider,
  calcomErrorOf,
  calcomRate,
  parseCalWebhook,
  rateLimitReset,
  toCalBooking,
  verifyCalSignature,
} from '../../lib/booking/calcom.js';
import { BookingError, type BookingEvent } from '../../lib/booking/types.js';
import { refuseRemovedVariables, schedulerSettings } from '../../lib/config.js';
import { ProviderPace } from '../../lib/provider-pace.js';
import { startCalStandIn, type CalStandIn } from '../helpers/calcom/stand-in.js';

// --- The docs' example payloads (docs/developing/guides/automation/webhooks.mdx, version 2021-10-20) ---

const organizer = {
  id: 1,
  name: 'Organizer Name',
  email: 'organizer@example.com',
  username: 'organizer-handle',
  usernameInOrg: 'organizer',
  timeZone: 'UTC',
  language: { locale: 'en' },
  timeFormat: 'h:mma',
  utcOffset: 0,
};
const attendees = [
  {
    email: 'guest@example.com',
    name: 'Guest User',
    firstName: 'Guest',
    lastName: 'User',
    timeZone: 'UTC',
    language: { locale: 'en' },
    utcOffset: 0,
  },
  {
    email: 'additional-guest@example.com',
    name: 'Additional Guest',
    firstName: '',
    lastName: '',
    timeZone: 'UTC',
    language: { locale: 'en' },
    utcOffset: 0,
  },
];
const CREATED = {
  triggerEvent: 'BOOKING_CREATED',
  createdAt: '2024-01-01T00:00:00.000Z',
  payload: {
    bookerUrl: 'https://app.example.com',
    title: 'Strategy Session between Organizer and Guest',
    startTime: '2024-01-01T10:00:00Z',
    endTime: '2024-01-01T10:15:00Z',
    additionalNotes: '',
    type: 'standard-event-type',
    description: '',
    eventTypeId: 123,
    organizer,
    attendees,
    customInputs: {},
    responses: { name: { label: 'your_name', value: 'Guest User', isHidden: false } },
    userFieldsResponses: {},
    location: 'integrations:video-provider',
    destinationCalendar: null,
    iCalUID: 'unique-identifier-string@example.com',
    iCalSequence: 0,
    requiresConfirmation: false,
    oneTimePassword: null,
    organizationId: 1,
    hashedLink: null,
    uid: 'unique-booking-id',
    conferenceData: { createRequest: { requestId: '00000000-0000-0000-0000-000000000000' } },
    videoCallData: {
      type: 'video_provider',
      id: 'meeting-room-id',
      password: 'redacted_token',
      url: 'https://video.example.com/meeting-room-id',
    },
    appsStatus: [{ appName: 'video-app', type: 'video_provider', success: 1, failures: 0, errors: [] }],
    eventTitle: 'Strategy Session',
    eventDescription: '',
    price: 0,
    currency: 'usd',
    length: 15,
    bookingId: 100,
    metadata: { videoCallUrl: 'https://app.example.com/video/unique-booking-id' },
    status: 'ACCEPTED',
  },
};
const RESCHEDULED = {
  triggerEvent: 'BOOKING_RESCHEDULED',
  createdAt: '2024-01-01T10:00:00.000Z',
  payload: {
    ...CREATED.payload,
    title: 'Strategy Session: Organizer & Guest',
    startTime: '2024-01-10T14:30:00Z',
    endTime: '2024-01-10T14:45:00Z',
    iCalUID: undefined,
    iCalSequence: 1,
    uid: 'new-booking-unique-id',
    bookingId: 201,
    rescheduleId: 200,
    rescheduleUid: 'previous-booking-unique-id',
    rescheduleStartTime: '2024-01-05T14:30:00Z',
    rescheduleEndTime: '2024-01-05T14:45:00Z',
    metadata: { videoCallUrl: 'https://app.example.com/video/new-booking-unique-id' },
  },
};
const CANCELLED = {
  triggerEvent: 'BOOKING_CANCELLED',
  createdAt: '2024-01-01T15:00:00.000Z',
  payload: {
    bookerUrl: 'https://app.example.com',
    title: 'Strategy Session: Organizer & Guest',
    length: 15,
    type: 'standard-event-type',
    startTime: '2024-01-04T10:00:00+00:00',
    endTime: '2024-01-04T10:15:00+00:00',
    organizer,
    attendees: attendees.map(({ name, email, timeZone }) => ({
      name,
      email,
      timeZone,
      phoneNumber: null,
      language: { locale: 'en' },
      utcOffset: 0,
    })),
    uid: 'unique-booking-identifier',
    bookingId: 200,
    location: 'integrations:video-provider',
    destinationCalendar: [],
    cancellationReason: 'I am no longer able to attend this session.',
    iCalUID: 'unique-identifier@example.com',
    iCalSequence: 2,
    status: 'CANCELLED',
    requestReschedule: false,
  },
};

const one = (r: ReturnType<typeof parseCalWebhook>): BookingEvent => {
  if ('error' in r) throw new Error(r.error);
  if (r.events.length !== 1) throw new Error(`${r.events.length} events`);
  return r.events[0];
};
const NOW = new Date('2024-02-01T00:00:00Z');

test('BOOKING_CREATED (the docs’ example) is booking.created: uid, times, attendees in order, the video link, iCalUID as the series', (t) => {
  const e = one(parseCalWebhook(CREATED, NOW));
  t.is(e.type, 'booking.created');
  t.is(e.eventId, `cal:BOOKING_CREATED:unique-booking-id:${Date.parse('2024-01-01T00:00:00.000Z')}`);
  t.deepEqual(e.booking, {
    bookingId: 'unique-booking-id',
    status: 'scheduled',
    title: 'Strategy Session between Organizer and Guest',
    startsAt: new Date('2024-01-01T10:00:00Z'),
    endsAt: new Date('2024-01-01T10:15:00Z'),
    location: 'https://app.example.com/video/unique-booking-id',
    attendees: [
      { email: 'guest@example.com', name: 'Guest User' },
      { email: 'additional-guest@example.com', name: 'Additional Guest' },
    ],
    trackingLeadId: null,
    updatedAt: new Date('2024-01-01T00:00:00.000Z'),
    previousBookingId: null,
    seriesId: 'unique-identifier-string@example.com',
  });
});

test('BOOKING_RESCHEDULED carries the uid it replaces; BOOKING_CANCELLED is canceled; the lead id comes from ?metadata[lead_id]', (t) => {
  const moved = one(parseCalWebhook(JSON.parse(JSON.stringify(RESCHEDULED)), NOW));
  t.like(moved, { type: 'booking.rescheduled' });
  t.like(moved.booking, {
    bookingId: 'new-booking-unique-id',
    previousBookingId: 'previous-booking-unique-id',
    seriesId: null,
    status: 'scheduled',
  });
  t.deepEqual(moved.booking.startsAt, new Date('2024-01-10T14:30:00Z'));
  const canceled = one(parseCalWebhook(CANCELLED, NOW));
  t.like(canceled, { type: 'booking.canceled' });
  t.like(canceled.booking, {
    bookingId: 'unique-booking-identifier',
    status: 'canceled',
    seriesId: 'unique-identifier@example.com',
    location: 'integrations:video-provider',
  });
  const lead = '0193a000-0000-7000-8000-0000000000aa';
  const tracked = one(
    parseCalWebhook({ ...CREATED, payload: { ...CREATED.payload, metadata: { lead_id: lead.toUpperCase() } } }, NOW),
  );
  t.is(tracked.booking.trackingLeadId, lead);
  const notALead = one(
    parseCalWebhook({ ...CREATED, payload: { ...CREATED.payload, metadata: { lead_id: 'crm-42' } } }, NOW),
  );
  t.is(notALead.booking.trackingLeadId, null);
});

test('other triggers are no events; a body that is not Cal.com’s webhook, a future createdAt or an end before the start is an error', (t) => {
  t.deepEqual(parseCalWebhook({ triggerEvent: 'MEETING_ENDED', createdAt: CREATED.createdAt, payload: {} }, NOW), {
    events: [],
  });
  t.deepEqual(parseCalWebhook({ triggerEvent: 'PING', createdAt: CREATED.createdAt, payload: {} }, NOW), {
    events: [],
  });
  const error = (body: unknown) => {
    const r = parseCalWebhook(body, NOW);
    return 'error' in r ? r.error : null;
  };
  t.regex(error({ type: 'booking.created' }) ?? '', /^not a Cal\.com webhook: triggerEvent/);
  t.regex(error({ ...CREATED, payload: { ...CREATED.payload, uid: 'has spaces' } }) ?? '', /payload\.uid/);
  t.regex(error({ ...CREATED, payload: { ...CREATED.payload, attendees: [] } }) ?? '', /payload\.attendees/);
  t.regex(error({ ...CREATED, createdAt: '2024-02-01T00:06:00Z' }) ?? '', /future/);
  t.regex(error({ ...CREATED, payload: { ...CREATED.payload, endTime: CREATED.payload.startTime } }) ?? '', /endTime/);
});

test('X-Cal-Signature-256: the hex HMAC-SHA256 of the raw body is accepted; another secret, another body, none or a malformed one refused', (t) => {
  const secret = 'whsec_test_secret';
  const raw = Buffer.from(JSON.stringify(CREATED));
  const sig = createHmac('sha256', secret).update(raw).digest('hex');
  t.deepEqual(verifyCalSignature(secret, raw, { 'x-cal-signature-256': sig }), { ok: true });
  t.deepEqual(verifyCalSignature(secret, raw, { 'x-cal-signature-256': sig.toUpperCase() }), { ok: true });
  t.like(verifyCalSignature('another', raw, { 'x-cal-signature-256': sig }), { ok: false });
  t.like(verifyCalSignature(secret, Buffer.concat([raw, Buffer.from(' ')]), { 'x-cal-signature-256': sig }), {
    ok: false,
    reason: 'X-Cal-Signature-256 does not match',
  });
  t.like(verifyCalSignature(secret, raw, {}), { ok: false, reason: 'X-Cal-Signature-256 missing' });
  t.like(verifyCalSignature(secret, raw, { 'x-cal-signature-256': 'no-secret-provided' }), {
    ok: false,
    reason: 'X-Cal-Signature-256 malformed',
  });
});

test('Cal.com’s refusals as ours: 401/403 auth, 404 not_found, 402 quota, 429 rate_limited with its reset, 5xx unavailable', (t) => {
  const body = (code: string, message: string) => ({
    status: 'error',
    timestamp: '2024-01-01T00:00:00.000Z',
    path: '/v2/me',
    error: { code, message },
  });
  t.like(calcomErrorOf(401, body('UnauthorizedException', 'Invalid API Key'), null), {
    code: 'auth',
    details: { status: 401, reason: 'api_key_refused' },
  });
  t.like(calcomErrorOf(403, body('ForbiddenException', 'no'), null), {
    code: 'auth',
    details: { reason: 'forbidden' },
  });
  t.like(calcomErrorOf(404, body('NotFoundException', 'Webhook not found'), null), {
    code: 'invalid_request',
    retryable: false,
    details: { reason: 'not_found' },
  });
  t.like(calcomErrorOf(402, null, null), { code: 'invalid_request', details: { reason: 'quota_exhausted' } });
  t.like(
    calcomErrorOf(429, body('ThrottlerException', 'Too Many Requests'), null, { 'x-ratelimit-reset-default': '37' }),
    {
      code: 'rate_limited',
      retryable: true,
      retryAfterSeconds: 37,
    },
  );
  t.is(calcomErrorOf(429, null, 5, { 'x-ratelimit-reset-default': '37' })?.retryAfterSeconds, 5, 'Retry-After first');
  t.is(calcomErrorOf(429, null, null, {})?.retryAfterSeconds, 60, 'the documented block when nothing is named');
  t.like(calcomErrorOf(503, null, 3), { code: 'unavailable', retryable: true, retryAfterSeconds: 3 });
  t.like(calcomErrorOf(400, body('BadRequestException', 'bad'), null), {
    code: 'invalid_request',
    details: { reason: 'BadRequestException' },
  });
  t.is(rateLimitReset({ 'x-ratelimit-reset-default': '12', 'x-ratelimit-reset-burst': '3' }), 12);
  t.is(rateLimitReset({ 'x-ratelimit-reset-default': String(Math.floor(Date.now() / 1000) + 30) }), 30, 'a Unix time');
  t.is(rateLimitReset({ 'content-length': '3' }), null);
});

test('the pace per key: no 60-second window holds more than the minute’s allowance', (t) => {
  for (const perMinute of [2, 10, 120, 200, 800]) {
    const r = calcomRate(perMinute);
    t.true(r.burst + 60_000 / r.everyMs <= perMinute + 1e-9, `${perMinute}/min`);
    t.true(r.burst >= 1);
  }
});

test('BOOKING_SCHEDULER_PROVIDER and CALCOM_*: local by default, calcom with the documented base URL; mistakes fail start-up', (t) => {
  t.deepEqual(schedulerSettings({}), { provider: 'local', calcom: null });
  t.deepEqual(schedulerSettings({ BOOKING_SCHEDULER_PROVIDER: 'calcom' }), {
    provider: 'calcom',
    calcom: { baseUrl: 'https://api.cal.com/v2', requestsPerMinute: 120 },
  });
  t.deepEqual(
    schedulerSettings({
      BOOKING_SCHEDULER_PROVIDER: 'CalCom',
      CALCOM_BASE_URL: 'https://cal.example.org/api/v2',
      CALCOM_REQUESTS_PER_MINUTE: '200',
    }).calcom,
    { baseUrl: 'https://cal.example.org/api/v2', requestsPerMinute: 200 },
  );
  t.throws(() => schedulerSettings({ CALCOM_BASE_URL: 'https://api.cal.com/v2' }), {
    message: /CALCOM_BASE_URL is set but BOOKING_SCHEDULER_PROVIDER is not calcom/,
  });
  t.throws(() => schedulerSettings({ BOOKING_SCHEDULER_PROVIDER: 'calendly' }), { message: /one of local, calcom/ });
  t.throws(() => schedulerSettings({ BOOKING_SCHEDULER_PROVIDER: 'calcom', CALCOM_BASE_URL: 'api.cal.com' }), {
    message: /absolute http\(s\) URL/,
  });
  t.throws(() => schedulerSettings({ BOOKING_SCHEDULER_PROVIDER: 'calcom', CALCOM_REQUESTS_PER_MINUTE: '5' }), {
    message: /CALCOM_REQUESTS_PER_MINUTE/,
  });
  t.throws(() => refuseRemovedVariables({ BOOKING_SCHEDULER_BASE_URL: 'https://scheduler.example' }), {
    message:
      /BOOKING_SCHEDULER_BASE_URL is no longer supported \(the HTTP scheduler was removed: .*BOOKING_SCHEDULER_PROVIDER=calcom/,
  });
});

// --- Against the stand-in ---------------------------------------------------------------------------

/** A simulated clock for the pace: sleeping advances it, so waits are measured, not spent. */
function clock() {
  let now = Date.now();
  const slept: number[] = [];
  return {
    now: () => now,
    sleep: async (ms: number) => {
      slept.push(ms);
      now += ms;
    },
    slept,
  };
}

async function setup(t: import('ava').ExecutionContext) {
  const standIn: CalStandIn = await startCalStandIn();
  t.teardown(() => standIn.close());
  const c = clock();
  const provider = new CalcomBookingProvider({
    baseUrl: standIn.url,
    timeoutMs: 5_000,
    pace: new ProviderPace(calcomRate(120), c.now, c.sleep),
  });
  t.teardown(() => provider.close());
  const user = standIn.addUser({ name: 'Ada Organizer', email: 'ada@example.test' });
  return { standIn, provider, user, clock: c, creds: { kind: 'api_key' as const, apiKey: user.apiKey } };
}

test('account: GET /v2/me with the workspace’s key; a refused key is auth, an OAuth credential is not Cal.com’s', async (t) => {
  const { standIn, provider, user, creds } = await setup(t);
  t.deepEqual(await provider.account(creds), {
    accountId: String(user.id),
    name: 'Ada Organizer',
    email: 'ada@example.test',
  });
  const [req] = standIn.requests;
  t.like(req, { method: 'GET', path: '/me' });
  t.is(req.headers.authorization, `Bearer ${user.apiKey}`);
  t.is(req.headers['cal-api-version'], undefined);
  const refused = await t.throwsAsync(provider.account({ kind: 'api_key', apiKey: 'cal_live_wrong' }), {
    instanceOf: BookingError,
  });
  t.like(refused, { code: 'auth', details: { status: 401, reason: 'api_key_refused' } });
  t.regex(refused.message, /Invalid API Key/);
  await t.throwsAsync(provider.account({ kind: 'oauth', accessToken: 'x', refreshToken: null, expiresAt: null }), {
    message: /connects with an API key/,
  });
});

test('registerWebhook: POST /v2/webhooks with our URL, the three triggers and our secret; deleteWebhook (a gone one is fine)', async (t) => {
  const { standIn, provider, user, creds } = await setup(t);
  const { webhookId } = await provider.registerWebhook(creds, {
    url: 'https://api.example.test/hooks/booking/0193',
    secret: 'whsec_abc',
  });
  const post = standIn.requests.find((r) => r.method === 'POST')!;
  t.deepEqual(post.json, {
    active: true,
    subscriberUrl: 'https://api.example.test/hooks/booking/0193',
    triggers: ['BOOKING_CREATED', 'BOOKING_RESCHEDULED', 'BOOKING_CANCELLED'],
    secret: 'whsec_abc',
  });
  t.like(standIn.webhooks.get(webhookId), { userId: user.id, secret: 'whsec_abc', active: true });
  await provider.deleteWebhook(creds, webhookId);
  t.false(standIn.webhooks.has(webhookId));
  await provider.deleteWebhook(creds, webhookId); // 404 at Cal.com: already gone
  t.is(standIn.requests.at(-1)!.status, 404);
});

test('bookings: take/skip pages as our cursor, sorted by start after `since`, with cal-api-version; a moved booking is left out, an invalid one counted', async (t) => {
  const { standIn, provider, user, creds } = await setup(t);
  const since = new Date(Date.now() - 30 * 86_400_000);
  const day = (n: number) => new Date(since.getTime() + n * 3_600_000);
  standIn.book(user, {
    start: new Date(since.getTime() - 86_400_000),
    attendees: [{ name: 'Old', email: 'old@example.test' }],
  });
  for (let i = 1; i <= 119; i++)
    standIn.book(user, {
      start: day(i),
      attendees: [{ name: `Guest ${i}`, email: `guest${i}@example.test` }],
      guests: i === 1 ? ['second@example.test', 'GUEST1@example.test'] : [],
      metadata: i === 2 ? { lead_id: '0193a000-0000-7000-8000-0000000000bb' } : {},
    });
  const moved = standIn.bookings.find((b) => b.start.getTime() === day(3).getTime())!;
  const next = standIn.reschedule(moved.uid, { start: day(200) });
  standIn.bookings.find((b) => b.start.getTime() === day(4).getTime())!.attendees = []; // not a valid booking for us
  standIn.take();

  const pages = [];
  let cursor: string | null = null;
  do {
    const p = await provider.bookings(creds, { since, cursor, limit: 50 });
    pages.push(p);
    cursor = p.cursor;
  } while (cursor && pages.length < 10);
  t.deepEqual(
    pages.map((p) => [p.items.length, p.invalid, p.cursor]),
    [
      [48, 1, '50'],
      [50, 0, '100'],
      [20, 0, null],
    ],
  );
  const reqs = standIn.requests.filter((r) => r.path === '/bookings');
  t.deepEqual(
    reqs.map((r) => [r.query.get('take'), r.query.get('skip'), r.query.get('sortStart'), r.query.get('afterStart')]),
    ['0', '50', '100'].map((skip) => ['50', skip, 'asc', since.toISOString()]),
  );
  t.true(reqs.every((r) => r.headers['cal-api-version'] === CAL_API_VERSION_BOOKINGS));
  const items = pages.flatMap((p) => p.items);
  t.false(
    items.some((b) => b.bookingId === moved.uid),
    'the moved version is not a booking of its own',
  );
  t.like(
    items.find((b) => b.bookingId === next.uid),
    { previousBookingId: moved.uid, seriesId: moved.iCalUID, status: 'scheduled' },
  );
  t.deepEqual(
    items[0].attendees.map((a) => a.email),
    ['guest1@example.test', 'second@example.test'],
    'guests after the attendees, once each',
  );
  t.is(items[1].trackingLeadId, '0193a000-0000-7000-8000-0000000000bb');
  t.true(items.every((b, i) => i === 0 || b.startsAt >= items[i - 1].startsAt));
  t.is(toCalBooking({ uid: 'x' }), null);
});

test('a 429 is rate_limited with Cal.com’s reset, and the key waits that long before its next call (others do not)', async (t) => {
  const { standIn, provider, user, creds, clock: c } = await setup(t);
  const other = standIn.addUser();
  standIn.failNext({ status: 429, resetSeconds: 42, path: '/me' });
  const refused = await t.throwsAsync(provider.account(creds), { instanceOf: BookingError });
  t.like(refused, { code: 'rate_limited', retryable: true, retryAfterSeconds: 42 });
  await provider.account({ kind: 'api_key', apiKey: other.apiKey });
  t.deepEqual(c.slept, [], 'another key does not wait');
  await provider.account(creds);
  t.is(c.slept.length, 1);
  // The pause is set on the wall clock, the pace's simulated one started with the test: a few ms apart.
  t.true(c.slept[0] > 40_000 && c.slept[0] <= 45_000, `waited ${c.slept[0]} ms`);
  t.is(standIn.requests.filter((r) => r.headers.authorization === `Bearer ${user.apiKey}`).length, 2);
});

test('a burst past the minute’s allowance waits for tokens instead of failing; Cal.com never answers 429', async (t) => {
  const { standIn, provider, creds, clock: c } = await setup(t);
  for (let i = 0; i < 30; i++) await provider.account(creds);
  t.true(standIn.requests.every((r) => r.status === 200));
  // 20 at once (the burst), then one every 600 ms.
  t.is(c.slept.length, 10);
  t.true(c.slept.every((ms) => ms > 0 && ms <= 600));
});
