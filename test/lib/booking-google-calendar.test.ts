// The `calendar` booking provider over Google Calendar API v3 (lib/booking/google-calendar.ts), against
// the stand-in that speaks Google's documented formats (test/helpers/google-calendar/stand-in.ts):
// the OAuth flow (PKCE, offline access, refusals), the events' mapping, reads of a window and of
// changes (pages, sync tokens, 410), Google's errors as ours (backoff on rate limits, quota, auth), the
// configuration, and — on the domain's sync (domain/booking/backfill.ts, calendar-sync.ts) — a seeded
// model: generated calendar changes, polls, refused tokens and window re-reads leave each followed
// event's meeting at the calendar's version, each version stored once.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { backfillNextPage, finishBackfill, startBackfill } from '../../domain/booking/backfill.js';
import { finishOAuthConnection, startOAuthConnection, type BookingDeps } from '../../domain/booking/providers.js';
import { resolveActor } from '../../domain/workspaces.js';
import {
  createBookingProviders,
  FULL_SYNC_REQUIRED,
  GoogleCalendarProvider,
  LocalBookingProvider,
  pkceChallenge,
  type BookingCredentials,
} from '../../lib/booking/index.js';
import { readEvent, secondsToPacificMidnight } from '../../lib/booking/google-calendar.js';
import { calendarSettings, refuseRemovedVariables, schedulerSettings } from '../../lib/config.js';
import { ProviderError } from '../../lib/provider-http.js';
import { api, call, closeApi, createTestApp } from '../helpers/api.js';
import { withStart } from '../helpers/jobs.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { seedContacts } from '../helpers/contacts.js';
import {
  GOOGLE_ERRORS,
  openAuthorization,
  startGoogleStandIn,
  type GoogleAttendee,
  type GoogleStandIn,
} from '../helpers/google-calendar/stand-in.js';
test.after.always(closeApi);

const REDIRECT = 'https://api.example.test/oauth/booking/calendar/callback';
const SCOPE = 'https://www.googleapis.com/auth/calendar.readonly';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const envOf = (g: GoogleStandIn, extra: Record<string, string> = {}) => ({
  BOOKING_CALENDAR_PROVIDER: 'google',
  GOOGLE_CALENDAR_BASE_URL: g.calendarBaseUrl,
  GOOGLE_OAUTH_AUTHORIZE_URL: g.authorizeUrl,
  GOOGLE_OAUTH_TOKEN_URL: g.tokenUrl,
  BOOKING_CALENDAR_CLIENT_ID: g.clientId,
  BOOKING_CALENDAR_CLIENT_SECRET: g.clientSecret,
  ...extra,
});

async function standIn(t: { teardown(fn: () => unknown): void }, redirectUris = [REDIRECT]) {
  const g = await startGoogleStandIn({ redirectUris });
  t.teardown(() => g.close());
  const p = new GoogleCalendarProvider({ ...calendarSettings(envOf(g)).google!, timeoutMs: 5000, backoffMs: 20 });
  t.teardown(() => p.close());
  return { g, p };
}

/** Through the stand-in's authorization page as the browser would, then the code for tokens. */
async function connect(g: GoogleStandIn, p: GoogleCalendarProvider, account: string): Promise<BookingCredentials> {
  g.signIn = account;
  const verifier = randomBytes(32).toString('base64url');
  const back = await openAuthorization(
    p.authorizationUrl({ state: 'st', redirectUri: REDIRECT, codeChallenge: pkceChallenge(verifier), loginHint: null }),
  );
  const code = new URL(back.location!).searchParams.get('code')!;
  const t = await p.exchangeCode({ code, redirectUri: REDIRECT, codeVerifier: verifier });
  return {
    kind: 'oauth',
    accessToken: t.accessToken,
    refreshToken: t.refreshToken,
    expiresAt: t.expiresAt!.toISOString(),
  };
}

const failure = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    return err as ProviderError;
  }
  throw new Error('expected a failure');
};
const at = (ms: number) => ({ dateTime: new Date(ms).toISOString(), timeZone: 'Europe/Paris' });
const eventsCalls = (g: GoogleStandIn, from = 0) =>
  g.requests.slice(from).filter((r) => r.path === '/calendar/v3/calendars/primary/events');

