import test from 'ava';
import { PASSWORD, call, createPat, createUser, closeApi } from '../helpers/api.js';
test.after.always(closeApi);

test('PATCH /api/users/me updates name, timezone and locale (canonicalised)', async (t) => {
  const u = await createUser('Before');
  const r = await call('PATCH', '/api/users/me', {
    token: u.accessToken,
    body: { name: '  After ', timezone: 'Europe/Berlin', locale: 'en-us' },
  });
  t.is(r.status, 200, r.text);
  t.like(r.body, { id: u.id, email: u.email, name: 'After', timezone: 'Europe/Berlin', locale: 'en-US' });
  const me = await call('GET', '/api/users/me', { token: u.accessToken });
  t.like(me.body, { name: 'After', timezone: 'Europe/Berlin', locale: 'en-US' });
  const cleared = await call('PATCH', '/api/users/me', { token: u.accessToken, body: { timezone: null } });
  t.is(cleared.body.timezone, null);
  t.is(cleared.body.locale, 'en-US');
});

test('PATCH /api/users/me rejects bad values and any other field (no mass assignment): 400 invalid_body', async (t) => {
  const u = await createUser();
  for (const body of [
    { timezone: 'Mars/Olympus' },
    { locale: 'not a locale!' },
    { name: 'x'.repeat(201) },
    { email: 'evil@example.test' },
    { id: '0190a000-0000-7000-8000-000000000000' },
    { role: 'owner' },
    { password_hash: 'x' },
  ]) {
    const r = await call('PATCH', '/api/users/me', { token: u.accessToken, body });
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, 'invalid_body');
  }
  t.is((await call('GET', '/api/users/me', { token: u.accessToken })).body.email, u.email);
  t.is((await call('PATCH', '/api/users/me', { body: { name: 'x' } })).status, 401);
});

test('X-Acting-As does not apply to the profile: the caller is always changed', async (t) => {
  const owner = await createUser('Owner');
  const other = await createUser('Other');
  const r = await call('PATCH', '/api/users/me', {
    token: other.accessToken,
    headers: { 'x-acting-as': owner.id },
    body: { name: 'Renamed' },
  });
  t.is(r.status, 200);
  t.is(r.body.id, other.id);
  t.is((await call('GET', '/api/users/me', { token: owner.accessToken })).body.name, 'Owner');
});

async function login(email: string, password = PASSWORD, ua = 'test-agent') {
  const r = await call('POST', '/api/auth/login', { body: { email, password }, headers: { 'user-agent': ua } });
  if (r.status !== 200) throw new Error(r.text);
  return r.body as { access_token: string; refresh_token: string };
}

test('change-password: 204, keeps the calling session, revokes the others; the new password logs in', async (t) => {
  const u = await createUser();
  const other = await login(u.email);
  const pat = await createPat(u);
  const NEW = 'brand new secret 7';
  const r = await call('POST', '/api/users/me/change-password', {
    token: u.accessToken,
    body: { current_password: PASSWORD, new_password: NEW },
  });
  t.is(r.status, 204, r.text);
  t.is((await call('GET', '/api/users/me', { token: u.accessToken })).status, 200, 'the calling session stays');
  t.is((await call('GET', '/api/users/me', { token: other.access_token })).status, 401, 'other sessions are revoked');
  t.is((await call('POST', '/api/auth/refresh', { body: { refresh_token: other.refresh_token } })).status, 401);
  t.is((await call('GET', '/api/users/me', { token: pat })).status, 200, 'personal access tokens are not affected');
  t.is((await call('POST', '/api/auth/login', { body: { email: u.email, password: PASSWORD } })).status, 401);
  t.is((await call('POST', '/api/auth/login', { body: { email: u.email, password: NEW } })).status, 200);
});

test('change-password with a PAT revokes every session', async (t) => {
  const u = await createUser();
  const pat = await createPat(u);
  const r = await call('POST', '/api/users/me/change-password', {
    token: pat,
    body: { current_password: PASSWORD, new_password: 'another secret 8' },
  });
  t.is(r.status, 204);
  t.is((await call('GET', '/api/users/me', { token: u.accessToken })).status, 401);
});

