import test from 'ava';
import { PASSWORD, call, createUser, uniqueEmail, closeApi } from '../helpers/api.js';
test.after.always(closeApi);

test('signup returns 201 with the user and tokens', async (t) => {
  const email = uniqueEmail();
  const r = await call('POST', '/api/auth/signup', { body: { email, password: PASSWORD, name: 'Ada' } });
  t.is(r.status, 201, r.text);
  t.is(r.body.user.email, email);
  t.is(r.body.user.name, 'Ada');
  t.regex(r.body.user.id, /^[0-9a-f-]{36}$/);
  t.is(r.body.token_type, 'Bearer');
  t.true(r.body.expires_in > 0);
  t.is(r.body.access_token.split('.').length, 3);
  t.regex(r.body.refresh_token, /^rt_/);
  t.false('password_hash' in r.body.user);
});

test('signup with an existing email (any case) is 409 email_taken', async (t) => {
  const u = await createUser();
  const r = await call('POST', '/api/auth/signup', { body: { email: u.email.toUpperCase(), password: PASSWORD } });
  t.is(r.status, 409);
  t.is(r.body.error.code, 'email_taken');
});

test('signup with a weak password or bad email is 400 invalid_body', async (t) => {
  for (const body of [
    { email: uniqueEmail(), password: 'short1' },
    { email: uniqueEmail(), password: 'onlyletterslong' },
    { email: 'not-an-email', password: PASSWORD },
    { email: uniqueEmail(), password: PASSWORD, is_admin: true },
    {},
  ]) {
    const r = await call('POST', '/api/auth/signup', { body });
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, 'invalid_body');
    t.truthy(r.body.error.details);
  }
});

test('login returns 200 with tokens; wrong credentials are 401 invalid_credentials', async (t) => {
  const u = await createUser();
  const ok = await call('POST', '/api/auth/login', { body: { email: u.email, password: PASSWORD } });
  t.is(ok.status, 200);
  t.is(ok.body.user.id, u.id);
  const me = await call('GET', '/api/users/me', { token: ok.body.access_token });
  t.is(me.status, 200);
  const bad = await call('POST', '/api/auth/login', { body: { email: u.email, password: 'wrong password 1' } });
  t.is(bad.status, 401);
  t.is(bad.body.error.code, 'invalid_credentials');
  const unknown = await call('POST', '/api/auth/login', { body: { email: uniqueEmail(), password: PASSWORD } });
  t.is(unknown.status, 401);
  t.is(unknown.body.error.code, 'invalid_credentials');
});

test('refresh rotates the refresh token; reusing the old one is 401 and revokes the session', async (t) => {
  const u = await createUser();
  const r1 = await call('POST', '/api/auth/refresh', { body: { refresh_token: u.refreshToken } });
  t.is(r1.status, 200, r1.text);
  t.not(r1.body.refresh_token, u.refreshToken);
  t.is((await call('GET', '/api/users/me', { token: r1.body.access_token })).status, 200);

  const reuse = await call('POST', '/api/auth/refresh', { body: { refresh_token: u.refreshToken } });
  t.is(reuse.status, 401);
  t.is(reuse.body.error.code, 'unauthorized');
  // Theft response: the whole session is gone, including the newest tokens.
  t.is((await call('GET', '/api/users/me', { token: r1.body.access_token })).status, 401);
  t.is((await call('POST', '/api/auth/refresh', { body: { refresh_token: r1.body.refresh_token } })).status, 401);
});

test('refresh with an unknown token is 401; with no token 400', async (t) => {
  const r = await call('POST', '/api/auth/refresh', { body: { refresh_token: 'rt_nope' } });
  t.is(r.status, 401);
  t.is(r.body.error.code, 'unauthorized');
  const missing = await call('POST', '/api/auth/refresh', { body: {} });
  t.is(missing.status, 400);
  t.is(missing.body.error.code, 'invalid_body');
});

test('logout is 204 and revokes the session: its access and refresh tokens stop working', async (t) => {
  const u = await createUser();
  const r = await call('POST', '/api/auth/logout', { token: u.accessToken });
  t.is(r.status, 204);
  t.is(r.text, '');
  t.is((await call('GET', '/api/users/me', { token: u.accessToken })).status, 401);
  t.is((await call('POST', '/api/auth/refresh', { body: { refresh_token: u.refreshToken } })).status, 401);
});

test('logout without credentials is 401', async (t) => {
  const r = await call('POST', '/api/auth/logout');
  t.is(r.status, 401);
  t.is(r.body.error.code, 'unauthorized');
});

test('GET /api/users/me returns the profile', async (t) => {
  const u = await createUser('Grace');
  const r = await call('GET', '/api/users/me', { token: u.accessToken });
  t.is(r.status, 200);
  t.is(r.body.id, u.id);
  t.is(r.body.email, u.email);
  t.is(r.body.name, 'Grace');
  t.truthy(Date.parse(r.body.created_at));
  t.regex(r.body.workspace_id, /^[0-9a-f-]{36}$/);
});
