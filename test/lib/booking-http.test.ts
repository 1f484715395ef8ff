// The HTTP booking provider against a local server speaking wire format v1 (docs/meetings.md
// "Provider API"): requests as documented (the workspace's credential as the bearer, the OAuth token
// endpoint form-encoded with HTTP Basic and the PKCE verifier), answers mapped, errors coded; and the
// inbound signature and event parsing.
import test from 'ava';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  BookingError,
  HttpBookingProvider,
  createBookingProviders,
  localBookings,
  pkceChallenge,
} from '../../lib/booking/index.js';
import { checkBookingSignature, parseBookingEvent, signBookingEvent } from '../../lib/booking/wire.js';
import type { ProviderErrorCode } from '../../lib/provider-http.js';

const T0 = '2026-11-20T10:00:00.000Z';
const T1 = '2026-11-20T10:30:00.000Z';
const KEY = 'sch_test_key_0123456789';

interface Seen {
  method: string;
  url: URL;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A tiny provider: answers by route; `answer` overrides a route (errors, bad shapes). */
async function provider(
  t: { teardown(fn: () => Promise<void> | void): void },
  answer?: (s: Seen, res: ServerResponse) => boolean,
) {
  const seen: Seen[] = [];
  const json = (res: ServerResponse, status: number, body: unknown) =>
    void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const s: Seen = {
        method: req.method ?? '',
        url: new URL(req.url ?? '/', 'http://x'),
        headers: req.headers,
        body,
      };
      seen.push(s);
      if (answer?.(s, res)) return;
      const route = `${s.method} ${s.url.pathname.replace(/^\/api/, '')}`;
      const bearer = s.headers.authorization;
      if (route === 'POST /oauth/token') {
        if (bearer !== `Basic ${Buffer.from('client-1:secret-1').toString('base64')}`)
          return json(res, 401, { error: 'invalid_client' });
        const form = new URLSearchParams(body);
        if (
          form.get('grant_type') === 'authorization_code' &&
          form.get('code') === 'good' &&
          pkceChallenge(form.get('code_verifier') ?? '') === pkceChallenge('v'.repeat(50))
        ) {
          return json(res, 200, {
            access_token: 'at-1',
            refresh_token: 'rt-1',
            expires_in: 3600,
            token_type: 'Bearer',
          });
        }
        if (form.get('grant_type') === 'refresh_token' && form.get('refresh_token') === 'rt-1')
          return json(res, 200, { access_token: 'at-2', token_type: 'Bearer' });
        return json(res, 400, { error: 'invalid_grant' });
      }
      if (bearer !== `Bearer ${KEY}` && bearer !== 'Bearer at-1') return json(res, 401, { error: 'unauthorized' });
      switch (route) {
        case 'GET /v1/me':
          return json(res, 200, { id: 'acct-1', name: ' Ada ', email: 'ada@example.test' });
        case 'POST /v1/webhooks':
          return json(res, 201, { id: 'wh-1' });
        case 'DELETE /v1/webhooks/wh-1':
          return void res.writeHead(204).end();
        case 'DELETE /v1/webhooks/gone':
          return json(res, 404, {});
        case 'GET /v1/bookings': {
          const booking = {
            id: 'bk-1',
            status: 'scheduled',
            title: 'Intro',
            start_time: T0,
            end_time: T1,
            location: null,
            attendees: [{ email: 'grace@example.test', name: 'Grace' }],
            tracking: { lead_id: '01934F6A-0000-7000-8000-000000000001' },
            updated_at: T0,
          };
          return s.url.searchParams.get('cursor')
            ? json(res, 200, {
                items: [{ ...booking, id: 'bk-2', tracking: { lead_id: 'not-a-lead' } }, { id: 'broken' }],
                next_cursor: null,
              })
            : json(res, 200, { items: [booking], next_cursor: 'c2' });
        }
        default:
          return json(res, 404, {});
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  const scheduler = new HttpBookingProvider({ name: 'scheduler', baseUrl: url, timeoutMs: 2000 });
  const calendar = new HttpBookingProvider({
    name: 'calendar',
    baseUrl: url,
    timeoutMs: 2000,
    oauth: {
      authorizeUrl: 'https://calendar.example/authorize',
      clientId: 'client-1',
      clientSecret: 'secret-1',
      scope: 'bookings.read webhooks.write',
    },
  });
  t.teardown(async () => {
    await scheduler.close();
    await calendar.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return { scheduler, calendar, seen };
}

async function failure(p: Promise<unknown>): Promise<BookingError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof BookingError) return err;
    throw err;
  }
  throw new Error('expected a BookingError');
}

const creds = { kind: 'api_key' as const, apiKey: KEY };

test('http booking provider: account, webhooks and bookings send the documented requests and map the answers', async (t) => {
  const { scheduler, seen } = await provider(t);
  t.deepEqual(await scheduler.account(creds), { accountId: 'acct-1', name: 'Ada', email: 'ada@example.test' });
  t.is(seen.at(-1)!.headers.authorization, `Bearer ${KEY}`);
  t.is(seen.at(-1)!.url.pathname, '/api/v1/me', 'the base URL’s path is kept');

  t.deepEqual(
    await scheduler.registerWebhook(creds, { url: 'https://api.example/hooks/booking/p1', secret: 'whsec_x' }),
    { webhookId: 'wh-1' },
  );
  t.deepEqual(JSON.parse(seen.at(-1)!.body), {
    url: 'https://api.example/hooks/booking/p1',
    secret: 'whsec_x',
    events: ['booking.created', 'booking.rescheduled', 'booking.canceled'],
  });
  await scheduler.deleteWebhook(creds, 'wh-1');
  await scheduler.deleteWebhook(creds, 'gone'); // already removed: not an error

  const since = new Date('2026-08-01T00:00:00Z');
  const p1 = await scheduler.bookings(creds, { since, cursor: null, limit: 2 });
  t.is(seen.at(-1)!.url.search, `?since=${encodeURIComponent(since.toISOString())}&limit=2`);
  t.deepEqual(p1, {
    items: [
      {
        bookingId: 'bk-1',
        status: 'scheduled',
        title: 'Intro',
        startsAt: new Date(T0),
        endsAt: new Date(T1),
        location: null,
        attendees: [{ email: 'grace@example.test', name: 'Grace' }],
        trackingLeadId: '01934f6a-0000-7000-8000-000000000001',
        updatedAt: new Date(T0),
      },
    ],
    cursor: 'c2',
    invalid: 0,
  });
  const p2 = await scheduler.bookings(creds, { since, cursor: 'c2', limit: 2 });
  t.is(seen.at(-1)!.url.searchParams.get('cursor'), 'c2');
  t.like(p2, { cursor: null, invalid: 1 }, 'an item that is not a booking is left out and counted');
  t.is(p2.items[0].trackingLeadId, null, 'a tracking value that is not a lead id is dropped');
});

test('http booking provider, OAuth: the authorization URL carries the PKCE challenge; the token endpoint gets a form with HTTP Basic; refresh', async (t) => {
  const { calendar, scheduler, seen } = await provider(t);
  const url = new URL(
    calendar.authorizationUrl({
      state: 'st-1',
      redirectUri: 'https://api.example/oauth/booking/calendar/callback',
      codeChallenge: 'ch-1',
      loginHint: 'ada@example.test',
    }),
  );
  t.is(url.origin + url.pathname, 'https://calendar.example/authorize');
  t.deepEqual(Object.fromEntries(url.searchParams), {
    response_type: 'code',
    client_id: 'client-1',
    redirect_uri: 'https://api.example/oauth/booking/calendar/callback',
    state: 'st-1',
    scope: 'bookings.read webhooks.write',
    login_hint: 'ada@example.test',
    code_challenge: 'ch-1',
    code_challenge_method: 'S256',
  });
  const tokens = await calendar.exchangeCode({
    code: 'good',
    redirectUri: 'https://api.example/cb',
    codeVerifier: 'v'.repeat(50),
  });
  t.like(tokens, { accessToken: 'at-1', refreshToken: 'rt-1' });
  t.true(tokens.expiresAt!.getTime() > Date.now() + 3500_000);
  const sent = seen.at(-1)!;
  t.is(sent.headers['content-type'], 'application/x-www-form-urlencoded');
  t.deepEqual(Object.fromEntries(new URLSearchParams(sent.body)), {
    grant_type: 'authorization_code',
    code: 'good',
    redirect_uri: 'https://api.example/cb',
    code_verifier: 'v'.repeat(50),
    client_id: 'client-1',
  });
  t.like(await calendar.account({ kind: 'oauth', accessToken: 'at-1', refreshToken: null, expiresAt: null }), {
    accountId: 'acct-1',
  });
  t.deepEqual(await calendar.refresh('rt-1'), { accessToken: 'at-2', refreshToken: null, expiresAt: null });

  const refused = await failure(
    calendar.exchangeCode({ code: 'good', redirectUri: 'https://api.example/cb', codeVerifier: 'w'.repeat(50) }),
  );
  t.is(refused.code, 'auth', 'a wrong verifier (400 invalid_grant) is an auth failure');
  t.is((await failure(calendar.refresh('rt-unknown'))).code, 'auth');
  t.is(
    (await failure(scheduler.exchangeCode({ code: 'x', redirectUri: 'y', codeVerifier: null }))).code,
    'invalid_request',
    'an API-key provider has no OAuth',
  );
});

test('http booking provider: errors are coded (401 auth, 429 rate_limited, 5xx unavailable, a redirect or a bad shape bad_response, a stall timeout)', async (t) => {
  const { scheduler } = await provider(t);
  t.is((await failure(scheduler.account({ kind: 'api_key', apiKey: 'wrong' }))).code, 'auth');
  const cases: [number | 'stall' | 'shape', ProviderErrorCode][] = [
    [429, 'rate_limited'],
    [503, 'unavailable'],
    [302, 'bad_response'],
    ['shape', 'bad_response'],
    ['stall', 'timeout'],
  ];
  for (const [mode, code] of cases) {
    const { scheduler: p } = await provider(t, (_s, res) => {
      if (mode === 'stall') return true; // never answers
      if (mode === 'shape') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'no id' }));
        return true;
      }
      res.writeHead(mode, mode === 302 ? { location: 'https://elsewhere.example/' } : {}).end();
      return true;
    });
    const err = await failure(p.account(creds));
    t.is(err.code, code, String(mode));
    t.is(err.retryable, ['rate_limited', 'unavailable', 'timeout'].includes(code));
  }
});

