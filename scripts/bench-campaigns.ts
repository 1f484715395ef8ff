// `npm run bench:campaigns`: a 10,000-lead list enrolled in a campaign whose first (only) step is a
// network invitation on the sandbox network, then executed for every lead. The enrollment goes through
// the bulk route (`POST /api/campaigns/{id}/enroll-list-contacts`, workflow `enroll:<campaignId>:<operationId>`)
// served by the API in this process; the enroll and the 10,000 `enrollment:<campaignId>:<leadId>`
// workflows run on the bench's own worker process and task queue. Generous caps: BENCH_ACCOUNTS
// sender accounts (default: enough for the list at the pro plan's invitation cap of 100 a day, i.e.
// 100 accounts — more than the plan's 25 accounts, written directly into the database), caps at the
// pro plan's maximum, no gap or jitter (the governor allows 0; the API's minimum is 30 s), no warm-up,
// working hours and sending windows open all week.
// Prints the enrollment time (request → operation completed; goal ≤ 60 s), actions executed per second
// (goal ≥ 100/s), the worker's peak RSS, and the Temporal history length of a few enrollments.
// The worker runs as in production: `npm run build` first (skip with --no-build), then
// `node dist/workers/worker.js`. Own database (`outreach_<BENCH_DB_SUFFIX>`, default
// `outreach_bench_campaigns`) and Redis database 2; stops by itself.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Client, Connection } from '@temporalio/client';
import { repoRoot } from '../lib/config.js';
import { stopChild, waitFor } from './children.js';
import { stackWithSchema } from './stack-env.js';

const LEADS = Number(process.env.BENCH_LEADS ?? 10_000);
const INVITES_PER_DAY = 100; // the pro plan's maximum (domain/plans.ts)
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? Math.ceil(LEADS / INVITES_PER_DAY));
const log = (msg: string) => console.error(`[bench:campaigns] ${msg}`);
if (!process.argv.includes('--no-build')) {
  log('npm run build');
  const b = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], { cwd: repoRoot, stdio: ['ignore', 'ignore', 'inherit'] });
  if (b.status !== 0) process.exit(b.status ?? 1);
}
const { stack, env } = await stackWithSchema(log, { suffix: process.env.BENCH_DB_SUFFIX ?? 'bench_campaigns', redisDb: 2 });
const taskQueue = `bench-campaigns-${process.pid}`;
const benchEnv = { ...env, TEMPORAL_TASK_QUEUE: taskQueue, TEMPORAL_SCHEDULES: 'off', WEBHOOK_DISPATCHER: 'off', LOG_LEVEL: 'warn' };
Object.assign(process.env, benchEnv);

const { createServices } = await import('../api/services-factory.js');
const { createApp } = await import('../api/app.js');
const { benchOwner } = await import('./bench-fixtures.js');
const { createToken } = await import('../domain/api-tokens.js');
const { createList } = await import('../domain/lists.js');
const { uuidv7 } = await import('../lib/ids.js');

const status = (pid: number, key: 'VmRSS' | 'VmHWM'): number => {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};

