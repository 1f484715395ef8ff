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
// (goal ≥ 100/s), the worker's peak RSS, the Temporal history length of a sample of enrollments, and
// the CPU milliseconds per executed action of each process from POST to the last execution (/proc:
// the worker; the Temporal dev server and PostgreSQL of the local stack — its backends on the bench's
// database and its helper processes; this process, which serves the API and polls; goal ≤ 12 ms in all).
// The stack is shared: another run on the same servers at the same time adds its load to the
// Temporal and PostgreSQL figures (hold /tmp/outreach-bench.lock, and run no tests meanwhile).
// The worker runs as in production: `npm run build` first (skip with --no-build), then
// `node dist/workers/worker.js`. Own database (`outreach_<BENCH_DB_SUFFIX>`, default
// `outreach_bench_campaigns`) and Redis database 2; stops by itself.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Client } from '@temporalio/client';
import {
  benchApiOwner,
  benchStack,
  cpuMeter,
  dropBenchOwner,
  memoryMb,
  postgresPids,
  seedCampaign,
  seedLeads,
  startApiAndBuiltWorker,
  workerPolling,
} from './bench-fixtures.js';
import { isRunning, readPid } from './stack/processes.js';

const LEADS = Number(process.env.BENCH_LEADS ?? 10_000);
const INVITES_PER_DAY = 100; // the pro plan's maximum (domain/billing/plans.ts)
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? Math.ceil(LEADS / INVITES_PER_DAY));
const { stack, env, taskQueue, log } = await benchStack(
  'campaigns',
  { suffix: process.env.BENCH_DB_SUFFIX ?? 'bench_campaigns', redisDb: 2 },
  { build: true },
);

const { createList } = await import('../domain/lists/lists.js');
const { uuidv7 } = await import('../lib/ids.js');

const { services, base, worker, connection, close } = await startApiAndBuiltWorker(env);
const client = new Client({ connection });
let benchUser: string | undefined;
const ALL_WEEK = Object.fromEntries(
  ['1', '2', '3', '4', '5', '6', '7'].map((d) => [d, [{ start: '00:00', end: '24:00' }]]),
);