test('configuration: HTTP providers only where a base URL is set; the calendar needs its client id and secret', (t) => {
  const none = { baseUrl: null, authorizeUrl: null, clientId: null, clientSecret: null, scope: null };
  const local = createBookingProviders(
    { timeoutMs: 1000, scheduler: { baseUrl: null }, calendar: none },
    'http://127.0.0.1:3000',
  );
  t.false(local.get('scheduler') instanceof HttpBookingProvider);
  t.is(local.get('calendar')!.auth, 'oauth');
  const http = createBookingProviders(
    {
      timeoutMs: 1000,
      scheduler: { baseUrl: 'https://scheduler.example/api' },
      calendar: { ...none, baseUrl: 'https://calendar.example', clientId: 'c', clientSecret: 's' },
    },
    'http://x',
  );
  t.true(http.get('scheduler') instanceof HttpBookingProvider);
  t.regex(
    http.get('calendar')!.authorizationUrl!({ state: 's', redirectUri: 'r', codeChallenge: null, loginHint: null }),
    /^https:\/\/calendar\.example\/oauth\/authorize\?/,
  );
  t.throws(
    () =>
      createBookingProviders(
        { timeoutMs: 1000, scheduler: { baseUrl: null }, calendar: { ...none, baseUrl: 'https://calendar.example' } },
        'http://x',
      ),
    { message: /CLIENT_ID/ },
  );
  t.throws(
    () => createBookingProviders({ timeoutMs: 1000, scheduler: { baseUrl: 'ftp://x' }, calendar: none }, 'http://x'),
    { message: /BOOKING_SCHEDULER_BASE_URL/ },
  );
});

