// The chaos run itself (scripts/chaos.ts sets up where it runs): bring up the fleet, drive the work,
// inject each fault while work is in flight, measure recovery, wait for the work to finish, check.
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { loadConfig } from '../../lib/config.js';
import { listImportWorkflowIds } from '../../lib/workflow-ids.js';
import { waitFor } from '../children.js';
import { stackWithSchema } from '../stack-env.js';
import {
  checkImport,
  checkLeases,
  checkReplies,
  checkReplyEvents,
  checkSends,
  checkTurns,
  checkWebhooks,
  enrollmentStates,
  type Check,
} from './checks.js';
import { Fleet, type Member } from './fleet.js';
import {
  byWorker,
  ChaosMail,
  createMailboxes,
  describeHolders,
  expected,
  killSessionWorker,
  leases,
  Replies,
  restartMailServer,
  TAKEOVER_LIMIT_S,
  unfollowed,
  unstored,
  type MailFaultCtx,
  type MailFaultResult,
} from './mail.js';
import { Prober, type Tally } from './probe.js';
import {
  call,
  campaign,
  enrollList,
  expect,
  importStatus,
  senders,
  signUp,
  startImport,
  startReceiver,
  Turns,
  type Ctx,
} from './work.js';

export interface Scale {
  /** Leads per enrollment wave; one wave before each fault. */
  waves: number[];
  importRows: number;
  senders: number;
  redisDownMs: number;
  /** How long PostgreSQL and Temporal stay down in their restarts (a real restart is not instant). */
  restartDownMs: number;
  drainMs: number;
  turnEveryMs: number;
  /** Mail-connector mailboxes on the run's GreenMail, followed by the workers' mailbox-session services. */
  mailboxes: number;
  /** Prospects (leads of the workspace, in no campaign) whose replies arrive, one every replyEveryMs. */
  prospects: number;
  replyEveryMs: number;
}

export interface FaultRow {
  fault: string;
  inFlight: string;
  outcome: string;
  recoveryS: number | null;
  probes: Tally;
}

export interface Verdict {
  ok: boolean;
  faults: FaultRow[];
  checks: Check[];
  workflows: { running: number; failed: number; detail: string };
  enrollments: Record<string, number>;
  problems: string[];
}

const TASK_QUEUE = 'chaos';
const SEND_STEPS = 2;