try {
  await workerPolling(connection, taskQueue);
  const em = services.orm.em.fork() as EntityManager;
  const { actor, app, token: secret } = await benchApiOwner(em);
  benchUser = actor.userId;
  const ws = actor.workspaceId;
  const list = await createList(em, actor, app.id, { name: 'Bench campaign list' });
  log(`seeding ${LEADS} contacts and leads, ${ACCOUNTS} sender accounts`);
  await seedLeads(em, { workspaceId: ws, listId: list.id, count: LEADS, tag: String(process.pid), profiles: true });
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
    [
      ws,
      JSON.stringify({ invitation: { daily: INVITES_PER_DAY, weekly: INVITES_PER_DAY * 5 } }),
      JSON.stringify(accounts),
    ],
  );
  const { campaignId } = await seedCampaign(em, {
    workspaceId: ws,
    appId: app.id,
    name: 'Bench campaign',
    sendingWindows: ALL_WEEK,
    accountIds: accounts.map((a) => a.id),
    step: { type: 'invitation', config: { note: 'Hi {{first_name}}, let us connect' }, messageMode: null },
  });

  const rssBefore = memoryMb(worker.pid!, 'VmRSS');
  let peak = rssBefore;
  const sampler = setInterval(() => {
    peak = Math.max(peak, memoryMb(worker.pid!, 'VmRSS'));
  }, 50);
  const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
  const temporalPid = readPid('temporal');
  const postmaster = readPid('postgres');
  const database = decodeURIComponent(new URL(env.DATABASE_URL!).pathname.slice(1));
  const cpu = cpuMeter({
    worker: () => [worker.pid!],
    temporal: () => (temporalPid && isRunning(temporalPid, 'temporal') ? [temporalPid] : []),
    postgres: () => (postmaster && isRunning(postmaster, 'postgres') ? postgresPids(postmaster, database) : []),
    api: () => [process.pid],
  });
  const started = performance.now();
  const res = await fetch(`${base}/api/campaigns/${campaignId}/enroll-list-contacts`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ list_id: list.id, client_key: 'bench' }),
  });
  const op = (await res.json()) as { operation_id: string; status: string };
  if (res.status !== 202) throw new Error(`HTTP ${res.status}: ${JSON.stringify(op)}`);
  let progress: { status: string; processed: number; enrolled: number; skipped: number } | undefined;
  for (;;) {
    progress = (await (
      await fetch(`${base}/api/campaigns/${campaignId}/enroll-list-contacts/operations/${op.operation_id}`, { headers })
    ).json()) as typeof progress;
    if (progress && ['completed', 'failed'].includes(progress.status)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const enrolledAt = performance.now();
  if (progress.status !== 'completed') throw new Error(`the enrollment ended ${progress.status}`);
  log(
    `enrolled ${progress.enrolled} (skipped ${progress.skipped}) in ${((enrolledAt - started) / 1000).toFixed(2)} s; waiting for the invitations`,
  );
  const db = () => services.orm.em.fork();
  let executed = 0;
  let lastLog = 0;
  const timeoutMs = Number(process.env.BENCH_TIMEOUT_S ?? 900) * 1000;
  for (;;) {
    [{ n: executed }] = await db().execute<{ n: number }[]>(
      `select count(*)::int as n from scheduled_actions where campaign_id = ? and state = 'executed'`,
      [campaignId],
    );
    if (executed >= progress.enrolled) break;
    if (performance.now() - started > timeoutMs) {
      log(`timeout: ${executed} executed`);
      break;
    }
    if (performance.now() - lastLog > 5000) {
      lastLog = performance.now();
      const states = await db().execute<{ state: string; n: number }[]>(
        `select state, count(*)::int as n from scheduled_actions where campaign_id = ? group by state`,
        [campaignId],
      );
      log(
        `${((performance.now() - started) / 1000).toFixed(0)} s: ${states.map((s) => `${s.state} ${s.n}`).join(', ')}; worker RSS ${memoryMb(worker.pid!, 'VmRSS').toFixed(0)} MB`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const allDone = performance.now();
  const cpuUsed = cpu.stop();
  clearInterval(sampler);
  peak = Math.max(peak, memoryMb(worker.pid!, 'VmRSS'));
  const hwm = memoryMb(worker.pid!, 'VmHWM');
  const [span] = await db().execute<{ first: Date; last: Date; invites: number }[]>(
    `select min(a.executed_at) as first, max(a.executed_at) as last, (select count(*)::int from sandbox_invitations i where i.connector_account_id = any(?::text[])) as invites
       from scheduled_actions a where a.campaign_id = ? and a.state = 'executed'`,
    [`{${accounts.map((a) => a.cid).join(',')}}`, campaignId],
  );
  const sample = await db().execute<{ lead_id: string }[]>(
    `select lead_id from enrollments where campaign_id = ? and status = 'completed' order by random() limit 20`,
    [campaignId],
  );
  const lengths: number[] = [];
  for (const s of sample)
    lengths.push((await client.workflow.getHandle(`enrollment:${campaignId}:${s.lead_id}`).describe()).historyLength);
  const bulkLength =
    (await client.workflow.getHandle(`enroll:${campaignId}:${op.operation_id}`).fetchHistory()).events?.length ?? 0;

  // On a timeout, the enrollments still open are terminated: nothing of the run is left on the Temporal server.
  const open = await db().execute<{ lead_id: string }[]>(
    `select lead_id from enrollments where campaign_id = ? and status = 'active'`,
    [campaignId],
  );
  if (open.length) log(`terminating ${open.length} open enrollments`);
  for (let i = 0; i < open.length; i += 100) {
    await Promise.all(
      open.slice(i, i + 100).map((o) =>
        client.workflow
          .getHandle(`enrollment:${campaignId}:${o.lead_id}`)
          .terminate('bench over')
          .catch(() => undefined),
      ),
    );
  }
  const enrollS = (enrolledAt - started) / 1000;
  const execSpan = (new Date(span.last).getTime() - new Date(span.first).getTime()) / 1000;
  const wholeS = (allDone - started) / 1000;
  const goal = (ok: boolean) => (ok ? 'met' : 'MISSED');
  console.log(
    `bench:campaigns — ${LEADS.toLocaleString('en')} leads, invitation step on the sandbox network, ${ACCOUNTS} sender accounts at ${INVITES_PER_DAY} invitations/day, no gap`,
  );
  console.log(
    `  enrollment (POST → operation completed): ${enrollS.toFixed(2)} s, ${progress.enrolled} enrolled, ${progress.skipped} skipped   (goal ≤ 60 s: ${goal(enrollS <= 60)})`,
  );
  console.log(
    `  actions executed:                        ${executed} of ${progress.enrolled} (${span.invites} sandbox invitations recorded)${executed < progress.enrolled ? ` — stopped after BENCH_TIMEOUT_S=${timeoutMs / 1000}` : ''}`,
  );
  console.log(
    `  actions/s, first to last execution:      ${(executed / Math.max(execSpan, 0.001)).toFixed(0)} /s over ${execSpan.toFixed(2)} s   (goal ≥ 100/s: ${goal(executed / execSpan >= 100)})`,
  );
  console.log(
    `  actions/s, POST to last execution:       ${(executed / wholeS).toFixed(0)} /s over ${wholeS.toFixed(2)} s`,
  );
  console.log(
    `  worker RSS:                              ${rssBefore.toFixed(0)} MB before, peak ${peak.toFixed(0)} MB; VmHWM ${hwm.toFixed(0)} MB`,
  );
  const meanLength = lengths.reduce((a, b) => a + b, 0) / Math.max(lengths.length, 1);
  console.log(
    `  history events per enrollment:           ${meanLength.toFixed(1)} mean (${Math.min(...lengths)}–${Math.max(...lengths)}, ${lengths.length} sampled); bulk-enroll workflow ${bulkLength} events`,
  );
  const per = (ms: number) => (Number.isFinite(ms) && executed ? (ms / executed).toFixed(2).padStart(6) : '   n/a');
  const total = Object.values(cpuUsed).reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);
  console.log(
    `  CPU per executed action (POST → last):   ${per(total)} ms in all   (goal ≤ 12 ms: ${goal(total / executed <= 12)}) over ${wholeS.toFixed(2)} s, ${(total / 1000 / wholeS).toFixed(2)} cores busy`,
  );
  console.log(`    worker                                 ${per(cpuUsed.worker)} ms`);
  console.log(`    Temporal dev server                    ${temporalPid ? per(cpuUsed.temporal) : '   n/a'} ms`);
  console.log(`    PostgreSQL (bench backends + helpers)  ${postmaster ? per(cpuUsed.postgres) : '   n/a'} ms`);
  console.log(`    API and bench (this process)           ${per(cpuUsed.api)} ms`);
} finally {
  await dropBenchOwner(services.orm.em.fork() as EntityManager, benchUser, log);
  await close();
  if (process.env.CI) await stack.stop();
}
process.exit(0);