test('inbound signature: constant-time HMAC over "<t>.<body>", 5-minute window, rotation-friendly (any v1 may match)', (t) => {
  const body = Buffer.from('{"id":"evt_1"}');
  const now = new Date('2026-11-20T10:00:00Z');
  const good = signBookingEvent('whsec_a', body, now);
  t.regex(good, /^t=\d+,v1=[0-9a-f]{64}$/);
  t.deepEqual(checkBookingSignature('whsec_a', body, good, now), { ok: true });
  t.deepEqual(checkBookingSignature('whsec_a', body, `${good},v1=${'0'.repeat(64)}`, now), { ok: true });
  t.like(checkBookingSignature('whsec_b', body, good, now), { ok: false, reason: 'signature does not match' });
  t.like(checkBookingSignature('whsec_a', Buffer.from('{"id":"evt_2"}'), good, now), { ok: false });
  t.deepEqual(checkBookingSignature('whsec_a', body, good, new Date(now.getTime() + 301_000)), {
    ok: false,
    reason: 'signature timestamp outside the 5-minute window',
  });
  t.like(checkBookingSignature('whsec_a', body, undefined, now), { ok: false, reason: 'signature header missing' });
  t.like(checkBookingSignature('whsec_a', body, 'v1=abc', now), { ok: false, reason: 'signature header malformed' });
});