test('OAuth: the authorization URL as Google documents it; the code with its PKCE verifier; refresh; refusals', async (t) => {
  const { g, p } = await standIn(t);
  const url = new URL(
    p.authorizationUrl({ state: 'st', redirectUri: REDIRECT, codeChallenge: 'ch', loginHint: 'ada@example.test' }),
  );
  t.is(url.origin + url.pathname, g.authorizeUrl);
  t.deepEqual(Object.fromEntries(url.searchParams), {
    client_id: g.clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: SCOPE,
    access_type: 'offline',
    prompt: 'consent',
    include_granted_scopes: 'true',
    state: 'st',
    code_challenge: 'ch',
    code_challenge_method: 'S256',
    login_hint: 'ada@example.test',
  });

  const creds = await connect(g, p, 'ada@example.test');
  t.true(creds.kind === 'oauth' && creds.refreshToken!.startsWith('1//'));
  const exchange = g.requests.find((r) => r.path === '/token')!;
  t.like(Object.fromEntries(exchange.form!), {
    grant_type: 'authorization_code',
    redirect_uri: REDIRECT,
    client_id: g.clientId,
    client_secret: g.clientSecret,
  });
  t.truthy(exchange.form!.get('code_verifier'));
  t.deepEqual(await p.account(creds), {
    accountId: 'ada@example.test',
    name: 'ada@example.test',
    email: 'ada@example.test',
  });
  const refreshed = await p.refresh((creds as { refreshToken: string }).refreshToken);
  t.true(refreshed.accessToken.startsWith('ya29.'));
  t.is(refreshed.refreshToken, null, 'Google does not rotate the refresh token');
  t.true(refreshed.expiresAt!.getTime() > Date.now() + 3000_000);

  // A wrong verifier, a code used twice: invalid_grant → auth.
  g.signIn = 'ada@example.test';
  const back = await openAuthorization(
    p.authorizationUrl({
      state: 's',
      redirectUri: REDIRECT,
      codeChallenge: pkceChallenge('a'.repeat(43)),
      loginHint: null,
    }),
  );
  const code = new URL(back.location!).searchParams.get('code')!;
  t.like(await failure(p.exchangeCode({ code, redirectUri: REDIRECT, codeVerifier: 'b'.repeat(43) })), {
    code: 'auth',
  });
  // Revoked at Google: the refresh is refused for good.
  g.revoke('ada@example.test');
  const refused = await failure(p.refresh((creds as { refreshToken: string }).refreshToken));
  t.like(refused, { code: 'auth', retryable: false });
  t.is(refused.details.reason, 'invalid_grant');
  t.regex(refused.message, /revoked or has expired/);
  // The calendar scope unchecked on the consent screen: the grant is refused at the exchange.
  g.consent = { scopes: [] };
  const unchecked = await failure(connect(g, p, 'bob@example.test'));
  t.is(unchecked.code, 'auth');
  t.regex(unchecked.message, /permission was not granted/);
  g.consent = 'allow';

  // Our client refused (a wrong secret): our configuration, not the account's grant.
  const wrong = new GoogleCalendarProvider({
    ...calendarSettings(envOf(g, { BOOKING_CALENDAR_CLIENT_SECRET: 'GOCSPX-wrong' })).google!,
    timeoutMs: 5000,
  });
  t.teardown(() => wrong.close());
  const bad = await failure(wrong.refresh('1//whatever'));
  t.like(bad, { code: 'invalid_request' });
  t.is(bad.details.reason, 'invalid_client');
});

