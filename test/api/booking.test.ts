// Booking-provider connections (docs/meetings.md "Booking providers"): the scheduler's API key checked
// before it is saved, sealed and shown masked; the OAuth flow with a state bound to the user and PKCE
// (through the local provider's authorization page and our callback); verify; webhook registration
// with a secret shown once; disconnection; roles, the Demo workspace, other workspaces' ids, and an
// unreachable provider (502).
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEMO_USER_ID } from '../../domain/demo/seed.js';
import { createBookingProviders, localAuthorizationCode } from '../../lib/booking/index.js';
import { decrypt, encrypt } from '../../lib/crypto.js';
import { api, call, closeApi, createUser, listen, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { bookingEvent, connectScheduler, postHook, schedulerKey } from '../helpers/booking.js';
import { at } from '../helpers/meetings.js';
import { addMemberViaInvite } from '../helpers/team.js';
test.after.always(closeApi);

const post = (u: TestUser, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  call('POST', path, { token: u.accessToken, body, headers });
const row = async (id: string) => (await (await em()).execute(`select * from booking_providers where id = ?`, [id]))[0];
const key = async () => (await api()).services.config.encryptionKey;

/** The provider's URL on the test server (the service's PUBLIC_BASE_URL is not where the test API listens). */
const local = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

test('scheduler: an API key is checked at the provider, sealed, shown masked; the same account again replaces its key (200); a refused key saves nothing (422)', async (t) => {
  const u = await createOwner();
  const apiKey = schedulerKey();
  const r = await post(u, '/api/booking-providers/scheduler/api-key', { api_key: apiKey });
  t.is(r.status, 201, r.text);
  t.like(r.body, {
    provider: 'scheduler',
    auth: 'api_key',
    status: 'connected',
    status_reason: null,
    credential_hint: `sch_…${apiKey.slice(-4)}`,
    connected_by_user_id: u.id,
    last_backfill: null,
  });
  t.like(r.body.webhook, { registered: false, secret_hint: null, registered_at: null });
  t.true(r.body.webhook.url.endsWith(`/hooks/booking/${r.body.id}`));
  t.regex(r.body.account.id, /^scheduler_[0-9a-f]{16}$/);
  t.false(r.text.includes(apiKey));
  const stored = await row(r.body.id);
  t.false(stored.credentials_sealed.includes(apiKey), 'sealed at rest');
  t.deepEqual(JSON.parse(decrypt(stored.credentials_sealed, await key())), { kind: 'api_key', apiKey });

  const again = await post(u, '/api/booking-providers/scheduler/api-key', { api_key: apiKey });
  t.is(again.status, 200);
  t.is(again.body.id, r.body.id);
  const list = await call('GET', '/api/booking-providers', { token: u.accessToken });
  t.is(list.status, 200);
  t.deepEqual(
    list.body.items.map((p: { id: string }) => p.id),
    [r.body.id],
  );
  t.false(list.text.includes(apiKey));

  const refused = await post(u, '/api/booking-providers/scheduler/api-key', { api_key: `invalid_${randomUUID()}` });
  t.is(refused.status, 422);
  t.is(refused.body.error.code, 'invalid_credentials');
  t.is((await call('GET', '/api/booking-providers', { token: u.accessToken })).body.items.length, 1);
  for (const body of [
    { api_key: 'short' },
    { api_key: 'has spaces in the key 123' },
    {},
    { api_key: apiKey, extra: 1 },
  ]) {
    const bad = await post(u, '/api/booking-providers/scheduler/api-key', body);
    t.is(bad.status, 400, JSON.stringify(body));
    t.is(bad.body.error.code, 'invalid_body');
  }
  t.is((await call('GET', '/api/booking-providers')).status, 401);
});

test('at most 20 connections per workspace (409 provider_limit_reached); reconnecting one of them still works', async (t) => {
  const u = await createOwner();
  const keys = Array.from({ length: 20 }, () => schedulerKey());
  for (const k of keys) await connectScheduler(u, k);
  const over = await post(u, '/api/booking-providers/scheduler/api-key', { api_key: schedulerKey() });
  t.is(over.status, 409);
  t.is(over.body.error.code, 'provider_limit_reached');
  t.is((await post(u, '/api/booking-providers/scheduler/api-key', { api_key: keys[3] })).status, 200);
  const page = await call('GET', '/api/booking-providers?limit=15', { token: u.accessToken });
  t.is(page.body.items.length, 15);
  const rest = await call('GET', `/api/booking-providers?limit=15&cursor=${page.body.next_cursor}`, {
    token: u.accessToken,
  });
  t.is(rest.body.items.length, 5);
});

test('OAuth: start gives the authorization URL with a PKCE challenge; the provider’s redirect to our callback connects; the state is single use', async (t) => {
  const u = await createOwner();
  const start = await post(u, '/api/booking-providers/calendar/oauth/start', { login_hint: 'ada@example.test' });
  t.is(start.status, 200, start.text);
  const url = new URL(start.body.authorization_url);
  t.is(url.searchParams.get('state'), start.body.state);
  t.is(url.searchParams.get('code_challenge_method'), 'S256');
  t.regex(url.searchParams.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
  t.is(url.searchParams.get('redirect_uri'), start.body.redirect_uri);
  t.true(start.body.redirect_uri.endsWith('/oauth/booking/calendar/callback'));
  t.true(new Date(start.body.expires_at).getTime() - Date.now() > 9 * 60_000);
  const stored = (
    await (
      await em()
    ).execute(
      `select * from booking_oauth_states where workspace_id = (select id from workspaces where owner_id = ?)`,
      [u.id],
    )
  )[0];
  t.is(stored.user_id, u.id);
  t.not(stored.state_hash, start.body.state, 'the state is stored hashed');

  // The local provider's authorization page consents at once and redirects to our callback.
  const { base } = await api();
  const authorize = await fetch(base + local(start.body.authorization_url), { redirect: 'manual' });
  t.is(authorize.status, 302);
  const back = new URL(authorize.headers.get('location')!);
  t.is(back.pathname, '/oauth/booking/calendar/callback');
  const done = await call('GET', local(back.toString()));
  t.is(done.status, 200, done.text);
  t.like(done.body, {
    status: 'connected',
    created: true,
    booking_provider: { provider: 'calendar', auth: 'oauth', status: 'connected', connected_by_user_id: u.id },
  });
  const creds = JSON.parse(decrypt((await row(done.body.booking_provider.id)).credentials_sealed, await key()));
  t.like(creds, { kind: 'oauth' });
  t.regex(creds.accessToken, /^lat_/);
  t.false(done.text.includes(creds.accessToken));

  const replay = await call('GET', local(back.toString()));
  t.is(replay.status, 400);
  t.is(replay.body.error.code, 'invalid_state');
  const list = await call('GET', '/api/booking-providers', { token: u.accessToken });
  t.is(list.body.items.length, 1);
});

test('OAuth refusals: a declined consent or a wrong PKCE verifier is 400 oauth_denied, a missing or spent state 400 invalid_state; scheduler 400 oauth_not_supported; unknown 404', async (t) => {
  const u = await createOwner();
  const start = async () => (await post(u, '/api/booking-providers/calendar/oauth/start', {})).body;
  const callback = (q: Record<string, string>) =>
    call('GET', `/oauth/booking/calendar/callback?${new URLSearchParams(q)}`);

  const declined = await start();
  const no = await callback({ state: declined.state, error: 'access_denied' });
  t.is(no.status, 400);
  t.is(no.body.error.code, 'oauth_denied');
  t.is(
    (await callback({ state: declined.state, code: 'lc_x' })).body.error.code,
    'invalid_state',
    'spent by the refusal',
  );

  const tampered = await start();
  const forged = localAuthorizationCode({
    provider: 'calendar',
    redirectUri: tampered.redirect_uri,
    codeChallenge: 'A'.repeat(43),
  });
  const pkce = await callback({ state: tampered.state, code: forged });
  t.is(pkce.status, 400);
  t.is(pkce.body.error.code, 'oauth_denied');
  t.regex(pkce.body.error.message, /PKCE/);

  t.is((await callback({ code: 'lc_x' })).body.error.code, 'invalid_state');
  t.is((await callback({ state: 'never-issued', code: 'lc_x' })).body.error.code, 'invalid_state');
  const other = await start();
  t.is(
    (await call('GET', `/oauth/booking/scheduler/callback?state=${other.state}&code=x`)).body.error.code,
    'oauth_not_supported',
  );
  t.is((await call('GET', `/oauth/booking/nope/callback?state=${other.state}&code=x`)).status, 404);
  t.is(
    (await call('GET', `/oauth/booking/calendar/callback?state=${other.state}&foo=1`)).body.error.code,
    'invalid_query',
  );

  const scheduler = await post(u, '/api/booking-providers/scheduler/oauth/start', {});
  t.is(scheduler.status, 400);
  t.is(scheduler.body.error.code, 'oauth_not_supported');
  t.is((await post(u, '/api/booking-providers/nope/oauth/start', {})).status, 404);
  t.is(
    (await post(u, '/api/booking-providers/calendar/oauth/start', { login_hint: 'not an email' })).body.error.code,
    'invalid_body',
  );

  // The local authorization page only redirects to our own callback.
  const evil = new URLSearchParams({
    provider: 'calendar',
    response_type: 'code',
    redirect_uri: 'https://evil.example/cb',
    state: other.state,
  });
  const refused = await call('GET', `/oauth/booking/local/authorize?${evil}`);
  t.is(refused.status, 400);
  t.is(refused.body.error.code, 'invalid_redirect_uri');
  t.is(
    (
      await call(
        'GET',
        `/oauth/booking/local/authorize?${new URLSearchParams({ ...Object.fromEntries(evil), provider: 'scheduler' })}`,
      )
    ).status,
    404,
  );
});

test('OAuth: the state is bound to the user who started: removed from the team before the callback, 403 not_assigned; members cannot start', async (t) => {
  const owner = await createOwner();
  const { user: admin, memberId } = await addMemberViaInvite(owner, { role: 'admin' });
  const as = { 'x-acting-as': owner.id };
  const start = await post(admin, '/api/booking-providers/calendar/oauth/start', {}, as);
  t.is(start.status, 200, start.text);
  const { base } = await api();
  const authorize = await fetch(base + local(start.body.authorization_url), { redirect: 'manual' });
  t.is((await call('DELETE', `/api/team/members/${memberId}`, { token: owner.accessToken })).status, 204);
  const r = await call('GET', local(authorize.headers.get('location')!));
  t.is(r.status, 403);
  t.is(r.body.error.code, 'not_assigned');
  t.deepEqual((await call('GET', '/api/booking-providers', { token: owner.accessToken })).body.items, []);

  const { user: member } = await addMemberViaInvite(owner, { role: 'member' });
  const c = await connectScheduler(owner);
  for (const [method, path, body] of [
    ['POST', '/api/booking-providers/calendar/oauth/start', {}],
    ['POST', '/api/booking-providers/scheduler/api-key', { api_key: schedulerKey() }],
    ['POST', `/api/booking-providers/${c.id}/webhook/register`, undefined],
    ['POST', `/api/booking-providers/${c.id}/backfill`, {}],
    ['DELETE', `/api/booking-providers/${c.id}`, undefined],
  ] as const) {
    const refused = await call(method, path, { token: member.accessToken, headers: as, body });
    t.is(refused.status, 403, path);
    t.is(refused.body.error.code, 'not_assigned');
  }
  // Members read the connections and may re-check them.
  t.is((await call('GET', '/api/booking-providers', { token: member.accessToken, headers: as })).body.items.length, 1);
  t.is((await post(member, `/api/booking-providers/${c.id}/verify`, undefined, as)).status, 200);
});

test('verify re-checks the stored credentials: refused → invalid_credentials (webhook and backfill then 409 provider_not_connected); an expired OAuth token is refreshed first', async (t) => {
  const u = await createOwner();
  const c = await connectScheduler(u);
  const ok = await post(u, `/api/booking-providers/${c.id}/verify`);
  t.is(ok.status, 200, ok.text);
  t.like(ok.body, { verification: { ok: true, error: null }, booking_provider: { status: 'connected' } });
  t.truthy(ok.body.booking_provider.last_verified_at);

  // The provider now refuses the key (revoked there): the local scheduler refuses keys starting with "invalid".
  const e = await em();
  await e.execute(`update booking_providers set credentials_sealed = ? where id = ?`, [
    encrypt(JSON.stringify({ kind: 'api_key', apiKey: 'invalid_revoked_key_1' }), await key()),
    c.id,
  ]);
  const refused = await post(u, `/api/booking-providers/${c.id}/verify`);
  t.is(refused.status, 200);
  t.like(refused.body, { verification: { ok: false }, booking_provider: { status: 'invalid_credentials' } });
  t.regex(refused.body.booking_provider.status_reason, /refused/);
  const register = await post(u, `/api/booking-providers/${c.id}/webhook/register`);
  t.is(register.status, 409);
  t.is(register.body.error.code, 'provider_not_connected');
  const backfill = await post(u, `/api/booking-providers/${c.id}/backfill`, {});
  t.is(backfill.status, 409);
  t.is(backfill.body.error.code, 'provider_not_connected');
  // Reconnecting the key makes it usable again.
  t.is((await post(u, '/api/booking-providers/scheduler/api-key', { api_key: c.apiKey })).body.status, 'connected');

  // OAuth: an access token past its expiry is refreshed (and stored) before the call.
  const start = await post(u, '/api/booking-providers/calendar/oauth/start', {});
  const { base } = await api();
  const authorize = await fetch(base + local(start.body.authorization_url), { redirect: 'manual' });
  const oauth = (await call('GET', local(authorize.headers.get('location')!))).body.booking_provider;
  const before = JSON.parse(decrypt((await row(oauth.id)).credentials_sealed, await key()));
  await e.execute(`update booking_providers set credentials_sealed = ? where id = ?`, [
    encrypt(
      JSON.stringify({ ...before, accessToken: 'lat_expired', expiresAt: new Date(Date.now() - 1000).toISOString() }),
      await key(),
    ),
    oauth.id,
  ]);
  t.like((await post(u, `/api/booking-providers/${oauth.id}/verify`)).body, { verification: { ok: true } });
  const after = JSON.parse(decrypt((await row(oauth.id)).credentials_sealed, await key()));
  t.regex(after.accessToken, /^lat_[0-9a-f]{16}_/);
  t.true(new Date(after.expiresAt).getTime() > Date.now());
});

test('webhook/register: our hook at the provider with a secret shown once (masked later, sealed at rest); registering again rotates it', async (t) => {
  const u = await createOwner();
  const c = await connectScheduler(u);
  const r = await post(u, `/api/booking-providers/${c.id}/webhook/register`);
  t.is(r.status, 200, r.text);
  const { secret, url } = r.body.webhook;
  t.regex(secret, /^whsec_[A-Za-z0-9_-]{43}$/);
  t.true(url.endsWith(`/hooks/booking/${c.id}`));
  t.like(r.body.booking_provider.webhook, { registered: true, url, secret_hint: `whsec_…${secret.slice(-4)}` });
  const listed = await call('GET', '/api/booking-providers', { token: u.accessToken });
  t.false(listed.text.includes(secret));
  const stored = await row(c.id);
  t.truthy(stored.webhook_id);
  t.false(stored.webhook_secret_sealed.includes(secret));
  t.is(decrypt(stored.webhook_secret_sealed, await key()), secret);

  const rotated = await post(u, `/api/booking-providers/${c.id}/webhook/register`);
  t.not(rotated.body.webhook.secret, secret);
  const body = JSON.stringify(
    bookingEvent('booking.created', { startsAt: at(2), endsAt: at(3), attendees: [{ email: 'x@example.test' }] }),
  );
  t.is((await postHook(c.id, body, secret)).status, 401, 'the old secret no longer verifies');
  t.is((await postHook(c.id, body, rotated.body.webhook.secret)).status, 200);
});

test('another workspace’s connection is 404 on every id route; unknown ids too; DELETE disconnects (204) and a second DELETE is 404', async (t) => {
  const a = await createOwner();
  const b = await createOwner();
  const theirs = await connectScheduler(b);
  for (const [method, path, body] of [
    ['POST', `/api/booking-providers/${theirs.id}/verify`, undefined],
    ['POST', `/api/booking-providers/${theirs.id}/webhook/register`, undefined],
    ['POST', `/api/booking-providers/${theirs.id}/backfill`, {}],
    ['DELETE', `/api/booking-providers/${theirs.id}`, undefined],
    ['POST', `/api/booking-providers/${randomUUID()}/verify`, undefined],
  ] as const) {
    const r = await call(method, path, { token: a.accessToken, body });
    t.is(r.status, 404, `${method} ${path}`);
    t.is(r.body.error.code, 'not_found');
  }
  t.deepEqual((await call('GET', '/api/booking-providers', { token: a.accessToken })).body.items, []);
  t.is(
    (await call('POST', '/api/booking-providers/not-a-uuid/verify', { token: a.accessToken })).body.error.code,
    'invalid_id',
  );
  t.is((await call('DELETE', `/api/booking-providers/${theirs.id}`, { token: b.accessToken })).status, 204);
  t.is((await call('DELETE', `/api/booking-providers/${theirs.id}`, { token: b.accessToken })).status, 404);
});

test('the Demo workspace is read-only: connecting or disconnecting there is 403 demo_read_only', async (t) => {
  const u = await createUser();
  await call('POST', '/api/me/workspaces/demo/join', { token: u.accessToken });
  const as = { 'x-acting-as': DEMO_USER_ID };
  const r = await post(u, '/api/booking-providers/scheduler/api-key', { api_key: schedulerKey() }, as);
  t.is(r.status, 403);
  t.is(r.body.error.code, 'demo_read_only');
  t.is(
    (await call('DELETE', `/api/booking-providers/${randomUUID()}`, { token: u.accessToken, headers: as })).body.error
      .code,
    'demo_read_only',
  );
  t.is((await call('GET', '/api/booking-providers', { token: u.accessToken, headers: as })).status, 200);
});

async function downServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(
    (_req, res) => void res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"down"}'),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

test('an unreachable provider is 502 provider_unavailable and changes nothing', async (t) => {
  const { services } = await api();
  // Down: every call answers 503 (bodies, JSON or form, are not read).
  const server = await downServer();
  const booking = createBookingProviders(
    {
      timeoutMs: 2000,
      // Cal.com with its API on the down server.
      scheduler: { provider: 'calcom', calcom: { baseUrl: `${server.url}/v2`, requestsPerMinute: 120 } },
      // Google Calendar with every endpoint on the down server.
      calendar: {
        provider: 'google',
        google: {
          baseUrl: `${server.url}/calendar/v3`,
          authorizeUrl: `${server.url}/o/oauth2/v2/auth`,
          tokenUrl: `${server.url}/token`,
          clientId: 'c',
          clientSecret: 's',
          scope: 'https://www.googleapis.com/auth/calendar.readonly',
          requestsPerMinute: 500,
        },
      },
    },
    services.config.publicBaseUrl,
  );
  const { base } = await listen({ ...services, booking });
  t.teardown(async () => {
    await booking.close();
    await server.close();
  });
  const u = await createOwner();
  const connected = await connectScheduler(u); // through the local provider
  const down = await call('POST', '/api/booking-providers/scheduler/api-key', {
    base,
    token: u.accessToken,
    body: { api_key: schedulerKey() },
  });
  t.is(down.status, 502);
  t.like(down.body.error, { code: 'provider_unavailable', details: { error_class: 'unavailable', retryable: true } });
  const verify = await call('POST', `/api/booking-providers/${connected.id}/verify`, { base, token: u.accessToken });
  t.is(verify.status, 502);
  t.is((await row(connected.id)).status, 'connected', 'unchanged');
  t.is(
    (await call('POST', `/api/booking-providers/${connected.id}/webhook/register`, { base, token: u.accessToken }))
      .status,
    502,
  );
  t.is((await row(connected.id)).webhook_registered_at, null);
  t.is((await call('GET', '/api/booking-providers', { token: u.accessToken })).body.items.length, 1);
  // The OAuth callback: the token endpoint is down.
  const start = await call('POST', '/api/booking-providers/calendar/oauth/start', {
    base,
    token: u.accessToken,
    body: {},
  });
  t.true(start.body.authorization_url.startsWith(`${server.url}/o/oauth2/v2/auth?`));
  const done = await call('GET', `/oauth/booking/calendar/callback?state=${start.body.state}&code=abc`, { base });
  t.is(done.status, 502);
  t.is(done.body.error.code, 'provider_unavailable');
});