test('change-password errors: wrong current 400 invalid_current_password; weak new 400 invalid_body; no auth 401', async (t) => {
  const u = await createUser();
  const wrong = await call('POST', '/api/users/me/change-password', {
    token: u.accessToken,
    body: { current_password: 'not it at all 1', new_password: 'brand new secret 7' },
  });
  t.is(wrong.status, 400);
  t.is(wrong.body.error.code, 'invalid_current_password');
  for (const body of [
    { current_password: PASSWORD, new_password: 'short' },
    { current_password: PASSWORD },
    { current_password: PASSWORD, new_password: 'brand new secret 7', user_id: u.id },
  ]) {
    const r = await call('POST', '/api/users/me/change-password', { token: u.accessToken, body });
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, 'invalid_body');
  }
  t.is(
    (
      await call('POST', '/api/users/me/change-password', {
        body: { current_password: PASSWORD, new_password: 'brand new secret 7' },
      })
    ).status,
    401,
  );
  t.is(
    (await call('POST', '/api/auth/login', { body: { email: u.email, password: PASSWORD } })).status,
    200,
    'password unchanged',
  );
});

test('sessions: lists live ones with the current flag; revoking one ends it; others are 404', async (t) => {
  const u = await createUser();
  const second = await login(u.email, PASSWORD, 'second-browser/1.0');
  const stranger = await createUser();
  const r = await call('GET', '/api/users/me/sessions', { token: u.accessToken });
  t.is(r.status, 200, r.text);
  t.is(r.body.items.length, 2);
  t.is(r.body.next_cursor, null);
  const current = r.body.items.filter((s: any) => s.current);
  t.is(current.length, 1);
  const secondView = r.body.items.find((s: any) => !s.current);
  t.is(secondView.user_agent, 'second-browser/1.0');
  t.truthy(secondView.ip);
  t.truthy(secondView.expires_at && secondView.last_used_at && secondView.created_at);

  const page1 = await call('GET', '/api/users/me/sessions?limit=1', { token: u.accessToken });
  t.is(page1.body.items.length, 1);
  const page2 = await call('GET', `/api/users/me/sessions?limit=1&cursor=${page1.body.next_cursor}`, {
    token: u.accessToken,
  });
  t.is(page2.body.items.length, 1);
  t.not(page2.body.items[0].id, page1.body.items[0].id);
  t.is((await call('GET', '/api/users/me/sessions?limit=500', { token: u.accessToken })).status, 400);

  // Another user's session is not found, and stays alive.
  const foreign = await call('DELETE', `/api/users/me/sessions/${secondView.id}`, { token: stranger.accessToken });
  t.is(foreign.status, 404);
  t.is(foreign.body.error.code, 'not_found');
  t.is((await call('GET', '/api/users/me', { token: second.access_token })).status, 200);

  t.is((await call('DELETE', `/api/users/me/sessions/${secondView.id}`, { token: u.accessToken })).status, 204);
  t.is((await call('GET', '/api/users/me', { token: second.access_token })).status, 401);
  t.is(
    (await call('DELETE', `/api/users/me/sessions/${secondView.id}`, { token: u.accessToken })).status,
    404,
    'already revoked',
  );
  t.is((await call('GET', '/api/users/me/sessions', { token: u.accessToken })).body.items.length, 1);
  const bad = await call('DELETE', '/api/users/me/sessions/abc', { token: u.accessToken });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_id');
  t.is((await call('GET', '/api/users/me/sessions')).status, 401);
});

test('revoking the current session logs the caller out; a PAT lists sessions with none current', async (t) => {
  const u = await createUser();
  const pat = await createPat(u);
  const list = await call('GET', '/api/users/me/sessions', { token: pat });
  t.is(list.body.items.length, 1);
  t.false(list.body.items[0].current);
  t.is((await call('DELETE', `/api/users/me/sessions/${list.body.items[0].id}`, { token: u.accessToken })).status, 204);
  t.is((await call('GET', '/api/users/me', { token: u.accessToken })).status, 401);
});