test('mapping: an event as a booking — guests, status, times, location; deleted, all-day and malformed events', (t) => {
  const now = new Date('2026-12-01T08:00:00Z');
  const base = {
    kind: 'calendar#event',
    id: 'abc123def456',
    status: 'confirmed',
    summary: 'Intro call',
    updated: '2026-11-30T10:00:00.123Z',
    start: { dateTime: '2026-12-03T10:00:00+01:00', timeZone: 'Europe/Paris' },
    end: { dateTime: '2026-12-03T10:30:00+01:00', timeZone: 'Europe/Paris' },
    organizer: { email: 'me@corp.example', self: true },
    hangoutLink: 'https://meet.google.com/abc-defg-hij',
    attendees: [
      { email: 'me@corp.example', self: true, organizer: true, responseStatus: 'accepted' },
      { email: 'Grace@Navy.example', displayName: 'Grace Hopper', responseStatus: 'needsAction' },
      { email: 'room-1@resource.calendar.google.com', resource: true, responseStatus: 'accepted' },
      { email: 'ada@example.test', responseStatus: 'declined' },
    ],
  };
  const r = readEvent(base, now);
  t.deepEqual(r, {
    kind: 'booking',
    booking: {
      bookingId: 'abc123def456',
      status: 'scheduled',
      title: 'Intro call',
      startsAt: new Date('2026-12-03T09:00:00Z'),
      endsAt: new Date('2026-12-03T09:30:00Z'),
      location: 'https://meet.google.com/abc-defg-hij',
      attendees: [{ email: 'Grace@Navy.example', name: 'Grace Hopper' }],
      trackingLeadId: null,
      updatedAt: new Date('2026-11-30T10:00:00.123Z'),
    },
  });
  // An invitation the lead sent: the organizer comes first.
  const invited = readEvent(
    {
      ...base,
      status: 'tentative',
      organizer: { email: 'lead@client.example', displayName: 'Lea' },
      attendees: [
        { email: 'lead@client.example', organizer: true, responseStatus: 'accepted' },
        { email: 'me@corp.example', self: true },
        { email: 'other@client.example' },
      ],
    },
    now,
  );
  t.like(invited, { kind: 'booking', booking: { status: 'scheduled' } });
  t.deepEqual(invited.kind === 'booking' && invited.booking.attendees.map((a) => a.email), [
    'lead@client.example',
    'other@client.example',
  ]);
  // Every guest declined, or the event cancelled with its details: canceled.
  t.like(readEvent({ ...base, attendees: [{ email: 'g@x.example', responseStatus: 'declined' }] }, now), {
    booking: { status: 'canceled', attendees: [{ email: 'g@x.example' }] },
  });
  t.like(readEvent({ ...base, status: 'cancelled' }, now), { booking: { status: 'canceled' } });
  // A personal block: no guest; the owner stands in (canceled: nobody is coming).
  t.like(readEvent({ ...base, attendees: undefined }, now), {
    booking: { status: 'canceled', attendees: [{ email: 'me@corp.example' }] },
  });
  // Deleted, reduced to its id (no `updated`: the time it was read).
  t.deepEqual(readEvent({ kind: 'calendar#event', id: 'gone1', status: 'cancelled' }, now), {
    kind: 'removed',
    bookingId: 'gone1',
    updatedAt: now,
  });
  t.like(readEvent({ ...base, start: { date: '2026-12-03' }, end: { date: '2026-12-04' } }, now), {
    kind: 'invalid',
    why: 'all-day event',
  });
  t.like(readEvent({ ...base, end: base.start }, now), { kind: 'invalid' });
  t.like(readEvent({ ...base, id: 'bad id/with slash' }, now), { kind: 'invalid' });
  t.like(readEvent({ nonsense: true }, now), { kind: 'invalid' });
  // The conference link when there is no location nor Meet link.
  t.like(
    readEvent(
      {
        ...base,
        hangoutLink: undefined,
        conferenceData: {
          entryPoints: [
            { entryPointType: 'phone', uri: 'tel:+1' },
            { entryPointType: 'video', uri: 'https://zoom.example/j/1' },
          ],
        },
      },
      now,
    ),
    { booking: { location: 'https://zoom.example/j/1' } },
  );
});

