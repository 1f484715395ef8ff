// The credential cache (lib/credential-cache.ts, api/authenticator.ts): hits cost no database round
// trip, revocations in one API process are refused by another on the next request (Redis
// invalidation), and failed authentications are throttled per IP before any database work.
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServices } from '../../api/services-factory.js';
import { loadConfig } from '../../lib/config.js';
import { CredentialCache } from '../../lib/credential-cache.js';
import { registry } from '../../lib/metrics.js';
import { api, call, createPat, createTestApp, createUser, closeApi, listen, PASSWORD } from '../helpers/api.js';
import { addTeamMember, removeTeamMember } from '../helpers/db.js';
import { createOwner } from '../helpers/billing.js';
import { freePort, waitFor } from '../../scripts/children.js';
test.after.always(closeApi);

let second: { base: string; child: ChildProcess } | undefined;
/** A second API process (a real one, as in production), sharing the database and Redis. */
async function secondApi(): Promise<string> {
  if (second) return second.base;
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'api/server.ts'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      if (Date.now() > deadline) throw new Error('second API did not start');
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  second = { base, child };
  return base;
}
test.after.always(() => {
  second?.child.kill('SIGTERM');
});

async function lookups(result: string): Promise<number> {
  const metric = await registry.getSingleMetric('auth_credential_lookups_total')!.get();
  return metric.values.find((v) => v.labels.result === result)?.value ?? 0;
}

test.serial('a cached credential costs no lookup: repeated requests are hits', async (t) => {
  const u = await createUser();
  // The cache stays bypassed until its Redis invalidation channel is subscribed, which start-up waits
  // for only briefly: on a loaded machine, wait for a first hit with another token.
  const warm = await createPat(await createUser());
  await waitFor(
    'the credential cache to be live',
    async () => {
      const before = await lookups('hit');
      await call('GET', '/api/users/me', { token: warm });
      await call('GET', '/api/users/me', { token: warm });
      return (await lookups('hit')) > before;
    },
    30_000,
  );
  const pat = await createPat(u);
  const misses = await lookups('miss');
  const hits = await lookups('hit');
  for (let i = 0; i < 5; i++) t.is((await call('GET', '/api/users/me', { token: pat })).status, 200);
  t.is((await lookups('miss')) - misses, 1);
  t.is((await lookups('hit')) - hits, 4);
});

test.serial('revocations in one API process are refused by another process on its next request', async (t) => {
  const other = await secondApi();
  // Token delete.
  const u = await createUser();
  const pat = await createPat(u);
  t.is((await call('GET', '/api/users/me', { token: pat, base: other })).status, 200);
  t.is((await call('GET', '/api/users/me', { token: pat, base: other })).status, 200); // now cached there
  const list = await call('GET', '/api/users/me/api-tokens', { token: u.accessToken });
  t.is((await call('DELETE', `/api/users/me/api-tokens/${list.body[0].id}`, { token: u.accessToken })).status, 204);
  t.is((await call('GET', '/api/users/me', { token: pat, base: other })).status, 401);

  // Logout.
  const v = await createUser();
  t.is((await call('GET', '/api/users/me', { token: v.accessToken, base: other })).status, 200);
  t.is((await call('POST', '/api/auth/logout', { token: v.accessToken })).status, 204);
  t.is((await call('GET', '/api/users/me', { token: v.accessToken, base: other })).status, 401);

  // Session revoke and password change (which revokes the other sessions).
  const w = await createUser();
  const login = await call('POST', '/api/auth/login', { body: { email: w.email, password: PASSWORD } });
  const second = login.body.access_token as string;
  t.is((await call('GET', '/api/users/me', { token: second, base: other })).status, 200);
  const pw = await call('POST', '/api/users/me/change-password', {
    token: w.accessToken,
    body: { current_password: PASSWORD, new_password: 'another pass 77' },
  });
  t.is(pw.status, 204, pw.text);
  t.is((await call('GET', '/api/users/me', { token: second, base: other })).status, 401);

  // Member removal: acting-as stops at once in the other process.
  const owner = await createOwner();
  const member = await createUser();
  await createTestApp(owner);
  const membership = await addTeamMember(owner.id, member.id);
  const acting = { token: member.accessToken, headers: { 'x-acting-as': owner.id }, base: other };
  t.is((await call('GET', '/api/apps', acting)).status, 200);
  await removeTeamMember(membership);
  const after = await call('GET', '/api/apps', acting);
  t.is(after.status, 403);
  t.is(after.body.error.code, 'not_assigned');

  // A profile edit is visible in the other process.
  t.is((await call('PATCH', '/api/users/me', { token: u.accessToken, body: { name: 'New Name' } })).status, 200);
  t.is((await call('GET', '/api/users/me', { token: u.accessToken, base: other })).body.name, 'New Name');
});

