// `npm run bench:api`: the cost of the request path, against a bare Koa app as the ceiling.
// Builds the project, starts the compiled API in production mode on the embedded stack (its own
// database `outreach_bench` and Redis database 2, so a running `npm start` is not disturbed) and a
// bare Koa app (another process) that returns a JSON body of the same size, then drives both with
// autocannon: requests/s at saturation, the ratio, and p50/p99 at a fixed 500 req/s for 20 s, with
// error counts; also a paginated list (webhook subscriptions). Prints figures and stops by itself.
// BENCH_CONTENTION=1 measures the saturation ratio a second time with a CPU hog beside it (stress-ng
// `--cpu 2 --cpu-load 60`, or busy-looping node children where stress-ng is missing), started and
// stopped by the bench itself, so the quiet and the contended ratio come out of one invocation.
// BENCH_QUICK=1 runs only the saturation rounds (no fixed-rate, list or credential-stuffing rounds).
import autocannon from 'autocannon';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { repoRoot } from '../lib/config.js';
import { freePort, stopChild, waitFor } from './children.js';
import { stackWithSchema } from './stack-env.js';

const log = (msg: string) => console.error(`[bench:api] ${msg}`);
const SATURATION_S = Number(process.env.BENCH_SATURATION_SECONDS ?? 10);
const FIXED_S = Number(process.env.BENCH_FIXED_SECONDS ?? 20);
const FIXED_RATE = 500;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const CONTENTION = process.env.BENCH_CONTENTION === '1';
const QUICK = process.env.BENCH_QUICK === '1';
/** The goal (issue 30): an authenticated request at ≥ 30 % of bare Koa, quiet and under contention. */
const GOAL_RATIO = 30;

if (!process.argv.includes('--no-build')) {
  log('npm run build');
  const b = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], {
    cwd: repoRoot,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (b.status !== 0) process.exit(b.status ?? 1);
}

const { stack, env } = await stackWithSchema(log, { suffix: 'bench', redisDb: 2 });
const apiPort = await freePort();
const barePort = await freePort();
const apiEnv = {
  ...process.env,
  ...env,
  NODE_ENV: 'production',
  PORT: String(apiPort),
  LOG_LEVEL: 'info',
  JWT_SECRET: randomBytes(32).toString('base64url'),
  ENCRYPTION_KEY: randomBytes(32).toString('base64url'),
  // The check still runs (one Redis round trip per request); the limit just does not refuse.
  RATE_LIMIT_DEFAULT_PER_MINUTE: '1000000000',
  OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
};
const children: ChildProcess[] = [];
// Access logs go to /dev/null: written (as in production) but not kept.
// BENCH_PROFILE=1 writes a V8 CPU profile of the API to .data/profiles/ (open it in Chrome DevTools).
const profile =
  process.env.BENCH_PROFILE === '1' ? ['--cpu-prof', `--cpu-prof-dir=${join(repoRoot, '.data/profiles')}`] : [];
// The production image's NODE_OPTIONS (Dockerfile), unless BENCH_NODE_FLAGS says otherwise.
const nodeFlags = (process.env.BENCH_NODE_FLAGS ?? '--max-semi-space-size=32').split(' ').filter(Boolean);
const api = spawn(process.execPath, [...profile, ...nodeFlags, join(repoRoot, 'dist/api/server.js')], {
  cwd: repoRoot,
  env: apiEnv,
  stdio: ['ignore', 'ignore', 'inherit'],
});
children.push(api);
const base = `http://127.0.0.1:${apiPort}`;

/**
 * A CPU hog beside the measured processes: stress-ng (2 workers at 60 % each) when installed, else two
 * node children busy-looping 60 ms of every 100 ms. In its own process group, so stopping it stops its
 * workers; stress-ng also ends by itself after `maxSeconds`, should this process die first.
 */
