// The API while a dependency is down (docs/deploy.md): every request gets its normal answer or
// 503 `unavailable` with Retry-After, within a bounded time (never a 500, never a hang), and the
// process serves again once the dependency is back, without a restart. Each test runs its own API
// services against a dependency it can take down alone: PostgreSQL and Temporal behind a TCP proxy
// of this process (cut: connections reset and the port closed; restore: the same port again),
// Redis as a redis-server of its own.
import test, { type ExecutionContext } from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { createServices } from '../../api/services-factory.js';
import type { Services } from '../../api/services.js';
import { loadConfig, type Config } from '../../lib/config.js';
import { registry } from '../../lib/metrics.js';
import type { RateDecision } from '../../lib/rate-limit.js';
import { connectRedis, redisReady } from '../../lib/redis.js';
import { call, closeApi, createUser, listen, type ReqOptions, type Res } from '../helpers/api.js';
import { tcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { freePort, waitFor } from '../../scripts/children.js';
test.after.always(closeApi);

/** The longest a request may take while a dependency is down (bounded, where unbounded it waited 20–60 s or for ever). */
const BOUND_MS = 13_000; // the API waits 5 s for a pooled connection, 10 s for a Temporal call (api/services-factory.ts)

async function timed(method: string, path: string, opts: ReqOptions): Promise<Res & { ms: number }> {
  const started = Date.now();
  const r = await call(method, path, opts);
  return { ...r, ms: Date.now() - started };
}

function assertUnavailable(t: ExecutionContext, r: Res & { ms: number }, what: string): void {
  t.is(r.status, 503, `${what}: ${r.text}`);
  t.is(r.body?.error?.code, 'unavailable', what);
  t.deepEqual(Object.keys(r.body.error).sort(), ['code', 'message', 'request_id'], `${what}: the error body shape`);
  t.regex(r.headers.get('retry-after') ?? '', /^[1-9]\d*$/, `${what}: Retry-After in seconds`);
  t.true(r.ms < BOUND_MS, `${what} took ${r.ms} ms`);
}

/** Own API services over `patch` of the test run's configuration, served on an ephemeral port. */
async function ownApi(t: ExecutionContext, patch: (c: Config) => Config, wrap: (s: Services) => Services = (s) => s) {
  const services = await createServices(patch(loadConfig()));
  t.teardown(() => services.close());
  const { base } = await listen(wrap(services));
  return { services, base };
}

/** A proxy to the test run's PostgreSQL, and the database URL through it. */
async function pgProxy(t: ExecutionContext): Promise<{ proxy: TcpProxy; databaseUrl: string; admin: pg.Client }> {
  const direct = new URL(loadConfig().databaseUrl);
  const proxy = await tcpProxy({ host: direct.hostname, port: Number(direct.port) });
  t.teardown(() => proxy.close());
  const admin = new pg.Client({ connectionString: direct.toString() });
  admin.on('error', () => {}); // a session of the test's own, for pg_stat_activity
  await admin.connect();
  t.teardown(() => admin.end());
  const viaProxy = new URL(direct);
  viaProxy.port = String(proxy.port);
  return { proxy, databaseUrl: viaProxy.toString(), admin };
}

/**
 * Ends the server sessions behind the proxy as a fast shutdown does (each client gets 57P01
 * "terminating connection due to administrator command") and waits until they are gone.
 */
async function terminateBackends(admin: pg.Client, proxy: TcpProxy): Promise<number[]> {
  const ports = proxy.upstreamPorts();
  // Select first, terminate after, by pid: in one statement the planner may call
  // pg_terminate_backend before the other conditions, on sessions that are not ours.
  const { rows } = await admin.query<{ pid: number }>(
    `select pid from pg_stat_activity where datname = current_database() and client_port = any($1::int[]) and client_addr in ('127.0.0.1', '::1') and pid <> pg_backend_pid()`,
    [ports],
  );
  const pids = rows.map((r) => r.pid);
  for (const pid of pids) await admin.query('select pg_terminate_backend($1)', [pid]);
  await waitFor(
    'the terminated sessions to end',
    async () => (await admin.query('select 1 from pg_stat_activity where pid = any($1::int[])', [pids])).rowCount === 0,
    10_000,
  );
  return pids;
}

/**
 * Whether every client in the API's pool whose session is one of `pids` has heard it end (knex marks
 * such a client `__knex__disposed` on its `error`/`end` event, and the pool discards it at the next
 * acquire).
 */
function toldOfEnd(services: Services, pids: number[]): boolean {
  type Held = { resource: { processID?: number; __knex__disposed?: unknown } };
  const knex = services.orm.em.getConnection().getKnex() as unknown as {
    client: { pool: { free: Held[]; used: Held[] } };
  };
  const { free, used } = knex.client.pool;
  return [...free, ...used].every(
    ({ resource: c }) => !pids.includes(c.processID ?? -1) || c.__knex__disposed !== undefined,
  );
}

test.serial(
  'PostgreSQL down: 503 unavailable with Retry-After within the bound, never a 500; served again once it is back, without a restart',
  async (t) => {
    const { proxy, databaseUrl, admin } = await pgProxy(t);
    const { base } = await ownApi(t, (c) => ({ ...c, databaseUrl }));
    const u = await createUser();
    const late = await createUser(); // its credential is first looked up while the database is down
    t.is((await call('GET', '/api/apps', { base, token: u.accessToken })).status, 200);
    await Promise.all(Array.from({ length: 4 }, () => call('GET', '/api/apps', { base, token: u.accessToken }))); // several pooled connections

    // A restart: the sessions are terminated (57P01), then the port refuses connections.
    t.true((await terminateBackends(admin, proxy)).length > 0);
    await proxy.cut();
    for (let i = 0; i < 3; i++) {
      const [list, create, auth] = await Promise.all([
        timed('GET', '/api/apps', { base, token: u.accessToken }),
        timed('POST', '/api/apps', { base, token: u.accessToken, body: { name: 'during the outage' } }),
        timed('GET', '/api/users/me', { base, token: late.accessToken }), // not a 401: the credential is not known to be bad
      ]);
      assertUnavailable(t, list, 'a read');
      assertUnavailable(t, create, 'a write');
      assertUnavailable(t, auth, 'an authentication that needs the database');
    }
    const ready = await timed('GET', '/readyz', { base });
    t.is(ready.status, 503);
    t.false(ready.body.error.details.postgres.ok);
    t.true(ready.ms < BOUND_MS);

    await proxy.restore();
    const seen = new Set<number>();
    await waitFor(
      'the API to serve again',
      async () => {
        const r = await call('GET', '/api/apps', { base, token: u.accessToken });
        seen.add(r.status);
        return r.status === 200;
      },
      30_000,
    );
    t.deepEqual(
      [...seen].filter((s) => s !== 200 && s !== 503),
      [],
      'only 200 or 503 while recovering',
    );
    t.is(
      (await call('POST', '/api/apps', { base, token: u.accessToken, body: { name: 'after the outage' } })).status,
      201,
    );
    t.is((await call('GET', '/api/users/me', { base, token: late.accessToken })).status, 200);
  },
);

test.serial(
  'PostgreSQL restarted under idle pooled connections: the broken ones are discarded, requests are served (never a 500)',
  async (t) => {
    const { proxy, databaseUrl, admin } = await pgProxy(t);
    const { base, services } = await ownApi(t, (c) => ({ ...c, databaseUrl }));
    const u = await createUser();
    const burst = () =>
      Promise.all(Array.from({ length: 6 }, () => call('GET', '/api/apps', { base, token: u.accessToken })));
    t.deepEqual([...new Set((await burst()).map((r) => r.status))], [200]);

    // Requests racing the termination may see it (503), never a 500.
    const terminated = terminateBackends(admin, proxy);
    const racing = await burst();
    t.true(
      racing.every((r) => r.status === 200 || r.status === 503),
      racing.map((r) => r.status).join(),
    );
    const ended = await terminated;
    t.true(ended.length > 0);
    // The server has ended the sessions; their ends reach the pool's clients a few event-loop turns later
    // (server → proxy → client socket). Once every idle client has been told, every request is served at
    // the first attempt, on fresh connections.
    await waitFor('the pool to be told its sessions ended', async () => toldOfEnd(services, ended), 10_000);
    const after = await burst();
    t.deepEqual([...new Set(after.map((r) => r.status))], [200], after.map((r) => r.text).join('\n'));
  },
);

test.serial(
  "PostgreSQL accepting connections but never answering: 503 once the pool acquire timeout (5 s) has passed, not after knex's 60 s",
  async (t) => {
    const { proxy, databaseUrl, admin } = await pgProxy(t);
    const { base } = await ownApi(t, (c) => ({ ...c, databaseUrl }));
    const u = await createUser();
    t.is((await call('GET', '/api/apps', { base, token: u.accessToken })).status, 200);

    await terminateBackends(admin, proxy); // the pool is left with no usable connection...
    proxy.stall(); // ...and a new one hangs in its start-up
    const r = await timed('GET', '/api/apps', { base, token: u.accessToken });
    assertUnavailable(t, r, 'a read on a hung database');
    t.true(r.ms >= 4_000, `answered after ${r.ms} ms: the acquire timeout, not an earlier failure`);

    await proxy.restore();
    await waitFor(
      'the API to serve again',
      async () => (await call('GET', '/api/apps', { base, token: u.accessToken })).status === 200,
      30_000,
    );
  },
);

async function lookups(result: string): Promise<number> {
  const metric = await registry.getSingleMetric('auth_credential_lookups_total')!.get();
  return metric.values.find((v) => v.labels.result === result)?.value ?? 0;
}

async function startRedis(t: ExecutionContext, port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  await waitFor(
    `redis-server on port ${port}`,
    async () => {
      if (child.exitCode !== null) throw new Error('redis-server exited');
      const probe = connectRedis(`redis://127.0.0.1:${port}`);
      try {
        return (await redisReady(probe, 1000)) && (await probe.ping()) === 'PONG';
      } finally {
        probe.disconnect();
      }
    },
    10_000,
  );
  return child;
}

test.serial(
  'Redis down: authenticated requests are still served at once (rate limits in process memory, credentials from PostgreSQL); back to Redis once it returns',
  async (t) => {
    const port = await freePort();
    let redis = await startRedis(t, port);
    const decisions: RateDecision[] = [];
    const { services, base } = await ownApi(
      t,
      (c) => ({ ...c, redisUrl: `redis://127.0.0.1:${port}` }),
      (s) => ({
        ...s,
        rateLimiter: {
          check: async (...args) => {
            const d = await s.rateLimiter.check(...args);
            decisions.push(d);
            return d;
          },
        },
      }),
    );
    const u = await createUser();
    const get = () => timed('GET', '/api/apps', { base, token: u.accessToken });
    await waitFor('the credential cache to be live', async () => services.authenticator.credentials.enabled);
    t.is((await get()).status, 200);
    const hits = await lookups('hit');
    t.is((await get()).status, 200);
    t.is((await lookups('hit')) - hits, 1, 'served from the credential cache while Redis is up');
    t.false(decisions.at(-1)!.degraded);

    const gone = new Promise((res) => redis.once('exit', res));
    redis.kill('SIGKILL');
    await gone;
    await waitFor(
      'the credential cache to be bypassed',
      async () => !services.authenticator.credentials.enabled,
      10_000,
    );
    const [hitsDown, missesDown] = [await lookups('hit'), await lookups('miss')];
    for (let i = 0; i < 5; i++) {
      const r = await get();
      t.is(r.status, 200, r.text);
      t.true(r.ms < 2_000, `a request took ${r.ms} ms with Redis down`);
      t.true(decisions.at(-1)!.degraded, 'the in-process window decided');
      t.truthy(r.headers.get('ratelimit'), 'rate limit headers as usual');
    }
    t.is(
      (await lookups('hit')) - hitsDown,
      0,
      'no credential served from the cache while its invalidations could be missed',
    );
    t.is((await lookups('miss')) - missesDown, 5);
    const ready = await timed('GET', '/readyz', { base });
    t.is(ready.status, 503);
    t.false(ready.body.error.details.redis.ok);
    t.true(ready.ms < BOUND_MS);

    redis = await startRedis(t, port);
    await waitFor(
      'rate limits back in Redis',
      async () => (await get()).status === 200 && !decisions.at(-1)!.degraded,
      20_000,
    );
    await waitFor(
      'the credential cache to be live again',
      async () => services.authenticator.credentials.enabled,
      20_000,
    );
    const hitsUp = await lookups('hit');
    t.is((await get()).status, 200);
    t.is((await get()).status, 200);
    t.true((await lookups('hit')) - hitsUp >= 1, 'the cache fills again');
  },
);

test.serial(
  'Temporal down: a workflow-starting request is 503 unavailable with Retry-After within the bound; accepted again once it is back',
  async (t) => {
    const direct = loadConfig().temporal.address;
    const [host, port] = [direct.slice(0, direct.lastIndexOf(':')), Number(direct.slice(direct.lastIndexOf(':') + 1))];
    const proxy = await tcpProxy({ host, port });
    t.teardown(() => proxy.close());
    const { base } = await ownApi(t, (c) => ({
      ...c,
      temporal: { ...c.temporal, address: `127.0.0.1:${proxy.port}` },
    }));
    const u = await createUser();
    const exportContacts = () => timed('POST', '/api/contacts/export', { base, token: u.accessToken, body: {} });
    t.is((await exportContacts()).status, 202);

    await proxy.cut();
    for (let i = 0; i < 2; i++) assertUnavailable(t, await exportContacts(), 'a workflow start');
    const ready = await timed('GET', '/readyz', { base });
    t.is(ready.status, 503);
    t.false(ready.body.error.details.temporal.ok);
    t.true(ready.ms < BOUND_MS);
    t.is(
      (await call('GET', '/api/apps', { base, token: u.accessToken })).status,
      200,
      'what does not need Temporal is served',
    );

    await proxy.restore();
    const seen = new Set<number>();
    await waitFor(
      'workflow starts to be accepted again',
      async () => {
        const r = await exportContacts();
        seen.add(r.status);
        return r.status === 202;
      },
      30_000,
    );
    t.deepEqual(
      [...seen].filter((s) => s !== 202 && s !== 503),
      [],
      'only 202 or 503 while recovering',
    );
  },
);