export async function runChaos(dir: string, scale: Scale): Promise<Verdict> {
  const t0 = Date.now();
  const log = (msg: string) => console.error(`[chaos +${((Date.now() - t0) / 1000).toFixed(0)}s] ${msg}`);
  log(`stack and fleet in ${dir}`);
  const { env } = await stackWithSchema(log);
  // The stack's servers are restarted below by ensure*(), which would take these for servers of someone else's.
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'TEMPORAL_ADDRESS']) delete process.env[name];
  const fleetEnv: NodeJS.ProcessEnv = {
    ...env,
    TEMPORAL_TASK_QUEUE: TASK_QUEUE,
    TEMPORAL_SCHEDULES: 'off',
    // The mail connector's IMAP/SMTP guard lets the run's GreenMail (loopback) through.
    OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
    // Each worker's mailbox-session service follows its share of the run's mailboxes.
    MAILBOX_SESSIONS: 'on',
    LOG_LEVEL: 'warn',
    // One client IP for everything: the limits are not under test (their Redis fallback is).
    RATE_LIMIT_DEFAULT_PER_MINUTE: '100000',
    RATE_LIMIT_PUBLIC_PER_MINUTE: '100000',
  };
  const fleet = new Fleet(fleetEnv, log);
  const db = new pg.Pool({ connectionString: env.DATABASE_URL, max: 3, connectionTimeoutMillis: 3000 });
  db.on('error', () => {}); // idle clients cut by the PostgreSQL restart; queries are retried below
  const receiver = await startReceiver();
  let prober: Prober | null = null;
  let turns: Turns | null = null;
  let mail: ChaosMail | null = null;
  let replies: Replies | null = null;
  try {
    [mail] = await Promise.all([ChaosMail.start(dir, log), fleet.start(2, 2)]);
    log(`GreenMail on SMTP ${mail.server.smtpPort}, IMAP ${mail.server.imapPort} (pid ${mail.pid})`);
    log(`APIs ${fleet.bases.join(', ')}; workers pids ${fleet.workers.map((w) => w.child.pid).join(', ')}`);
    const temporal = new Client({
      connection: await Connection.connect({ address: env.TEMPORAL_ADDRESS! }),
      namespace: 'default',
    });

    // --- the workspace, through the API --------------------------------------------------------
    const owner = await signUp(fleet.bases[0], db, env.DATABASE_URL!);
    const ctx: Ctx = { bases: () => fleet.bases, token: owner.token, log };
    const app = await expect(201, call(ctx, 'POST', '/api/apps', { name: 'Chaos product' }), 'app');
    await expect(
      201,
      call(ctx, 'POST', '/api/webhooks/outbound', {
        url: receiver.url,
        events: ['action.executed', 'message.received'],
      }),
      'webhook',
    );
    const accountIds = await senders(ctx, db, scale.senders);
    const campaignId = await campaign(ctx, app.id, accountIds);
    log(`${scale.waves.length} waves of leads imported up front (${scale.waves.join(', ')})`);
    const waves: string[] = [];
    for (const [i, n] of scale.waves.entries()) {
      const { listId, importId } = await startImport(ctx, app.id, `Wave ${i + 1}`, n);
      await waitFor(
        `wave ${i + 1} imported`,
        async () => (await importStatus(db, importId))?.status === 'completed',
        120_000,
      );
      waves.push(listId);
    }
    // The prospects who reply to the mailboxes: leads of the workspace (each reply is a `message.received`), in no campaign.
    const prospectList = await startImport(ctx, app.id, 'Prospects', scale.prospects);
    await waitFor(
      'prospects imported',
      async () => (await importStatus(db, prospectList.importId))?.status === 'completed',
      120_000,
    );
    const { rows: prospectRows } = await db.query<{ email: string }>(
      'select c.email from leads l join contacts c on c.id = l.contact_id where l.list_id = $1',
      [prospectList.listId],
    );
    const mailboxes = await createMailboxes(db, owner.workspaceId, mail, scale.mailboxes, loadConfig().encryptionKey);
    // Followed: each mailbox leased by a worker and its first pass done (the cursor read at the server).
    await waitFor(
      `${scale.mailboxes} mailboxes followed`,
      async () => {
        const { rows } = await db.query<{ n: number }>(
          `select count(*)::int n from mailbox_cursors where account_id = any($1::uuid[]) and uid_validity is not null and error_message is null`,
          [mailboxes.map((b) => b.id)],
        );
        return rows[0].n === mailboxes.length;
      },
      120_000,
    );
    log(
      `${mailboxes.length} mailboxes followed (${describeHolders(byWorker(await leases(db, mailboxes), fleet))}); replies from ${prospectRows.length} prospects every ${scale.replyEveryMs} ms`,
    );
    replies = new Replies(
      mail.server,
      mailboxes,
      prospectRows.map((r) => r.email),
    );
    const mailCtx: MailFaultCtx = { db, fleet, mail, replies, mailboxes, log };
    const total = scale.waves.reduce((a, b) => a + b, 0) * SEND_STEPS;
    const progress = async () => {
      const { rows } = await db.query<{ sent: string; active: string; pending: string }>(
        `select (select count(*) from scheduled_actions where campaign_id = $1 and state = 'executed') sent,
                (select count(*) from enrollments where campaign_id = $1 and status = 'active') active,
                (select count(*) from webhook_events w where w.workspace_id = $2 and w.dispatched_at is null) pending`,
        [campaignId, owner.workspaceId],
      );
      return { sent: Number(rows[0].sent), active: Number(rows[0].active), webhooksPending: Number(rows[0].pending) };
    };
    const describe = async (extra = '') => {
      const p = await retrying(progress);
      const r = replies ? `, ${replies.accepted} replies` : '';
      return `sends ${p.sent}/${total}, ${p.webhooksPending} webhooks queued, ${turns?.started.length ?? 0} turns${r}${extra}`;
    };
    /** Seconds from `since` (the part back: restarted, or started again) until every API answers and sends move again (or none are left to send). */
    const recovered = async (since: number, timeoutMs = 180_000): Promise<number | null> => {
      const before = (await retrying(progress)).sent;
      const done = await waitUntil(async () => {
        if (!prober!.allOkSince(since)) return false;
        const p = await progress().catch(() => null);
        return p !== null && (p.sent > before || p.active === 0);
      }, timeoutMs);
      return done ? (Date.now() - since) / 1000 : null;
    };

    prober = new Prober(() => fleet.bases, owner.token, [
      '/api/users/me',
      `/api/apps/${app.id}/campaigns`,
      `/api/campaigns/${campaignId}`,
    ]);
    prober.start();
    turns = new Turns(ctx, app.id);
    turns.start(scale.turnEveryMs);
    // The replies arrive through every fault, the mail ones included, until the work drains.
    replies.start(scale.replyEveryMs);
    const faults: FaultRow[] = [];
    const fault = async (
      name: string,
      wave: number,
      inject: () => Promise<{ since: number; outcome: string; extra?: string }>,
    ) => {
      prober!.phase = name;
      fleet.phase = name;
      const before = (await retrying(progress)).sent;
      await enrollList(ctx, campaignId, waves[wave]);
      await waitFor(`sends of wave ${wave + 1} under way`, async () => (await progress()).sent > before, 120_000);
      const inFlight = await describe();
      log(`${name}: ${inFlight}`);
      const r = await inject();
      const recoveryS = await recovered(r.since);
      faults.push({
        fault: name,
        inFlight: inFlight + (r.extra ?? ''),
        outcome: r.outcome,
        recoveryS,
        probes: prober!.tally(name),
      });
      log(`${name}: ${r.outcome}; recovered in ${recoveryS ?? 'never'} s`);
    };

    // 1. A worker, mid-chunk of the big import.
    let big: { listId: string; importId: string } | null = null;
    await fault('kill -9 worker mid-batch', 0, async () => {
      big = await startImport(ctx, app.id, 'Bulk', scale.importRows);
      // Mid-import: its first chunk committed, more to come (unless it is all done by then).
      await waitUntil(async () => {
        const s = await importStatus(db, big!.importId);
        return s.rows_read > 0 || s.status === 'completed';
      }, 120_000);
      const victim = await importWorker(temporal, fleet, big.importId);
      const read = (await retrying(() => importStatus(db, big!.importId))).rows_read;
      fleet.kill(victim);
      const since = Date.now();
      await fleet.restart(victim);
      // Back means polling again: a worker still starting when the next fault takes a dependency
      // away exits (a start-up failure, as the API's; docs/deploy.md), which is not this fault.
      const identity = `${victim.child.pid}@`;
      await waitFor(
        `${victim.name} polling again`,
        async () => {
          const q = await temporal.workflowService.describeTaskQueue({
            namespace: 'default',
            taskQueue: { name: TASK_QUEUE },
            taskQueueType: 1,
          });
          return (q.pollers ?? []).some((p) => p.identity?.startsWith(identity));
        },
        120_000,
      );
      return {
        since,
        outcome: `${victim.name} (pid ${victim.child.pid} now) restarted`,
        extra: `, import at ${read}/${scale.importRows} rows`,
      };
    });

    // 2. An API process with requests in flight (probes, an Operator stream it serves).
    await fault('kill -9 API mid-request', 1, async () => {
      const victim = fleet.apis[0];
      const stream = turns!.one(fleet.bases[0]);
      await new Promise((r) => setTimeout(r, 150)); // the stream is open: the API answered its first event
      fleet.kill(victim);
      const since = Date.now();
      await stream;
      await fleet.restart(victim);
      return { since, outcome: `${victim.name} restarted` };
    });

    // 3-5. The dependencies: each stopped, kept down for the outage, started again on the same port and data.
    const outage = (svc: 'temporal' | 'postgres' | 'redis', downMs: number) => async () => {
      await fleet.stopService(svc);
      const down = Date.now();
      await new Promise((r) => setTimeout(r, downMs)); // the outage itself
      await fleet.startService(svc);
      return { since: Date.now(), outcome: `down ${((Date.now() - down) / 1000).toFixed(1)} s` };
    };
    await fault('restart Temporal server', 2, outage('temporal', scale.restartDownMs));
    await fault('restart PostgreSQL', 3, outage('postgres', scale.restartDownMs));
    await fault(`Redis down ${scale.redisDownMs / 1000} s`, 4, outage('redis', scale.redisDownMs));

    // 6-7. The mailboxes: their server restarted, then the worker holding the most of them killed.
    const mailFault = async (name: string, inject: () => Promise<MailFaultResult>) => {
      prober!.phase = name;
      fleet.phase = name;
      // From a fleet that follows every mailbox (a worker killed above may still have mailboxes whose
      // leases run out). One that is not followed by then is noted, and the fault goes on.
      const t = Date.now();
      const all = await waitUntil(
        async () => unfollowed(await leases(db, mailboxes), mailboxes, fleet).length === 0,
        90_000,
      );
      if (Date.now() - t > 1000)
        log(`${name}: waited ${((Date.now() - t) / 1000).toFixed(1)} s for every mailbox to be followed`);
      const rows = await retrying(() => leases(db, mailboxes));
      const held = describeHolders(byWorker(rows, fleet));
      const missing = all ? '' : `, ${unfollowed(rows, mailboxes, fleet).length} NOT followed`;
      const inFlight = `${await describe()}, ${mailboxes.length} mailboxes (${held}${missing})`;
      log(`${name}: ${inFlight}`);
      const r = await inject();
      faults.push({ fault: name, inFlight, outcome: r.outcome, recoveryS: r.recoveryS, probes: prober!.tally(name) });
      log(`${name}: ${r.outcome}; recovered in ${r.recoveryS ?? 'never'} s`);
      return r;
    };
    await mailFault('restart mail server', () => restartMailServer(mailCtx, scale.restartDownMs));
    const takeover = await mailFault('kill -9 worker holding mailboxes', () =>
      killSessionWorker(mailCtx, (m) => fleet.restart(m)),
    );
    await replies.stop();

    // --- the work finishes, then the verdict ---------------------------------------------------
    prober.phase = 'drain';
    fleet.phase = 'drain';
    await turns.stop();
    log(`all faults injected; waiting for the work to finish (${await describe()})`);
    const finished = await waitUntil(async () => {
      const p = await progress().catch(() => null);
      if (!p || p.webhooksPending > 0) return false;
      const states = await enrollmentStates(db, campaignId);
      const imp = await importStatus(db, big!.importId);
      return (
        !states.active &&
        imp.status === 'completed' &&
        (await unstored(db, replies!.sent)).length === 0 &&
        (await runningWorkflows(temporal)).running === 0
      );
    }, scale.drainMs);
    log(finished ? 'the work finished' : `the work did not finish within ${scale.drainMs / 1000} s`);
    // Deliveries of the last events may be in flight: wait until the receiver has each of them.
    await waitUntil(
      async () =>
        (await checkWebhooks(db, owner.workspaceId, receiver)).lost === 0 &&
        (await checkReplyEvents(db, owner.workspaceId, replies!.sent, receiver)).lost === 0,
      30_000,
    );
    await prober.stop();
    const checks = [
      await checkSends(db, campaignId, SEND_STEPS),
      await checkWebhooks(db, owner.workspaceId, receiver),
      await checkImport(db, big!.importId, big!.listId, scale.importRows),
      await checkTurns(db, turns.started),
      await checkReplies(db, replies.sent),
      await checkReplyEvents(db, owner.workspaceId, replies.sent, receiver),
      await checkLeases(db, mailboxes, fleet),
    ];
    const workflows = await runningWorkflows(temporal);
    const enrollments = await enrollmentStates(db, campaignId);
    const problems: string[] = [];
    if (!finished) problems.push('the work did not finish');
    for (const c of checks) if (c.lost || c.doubled) problems.push(`${c.name}: ${c.lost} lost, ${c.doubled} doubled`);
    if (workflows.running || workflows.failed) problems.push(`workflows: ${workflows.detail}`);
    if (enrollments.active || enrollments.failed)
      problems.push(`enrollments left active or failed: ${JSON.stringify(enrollments)}`);
    for (const [phase, t] of prober.tallies) {
      if (t.broken || t.hung || t.refusedByApi)
        problems.push(
          `${phase}: ${t.broken} 5xx without Retry-After, ${t.hung} hung, ${t.refusedByApi} 4xx (${t.examples.join(' | ')})`,
        );
    }
    for (const f of faults) if (f.recoveryS === null) problems.push(`${f.fault}: no recovery`);
    if (takeover.recoveryS !== null && takeover.recoveryS > TAKEOVER_LIMIT_S)
      problems.push(`mailbox takeover took ${takeover.recoveryS.toFixed(1)} s (limit ${TAKEOVER_LIMIT_S} s)`);
    if (!replies.sent.some(expected)) problems.push('no reply reached a mailbox');
    problems.push(...fleet.crashes);
    const verdict: Verdict = { ok: problems.length === 0, faults, checks, workflows, enrollments, problems };
    print(verdict, log);
    return verdict;
  } finally {
    await turns?.stop().catch(() => {});
    await prober?.stop().catch(() => {});
    await replies?.stop().catch(() => {});
    replies?.close();
    receiver.server.close();
    await fleet.stopAll();
    await mail?.stop().catch(() => {});
    await db.end().catch(() => {});
  }
}