test('reads: a window in pages (the same query each page), then changes from the sync token; 410 when it is refused', async (t) => {
  const { g, p } = await standIn(t);
  const creds = await connect(g, p, 'owner@corp.example');
  const cal = g.calendar('owner@corp.example');
  const start = Date.now() + DAY;
  const guest = (i: number): GoogleAttendee[] => [{ email: `guest${i}@client.example`, responseStatus: 'accepted' }];
  const ids = [0, 1, 2, 3, 4].map(
    (i) =>
      cal.insert({
        summary: `Call ${i}`,
        start: at(start + i * HOUR),
        end: at(start + i * HOUR + 1800_000),
        attendees: guest(i),
      }).id,
  );
  cal.insert({
    summary: 'Long ago',
    start: at(Date.now() - 60 * DAY),
    end: at(Date.now() - 60 * DAY + HOUR),
    attendees: guest(9),
  });
  cal.insert({ summary: 'Offsite', start: { date: '2030-01-02' }, end: { date: '2030-01-03' }, attendees: guest(8) });

  const since = new Date(Date.now() - 30 * DAY);
  let mark = g.requests.length;
  const pages = [];
  let cursor: string | null = null;
  do {
    const page = await p.bookings(creds, { since, cursor, limit: 2 });
    pages.push(page);
    cursor = page.cursor;
  } while (cursor);
  t.is(pages.length, 3);
  t.deepEqual(
    pages.flatMap((x) => x.items.map((b) => b.bookingId)),
    ids,
    'the window, in pages; the old event left out',
  );
  t.is(
    pages.reduce((n, x) => n + x.invalid, 0),
    1,
    'the all-day event',
  );
  t.true(pages.slice(0, -1).every((x) => x.cursor!.startsWith('f.') && x.nextSyncToken === null));
  const syncToken = pages.at(-1)!.nextSyncToken!;
  t.truthy(syncToken);
  const reads = eventsCalls(g, mark);
  t.deepEqual(
    reads.map((r) => {
      const q = Object.fromEntries(r.query);
      return { ...q, pageToken: q.pageToken ? '<token>' : undefined };
    }),
    [0, 1, 2].map((i) => ({
      singleEvents: 'true',
      showDeleted: 'true',
      maxResults: '2',
      timeMin: since.toISOString(),
      pageToken: i ? '<token>' : undefined,
    })),
  );
  t.true(reads.every((r) => r.authorization === `Bearer ${(creds as { accessToken: string }).accessToken}`));

  // Changes: a move, a deletion reduced to its id, a new event.
  cal.patch(ids[1], { start: at(start + 5 * DAY), end: at(start + 5 * DAY + HOUR) });
  cal.cancel(ids[2], { minimal: true });
  const added = cal.insert({
    summary: 'New',
    start: at(start + 2 * DAY),
    end: at(start + 2 * DAY + HOUR),
    attendees: guest(7),
  }).id;
  mark = g.requests.length;
  const first = await p.bookings(creds, { since, cursor: null, limit: 2, syncToken });
  t.true(first.cursor!.startsWith('i.'));
  const second = await p.bookings(creds, { since, cursor: first.cursor, limit: 2, syncToken });
  t.is(second.cursor, null);
  t.deepEqual(
    [...first.items, ...second.items].map((b) => [b.bookingId, b.startsAt.toISOString()]),
    [
      [ids[1], new Date(start + 5 * DAY).toISOString()],
      [added, new Date(start + 2 * DAY).toISOString()],
    ],
  );
  t.deepEqual(
    [...(first.removed ?? []), ...(second.removed ?? [])].map((r) => r.bookingId),
    [ids[2]],
  );
  const changes = eventsCalls(g, mark);
  t.true(changes.every((r) => r.query.get('syncToken') === syncToken && !r.query.has('timeMin')));
  t.truthy(changes[1].query.get('pageToken'));
  const next = second.nextSyncToken!;
  t.not(next, syncToken);
  // Nothing changed since: an empty page and a token.
  t.like(await p.bookings(creds, { since, cursor: null, limit: 2, syncToken: next }), { items: [], cursor: null });

  // Google invalidates tokens (expiry, ACL changes): 410 fullSyncRequired → our FULL_SYNC_REQUIRED.
  g.expireSyncTokens();
  const gone = await failure(p.bookings(creds, { since, cursor: null, limit: 2, syncToken: next }));
  t.like(gone, { code: 'invalid_request', retryable: false });
  t.is(gone.details.reason, FULL_SYNC_REQUIRED);
  // A read of changes resumed without its token cannot go on either.
  t.is(
    (await failure(p.bookings(creds, { since, cursor: 'i.x', limit: 2, syncToken: null }))).details.reason,
    FULL_SYNC_REQUIRED,
  );
  t.like(await failure(p.bookings(creds, { since, cursor: 'garbage', limit: 2 })), { code: 'invalid_request' });
  // No webhook: the calendar is polled.
  t.like(await failure(p.registerWebhook()), { code: 'invalid_request' });
});