const nodeFlags = (process.env.BENCH_NODE_FLAGS ?? '--max-semi-space-size=32').split(' ').filter(Boolean);
const worker = spawn(process.execPath, [...nodeFlags, join(repoRoot, 'dist/workers/worker.js')], {
  cwd: repoRoot,
  env: { ...process.env, ...benchEnv, NODE_ENV: 'production', JWT_SECRET: randomBytes(32).toString('base64url'), ENCRYPTION_KEY: randomBytes(32).toString('base64url') },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const services = await createServices();
const server = createApp(services).listen(0, '127.0.0.1');
await new Promise((r) => server.once('listening', r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
const client = new Client({ connection });
let benchUser: string | undefined;
const ALL_WEEK = Object.fromEntries(['1', '2', '3', '4', '5', '6', '7'].map((d) => [d, [{ start: '00:00', end: '24:00' }]]));

try {
  await waitFor('the bench worker to poll', async () => {
    const r = await connection.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: taskQueue }, taskQueueType: 1 });
    return (r.pollers?.length ?? 0) > 0;
  });
  const em = services.orm.em.fork() as EntityManager;
  const { actor, app } = await benchOwner(em);
  benchUser = actor.userId;
  const ws = actor.workspaceId;
  const { secret } = await createToken(em, actor.userId, 'bench');
  const list = await createList(em, actor, app.id, { name: 'Bench campaign list' });
  const tag = String(process.pid);
  log(`seeding ${LEADS} contacts and leads, ${ACCOUNTS} sender accounts`);
  await em.execute(
    `insert into contacts (id, workspace_id, email, email_normalised, profile_url, profile_url_normalised, first_name, last_name, company, created_at, updated_at)
     select gen_random_uuid(), ?, 'p' || i || '.' || ? || '@company.example', 'p' || i || '.' || ? || '@company.example',
            'https://pronet.example/in/bench-' || ? || '-' || i, 'pronet.example/in/bench-' || ? || '-' || i, 'First' || i, 'Last' || i, 'Company ' || (i % 997), now(), now()
       from generate_series(1, ?) as i`,
    [ws, tag, tag, tag, tag, LEADS],
  );
  await em.execute(
    `insert into leads (id, workspace_id, list_id, contact_id, source, created_at, updated_at)
     select gen_random_uuid(), ?, ?, c.id, 'import', now(), now() from contacts c where c.workspace_id = ?`,
    [ws, list.id, ws],
  );
  const accounts = Array.from({ length: ACCOUNTS }, () => ({ id: uuidv7(), cid: `sbx_bench_${randomUUID()}` }));
  await em.execute(
    `insert into sandbox_accounts (id, channel, account_id, display_name, state, reason, address, created_at, updated_at)
     select v.cid, 'network', v.id::text, 'Bench sender', 'connected', null, 'https://pronet.example/in/' || v.cid, now(), now() from json_to_recordset(?::json) as v(id uuid, cid text)`,
    [JSON.stringify(accounts)],
  );
  await em.execute(
    `insert into platform_accounts (id, workspace_id, channel, display_name, time_zone, working_hours, status, connector, connector_account_id, caps,
       min_gap_seconds, jitter_seconds, warmup_skipped_at, created_at, updated_at)
     select v.id, ?, 'network', 'Bench sender', 'UTC', '{"days":[1,2,3,4,5,6,7],"start":"00:00","end":"24:00"}', 'connected', 'sandbox', v.cid, ?::jsonb,
       0, 0, now(), now(), now()
     from json_to_recordset(?::json) as v(id uuid, cid text)`,
    [ws, JSON.stringify({ invitation: { daily: INVITES_PER_DAY, weekly: INVITES_PER_DAY * 5 } }), JSON.stringify(accounts)],
  );
  const campaignId = uuidv7();
  const stepId = uuidv7();
  await em.execute(
    `insert into campaigns (id, workspace_id, app_id, name, status, time_zone, sending_windows, account_ids, rotation, daily_new_lead_cap, stop_on_reply, country_rule,
       review_required, message_mode, exclusive_leads, step_version, created_at, updated_at)
     values (?, ?, ?, 'Bench campaign', 'active', 'UTC', ?::jsonb, ?::jsonb, 'round_robin', null, true, null, false, 'template', false, 1, now(), now())`,
    [campaignId, ws, app.id, JSON.stringify(ALL_WEEK), JSON.stringify(accounts.map((a) => a.id))],
  );
  const step = { id: stepId, position: 0, type: 'invitation', config: { note: 'Hi {{first_name}}, let us connect' }, messageMode: null, hasAttachment: false };
  await em.execute(`insert into campaign_steps (id, campaign_id, position, type, config, message_mode, created_at, updated_at) values (?, ?, 0, 'invitation', ?::jsonb, null, now(), now())`, [
    stepId,
    campaignId,
    JSON.stringify(step.config),
  ]);
  await em.execute(`insert into campaign_step_versions (campaign_id, version, steps, created_at) values (?, 1, ?::jsonb, now())`, [campaignId, JSON.stringify([step])]);

  const rssBefore = status(worker.pid!, 'VmRSS');
  let peak = rssBefore;
  const sampler = setInterval(() => {
    peak = Math.max(peak, status(worker.pid!, 'VmRSS'));
  }, 50);
  const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
  const started = performance.now();
  const res = await fetch(`${base}/api/campaigns/${campaignId}/enroll-list-contacts`, { method: 'POST', headers, body: JSON.stringify({ list_id: list.id, client_key: 'bench' }) });
  const op = (await res.json()) as { operation_id: string; status: string };
  if (res.status !== 202) throw new Error(`HTTP ${res.status}: ${JSON.stringify(op)}`);
  let progress: { status: string; processed: number; enrolled: number; skipped: number } | undefined;
  for (;;) {
    progress = (await (await fetch(`${base}/api/campaigns/${campaignId}/enroll-list-contacts/operations/${op.operation_id}`, { headers })).json()) as typeof progress;
    if (progress && ['completed', 'failed'].includes(progress.status)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const enrolledAt = performance.now();
  if (progress.status !== 'completed') throw new Error(`the enrollment ended ${progress.status}`);
  log(`enrolled ${progress.enrolled} (skipped ${progress.skipped}) in ${((enrolledAt - started) / 1000).toFixed(2)} s; waiting for the invitations`);
  const db = () => services.orm.em.fork();
  let executed = 0;
  let lastLog = 0;
  const timeoutMs = Number(process.env.BENCH_TIMEOUT_S ?? 900) * 1000;
  for (;;) {
    [{ n: executed }] = await db().execute<{ n: number }[]>(`select count(*)::int as n from scheduled_actions where campaign_id = ? and state = 'executed'`, [campaignId]);
    if (executed >= progress.enrolled) break;
    if (performance.now() - started > timeoutMs) {
      log(`timeout: ${executed} executed`);
      break;
    }
    if (performance.now() - lastLog > 5000) {
      lastLog = performance.now();
      const states = await db().execute<{ state: string; n: number }[]>(`select state, count(*)::int as n from scheduled_actions where campaign_id = ? group by state`, [campaignId]);
      log(`${((performance.now() - started) / 1000).toFixed(0)} s: ${states.map((s) => `${s.state} ${s.n}`).join(', ')}; worker RSS ${status(worker.pid!, 'VmRSS').toFixed(0)} MB`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const allDone = performance.now();
  clearInterval(sampler);
  peak = Math.max(peak, status(worker.pid!, 'VmRSS'));
  const hwm = status(worker.pid!, 'VmHWM');
  const [span] = await db().execute<{ first: Date; last: Date; invites: number }[]>(
    `select min(a.executed_at) as first, max(a.executed_at) as last, (select count(*)::int from sandbox_invitations i where i.connector_account_id = any(?::text[])) as invites
       from scheduled_actions a where a.campaign_id = ? and a.state = 'executed'`,
    [`{${accounts.map((a) => a.cid).join(',')}}`, campaignId],
  );
  const sample = await db().execute<{ lead_id: string }[]>(`select lead_id from enrollments where campaign_id = ? and status = 'completed' order by random() limit 5`, [campaignId]);
  const lengths: number[] = [];
  for (const s of sample) lengths.push((await client.workflow.getHandle(`enrollment:${campaignId}:${s.lead_id}`).fetchHistory()).events?.length ?? 0);
  const bulkLength = (await client.workflow.getHandle(`enroll:${campaignId}:${op.operation_id}`).fetchHistory()).events?.length ?? 0;

  // On a timeout, the enrollments still open are terminated: nothing of the run is left on the Temporal server.
  const open = await db().execute<{ lead_id: string }[]>(`select lead_id from enrollments where campaign_id = ? and status = 'active'`, [campaignId]);
  if (open.length) log(`terminating ${open.length} open enrollments`);
  for (let i = 0; i < open.length; i += 100) {
    await Promise.all(open.slice(i, i + 100).map((o) => client.workflow.getHandle(`enrollment:${campaignId}:${o.lead_id}`).terminate('bench over').catch(() => undefined)));
  }
  const enrollS = (enrolledAt - started) / 1000;
  const execSpan = (new Date(span.last).getTime() - new Date(span.first).getTime()) / 1000;
  const wholeS = (allDone - started) / 1000;
  const goal = (ok: boolean) => (ok ? 'met' : 'MISSED');
  console.log(`bench:campaigns — ${LEADS.toLocaleString('en')} leads, invitation step on the sandbox network, ${ACCOUNTS} sender accounts at ${INVITES_PER_DAY} invitations/day, no gap`);
  console.log(`  enrollment (POST → operation completed): ${enrollS.toFixed(2)} s, ${progress.enrolled} enrolled, ${progress.skipped} skipped   (goal ≤ 60 s: ${goal(enrollS <= 60)})`);
  console.log(`  actions executed:                        ${executed} of ${progress.enrolled} (${span.invites} sandbox invitations recorded)${executed < progress.enrolled ? ` — stopped after BENCH_TIMEOUT_S=${timeoutMs / 1000}` : ''}`);
  console.log(`  actions/s, first to last execution:      ${(executed / Math.max(execSpan, 0.001)).toFixed(0)} /s over ${execSpan.toFixed(2)} s   (goal ≥ 100/s: ${goal(executed / execSpan >= 100)})`);
  console.log(`  actions/s, POST to last execution:       ${(executed / wholeS).toFixed(0)} /s over ${wholeS.toFixed(2)} s`);
  console.log(`  worker RSS:                              ${rssBefore.toFixed(0)} MB before, peak ${peak.toFixed(0)} MB; VmHWM ${hwm.toFixed(0)} MB`);
  console.log(`  history length per enrollment:           ${lengths.join(', ')} events (5 sampled); bulk-enroll workflow ${bulkLength} events`);
} finally {
  if (benchUser) await services.orm.em.fork().execute('delete from users where id = ?', [benchUser]).catch((err) => log(`cleanup: ${String(err)}`));
  server.close();
  await services.close();
  await connection.close();
  await stopChild(worker);
  if (process.env.CI) await stack.stop();
}
process.exit(0);