/** The worker whose identity (`<pid>@<host>`) holds the import's pending activity; the first worker if none does yet. */
async function importWorker(temporal: Client, fleet: Fleet, importId: string): Promise<Member> {
  const handle = temporal.workflow.getHandle(listImportWorkflowIds.run(importId));
  let holder: Member | undefined;
  await waitUntil(async () => {
    const d = await handle.describe().catch(() => null);
    if (d && d.status.name !== 'RUNNING') return true; // finished already: any worker will do
    const identity = d?.raw.pendingActivities?.find(
      (a) => a.activityType?.name === 'importListRows',
    )?.lastWorkerIdentity;
    const pid = Number(identity?.split('@')[0]);
    holder = fleet.workers.find((w) => w.child.pid === pid);
    return holder !== undefined;
  }, 60_000);
  return holder ?? fleet.workers[0];
}

async function runningWorkflows(temporal: Client): Promise<{ running: number; failed: number; detail: string }> {
  const count = async (status: string) =>
    (await temporal.workflow.count(`TaskQueue = '${TASK_QUEUE}' AND ExecutionStatus = '${status}'`)).count;
  const [running, failed, timedOut, terminated, completed] = await Promise.all(
    ['Running', 'Failed', 'TimedOut', 'Terminated', 'Completed'].map(count),
  );
  return {
    running,
    failed: failed + timedOut + terminated,
    detail: `${completed} completed, ${running} running, ${failed} failed, ${timedOut} timed out, ${terminated} terminated`,
  };
}