test('errors: rate limits retried with backoff (Retry-After honoured), quota not retried, auth and outages as ours', async (t) => {
  const { g, p } = await standIn(t);
  const creds = await connect(g, p, 'owner@corp.example');
  const calls = () => g.requests.filter((r) => r.path === '/calendar/v3/calendars/primary').length;

  // 403 rateLimitExceeded, 403 userRateLimitExceeded: Google says back off; the call then succeeds.
  let before = calls();
  g.failNext(GOOGLE_ERRORS.rateLimitExceeded, GOOGLE_ERRORS.userRateLimitExceeded);
  t.is((await p.account(creds)).accountId, 'owner@corp.example');
  t.is(calls() - before, 3);
  // 429 with Retry-After: the account's calls wait that long.
  before = calls();
  g.failNext({ ...GOOGLE_ERRORS.tooManyRequests, retryAfter: '1' });
  const started = Date.now();
  await p.account(creds);
  t.true(Date.now() - started >= 950, `waited ${Date.now() - started} ms`);
  t.is(calls() - before, 2);
  // Still limited after the retries: rate_limited (retryable), 4 attempts in all.
  before = calls();
  g.failNext(...Array(4).fill(GOOGLE_ERRORS.rateLimitExceeded));
  const limited = await failure(p.account(creds));
  t.like(limited, { code: 'rate_limited', retryable: true });
  t.is(limited.details.reason, 'rateLimitExceeded');
  t.is(calls() - before, 4);

  // Quota (Calendar usage limits): not retried here; an hour to wait.
  const q = new GoogleCalendarProvider({ ...calendarSettings(envOf(g)).google!, timeoutMs: 5000, backoffMs: 20 });
  t.teardown(() => q.close());
  before = calls();
  g.failNext(GOOGLE_ERRORS.quotaExceeded);
  const quota = await failure(q.account(creds));
  t.like(quota, { code: 'quota_exhausted', retryable: false });
  t.is(quota.retryAfterSeconds, 3600);
  t.is(calls() - before, 1);
  // Meanwhile this account's calls are held by its pace rather than sent (another account's are not).
  const held = await failure(q.account(creds));
  t.is(held.code, 'rate_limited');
  t.regex(held.message, /next call in 3600 s/);
  t.is(calls() - before, 1);
  const other = await connect(g, q, 'other@corp.example');
  t.is((await q.account(other)).accountId, 'other@corp.example');

  const mapped = async (e: (typeof GOOGLE_ERRORS)[keyof typeof GOOGLE_ERRORS]) => {
    g.failNext(e);
    const err = await failure(p.account(creds));
    return [err.code, err.details.reason, err.details.status];
  };
  t.deepEqual(await mapped(GOOGLE_ERRORS.authError), ['auth', 'authError', 401]);
  t.deepEqual(await mapped(GOOGLE_ERRORS.insufficientPermissions), ['auth', 'insufficientPermissions', 403]);
  t.deepEqual(await mapped(GOOGLE_ERRORS.backendError), ['unavailable', 'backendError', 500]);
  t.deepEqual(await mapped(GOOGLE_ERRORS.fullSyncRequired), ['invalid_request', FULL_SYNC_REQUIRED, 410]);
  // An access token Google no longer takes (expired or revoked): 401 → auth.
  g.expireAccessTokens();
  t.like(await failure(p.account(creds)), { code: 'auth' });
  // Google's daily quotas reset at midnight Pacific time.
  const s = secondsToPacificMidnight(new Date('2026-12-01T07:30:00Z')); // 23:30 in Los Angeles
  t.is(s, 1800);
});