function startHog(maxSeconds: number): { what: string; stop: () => Promise<void> } {
  const stressNg = spawnSync('which', ['stress-ng']).status === 0;
  const burn = `const end = Date.now() + ${maxSeconds * 1000}; for (;;) { const t = Date.now(); if (t > end) process.exit(0); while (Date.now() - t < 60); const s = Date.now() + 40; while (Date.now() < s) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 40); }`;
  const procs = stressNg
    ? [
        spawn('stress-ng', ['--cpu', '2', '--cpu-load', '60', '--timeout', `${maxSeconds}s`, '--quiet'], {
          detached: true,
          stdio: 'ignore',
        }),
      ]
    : [0, 1].map(() => spawn(process.execPath, ['-e', burn], { detached: true, stdio: 'ignore' }));
  return {
    what: stressNg ? 'stress-ng --cpu 2 --cpu-load 60' : '2 node busy loops at 60 %',
    async stop() {
      for (const p of procs) {
        if (p.exitCode !== null || p.signalCode !== null || !p.pid) continue;
        const exited = new Promise<void>((r) => p.once('exit', () => r()));
        try {
          process.kill(-p.pid, 'SIGTERM'); // its process group: stress-ng's workers with it
        } catch {
          /* already gone */
        }
        await exited;
      }
    },
  };
}
let hog: ReturnType<typeof startHog> | undefined;

async function stopAll(): Promise<void> {
  await hog?.stop();
  redis.disconnect();
  await Promise.all(children.map((c) => stopChild(c, 5000)));
  if (process.env.CI) await stack.stop();
}

async function json(method: string, path: string, token?: string, body?: unknown): Promise<any> {
  const r = await fetch(base + path, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** CPU time (user + system) of a process so far, in ms, from /proc (Linux; NaN elsewhere). */
function cpuMs(pid: number | undefined): number {
  if (!pid) return NaN;
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, in clock ticks of 1/100 s
  } catch {
    return NaN;
  }
}

/** The redis-server listening on the bench's Redis port (a shared server: its figure includes others' traffic). */
function redisPid(url: string): number | undefined {
  const port = new URL(url).port || '6379';
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const cmd = readFileSync(`/proc/${e}/cmdline`, 'latin1');
      if (cmd.includes('redis-server') && cmd.includes(`:${port}`)) return Number(e);
    } catch {
      /* gone */
    }
  }
  return undefined;
}

interface Run {
  /** CPU ms per request of the server under test, Redis and the load generator (this process). */
  cpu?: { server: number; redis: number; client: number };
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  total: number;
}

// The bench's own Redis database: emptied before each run, so one run's sliding-window log (one
// member per allowed request; the bench lifts the limit) does not slow the next.
const redis = new Redis(env.REDIS_URL!);

const redisServerPid = redisPid(env.REDIS_URL!);

async function load(
  url: string,
  token: string | undefined,
  opts: { seconds: number; rate?: number; connections?: number; pid?: number },
): Promise<Run> {
  await redis.flushdb();
  const cpu0 = { server: cpuMs(opts.pid), redis: cpuMs(redisServerPid), client: process.cpuUsage() };
  const r = await autocannon({
    url,
    connections: opts.connections ?? CONNECTIONS,
    duration: opts.seconds,
    ...(opts.rate ? { overallRate: opts.rate } : {}),
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const n = Math.max(1, r.requests.total);
  const client = process.cpuUsage(cpu0.client);
  const cpu = {
    server: (cpuMs(opts.pid) - cpu0.server) / n,
    redis: (cpuMs(redisServerPid) - cpu0.redis) / n,
    client: (client.user + client.system) / 1000 / n,
  };
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
    total: r.requests.total,
    cpu,
  };
}

async function transactions(databaseUrl: string): Promise<number> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const db = new URL(databaseUrl).pathname.slice(1);
    const { rows } = await c.query('select xact_commit + xact_rollback as n from pg_stat_database where datname = $1', [
      db,
    ]);
    return Number(rows[0].n);
  } finally {
    await c.end();
  }
}

/** The API's own count of credential resolutions (`auth_credential_lookups_total` on /metrics). */
async function lookupCounts(): Promise<Record<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const out: Record<string, number> = { failed: 0, throttled: 0, miss: 0, hit: 0 };
  for (const m of text.matchAll(/^auth_credential_lookups_total\{result="(\w+)"\} (\d+)/gm)) out[m[1]] = Number(m[2]);
  return out;
}

