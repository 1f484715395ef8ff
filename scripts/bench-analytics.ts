// `npm run bench:analytics`: the analytics routes over a year of about 1.3 million events in one
// workspace (`BENCH_ACTIONS` sends, default 600,000, with opens and replies; 200,000 enrollments;
// `BENCH_DISCOVERED` discovered leads, default 200,000, half of them reviewed; 2,000 meetings),
// spread over 6 campaigns × 3 steps, 3 agents × 4 signals × 3 sources and two products, all written
// set-based with generate_series. Then the rollup over the whole year (timed), then ~200 requests per
// route over HTTP (the API in this process) with varied ranges (1 to 366 days), time zones and
// filters, one at a time: p50/p95 per route against the goal (p95 ≤ 100 ms).
// Own database (`outreach_<BENCH_DB_SUFFIX>`, default `outreach_bench_analytics`) and Redis database 4.
import { cpus, loadavg } from 'node:os';
import type { EntityManager } from '@mikro-orm/postgresql';
import { benchApiOwner, benchStack, dropBenchOwner, startApi } from './bench-fixtures.js';

const ACTIONS = Number(process.env.BENCH_ACTIONS ?? 600_000);
const DISCOVERED = Number(process.env.BENCH_DISCOVERED ?? 200_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const LEADS = Math.ceil(ACTIONS / 3 / 6);
const { stack, log } = await benchStack(
  'analytics',
  { suffix: process.env.BENCH_DB_SUFFIX ?? 'bench_analytics', redisDb: 4 },
  { env: { RATE_LIMIT_DEFAULT_PER_MINUTE: '1000000' } },
);

const { createApp: createProduct } = await import('../domain/apps/apps.js');
const { rollupAnalytics } = await import('../domain/analytics/rollup.js');

const { services, base, close } = await startApi();
let benchUser: string | undefined;
const secs = (t0: number) => ((performance.now() - t0) / 1000).toFixed(1);

try {
  const em = services.orm.em.fork() as EntityManager;
  const { actor, app, token: secret } = await benchApiOwner(em);
  benchUser = actor.userId;
  const ws = actor.workspaceId;
  const app2 = await createProduct(em, actor, { name: 'Bench product 2' });
  const t0 = performance.now();
  log(
    `seeding: ${LEADS} leads, 6 campaigns × 3 steps (the first an A/B test), ${ACTIONS} sends, ${DISCOVERED} discovered leads`,
  );
  // A random moment of the last year, for row i (deterministic per row and salt).
  const when = (expr: string, salt: number) =>
    `now() - (((hashtext(${expr}::text || '${salt}') & 2147483647) % 31536000) * interval '1 second')`;
  await em.execute(
    `with l as (insert into lead_lists (id, workspace_id, app_id, name, created_at, updated_at) values (gen_random_uuid(), ?, ?, 'Bench analytics', now(), now()) returning id),
          c as (insert into contacts (id, workspace_id, created_at, updated_at) select gen_random_uuid(), ?, now(), now() from generate_series(1, ?) returning id)
     insert into leads (id, workspace_id, list_id, contact_id, source, created_at, updated_at) select gen_random_uuid(), ?, l.id, c.id, 'import', now(), now() from c, l`,
    [ws, app.id, ws, LEADS, ws],
  );
  await em.execute(
    `insert into campaigns (id, workspace_id, app_id, name, status, time_zone, sending_windows, account_ids, rotation, daily_new_lead_cap, stop_on_reply, country_rule,
       review_required, message_mode, exclusive_leads, step_version, created_at, updated_at)
     select gen_random_uuid(), ?, case when k <= 4 then ?::uuid else ?::uuid end, 'Bench campaign ' || k, 'active', 'UTC', '{}'::jsonb, '[]'::jsonb, 'round_robin', null, true, null, false, 'template', false, 1, now(), now()
       from generate_series(1, 6) k`,
    [ws, app.id, app2.id],
  );
  await em.execute(
    `insert into campaign_steps (id, campaign_id, position, type, config, variants, created_at, updated_at)
     select gen_random_uuid(), c.id, p, 'email', '{}'::jsonb,
            case when p = 0 then jsonb_build_array(jsonb_build_object('id', gen_random_uuid(), 'name', 'A', 'weight', 1, 'config', '{}'::jsonb),
                                                   jsonb_build_object('id', gen_random_uuid(), 'name', 'B', 'weight', 1, 'config', '{}'::jsonb)) end,
            now(), now()
       from campaigns c, generate_series(0, 2) p where c.workspace_id = ?`,
    [ws],
  );
  await em.execute(
    `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, enrolled_at, created_at, updated_at, replied_at)
     select gen_random_uuid(), ?, c.id, l.id, l.contact_id, 'active', 1, x.at, x.at, now(), null
       from campaigns c cross join leads l cross join lateral (select ${when('(l.id::text || c.id::text)', 1)} as at) x
      where c.workspace_id = ? and l.workspace_id = ?`,
    [ws, ws, ws],
  );
  log(`enrollments written (${secs(t0)} s)`);
  // Three sends per enrollment (one per step; the first step's split between its two A/B variants), 25 % opened, 4 % replied, 1 % bounced.
  await em.execute(
    `insert into scheduled_actions (id, workspace_id, campaign_id, enrollment_id, lead_id, step_id, step_position, step_version, type, state, due_at, executed_at, opened_at, replied_at, error_code, attempts, created_at, updated_at, variant_id)
     select gen_random_uuid(), ?, e.campaign_id, e.id, e.lead_id, s.id, s.position, 1, 'email', case when r.v % 100 = 0 then 'failed' else 'executed' end,
            x.at, case when r.v % 100 = 0 then null else x.at end,
            case when r.v % 4 = 1 then x.at + interval '2 hours' end, case when r.v % 25 = 3 then x.at + interval '5 hours' end,
            case when r.v % 100 = 0 then 'bounce_hard' end, 1, x.at, x.at, (s.variants -> (r.v / 7 % 2)::int ->> 'id')::uuid
       from enrollments e join campaign_steps s on s.campaign_id = e.campaign_id
       cross join lateral (select (hashtext(e.id::text || s.position::text) & 2147483647) as v) r
       cross join lateral (select least(e.created_at + s.position * interval '3 days', now() - interval '1 minute') as at) x
      where e.workspace_id = ?`,
    [ws, ws],
  );
  await em.execute(
    `update enrollments e set replied_at = r.first from (select enrollment_id, min(replied_at) as first from scheduled_actions where workspace_id = ? and replied_at is not null group by 1) r where e.id = r.enrollment_id`,
    [ws],
  );
  log(`actions written (${secs(t0)} s)`);
  await em.execute(
    `insert into discovery_agents (id, workspace_id, app_id, name, status, created_at, updated_at)
     select gen_random_uuid(), ?, case when k = 3 then ?::uuid else ?::uuid end, 'Bench agent ' || k, 'active', now(), now() from generate_series(1, 3) k`,
    [ws, app2.id, app.id],
  );
  await em.execute(
    `insert into discovered_leads (id, workspace_id, app_id, agent_id, signal_key, evidence_key, source, external_id, dedupe_key, full_name, evidence, score, reasons, status, reviewed_at, created_at, updated_at)
     select gen_random_uuid(), ?, a.app_id, a.id, 'signal-' || (i % 4), 'e' || i, (array['newsforum', 'pronet', 'import'])[1 + i % 3], 'x' || i, 'd' || i, 'Person ' || i, '{}', 50, '[]',
            case when i % 4 = 0 then 'approved' when i % 4 = 1 then 'rejected' else 'new' end, case when i % 4 < 2 then x.at + interval '1 day' end, x.at, x.at
       from generate_series(1, ?) i cross join lateral (select id, app_id from discovery_agents where workspace_id = ? order by id offset i % 3 limit 1) a
       cross join lateral (select least(${when('i', 2)}, now() - interval '1 day') as at) x`,
    [ws, DISCOVERED, ws],
  );
  await em.execute(
    `insert into meetings (id, workspace_id, lead_id, contact_id, title, starts_at, ends_at, status, source, created_at, updated_at)
     select gen_random_uuid(), ?, l.id, l.contact_id, 'Intro', x.at + interval '1 day', x.at + interval '25 hours', 'scheduled', 'manual', x.at, x.at
       from (select * from leads where workspace_id = ? limit 2000) l cross join lateral (select ${when('l.id', 3)} as at) x`,
    [ws, ws],
  );
  const [counts] = await em.execute<
    {
      actions: number;
      opened: number;
      replied: number;
      enrollments: number;
      discovered: number;
      reviewed: number;
      meetings: number;
    }[]
  >(
    `select (select count(*) from scheduled_actions where workspace_id = ?)::int as actions, (select count(*) from scheduled_actions where workspace_id = ? and opened_at is not null)::int as opened,
            (select count(*) from scheduled_actions where workspace_id = ? and replied_at is not null)::int as replied, (select count(*) from enrollments where workspace_id = ?)::int as enrollments,
            (select count(*) from discovered_leads where workspace_id = ?)::int as discovered, (select count(*) from discovered_leads where workspace_id = ? and reviewed_at is not null)::int as reviewed,
            (select count(*) from meetings where workspace_id = ?)::int as meetings`,
    [ws, ws, ws, ws, ws, ws, ws],
  );
  const events = Object.values(counts!).reduce((a, b) => a + b, 0);
  log(`seeded ${events.toLocaleString('en')} events in ${secs(t0)} s: ${JSON.stringify(counts)}`);
  await em.execute('analyze');

  const t1 = performance.now();
  const rolled = await rollupAnalytics(em, {
    from: new Date(Date.now() - 367 * 86_400_000),
    to: new Date(Date.now() + 3_600_000),
    workspaceId: ws,
  });
  const rollupSeconds = secs(t1);
  const [sizes] = await em.execute<{ hours: number; days: number; series: number; products: number }[]>(
    `select (select count(*) from analytics_hours where workspace_id = ?)::int as hours, (select count(*) from analytics_days where workspace_id = ?)::int as days,
            (select count(*) from analytics_series_hours where workspace_id = ?)::int as series, (select count(*) from analytics_app_hours where workspace_id = ?)::int as products`,
    [ws, ws, ws, ws],
  );
  for (const t of ['analytics_hours', 'analytics_days', 'analytics_series_hours', 'analytics_app_hours'])
    await em.execute(`analyze ${t}`);
  log(`rollup of ${rolled.hours} hours: ${rolled.rows} hour rows in ${rollupSeconds} s`);

  const campaigns = (
    await em.execute<{ id: string }[]>(`select id from campaigns where workspace_id = ? order by id`, [ws])
  ).map((c) => c.id);
  const zones = [
    'UTC',
    'America/New_York',
    'Europe/Paris',
    'Asia/Tokyo',
    'Australia/Sydney',
    'America/Los_Angeles',
    'Asia/Kolkata',
  ];
  let seed = 42;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
  const day = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
  const headers = { authorization: `Bearer ${secret}` };
  const routes = ['overview', 'daily', 'daily-overview', 'funnel', 'signals', 'sources', 'steps'];
  const results: { route: string; p50: number; p95: number; max: number }[] = [];
  const loadBefore = loadavg()[0]!;
  for (const route of routes) {
    const times: number[] = [];
    for (let i = 0; i < REQUESTS + 5; i++) {
      // A quarter of the requests ask for a whole year, the rest 1 to 366 days ending anywhere in the year.
      const span = i % 4 === 0 ? 366 : 1 + rand(366);
      const end = rand(367 - span);
      const tz = zones[rand(zones.length)]!;
      const params = new URLSearchParams(
        route === 'daily-overview' ? { date: day(end), tz } : { from: day(end + span - 1), to: day(end), tz },
      );
      const filter = rand(4);
      if (filter === 1) params.set('app_id', app.id);
      if (filter === 2 && !['funnel', 'signals', 'sources'].includes(route))
        params.set('campaign_id', campaigns[rand(campaigns.length)]!);
      const t = performance.now();
      const res = await fetch(`${base}/api/analytics/${route}?${params}`, { headers });
      await res.arrayBuffer();
      const ms = performance.now() - t;
      if (res.status !== 200) throw new Error(`${route}?${params}: ${res.status}`);
      if (i >= 5) times.push(ms); // the first few warm the route up
    }
    times.sort((a, b) => a - b);
    const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!;
    results.push({ route, p50: q(0.5), p95: q(0.95), max: times[times.length - 1]! });
    log(`${route}: p95 ${q(0.95).toFixed(1)} ms`);
  }

  console.log(
    `bench:analytics — ${events.toLocaleString('en')} events over a year in one workspace (seeded in ${secs(t0)} s)`,
  );
  console.log(`  ${JSON.stringify(counts)}`);
  console.log(
    `  rollup of the year: ${rollupSeconds} s → ${sizes!.hours.toLocaleString('en')} hour rows, ${sizes!.days.toLocaleString('en')} day rows, ${sizes!.series.toLocaleString('en')} campaign-series and ${sizes!.products.toLocaleString('en')} product-series rows`,
  );
  console.log(
    `  ${REQUESTS} requests per route over HTTP, one at a time, ranges 1–366 days (a quarter a whole year), 7 time zones, filters by product/campaign`,
  );
  console.log(
    `  machine: ${cpus().length} cores, load average ${loadBefore.toFixed(1)} before the requests, ${loadavg()[0]!.toFixed(1)} after (figures grow with other load)`,
  );
  for (const r of results) {
    console.log(
      `  GET /api/analytics/${r.route.padEnd(15)} p50 ${r.p50.toFixed(1).padStart(6)} ms   p95 ${r.p95.toFixed(1).padStart(6)} ms   max ${r.max.toFixed(1).padStart(6)} ms   (goal p95 ≤ 100 ms: ${r.p95 <= 100 ? 'met' : 'MISSED'})`,
    );
  }
} finally {
  await dropBenchOwner(services.orm.em.fork() as EntityManager, benchUser, log);
  await close();
  if (process.env.CI) await stack.stop();
}
process.exit(0);