test.serial(
  'failed authentications are limited per IP: 429 with Retry-After, and no database work once throttled',
  async (t) => {
    process.env.TRUST_PROXY = '1'; // one client address per test, through X-Forwarded-For
    const config = { ...loadConfig(), rateLimit: { ...loadConfig().rateLimit, authFailuresPerMinute: 5 } };
    const services = await createServices(config);
    t.teardown(() => services.close());
    const { base } = await listen(services);
    delete process.env.TRUST_PROXY;
    const ip = `203.0.113.${Math.floor(Math.random() * 250) + 1}`;
    const headers = { 'x-forwarded-for': ip };
    const valid = await createPat(await createUser());
    t.is((await call('GET', '/api/users/me', { token: valid, headers, base })).status, 200); // cached before the storm

    let lookups = 0;
    const connection = services.orm.em.getConnection();
    const execute = connection.execute.bind(connection);
    connection.execute = ((...args: Parameters<typeof execute>) => {
      lookups++;
      return execute(...args);
    }) as typeof connection.execute;

    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await call('GET', '/api/users/me', { token: `pat_invalid${i}`, headers, base })).status);
    t.deepEqual(statuses.slice(0, 4), [401, 401, 401, 401]);
    t.true(statuses[4] === 401 || statuses[4] === 429);
    const before = lookups;
    for (let i = 0; i < 20; i++) {
      const r = await call('GET', '/api/users/me', { token: `pat_invalid_more${i}`, headers, base });
      t.is(r.status, 429);
      t.is(r.body.error.code, 'rate_limited');
      t.true(Number(r.headers.get('retry-after')) >= 1);
    }
    t.is(lookups, before, 'no database lookup once throttled');
    // Missing or malformed credentials count and are refused the same way.
    t.is((await call('GET', '/api/users/me', { headers, base })).status, 429);
    // A credential already resolved keeps working from the same address (it costs no lookup).
    t.is((await call('GET', '/api/users/me', { token: valid, headers, base })).status, 200);
    // Another address is unaffected.
    t.is(
      (await call('GET', '/api/users/me', { token: 'pat_nope', headers: { 'x-forwarded-for': '198.51.100.7' }, base }))
        .status,
      401,
    );
  },
);

test('cache rules: entries expire, loads that raced an invalidation are not stored, a disabled cache stores nothing', (t) => {
  const c = new CredentialCache<string>(1000);
  const e0 = c.epoch;
  c.set('k', 'u1', 'v', e0, Infinity, 0);
  t.is(c.get('k', 500), 'v');
  t.is(c.get('k', 1000), undefined, 'expired at its TTL');
  c.set('n', 'u1', 'v', c.epoch, 200, 0);
  t.is(c.get('n', 250), undefined, 'never past the credential expiry');
  const stale = c.epoch;
  c.dropUser('someone');
  c.set('k', 'u1', 'v', stale, Infinity, 0);
  t.is(c.get('k', 1), undefined, 'a load started before an invalidation is dropped');
  c.set('a', 'u1', 'v', c.epoch, Infinity, 0);
  c.set('b', 'u2', 'v', c.epoch, Infinity, 0);
  c.dropUser('u1');
  t.is(c.get('a', 1), undefined);
  t.is(c.get('b', 1), 'v');
  c.enabled = false;
  t.is(c.get('b', 1), undefined);
});

// Serial: the lookup counter is the process's, and a concurrent test's first lookup would land in the count.
test.serial('with Redis unreachable the cache is bypassed and authentication still works', async (t) => {
  const config = { ...loadConfig(), redisUrl: 'redis://127.0.0.1:1' };
  const services = await createServices(config);
  t.teardown(() => services.close());
  t.false(services.authenticator.credentials.enabled);
  const { base } = await listen(services);
  const pat = await createPat(await createUser());
  const misses = await lookups('miss');
  t.is((await call('GET', '/api/users/me', { token: pat, base })).status, 200);
  t.is((await call('GET', '/api/users/me', { token: pat, base })).status, 200);
  t.is((await lookups('miss')) - misses, 2, 'every request looked up');
  t.truthy(await api());
});

test('uses of cached credentials are written in one batch per table, at most once a minute per credential', async (t) => {
  const { services } = await api();
  const u = await createUser();
  const pat = await createPat(u);
  const tokens = await call('GET', '/api/users/me/api-tokens', { token: u.accessToken });
  const tokenId = tokens.body[0].id as string;
  const { UsageRecorder } = await import('../../domain/auth/auth.js');
  const recorder = new UsageRecorder();
  const now = Date.now();
  recorder.record({ userId: u.id, kind: 'pat', tokenId }, now - 120_000); // the first use (written by the lookup)
  recorder.record({ userId: u.id, kind: 'pat', tokenId }, now - 100_000); // within the minute: skipped
  recorder.record({ userId: u.id, kind: 'pat', tokenId }, now); // a minute later: batched
  const sessions = await call('GET', '/api/users/me/sessions', { token: u.accessToken });
  const sessionId = sessions.body.items[0].id as string;
  recorder.record({ userId: u.id, kind: 'session', sessionId }, now - 120_000);
  recorder.record({ userId: u.id, kind: 'session', sessionId }, now);
  await recorder.flush(services.orm.em.fork());
  const after = await call('GET', '/api/users/me/api-tokens', { token: u.accessToken });
  t.is(new Date(after.body[0].last_used_at).getTime(), now);
  const s = await call('GET', '/api/users/me/sessions', { token: u.accessToken });
  t.is(new Date(s.body.items.find((x: any) => x.id === sessionId).last_used_at).getTime(), now);
  t.truthy(pat);
});