test('inbound events: parsed into bookings (clipped title, tracking lead id checked); malformed ones name the first problem', (t) => {
  const booking = {
    id: 'bk-1',
    status: 'canceled',
    title: `  ${'T'.repeat(400)}  `,
    start_time: '2026-11-20T11:00:00+01:00',
    end_time: T1,
    attendees: [{ email: 'grace@example.test' }],
    updated_at: T0,
  };
  const ok = parseBookingEvent({ id: 'evt_1', type: 'booking.canceled', data: { booking } });
  if (!('event' in ok)) return t.fail(ok.error);
  t.like(ok.event, {
    eventId: 'evt_1',
    type: 'booking.canceled',
    createdAt: null,
    booking: { bookingId: 'bk-1', status: 'canceled', startsAt: new Date(T0), location: null, trackingLeadId: null },
  });
  t.is(ok.event.booking.title.length, 300);
  t.deepEqual(ok.event.booking.attendees, [{ email: 'grace@example.test', name: null }]);
  const problem = (json: unknown) => {
    const r = parseBookingEvent(json);
    return 'error' in r ? r.error : '';
  };
  t.is(
    problem({
      id: 'evt_1',
      type: 'booking.canceled',
      data: { booking: { ...booking, end_time: '2026-11-20T09:00:00Z' } },
    }),
    'not a booking event: data.booking.end_time: end_time must be after start_time',
  );
  t.regex(problem({ id: 'evt_1', type: 'booking.moved', data: { booking } }), /^not a booking event: type: /);
  t.regex(problem([]), /^not a booking event: \(root\)/);
});

test('the local provider is deterministic per account: 14 bookings over the ISO week, 12 past and 2 ahead, every fifth canceled', (t) => {
  const now = new Date('2026-11-19T12:00:00Z'); // a Thursday
  const a = localBookings('scheduler_abc', now);
  t.deepEqual(a, localBookings('scheduler_abc', new Date('2026-11-22T23:00:00Z')), 'same week, same bookings');
  t.is(a.length, 14);
  t.is(a.filter((b) => b.startsAt < now).length, 12);
  t.deepEqual(
    a.filter((b) => b.status === 'canceled').map((b) => b.bookingId),
    ['scheduler_abc-bk-4', 'scheduler_abc-bk-9', 'scheduler_abc-bk-14'],
  );
  t.notDeepEqual(
    a.map((b) => b.attendees[0].email),
    localBookings('scheduler_other', now).map((b) => b.attendees[0].email),
  );
});
