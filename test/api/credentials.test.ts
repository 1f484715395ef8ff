import test from 'ava';
import { SignJWT, UnsecuredJWT } from 'jose';
import { loadConfig } from '../../lib/config.js';
import { call, createPat, createUser, closeApi } from '../helpers/api.js';
test.after.always(closeApi);

const cfg = loadConfig();

async function sessionClaims(accessToken: string) {
  const payload = JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString());
  return payload as { sub: string; sid: string };
}

async function expect401(t: any, token: string | undefined, header?: string) {
  const r = await call('GET', '/api/users/me', header ? { headers: { authorization: header } } : { token });
  t.is(r.status, 401, `${header ?? token}: ${r.text}`);
  t.is(r.body.error.code, 'unauthorized');
}

test('missing, malformed and garbage credentials are 401 unauthorized', async (t) => {
  await expect401(t, undefined);
  await expect401(t, undefined, 'Basic dXNlcjpwYXNz');
  await expect401(t, undefined, 'Bearer');
  await expect401(t, 'not-a-token');
  await expect401(t, 'pat_' + 'x'.repeat(43));
  await expect401(t, 'a.b.c');
  await expect401(t, 'x'.repeat(5000)); // wrong length never causes a 500
  await expect401(t, 'pat_'); // too short
  await expect401(t, 'mcp_at_' + 'y'.repeat(40)); // MCP OAuth tokens never authenticate REST
});

test('a JWT with alg none is 401', async (t) => {
  const u = await createUser();
  const { sid } = await sessionClaims(u.accessToken);
  const none = new UnsecuredJWT({ sid })
    .setSubject(u.id)
    .setIssuer(cfg.jwt.issuer)
    .setAudience(cfg.jwt.audience)
    .setExpirationTime('5m')
    .encode();
  await expect401(t, none);
});

test('a JWT with a wrong signature, wrong audience, wrong issuer or past expiry is 401', async (t) => {
  const u = await createUser();
  const { sid } = await sessionClaims(u.accessToken);
  const sign = (key: Uint8Array, f: (j: SignJWT) => SignJWT) =>
    f(new SignJWT({ sid }).setProtectedHeader({ alg: 'HS256' }).setSubject(u.id)).sign(key);
  const good = (j: SignJWT) => j.setIssuer(cfg.jwt.issuer).setAudience(cfg.jwt.audience).setExpirationTime('5m');
  // Sanity: a correctly signed token for the live session is accepted.
  t.is((await call('GET', '/api/users/me', { token: await sign(cfg.jwt.secret, good) })).status, 200);
  await expect401(t, await sign(new TextEncoder().encode('another-secret-another-secret-123456'), good));
  await expect401(
    t,
    await sign(cfg.jwt.secret, (j) => j.setIssuer(cfg.jwt.issuer).setAudience('someone-else').setExpirationTime('5m')),
  );
  await expect401(
    t,
    await sign(cfg.jwt.secret, (j) => j.setIssuer('evil').setAudience(cfg.jwt.audience).setExpirationTime('5m')),
  );
  await expect401(
    t,
    await sign(cfg.jwt.secret, (j) =>
      j
        .setIssuer(cfg.jwt.issuer)
        .setAudience(cfg.jwt.audience)
        .setExpirationTime(Math.floor(Date.now() / 1000) - 60),
    ),
  );
  // A tampered payload (different user) invalidates the signature.
  const [h, , s] = u.accessToken.split('.');
  const forged = Buffer.from(JSON.stringify({ sub: '00000000-0000-7000-8000-000000000000', sid })).toString(
    'base64url',
  );
  await expect401(t, `${h}.${forged}.${s}`);
});

test('personal access tokens: created once with the secret, listed without it, usable, revocable', async (t) => {
  const u = await createUser();
  const created = await call('POST', '/api/users/me/api-tokens', { token: u.accessToken, body: { name: 'ci' } });
  t.is(created.status, 201);
  t.regex(created.body.token, /^pat_[A-Za-z0-9_-]{43}$/);
  t.is(created.body.name, 'ci');
  t.truthy(created.body.created_at);

  const me = await call('GET', '/api/users/me', { token: created.body.token });
  t.is(me.status, 200);
  t.is(me.body.id, u.id);

  const list = await call('GET', '/api/users/me/api-tokens', { token: u.accessToken });
  t.is(list.status, 200);
  t.is(list.body.length, 1);
  t.is(list.body[0].id, created.body.id);
  t.false('token' in list.body[0]);
  t.false(JSON.stringify(list.body).includes(created.body.token));
  t.truthy(list.body[0].last_used_at, 'use is recorded');

  const del = await call('DELETE', `/api/users/me/api-tokens/${created.body.id}`, { token: u.accessToken });
  t.is(del.status, 204);
  await expect401(t, created.body.token);
  t.deepEqual((await call('GET', '/api/users/me/api-tokens', { token: u.accessToken })).body, []);
  t.is((await call('DELETE', `/api/users/me/api-tokens/${created.body.id}`, { token: u.accessToken })).status, 404);
});

test('a personal access token can manage tokens too', async (t) => {
  const u = await createUser();
  const pat = await createPat(u);
  const r = await call('POST', '/api/users/me/api-tokens', { token: pat, body: { name: 'second' } });
  t.is(r.status, 201);
});

test('api token validation: empty name 400 invalid_body, bad id 400 invalid_id', async (t) => {
  const u = await createUser();
  const r = await call('POST', '/api/users/me/api-tokens', { token: u.accessToken, body: { name: '  ' } });
  t.is(r.status, 400);
  t.is(r.body.error.code, 'invalid_body');
  const bad = await call('DELETE', '/api/users/me/api-tokens/not-a-uuid', { token: u.accessToken });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_id');
});

test("another user's token cannot be revoked (404) and keeps working", async (t) => {
  const owner = await createUser();
  const other = await createUser();
  const created = await call('POST', '/api/users/me/api-tokens', { token: owner.accessToken, body: { name: 'mine' } });
  const r = await call('DELETE', `/api/users/me/api-tokens/${created.body.id}`, { token: other.accessToken });
  t.is(r.status, 404);
  t.is(r.body.error.code, 'not_found');
  t.is((await call('GET', '/api/users/me', { token: created.body.token })).status, 200);
  t.deepEqual((await call('GET', '/api/users/me/api-tokens', { token: other.accessToken })).body, []);
});

test('at most 50 active personal access tokens: the 51st is 409 token_limit_reached until one is revoked', async (t) => {
  const u = await createUser();
  const ids: string[] = [];
  for (let i = 0; i < 50; i++) {
    const r = await call('POST', '/api/users/me/api-tokens', { token: u.accessToken, body: { name: `t${i}` } });
    t.is(r.status, 201);
    ids.push(r.body.id);
  }
  const over = await call('POST', '/api/users/me/api-tokens', { token: u.accessToken, body: { name: 'one too many' } });
  t.is(over.status, 409);
  t.is(over.body.error.code, 'token_limit_reached');
  t.is((await call('DELETE', `/api/users/me/api-tokens/${ids[0]}`, { token: u.accessToken })).status, 204);
  t.is(
    (await call('POST', '/api/users/me/api-tokens', { token: u.accessToken, body: { name: 'fits again' } })).status,
    201,
  );
});