test('configuration: BOOKING_CALENDAR_PROVIDER=google with its client; Google’s endpoints by default; the removed variables named', (t) => {
  t.deepEqual(calendarSettings({}), { provider: 'local', google: null });
  const g = calendarSettings({
    BOOKING_CALENDAR_PROVIDER: 'google',
    BOOKING_CALENDAR_CLIENT_ID: 'id',
    BOOKING_CALENDAR_CLIENT_SECRET: 's',
  });
  t.deepEqual(g.google, {
    baseUrl: 'https://www.googleapis.com/calendar/v3',
    authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: 'https://oauth2.googleapis.com/token',
    clientId: 'id',
    clientSecret: 's',
    scope: SCOPE,
    requestsPerMinute: 500,
  });
  t.throws(() => calendarSettings({ BOOKING_CALENDAR_PROVIDER: 'google' }), {
    message: /needs BOOKING_CALENDAR_CLIENT_ID and BOOKING_CALENDAR_CLIENT_SECRET/,
  });
  t.throws(() => calendarSettings({ BOOKING_CALENDAR_CLIENT_ID: 'id' }), {
    message: /BOOKING_CALENDAR_PROVIDER is not google/,
  });
  t.throws(() => calendarSettings({ BOOKING_CALENDAR_PROVIDER: 'outlook' }), {
    message: /must be one of local, google/,
  });
  t.throws(
    () =>
      calendarSettings({
        BOOKING_CALENDAR_PROVIDER: 'google',
        BOOKING_CALENDAR_CLIENT_ID: 'i',
        BOOKING_CALENDAR_CLIENT_SECRET: 's',
        GOOGLE_OAUTH_TOKEN_URL: 'ftp://x',
      }),
    { message: /GOOGLE_OAUTH_TOKEN_URL must be an absolute http\(s\) URL/ },
  );
  t.throws(() => refuseRemovedVariables({ BOOKING_CALENDAR_BASE_URL: 'https://calendar.example' }), {
    message: /BOOKING_CALENDAR_BASE_URL is no longer supported .*BOOKING_CALENDAR_PROVIDER=google/,
  });
  const local = createBookingProviders(
    { timeoutMs: 1000, scheduler: schedulerSettings({}), calendar: calendarSettings({}) },
    'http://x',
  );
  t.true(local.get('calendar') instanceof LocalBookingProvider);
  const google = createBookingProviders({ timeoutMs: 1000, scheduler: schedulerSettings({}), calendar: g }, 'http://x');
  t.true(google.get('calendar') instanceof GoogleCalendarProvider);
  t.true(google.get('calendar')!.calendarSync);
  return Promise.all([local.close(), google.close()]).then(() => undefined);
});

// ---------------------------------------------------------------------------------------------
// The domain's sync over the stand-in, as a seeded model.

/** A small deterministic generator (mulberry32). */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

