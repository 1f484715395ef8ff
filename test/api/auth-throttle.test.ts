// Failed-authentication throttling without collateral damage (api/authenticator.ts): an address that
// floods bad credentials is refused with 429 and costs no database work, while valid credentials that
// are not cached yet (a new session JWT, a new personal access token, a correct password) still work
// from that same address. Each test uses its own client address (X-Forwarded-For, TRUST_PROXY=1) on
// an API built with a low failure limit; the database work is counted with a spy on the connection.
import test, { type ExecutionContext } from 'ava';
import { randomBytes, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { createServices } from '../../api/services-factory.js';
import { BLOCKED_UNTAGGED_LOOKUPS_PER_MINUTE } from '../../api/authenticator.js';
import { ApiToken } from '../../db/entities/ApiToken.js';
import { User } from '../../db/entities/User.js';
import { isTaggedPat, mintPersonalAccessToken } from '../../domain/auth/auth.js';
import { loadConfig } from '../../lib/config.js';
import { sha256Hex } from '../../lib/crypto.js';
import { call, closeApi, createPat, createUser, listen, PASSWORD, type Res, type TestUser } from '../helpers/api.js';
test.after.always(closeApi);

const LIMIT = 5;
type Stack = { base: string; services: Awaited<ReturnType<typeof createServices>>; queries: () => number };
let stack: Promise<Stack> | undefined;

/** One API per test file with `RATE_LIMIT_AUTH_FAILURES_PER_MINUTE` = 5, trusting X-Forwarded-For. */
function throttledApi(): Promise<Stack> {
  return (stack ??= (async () => {
    const base = loadConfig();
    const services = await createServices({ ...base, rateLimit: { ...base.rateLimit, authFailuresPerMinute: LIMIT } });
    process.env.TRUST_PROXY = '1'; // read when the Koa app is created
    const { base: url } = await listen(services);
    delete process.env.TRUST_PROXY;
    // Every statement this API sends to PostgreSQL goes through this connection.
    let n = 0;
    const connection = services.orm.em.getConnection();
    const execute = connection.execute.bind(connection);
    connection.execute = ((...args: Parameters<typeof execute>) => {
      n++;
      return execute(...args);
    }) as typeof connection.execute;
    return { base: url, services, queries: () => n };
  })());
}
test.after.always(async () => {
  if (stack) await (await stack).services.close();
});

/** A documentation-range IPv6 address of its own, so no other test (or earlier run) shares its counters. */
const freshIp = () => `2001:db8::${randomBytes(6).toString('hex').match(/.{4}/g)!.join(':')}`;
const randomPat = () => `pat_${randomBytes(32).toString('base64url')}`; // well-formed, untagged
const me = (s: Stack, ip: string, token?: string) =>
  call('GET', '/api/users/me', { base: s.base, token, headers: { 'x-forwarded-for': ip } });
const login = (s: Stack, ip: string, email: string, password: string) =>
  call('POST', '/api/auth/login', { base: s.base, body: { email, password }, headers: { 'x-forwarded-for': ip } });

function isThrottled(t: ExecutionContext, r: Res, what: string) {
  t.is(r.status, 429, what);
  t.is(r.body?.error?.code, 'rate_limited', what);
  t.true(
    typeof r.body?.error?.message === 'string' && typeof r.body?.error?.request_id === 'string',
    `${what}: error shape`,
  );
  const retry = Number(r.headers.get('retry-after'));
  t.true(retry >= 1 && retry <= 60, `${what}: Retry-After ${retry}`);
}

/** Sends `LIMIT` bad tokens from `ip` (each 401), after which the address is blocked. */
async function flood(t: ExecutionContext, s: Stack, ip: string, bad: () => string) {
  const statuses: number[] = [];
  for (let i = 0; i < LIMIT; i++) statuses.push((await me(s, ip, bad())).status);
  t.deepEqual(statuses, Array(LIMIT).fill(401));
  isThrottled(t, await me(s, ip, 'garbage'), `blocked after ${LIMIT} failures`);
}

/** A token minted as before tags existed (32 random bytes), stored directly. */
async function legacyPat(s: Stack, user: TestUser): Promise<string> {
  const secret = randomPat();
  const em = s.services.orm.em.fork();
  em.create(ApiToken, {
    user: em.getReference(User, user.id),
    name: 'legacy',
    tokenHash: sha256Hex(secret),
    prefix: secret.slice(0, 12),
  });
  await em.flush();
  return secret;
}

test.serial(
  'a flood of bad tokens is throttled with no database work, while new valid credentials work from that address',
  async (t) => {
    const s = await throttledApi();
    const ip = freshIp();
    // Prepared elsewhere (the suite's own API): nothing of this is cached by the throttled API.
    const [alice, bob, carol] = await Promise.all([createUser(), createUser(), createUser()]);
    const newPat = await createPat(bob);
    t.true(isTaggedPat(s.services.config, newPat), 'new tokens carry a tag');
    const revokedSession = await createUser();
    t.is((await call('POST', '/api/auth/logout', { token: revokedSession.accessToken })).status, 204);

    await flood(t, s, ip, randomPat);

    // Well-formed but untagged tokens: at most the small per-address budget reaches the database…
    let before = s.queries();
    for (let i = 0; i < BLOCKED_UNTAGGED_LOOKUPS_PER_MINUTE + 2; i++)
      isThrottled(t, await me(s, ip, randomPat()), `untagged #${i}`);
    t.is(s.queries() - before, BLOCKED_UNTAGGED_LOOKUPS_PER_MINUTE, 'the budget, then nothing');

    // …and after it, nothing does: random, forged, malformed, wrongly signed, expired, missing.
    const forgedTag = newPat.slice(0, 10) + (newPat[10] === 'A' ? 'B' : 'A') + newPat.slice(11);
    const config = s.services.config;
    const wrongKey = await new SignJWT({ sid: randomUUID() })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(bob.id)
      .setIssuer(config.jwt.issuer)
      .setAudience(config.jwt.audience)
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('another secret that is at least 32 characters'));
    const expired = await new SignJWT({ sid: randomUUID() })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(bob.id)
      .setIssuer(config.jwt.issuer)
      .setAudience(config.jwt.audience)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(config.jwt.secret);
    const tampered = bob.accessToken.slice(0, -3) + (bob.accessToken.endsWith('AAA') ? 'BBB' : 'AAA');
    before = s.queries();
    const bad = [
      forgedTag,
      wrongKey,
      expired,
      tampered,
      'pat_short',
      'garbage',
      'a.b.c',
      ...Array.from({ length: 40 }, randomPat),
    ];
    for (const token of bad) isThrottled(t, await me(s, ip, token), `bad token ${token.slice(0, 12)}…`);
    isThrottled(t, await me(s, ip), 'no credential');
    t.is(s.queries(), before, `${bad.length + 1} throttled requests: no database work`);

    // A validly signed JWT is never refused by the block: a new login of another user (made elsewhere)…
    const fresh = await call('POST', '/api/auth/login', { body: { email: alice.email, password: PASSWORD } });
    t.is(fresh.status, 200);
    const r1 = await me(s, ip, fresh.body.access_token);
    t.is(r1.status, 200, r1.text);
    t.is(r1.body.id, alice.id);
    t.is((await me(s, ip, carol.accessToken)).status, 200); // a sign-up's token, never seen here
    // …and a new personal access token (tagged) that is not cached.
    const r2 = await me(s, ip, newPat);
    t.is(r2.status, 200, r2.text);
    t.is(r2.body.id, bob.id);

    // A correct password works from the blocked address, and its token too; wrong passwords stay throttled.
    const ok = await login(s, ip, carol.email, PASSWORD);
    t.is(ok.status, 200, ok.text);
    t.is((await me(s, ip, ok.body.access_token)).status, 200);
    isThrottled(t, await login(s, ip, carol.email, 'wrong password 1'), 'wrong password');
    isThrottled(t, await login(s, ip, 'nobody@example.test', 'wrong password 2'), 'unknown email');

    // A validly signed JWT of a revoked session costs one lookup, then counts (429) and is known bad.
    before = s.queries();
    isThrottled(t, await me(s, ip, revokedSession.accessToken), 'revoked session');
    t.is(s.queries() - before, 1);
    isThrottled(t, await me(s, ip, revokedSession.accessToken), 'revoked session again');
    t.is(s.queries() - before, 1, 'a credential whose lookup failed is answered from memory');

    // The flood is still throttled (no database work), and another address is unaffected.
    before = s.queries();
    isThrottled(t, await me(s, ip, randomPat()), 'flood after the valid ones');
    t.is(s.queries(), before);
    t.is((await me(s, freshIp(), randomPat())).status, 401);
    t.is((await login(s, freshIp(), carol.email, 'wrong password 3')).status, 401);
  },
);

