// `npm run bench:governor`: the rate governor under the "10,000 enrollments waking at 9:00" load.
// 1,000 connected sender accounts (in 40 pro workspaces, four time zones, open all day) receive
// 10,000 `requestSlot` calls, 10 per account in shuffled order, from BENCH_WORKERS concurrent callers
// (a comma list, default 50,100; the process's pool has DB_POOL_MAX = 10 connections), in two rounds:
//   - "wake": the default gap (90 s + up to 60 s jitter), so each account grants one slot and
//     refuses the other nine with `gap`, as a real 9:00 burst would;
//   - "throughput": the same with no gap, so every request is a grant (caps leave room for 10);
//   - "one hot account": 1,000 requests for a single account (one grant, the rest refused).
// Prints grants/s, refusals/s, p50/p95/p99 latency per request, the time until all 10,000 have an
// answer, and SQL statements per request (besides BEGIN/COMMIT). Goals: ≥ 500 grants/s, p99 ≤ 100 ms,
// all answered within 20 s. Own database (`outreach_bench_governor`), no worker or Temporal needed.
import os from 'node:os';
import type { EntityManager } from '@mikro-orm/postgresql';
import { benchOwner, benchStack, countingOrm } from './bench-fixtures.js';

const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 1_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 10_000);
const WORKER_COUNTS = (process.env.BENCH_WORKERS ?? '50,100').split(',').map(Number);
const WORKSPACES = 40;
const ZONES = ['America/New_York', 'Europe/Paris', 'Asia/Tokyo', 'UTC'];

const { stack, env, log } = await benchStack('governor', { suffix: 'bench_governor', redisDb: 2 });

// Imported after the environment is set: config is read once.
const { requestSlot } = await import('../domain/governor/governor.js');
const { uuidv7 } = await import('../lib/ids.js');

const { orm, statements } = await countingOrm(env.DATABASE_URL!);

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function round(name: string, ids: string[], workers: number, requests = REQUESTS) {
  // Requests spread evenly over the accounts, shuffled so that callers of one account arrive interleaved.
  const queue = Array.from({ length: requests }, (_, i) => ids[i % ids.length]);
  for (let i = queue.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [queue[i], queue[j]] = [queue[j], queue[i]];
  }
  const latencies: number[] = [];
  const reasons = new Map<string, number>();
  let grants = 0;
  let next = 0;
  const before = statements();
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < queue.length) {
        const id = queue[next++];
        const t0 = performance.now();
        const r = await requestSlot(orm.em.fork() as EntityManager, id, 'message');
        latencies.push(performance.now() - t0);
        if (r.granted) grants++;
        else reasons.set(r.reason, (reasons.get(r.reason) ?? 0) + 1);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  latencies.sort((a, b) => a - b);
  const refusals = requests - grants;
  const [p50, p95, p99] = [50, 95, 99].map((p) => pct(latencies, p));
  const met = (ok: boolean) => (ok ? 'MET' : 'MISSED');
  console.log(
    [
      `${name}: ${requests.toLocaleString('en-US')} requests on ${ids.length.toLocaleString('en-US')} accounts from ${workers} callers, all answered in ${seconds.toFixed(2)} s (goal ≤ 20 s) ${met(seconds <= 20)}`,
      `  ${grants} grants (${Math.round(grants / seconds)}/s), ${refusals} refusals (${Math.round(refusals / seconds)}/s)${reasons.size ? ` [${[...reasons].map(([k, v]) => `${k}: ${v}`).join(', ')}]` : ''}`,
      `  latency p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${latencies[latencies.length - 1].toFixed(1)} ms (goal p99 ≤ 100 ms) ${met(p99 <= 100)}`,
      `  SQL statements per request: ${((statements() - before) / requests).toFixed(2)} (+ BEGIN/COMMIT)`,
      `  this process's CPU: ${((used.user + used.system) / 1e6).toFixed(2)} s of ${seconds.toFixed(2)} s; load average ${os.loadavg()[0].toFixed(2)} on ${os.cpus().length} cores`,
    ].join('\n'),
  );
  return { grants, seconds };
}

try {
  const em = orm.em.fork() as EntityManager;
  log(`creating ${WORKSPACES} workspaces and ${ACCOUNTS} connected accounts`);
  const workspaces: string[] = [];
  for (let i = 0; i < WORKSPACES; i++) workspaces.push((await benchOwner(em)).actor.workspaceId);
  const accounts = Array.from({ length: ACCOUNTS }, (_, i) => ({
    id: uuidv7(),
    ws: workspaces[i % WORKSPACES],
    tz: ZONES[i % ZONES.length],
  }));
  await em.execute(
    `insert into platform_accounts (id, workspace_id, channel, display_name, time_zone, working_hours, status, connector, connector_account_id, caps,
       min_gap_seconds, jitter_seconds, created_at, updated_at)
     select v.id, v.ws, 'pronet', 'Bench sender', v.tz, '{"days":[1,2,3,4,5,6,7],"start":"00:00","end":"24:00"}', 'connected', 'sandbox', v.id::text, '{}',
       90, 60, now(), now()
     from json_to_recordset(?::json) as v(id uuid, ws uuid, tz text)`,
    [JSON.stringify(accounts)],
  );
  const ids = accounts.map((a) => a.id);
  const idArray = `{${ids.join(',')}}`; // one uuid[] parameter (a JS array would expand into a list)

  const reset = async (gapSeconds: number, jitterSeconds: number) => {
    await em.execute('update platform_accounts set min_gap_seconds = ?, jitter_seconds = ? where id = any(?::uuid[])', [
      gapSeconds,
      jitterSeconds,
      idArray,
    ]);
    await em.execute('delete from account_usage where account_id = any(?::uuid[])', [idArray]);
    await em.execute('update account_governors set next_allowed_at = null where account_id = any(?::uuid[])', [
      idArray,
    ]);
  };
  for (const workers of WORKER_COUNTS) {
    await reset(90, 60);
    await round('wake (gap 90 s + jitter ≤ 60 s)', ids, workers);
    await reset(0, 0);
    const t = await round('throughput (no gap)', ids, workers);
    // One sender behind many enrollments: every caller races for the same row.
    await reset(90, 60);
    await round('one hot account (gap 90 s)', ids.slice(0, 1), workers, 1_000);
    console.log(
      `grants/s at saturation, ${workers} callers: ${Math.round(t.grants / t.seconds)} (goal ≥ 500) ${t.grants / t.seconds >= 500 ? 'MET' : 'MISSED'}`,
    );
  }
} finally {
  await orm.close();
  if (process.env.CI) await stack.stop();
}
process.exit(0);