test('sync, a seeded model: polls, refused tokens and window re-reads leave each followed event’s meeting at its calendar version, each version stored once', async (t) => {
  t.timeout(180_000);
  const { services } = await api();
  const g = await startGoogleStandIn();
  t.teardown(() => g.close());
  const config = { timeoutMs: 5000, scheduler: schedulerSettings({}), calendar: calendarSettings(envOf(g)) };
  const providers = createBookingProviders(config, services.config.publicBaseUrl);
  t.teardown(() => providers.close());
  const deps: BookingDeps = {
    providers,
    encryptionKey: services.config.encryptionKey,
    publicBaseUrl: services.config.publicBaseUrl,
  };
  g.redirectUris.push(`${services.config.publicBaseUrl.replace(/\/+$/, '')}/oauth/booking/calendar/callback`);
  const jobs = withStart(services.jobs, 'booking-backfill', async () => undefined);
  const fork = () => services.orm.em.fork() as EntityManager;

  const seeds = (
    process.env.GCAL_MODEL_SEEDS ??
    `${Date.now() % 100_000},${(Date.now() + 7) % 100_000},${(Date.now() + 13) % 100_000}`
  )
    .split(',')
    .map(Number);
  t.log(`seeds ${seeds.join(',')} (GCAL_MODEL_SEEDS replays them)`);
  for (const seed of seeds) {
    const random = rng(seed);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)];
    const u = await createOwner();
    const ws = await workspaceIdOf(u.id);
    const app = await createTestApp(u);
    const list = (await call('POST', `/api/apps/${app.id}/lists`, { token: u.accessToken, body: { name: 'L' } })).body;
    const leads = [0, 1, 2].map((i) => `lead${i}-${seed}@client.example`);
    await seedContacts(
      ws,
      leads.map((email) => ({ email, lists: [list.id] })),
    );
    const actor = await resolveActor(fork(), { userId: u.id, kind: 'session' } as never, undefined);
    const account = `owner-${seed}@corp.example`;
    g.signIn = account;
    const started = await startOAuthConnection(fork(), actor, deps, 'calendar', {});
    const back = new URL((await openAuthorization(started.authorizationUrl)).location!);
    const { connection } = await finishOAuthConnection(fork(), deps, 'calendar', {
      code: back.searchParams.get('code')!,
      state: back.searchParams.get('state')!,
    });
    const cal = g.calendar(account);

    let job = 0;
    /** A sync as the sweep or a backfill runs it, in-process: pages until done. */
    const sync = async (since?: Date) => {
      const { backfill } = await startBackfill(fork(), jobs, actor, connection.id, { since, clientKey: `k${job++}` });
      const size = 1 + Math.floor(random() * 3);
      for (let i = 0; i < 100 && !(await backfillNextPage(fork(), deps, backfill.id, size)).done; i++);
      await finishBackfill(fork(), backfill.id, 'completed');
    };
    const followed = new Set<string>();
    const ops: string[] = [];
    const check = async (when: string) => {
      const e = await em();
      for (const ev of cal.events()) {
        const guests = (ev.attendees ?? []).filter((a) => !a.self);
        const coming = guests.filter((a) => a.responseStatus !== 'declined');
        const leadComing = coming.some((a) => leads.includes(a.email));
        const canceled = ev.status === 'cancelled' || coming.length === 0;
        if (!followed.has(ev.id) && !canceled && leadComing) followed.add(ev.id);
        const meetings = await e.execute<
          { starts_at: Date; ends_at: Date; status: string; external_updated_at: Date }[]
        >(
          `select starts_at, ends_at, status, external_updated_at from meetings where workspace_id = ? and provider = 'calendar' and external_id = ?`,
          [ws, ev.id],
        );
        const where = `seed ${seed} after ${when} (${ops.join(' ')}): event ${ev.id}`;
        if (!followed.has(ev.id)) {
          t.is(meetings.length, 0, `${where}: no meeting for an event never seen with a lead`);
          continue;
        }
        t.is(meetings.length, 1, `${where}: one meeting`);
        const m = meetings[0];
        t.is(m.status, canceled ? 'canceled' : 'scheduled', `${where}: status`);
        if (ev.status !== 'cancelled') {
          t.is(new Date(m.starts_at).toISOString(), new Date(ev.start!.dateTime!).toISOString(), `${where}: start`);
          t.is(new Date(m.ends_at).toISOString(), new Date(ev.end!.dateTime!).toISOString(), `${where}: end`);
          t.is(new Date(m.external_updated_at).toISOString(), new Date(ev.updated!).toISOString(), `${where}: version`);
        }
      }
      const twice = await e.execute(
        `select booking_id, booking_updated_at from booking_provider_events where booking_provider_id = ? group by 1, 2 having count(*) > 1`,
        [connection.id],
      );
      t.deepEqual(twice, [], `seed ${seed} after ${when}: a version stored twice`);
    };

    const live = () => cal.events().filter((e) => e.status !== 'cancelled');
    const guestsOf = (): GoogleAttendee[] =>
      pick([[pick(leads)], ['colleague@corp.example'], [pick(leads), 'colleague@corp.example']]).map((email) => ({
        email,
        responseStatus: 'accepted' as const,
      }));
    await sync();
    for (let step = 0; step < 14; step++) {
      const r = random();
      const ev = live().length ? pick(live()) : null;
      const base = Date.now() + (1 + Math.floor(random() * 20)) * DAY;
      if (r < 0.25 || !ev) {
        cal.insert({ summary: `Call ${step}`, start: at(base), end: at(base + HOUR), attendees: guestsOf() });
        ops.push('insert');
      } else if (r < 0.4) {
        cal.patch(ev.id, { start: at(base), end: at(base + 2 * HOUR) });
        ops.push('move');
      } else if (r < 0.5) {
        cal.patch(ev.id, { attendees: guestsOf() });
        ops.push('guests');
      } else if (r < 0.57) {
        cal.patch(ev.id, {
          attendees: (ev.attendees ?? []).map((a) => ({ ...a, responseStatus: 'declined' as const })),
        });
        ops.push('decline');
      } else if (r < 0.67) {
        cal.cancel(ev.id, { minimal: random() < 0.5 });
        ops.push('cancel');
      } else if (r < 0.77) {
        g.expireSyncTokens(account);
        ops.push('token-refused');
      } else if (r < 0.85) {
        await sync(new Date(Date.now() - 30 * DAY));
        ops.push('window');
        await check('a window re-read');
        continue;
      }
      if (random() < 0.6) {
        await sync();
        ops.push('poll');
        await check('a poll');
      }
    }
    await sync();
    ops.push('poll');
    await check('the last poll');
    t.log(`seed ${seed}: ${ops.join(' ')}; ${followed.size} of ${cal.events().length} events followed`);
  }
});