function print(v: Verdict, log: (msg: string) => void): void {
  const rows = v.faults.map((f) => [
    f.fault,
    f.inFlight,
    f.outcome,
    `${f.probes.ok} ok, ${f.probes.unavailable} 503+Retry-After, ${f.probes.unreachable} refused, ${f.probes.broken + f.probes.hung} broken/hung, max ${(f.probes.maxMs / 1000).toFixed(1)} s`,
    f.recoveryS === null ? 'never' : `${f.recoveryS.toFixed(1)} s`,
  ]);
  table(['fault', 'work in flight', 'outcome', 'API answers during the fault', 'recovery'], rows);
  console.log('');
  table(
    ['work', 'lost', 'doubled', 'detail'],
    v.checks.map((c) => [c.name, String(c.lost), String(c.doubled), c.detail]),
  );
  console.log(`\nworkflows on the task queue: ${v.workflows.detail}; enrollments: ${JSON.stringify(v.enrollments)}`);
  console.log(v.ok ? '\nchaos: every invariant held' : `\nchaos: FAILED\n- ${v.problems.join('\n- ')}`);
  log('done');
}

function table(head: string[], rows: string[][]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(line(head));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(r));
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A read of the harness's own that may meet the PostgreSQL restart: tried again for up to a minute. */
async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