const us = (ms: number) => (Number.isFinite(ms) ? `${Math.round(ms * 1000)} µs` : '?');
const fmt = (r: Run) =>
  `${Math.round(r.rps).toLocaleString('en-US')} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.errors} errors, ${r.non2xx} non-2xx of ${r.total}` +
  (r.cpu
    ? `; CPU per request: server ${us(r.cpu.server)}, Redis ${us(r.cpu.redis)}, autocannon ${us(r.cpu.client)}`
    : '');

try {
  await waitFor('the API', async () => (await fetch(`${base}/healthz`)).ok, 60_000);
  const email = `bench-${Date.now()}@example.test`;
  const signup = await json('POST', '/api/auth/signup', undefined, {
    email,
    password: 'bench password 1',
    name: 'Bench User',
  });
  const pat = (await json('POST', '/api/users/me/api-tokens', signup.access_token, { name: 'bench' })).token as string;
  for (let i = 0; i < 20; i++)
    await json('POST', '/api/webhooks/outbound', pat, {
      url: `http://127.0.0.1:9/hook-${i}`,
      events: ['lead.discovered'],
    });
  const me = JSON.stringify(await json('GET', '/api/users/me', pat));

  // The ceiling: a bare Koa app in its own process, answering the same bytes.
  const bareSrc = `import Koa from 'koa'; const body = ${JSON.stringify(me)}; const app = new Koa();
app.use((ctx) => { ctx.type = 'application/json'; ctx.body = body; }); app.listen(${barePort}, '127.0.0.1');`;
  const bare = spawn(process.execPath, ['--input-type=module', '-e', bareSrc], {
    cwd: repoRoot,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  children.push(bare);
  const bareUrl = `http://127.0.0.1:${barePort}/api/users/me`;
  await waitFor('the bare Koa app', async () => (await fetch(bareUrl)).ok, 30_000);
  if ((await (await fetch(bareUrl)).text()).length !== me.length) throw new Error('bare body size differs');

  log(`warm-up (5 s each), then ${SATURATION_S} s saturation runs with ${CONNECTIONS} connections`);
  await load(`${base}/api/users/me`, pat, { seconds: 5, pid: api.pid });
  await load(bareUrl, undefined, { seconds: 5, pid: bare.pid });

  const before = await transactions(env.DATABASE_URL!);
  const apiSat = await load(`${base}/api/users/me`, pat, { seconds: SATURATION_S, pid: api.pid });
  await new Promise((r) => setTimeout(r, 11_000)); // idle backends report to pg_stat_database within 10 s
  const xacts = (await transactions(env.DATABASE_URL!)) - before;
  const bareSat = await load(bareUrl, undefined, { seconds: SATURATION_S, pid: bare.pid });

  // Under contention: the same two saturation runs with the hog beside them, alternating in halves
  // (API, bare, API, bare) so that a change in the background load weighs on both alike.
  let contended: { api: Run; bare: Run; what: string } | undefined;
  if (CONTENTION) {
    const half = Math.max(1, Math.round(SATURATION_S / 2));
    hog = startHog(4 * half + 30);
    log(`under contention (${hog.what}): API and bare Koa alternating, 2 × ${half} s each`);
    await new Promise((r) => setTimeout(r, 1000));
    const runs: Run[] = [];
    for (let i = 0; i < 4; i++)
      runs.push(
        await load(i % 2 === 0 ? `${base}/api/users/me` : bareUrl, i % 2 === 0 ? pat : undefined, {
          seconds: half,
          pid: i % 2 === 0 ? api.pid : bare.pid,
        }),
      );
    const what = hog.what;
    await hog.stop();
    hog = undefined;
    const avg = (x: number, y: number, a: Run, b: Run) => (x * a.total + y * b.total) / Math.max(1, a.total + b.total);
    const sum = (a: Run, b: Run): Run => ({
      rps: (a.rps + b.rps) / 2,
      p50: Math.max(a.p50, b.p50),
      p99: Math.max(a.p99, b.p99),
      errors: a.errors + b.errors,
      non2xx: a.non2xx + b.non2xx,
      total: a.total + b.total,
      cpu:
        a.cpu && b.cpu
          ? {
              server: avg(a.cpu.server, b.cpu.server, a, b),
              redis: avg(a.cpu.redis, b.cpu.redis, a, b),
              client: avg(a.cpu.client, b.cpu.client, a, b),
            }
          : undefined,
    });
    contended = { api: sum(runs[0], runs[2]), bare: sum(runs[1], runs[3]), what };
  }

  const ratio = (apiSat.rps / bareSat.rps) * 100;
  const verdict = (r: number) => `(goal ≥ ${GOAL_RATIO} %) ${r >= GOAL_RATIO ? 'MET' : 'MISSED'}`;
  const lines = [
    `GET /api/users/me (PAT), saturation:      ${fmt(apiSat)}`,
    `bare Koa, same JSON (${me.length} B), saturation: ${fmt(bareSat)}`,
    `ratio: ${ratio.toFixed(1)} % of bare Koa ${verdict(ratio)}`,
    `SQL transactions per request (users/me, saturation): ${(xacts / Math.max(1, apiSat.total)).toFixed(4)}`,
  ];
  if (contended) {
    const r = (contended.api.rps / contended.bare.rps) * 100;
    lines.push(
      `under contention (${contended.what}), GET /api/users/me (PAT): ${fmt(contended.api)}`,
      `under contention, bare Koa: ${fmt(contended.bare)}`,
      `ratio under contention: ${r.toFixed(1)} % of bare Koa ${verdict(r)}`,
    );
  }
  if (!QUICK) {
    const listSat = await load(`${base}/api/webhooks/outbound?limit=50`, pat, { seconds: SATURATION_S, pid: api.pid });
    log(`fixed ${FIXED_RATE} req/s for ${FIXED_S} s`);
    const apiFixed = await load(`${base}/api/users/me`, pat, {
      seconds: FIXED_S,
      rate: FIXED_RATE,
      connections: 20,
      pid: api.pid,
    });
    const bareFixed = await load(bareUrl, undefined, {
      seconds: FIXED_S,
      rate: FIXED_RATE,
      connections: 20,
      pid: bare.pid,
    });
    const listFixed = await load(`${base}/api/webhooks/outbound?limit=50`, pat, {
      seconds: FIXED_S,
      rate: FIXED_RATE,
      connections: 20,
      pid: api.pid,
    });

    // Credential stuffing: 700 invalid bearer tokens from one IP, as fast as they come.
    const stuffBefore = await lookupCounts();
    const statuses = new Map<number, number>();
    for (let i = 0; i < 700; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          fetch(`${base}/api/users/me`, { headers: { authorization: `Bearer pat_invalid${i + j}` } }).then(
            (r) => r.status,
          ),
        ),
      );
      for (const st of batch) statuses.set(st, (statuses.get(st) ?? 0) + 1);
    }
    const stuffAfter = await lookupCounts();
    lines.push(
      `GET /api/users/me at ${FIXED_RATE} req/s for ${FIXED_S} s: ${fmt(apiFixed)} (goal p99 ≤ 10 ms, 0 errors) ${apiFixed.p99 <= 10 && apiFixed.errors + apiFixed.non2xx === 0 ? 'MET' : 'MISSED'}`,
      `bare Koa at ${FIXED_RATE} req/s for ${FIXED_S} s (the machine's floor in this run): ${fmt(bareFixed)}`,
      `GET /api/webhooks/outbound?limit=50 (20 items), saturation: ${fmt(listSat)}`,
      `GET /api/webhooks/outbound?limit=50 at ${FIXED_RATE} req/s for ${FIXED_S} s: ${fmt(listFixed)}`,
      `700 invalid bearer tokens from one IP: ${[...statuses].map(([st, n]) => `${n} × ${st}`).join(', ')}; database lookups ${stuffAfter.failed - stuffBefore.failed}, refused before any lookup ${stuffAfter.throttled - stuffBefore.throttled}`,
    );
  }
  console.log(lines.join('\n'));
} finally {
  await stopAll();
}
process.exit(0);