test.serial(
  'untagged (older) tokens from a blocked address get a small lookup budget; a failing one then counts',
  async (t) => {
    const s = await throttledApi();
    const ip = freshIp();
    const dave = await createUser();
    const legacy = await legacyPat(s, dave);
    t.false(isTaggedPat(s.services.config, legacy));
    t.is((await me(s, freshIp(), legacy)).status, 200, 'an untagged token is valid as before');

    await flood(t, s, ip, () => 'garbage');
    // The budget is untouched by malformed tokens: an untagged valid token goes through (one lookup).
    const other = await legacyPat(s, dave);
    let before = s.queries();
    const r = await me(s, ip, other);
    t.is(r.status, 200, r.text);
    t.is(s.queries() - before, 1);
    // Random untagged tokens spend the rest of the budget, each failing (429), then cost nothing.
    before = s.queries();
    for (let i = 0; i < BLOCKED_UNTAGGED_LOOKUPS_PER_MINUTE + 3; i++)
      isThrottled(t, await me(s, ip, randomPat()), `untagged #${i}`);
    t.is(s.queries() - before, BLOCKED_UNTAGGED_LOOKUPS_PER_MINUTE - 1);
    // Once it is spent, an untagged token that is not cached waits like the rest (documented), while a
    // tagged one still works.
    isThrottled(t, await me(s, ip, await legacyPat(s, dave)), 'untagged after the budget');
    t.is((await me(s, ip, await createPat(dave))).status, 200);
    t.is(
      (await me(s, ip, mintPersonalAccessToken(s.services.config))).status,
      429,
      'a tagged token that does not exist counts as a failure',
    );
  },
);

test.serial(
  'wrong passwords count as failed authentications of the address; a correct password is never refused by the block',
  async (t) => {
    const s = await throttledApi();
    const ip = freshIp();
    const erin = await createUser();
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 1; i++) statuses.push((await login(s, ip, erin.email, `wrong password ${i}`)).status);
    t.deepEqual(statuses, [...Array(LIMIT).fill(401), 429]);
    isThrottled(t, await login(s, ip, erin.email, 'wrong password 9'), 'wrong password while blocked');
    // The same block applies to bearer credentials: a bad token is refused without database work.
    const before = s.queries();
    isThrottled(t, await me(s, ip, 'a.b.c'), 'bad token after wrong passwords');
    isThrottled(
      t,
      await me(s, ip, mintPersonalAccessToken(s.services.config).slice(0, -2) + 'xx'),
      'forged token after wrong passwords',
    );
    t.is(s.queries() - before, 1, 'an untagged token spends one lookup of the budget');
    // The account owner, behind the same address, can still sign in and use the session.
    const ok = await login(s, ip, erin.email, PASSWORD);
    t.is(ok.status, 200, ok.text);
    t.is((await me(s, ip, ok.body.access_token)).status, 200);
  },
);
