// `npm run bench:mailboxes`: one worker's mailbox-session service (workers/mailbox-sessions.ts)
// following `BENCH_MAILBOXES` (1,000) connected mail-connector mailboxes, each in one IMAP IDLE
// session, on a GreenMail of the bench's own (restarting it disturbs nothing else).
//
// 0. N = 0: the built worker (`dist/workers/worker.js` with its outbox dispatcher and session
//    service, /metrics on a free WORKER_METRICS_PORT behind a run's METRICS_TOKEN) and no mailbox.
//    Webhook probes: `lead.discovered` events emitted through the domain (emitEvent in a transaction)
//    at `BENCH_PROBE_RATE`/s (10), beside `message.received` stand-ins at the reply rate (the webhook
//    traffic the replies make later), for as long as the reply phase lasts; commit → the receiver's
//    POST, p95. Then the worker's RSS and CPU over 30 s of idle.
// 1. N mailboxes are inserted (sealed credentials, as bench:mail does): the time until every one is
//    `following` (the `outreach_mailbox_sessions` gauge) and the logins it took.
// 2. Idle, `BENCH_IDLE_SECONDS` (60) once all follow: the worker's RSS over the N = 0 one, its CPU
//    (% of one core), the logins in the window (`outreach_mailbox_logins_total`, ok + failed) per
//    mailbox per hour, and how many sessions woke in the last minute (their cursor was saved).
// 3. Replies: `BENCH_REPLIES` (300) at `BENCH_REPLY_RATE`/s (10) from seeded leads to random
//    mailboxes over SMTP; SMTP acceptance → `message.received` at the receiver, p50/p95. The probes
//    run meanwhile.
// 4. Restart: the mail server stops (SIGTERM) and starts again on the same ports, /metrics sampled
//    every 250 ms: from the server answering again to the last login that brought every session
//    back (the gauge then shows all N following), and the most logins (ok + failed) within one
//    second. `BENCH_CHECK_REPLIES` (20) replies then show the sessions read mail again.
// 5. N = 0 again: the mailboxes are disconnected and the probes run once more. The webhook ratio is
//    p95 during the replies over the mean of the two N = 0 figures (the machine's other load drifts).
//
// GreenMail runs with `-Dgreenmail.auth.disabled` (any password; a login creates its mailbox, so the
// sessions log in again after a restart, which loses every user and message) and a larger heap
// (`BENCH_MAIL_HEAP_MB`, 1024). The mailboxes name a loopback relay to its IMAP port (ImapGate below),
// open only while GreenMail is ready. Every process the bench starts (the worker, the mail server)
// is stopped at the end, on a failure, Ctrl-C or SIGTERM too. The worker's log goes to
// `.data/bench-mailboxes-worker-<pid>.log` (BENCH_WORKER_LOG_LEVEL, default warn); BENCH_KEEP=1
// keeps the run's workspace for a look; BENCH_WORKER_SCRIPT runs another build of the worker.
//
// Production layout: `npm run build` first (skip with --no-build). Own database
// (`outreach_bench_mailboxes`, or `outreach_<BENCH_DB_SUFFIX>`) and Redis database 7; one run at a
// time per database (an advisory lock): every connected mail account in it is followed. Ends with:
// `bench:mailboxes N=… reply_p95_s=… rss_delta_mb=… idle_cpu_pct=… logins_per_mailbox_hour=… resume_s=… peak_logins_per_s=… webhook_p95_ratio=…`.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, openSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect, createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import nodemailer from 'nodemailer';
import pg from 'pg';
import {
  benchOwner,
  benchStack,
  cpuMeter,
  cpuMs,
  dropBenchOwner,
  memoryMb,
  postgresPids,
  seedLeads,
  workerPolling,
} from './bench-fixtures.js';
import { freePort, stopChild, waitFor } from './children.js';
import { startMailServerAt, stopMailServer, type MailServer } from './stack/mail.js';
import { dataDir, isRunning, readPid, repoRoot } from './stack/processes.js';

const N = Number(process.env.BENCH_MAILBOXES ?? 1000);
const REPLIES = Number(process.env.BENCH_REPLIES ?? 300);
const REPLY_RATE = Number(process.env.BENCH_REPLY_RATE ?? 10);
const PROBE_RATE = Number(process.env.BENCH_PROBE_RATE ?? 10);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const CHECK_REPLIES = Number(process.env.BENCH_CHECK_REPLIES ?? 20);
const MAIL_HEAP_MB = Number(process.env.BENCH_MAIL_HEAP_MB ?? 1024);
/** How long the login gate (40 logins/s by default) needs for N, with a wide margin. */
const RAMP_LIMIT_MS = 120_000 + N * 100;
const RESUME_LIMIT_MS = 300_000 + N * 100;
const TAG = `x${process.pid}`;
const GOALS = {
  mailboxes: 2000,
  replyP95S: 2,
  rssDeltaMb: 1024,
  idleCpuPct: 5,
  loginsPerMailboxHour: 1,
  resumeS: 120,
  peakLoginsPerS: 50,
  webhookRatio: 1.2,
};

const { stack, env, taskQueue, log } = await benchStack(
  'mailboxes',
  { suffix: process.env.BENCH_DB_SUFFIX ?? 'bench_mailboxes', redisDb: 7 },
  {
    build: true,
    dispatcher: true,
    env: {
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
      JWT_SECRET: randomBytes(32).toString('base64url'),
      ENCRYPTION_KEY: randomBytes(32).toString('base64url'),
    },
  },
);

const { createServices } = await import('../api/services-factory.js');
const { createList } = await import('../domain/lists/lists.js');
const { createSubscription } = await import('../domain/webhooks/webhooks.js');
const { emitEvent } = await import('../domain/webhooks/events.js');
const { encrypt } = await import('../lib/crypto.js');
const { uuidv7 } = await import('../lib/ids.js');
const { mailConnectorAccountId } = await import('../lib/connectors/mailbox/account.js');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) =>
  xs.length ? xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] : NaN;
const round = (x: number, digits = 2) => (Number.isFinite(x) ? Math.round(x * 10 ** digits) / 10 ** digits : NaN);
const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');

// --- The processes this run starts, stopped whatever happens ------------------------------------
let mailPid: number | undefined;
let worker: ChildProcess | undefined;
/** The IMAP relay (ImapGate below), once the mail server's ports are known. */
let gate: ImapGate | undefined;
const workerLog = join(dataDir, `bench-mailboxes-worker-${process.pid}.log`);
/**
 * The built worker as bench-fixtures' spawnBuilt runs it (NODE_ENV production, the image's node flags
 * unless BENCH_NODE_FLAGS), its log lines kept in `workerLog` (BENCH_WORKER_LOG_LEVEL, default warn).
 */
function spawnWorker(workerEnv: NodeJS.ProcessEnv): ChildProcess {
  const nodeFlags = (process.env.BENCH_NODE_FLAGS ?? '--max-semi-space-size=32').split(' ').filter(Boolean);
  const out = openSync(workerLog, 'a');
  try {
    // BENCH_WORKER_SCRIPT: another build of the worker (an A/B experiment), relative to the repository.
    const script = join(repoRoot, process.env.BENCH_WORKER_SCRIPT ?? 'dist/workers/worker.js');
    return spawn(process.execPath, [...nodeFlags, script], {
      cwd: repoRoot,
      env: {
        ...process.env,
        ...workerEnv,
        LOG_LEVEL: process.env.BENCH_WORKER_LOG_LEVEL ?? 'warn',
        NODE_ENV: 'production',
      },
      stdio: ['ignore', out, 'inherit'],
    });
  } finally {
    closeSync(out);
  }
}
let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    if (worker) await stopChild(worker).catch((err: unknown) => log(`cleanup: worker: ${String(err)}`));
    await gate?.close();
    if (mailPid) await stopMailServer(mailPid, log).catch((err: unknown) => log(`cleanup: mail: ${String(err)}`));
    mailPid = undefined;
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    log(`${signal}: stopping the worker and the mail server`);
    void cleanup().finally(() => process.exit(130));
  });
const hardLimit = setTimeout(
  () => {
    log('hard time limit reached; stopping');
    void cleanup().finally(() => process.exit(2));
  },
  20 * 60_000 + RAMP_LIMIT_MS + RESUME_LIMIT_MS,
);
hardLimit.unref();

// --- The bench's own mail server -----------------------------------------------------------------
const ports = new Set<number>();
while (ports.size < 5) ports.add(await freePort());
const [smtpPort, imapPort, smtpsPort, imapsPort, apiPort] = [...ports];
const mail: MailServer = {
  host: '127.0.0.1',
  smtpPort,
  imapPort,
  smtpsPort,
  imapsPort,
  apiUrl: `http://127.0.0.1:${apiPort}`,
};
const mailLog = join(dataDir, `mail-bench-mailboxes-${process.pid}.log`);
const startMail = async () => {
  mailPid = await startMailServerAt(log, mail, { heapMb: MAIL_HEAP_MB, authDisabled: true, logFile: mailLog });
};

/**
 * The IMAP address the mailboxes name: a loopback relay to GreenMail's IMAP port, open only while
 * GreenMail is ready. GreenMail opens its ports before it applies `auth.disabled` and refuses logins
 * until then ("NO LOGIN failed"), which the sessions take for refused credentials (their account is
 * disconnected); a real server answers once it is up. Closing the gate cuts every session at once,
 * as a server that stops does.
 */
class ImapGate {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  constructor(
    readonly port: number,
    private readonly target: number,
  ) {}
  async open(): Promise<void> {
    const server = createNetServer((client) => {
      const upstream = connect({ host: '127.0.0.1', port: this.target });
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
      }
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
const imapGate = new ImapGate(await freePort(), mail.imapPort);
gate = imapGate;

// --- The worker's /metrics -----------------------------------------------------------------------
const metricsPort = await freePort();
const metricsToken = randomBytes(24).toString('base64url');
type Metrics = Map<string, number>;
async function scrape(): Promise<Metrics> {
  const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, {
    headers: { authorization: `Bearer ${metricsToken}` },
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new Error(`worker /metrics answered ${res.status}`);
  const out: Metrics = new Map();
  for (const line of (await res.text()).split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}
interface Sessions {
  at: number;
  following: number;
  connecting: number;
  waiting: number;
  ok: number;
  failed: number;
  reconnects: number;
  /** Leases lost to another holder (or found gone): the session ends and the next lease tick starts it again. */
  leasesLost: number;
}
async function sessions(): Promise<Sessions> {
  const m = await scrape();
  const v = (k: string) => m.get(k) ?? 0;
  return {
    at: performance.now(),
    following: v('outreach_mailbox_sessions{state="following"}'),
    connecting: v('outreach_mailbox_sessions{state="connecting"}'),
    waiting: v('outreach_mailbox_sessions{state="waiting"}'),
    ok: v('outreach_mailbox_logins_total{outcome="ok"}'),
    failed: v('outreach_mailbox_logins_total{outcome="failed"}'),
    reconnects: v('outreach_mailbox_reconnects_total'),
    leasesLost: v('outreach_mailbox_lease_changes_total{change="lost"}'),
  };
}
const allFollowing = (s: Sessions, n: number) => s.following === n && s.connecting === 0 && s.waiting === 0;
/** The most logins (`count`) within one second, from samples about 250 ms apart. */
function peakPerSecond(samples: Sessions[], count: (s: Sessions) => number): number {
  let peak = 0;
  for (let i = 1; i < samples.length; i++) {
    let j = i - 1;
    while (j > 0 && samples[i].at - samples[j].at < 1000) j--;
    const span = Math.max(1000, samples[i].at - samples[j].at);
    peak = Math.max(peak, ((count(samples[i]) - count(samples[j])) * 1000) / span);
  }
  return peak;
}
/** Samples /metrics every 250 ms until `stop` says so (or `limitMs` passes). */
async function sampleUntil(stop: (s: Sessions, all: Sessions[]) => boolean, limitMs: number): Promise<Sessions[]> {
  const all: Sessions[] = [];
  const deadline = performance.now() + limitMs;
  while (performance.now() < deadline) {
    const next = performance.now() + 250;
    const s = await sessions().catch(() => undefined);
    if (s) {
      all.push(s);
      if (stop(s, all)) return all;
    }
    await sleep(Math.max(0, next - performance.now()));
  }
  throw new Error(
    `timed out after ${limitMs / 1000} s; last sample ${JSON.stringify(all.at(-1) ?? null)} (of ${N} mailboxes)`,
  );
}

// --- The webhook receiver --------------------------------------------------------------------------
/** Arrival (performance.now()) of each `message.received` by its reply's key, and of each probe. */
const replyArrivals = new Map<string, number>();
const probeArrivals = new Map<string, number>();
let duplicates = 0;
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = performance.now();
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as {
        event: string;
        data: { message?: string; agent_name?: string };
      };
      const key =
        body.event === 'message.received'
          ? /bench-key (\S+)/.exec(body.data.message ?? '')?.[1]
          : body.event === 'lead.discovered'
            ? body.data.agent_name
            : undefined;
      const into = body.event === 'message.received' ? replyArrivals : probeArrivals;
      if (key) {
        if (into.has(key)) duplicates++;
        else into.set(key, at);
      }
    } catch {
      /* not ours */
    }
    res.writeHead(204).end();
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));

function latencies(sent: Map<string, number>, arrived: Map<string, number>) {
  const xs = [...sent.entries()]
    .filter(([k]) => arrived.has(k))
    .map(([k, t]) => arrived.get(k)! - t)
    .sort((a, b) => a - b);
  return {
    sent: sent.size,
    delivered: xs.length,
    lost: sent.size - xs.length,
    p50_ms: Math.round(pct(xs, 50)),
    p95_ms: Math.round(pct(xs, 95)),
    max_ms: Math.round(xs.at(-1) ?? NaN),
  };
}
async function drain(sent: Map<string, number>, arrived: Map<string, number>, limitMs: number): Promise<void> {
  const deadline = performance.now() + limitMs;
  while ([...sent.keys()].some((k) => !arrived.has(k)) && performance.now() < deadline) await sleep(100);
}

// --- The figures -----------------------------------------------------------------------------------
const figures = {
  n: N,
  replyP95S: NaN,
  rssDeltaMb: NaN,
  idleCpuPct: NaN,
  loginsPerMailboxHour: NaN,
  resumeS: NaN,
  peakLoginsPerS: NaN,
  webhookRatio: NaN,
  allFollowed: false,
  /** Sessions following after the restart. */
  resumed: NaN,
};
const lines: string[] = [];
const phase = (name: string, data: Record<string, unknown>) => console.log(JSON.stringify({ phase: name, ...data }));

const services = await createServices();
let benchUser: string | undefined;
let workspaceId: string | undefined;
const smtp = nodemailer.createTransport({
  host: mail.host,
  port: mail.smtpPort,
  secure: false,
  ignoreTLS: true,
  pool: true,
  maxConnections: 4,
});

/** Where the mailboxes stand (a session that stopped for good says why: refused credentials, …). */
let accountsReported = false;
async function reportAccounts(): Promise<void> {
  if (!workspaceId) return;
  accountsReported = true;
  await (services.orm.em.fork() as EntityManager)
    .execute<Record<string, unknown>[]>(
      `select a.status, a.status_reason, a.connection_problem->>'reason' as problem, left(c.error_message, 120) as cursor_error, count(*)::int as n
         from platform_accounts a left join mailbox_cursors c on c.account_id = a.id
        where a.workspace_id = ? and a.connector = 'mail' group by 1, 2, 3, 4 order by n desc`,
      [workspaceId],
    )
    .then((rows) => phase('accounts', { by_state: rows }))
    .catch((err: unknown) => log(`accounts: ${String(err)}`));
}

/** Held for the run: a second run on the same database would follow this one's mailboxes (and remove them). */
const runLock = new pg.Client({ connectionString: env.DATABASE_URL });

async function main(): Promise<void> {
  await runLock.connect();
  const [{ locked }] = (
    await runLock.query<{ locked: boolean }>(`select pg_try_advisory_lock(hashtext('bench:mailboxes')) as locked`)
  ).rows;
  if (!locked)
    throw new Error(`another bench:mailboxes runs on ${services.config.databaseUrl.replace(/\/\/.*@/, '//')}`);
  const em = services.orm.em.fork() as EntityManager;
  // A run that died before its cleanup left its workspace (and its mailboxes, which this worker would follow).
  const stale = await em.execute<{ n: number }[]>(
    `with gone as (delete from users where email like 'bench-%@example.test' returning 1) select count(*)::int as n from gone`,
  );
  if (stale[0].n) log(`removed ${stale[0].n} bench user(s) an earlier run left in this database`);

  await startMail();
  await imapGate.open();
  const { actor, app } = await benchOwner(em);
  benchUser = actor.userId;
  const ws = actor.workspaceId;
  workspaceId = ws;
  await createSubscription(em, actor, services.config, {
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
    events: ['message.received', 'lead.discovered'],
  });
  // The prospects who reply (a reply matches its lead by the sender's address: message.received).
  const list = await createList(em, actor, app.id, { name: 'Bench mailboxes list' });
  const prospects = REPLIES + CHECK_REPLIES;
  await seedLeads(em, { workspaceId: ws, listId: list.id, count: prospects, tag: TAG });
  const prospect = (i: number) => `p${i + 1}.${TAG}@company.example`;

  log(`worker log: ${workerLog}`);
  worker = spawnWorker({ ...env, WORKER_METRICS_PORT: String(metricsPort), METRICS_TOKEN: metricsToken });
  const workerPid = worker.pid!;
  await workerPolling(services.temporal.connection, taskQueue, 120_000);
  await waitFor('the worker /metrics', async () => !!(await scrape()), 30_000);

  const temporalPid = readPid('temporal');
  const postmaster = readPid('postgres');
  const database = decodeURIComponent(new URL(env.DATABASE_URL!).pathname.slice(1));
  const meter = () =>
    cpuMeter({
      worker: () => [workerPid],
      mail: () => (mailPid ? [mailPid] : []),
      postgres: () => (postmaster && isRunning(postmaster, 'postgres') ? postgresPids(postmaster, database) : []),
      temporal: () => (temporalPid && isRunning(temporalPid, 'temporal') ? [temporalPid] : []),
    });
  /** The worker's RSS (mean of one sample a second) and CPU over `seconds`, and the other processes' CPU. */
  async function idleWindow(seconds: number) {
    const cpu = meter();
    const cpu0 = cpuMs(workerPid);
    const rss: number[] = [];
    const t0 = performance.now();
    for (let i = 0; i < seconds; i++) {
      await sleep(1000);
      rss.push(memoryMb(workerPid, 'VmRSS'));
    }
    const elapsed = performance.now() - t0;
    const workerCpu = cpuMs(workerPid) - cpu0;
    const groups = cpu.stop();
    const m = await scrape();
    const mb = (k: string) => round((m.get(k) ?? NaN) / 1024 / 1024, 1);
    const pctOf = (ms: number) => round((ms / elapsed) * 100, 1);
    return {
      seconds: round(elapsed / 1000, 1),
      rss_mb: round(rss.reduce((a, b) => a + b, 0) / rss.length, 1),
      heap_used_mb: mb('nodejs_heap_size_used_bytes'),
      external_mb: mb('nodejs_external_memory_bytes'),
      cpu_pct: pctOf(workerCpu),
      other_cpu_pct: Object.fromEntries(
        Object.entries(groups)
          .filter(([k]) => k !== 'worker')
          .map(([k, ms]) => [k, pctOf(ms)]),
      ),
    };
  }
  /** Emits one event per `rate`/s for `seconds` through the domain (emitEvent in a transaction): its key → the commit. */
  async function emitPaced(
    seconds: number,
    rate: number,
    event: 'lead.discovered' | 'message.received',
    data: (k: number) => Record<string, unknown>,
  ): Promise<Map<string, number>> {
    const emitted = new Map<string, number>();
    const count = Math.round(seconds * rate);
    const t0 = performance.now();
    for (let k = 0; k < count; k++) {
      const wait = t0 + (k * 1000) / rate - performance.now();
      if (wait > 1) await sleep(wait);
      const d = data(k);
      await (services.orm.em.fork() as EntityManager).transactional((tx) =>
        emitEvent(tx as EntityManager, ws, event, d),
      );
      emitted.set(String(d.agent_name ?? k), performance.now());
    }
    return emitted;
  }
  /** `lead.discovered` probes at PROBE_RATE for `seconds`: the key → the moment its transaction committed. */
  const probes = (name: string, seconds: number) =>
    emitPaced(seconds, PROBE_RATE, 'lead.discovered', (k) => ({
      lead_id: randomUUID(),
      agent_id: randomUUID(),
      agent_name: `probe-${name}-${k}`,
      first_name: 'Ada',
      last_name: 'Lovelace',
      company: 'Bench Ltd',
      headline: null,
      profile_url: null,
      signal_key: null,
    }));
  /** With N = 0, the replies' `message.received` stand-ins at the same rate (the same webhook traffic; not timed). */
  const standIns = (seconds: number) =>
    emitPaced(seconds, REPLY_RATE, 'message.received', () => ({
      conversation_id: randomUUID(),
      lead_id: randomUUID(),
      campaign_id: null,
      sender_name: 'Ada Lovelace',
      sender_provider_id: 'ada@company.example',
      message: 'Sounds good (a stand-in with N = 0).',
      is_first_reply: true,
      first_name: 'Ada',
      last_name: 'Lovelace',
    }));
  /** `count` replies at `rate`/s from prospects `first…` to random mailboxes: the key → SMTP acceptance. */
  async function replies(addresses: string[], first: number, count: number, rate: number) {
    const landed = new Map<string, number>();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: count }, async (_, k) => {
        const wait = t0 + (k * 1000) / rate - performance.now();
        if (wait > 1) await sleep(wait);
        const key = `${TAG}-${first + k}`;
        await smtp.sendMail({
          from: prospect(first + k),
          to: addresses[Math.floor(Math.random() * addresses.length)],
          subject: 'Re: Hello from the bench',
          text: `Sounds good. bench-key ${key}`,
        });
        landed.set(key, performance.now());
      }),
    );
    return landed;
  }

  // 0. N = 0: probes first (the webhook path warmed up, as it is later), then the idle window.
  const phaseSeconds = REPLIES / REPLY_RATE;
  log(
    `N = 0: the worker settles (10 s); webhook probes at ${PROBE_RATE}/s and message.received stand-ins at ${REPLY_RATE}/s for ${phaseSeconds} s; idle (30 s)`,
  );
  await sleep(10_000);
  const [probes0] = await Promise.all([probes('n0', phaseSeconds), standIns(phaseSeconds)]);
  await drain(probes0, probeArrivals, 60_000);
  const hooks0 = latencies(probes0, probeArrivals);
  await sleep(5_000);
  const idle0 = await idleWindow(30);
  phase('n0', { idle: idle0, webhook_probes: hooks0 });

  // 1. N mailboxes, all connected at once.
  const accounts = Array.from({ length: N }, (_, i) => ({ id: uuidv7(), address: `mb${i}.${TAG}@bench.test` }));
  const rows = accounts.map((a) => ({
    id: a.id,
    connector_account_id: mailConnectorAccountId(a.id),
    address: a.address,
    sealed: encrypt(
      JSON.stringify({
        email: a.address,
        username: a.address,
        password: 'bench-pw',
        smtp_host: mail.host,
        smtp_port: String(mail.smtpPort),
        smtp_security: 'none',
        imap_host: mail.host,
        imap_port: String(imapGate.port),
        imap_security: 'none',
      }),
      services.config.encryptionKey,
    ),
  }));
  const before = await sessions();
  log(`inserting ${N} connected mail accounts; waiting for every session to follow`);
  const rampStart = performance.now();
  for (let i = 0; i < rows.length; i += 1000)
    await em.execute(
      `insert into platform_accounts (id, workspace_id, channel, display_name, time_zone, working_hours, status, connector, connector_account_id, address, credentials_sealed, caps,
         min_gap_seconds, jitter_seconds, connected_at, warmup_skipped_at, created_at, updated_at)
       select v.id, ?, 'email', 'Bench mailbox', 'UTC', '{"days":[1,2,3,4,5,6,7],"start":"00:00","end":"24:00"}'::jsonb, 'connected', 'mail', v.connector_account_id, v.address, v.sealed, '{}'::jsonb,
         0, 0, now(), now(), now(), now()
         from json_to_recordset(?::json) as v(id uuid, connector_account_id text, address text, sealed text)`,
      [ws, JSON.stringify(rows.slice(i, i + 1000))],
    );
  const ramp = await sampleUntil((s) => allFollowing(s, N), RAMP_LIMIT_MS);
  const rampEnd = ramp.at(-1)!;
  // The gauge is set on the service's lease tick; the last login is when the last session started following.
  const rampLastLogin = ramp.find((s) => s.ok === rampEnd.ok) ?? rampEnd;
  phase('ramp', {
    mailboxes: N,
    all_following_s: round((rampEnd.at - rampStart) / 1000, 1),
    last_login_s: round((rampLastLogin.at - rampStart) / 1000, 1),
    logins_ok: rampEnd.ok - before.ok,
    logins_failed: rampEnd.failed - before.failed,
    peak_logins_per_s: round(
      peakPerSecond(ramp, (s) => s.ok + s.failed),
      1,
    ),
  });
  figures.allFollowed = true;

  // 2. Idle with N following.
  log(`N = ${N}: all following; settles (15 s), then an idle window (${IDLE_SECONDS} s)`);
  await sleep(15_000);
  const idleFrom = await sessions();
  const idleN = await idleWindow(IDLE_SECONDS);
  const idleTo = await sessions();
  const [refresh] = await em.execute<{ recent: number; total: number }[]>(
    `select count(*) filter (where c.synced_at > now() - interval '60 seconds')::int as recent, count(*)::int as total
       from mailbox_cursors c join platform_accounts a on a.id = c.account_id where a.workspace_id = ?`,
    [ws],
  );
  const idleLogins = idleTo.ok + idleTo.failed - (idleFrom.ok + idleFrom.failed);
  const windowH = (idleTo.at - idleFrom.at) / 3_600_000;
  figures.loginsPerMailboxHour = round(idleLogins / windowH / N, 3);
  figures.idleCpuPct = idleN.cpu_pct;
  figures.rssDeltaMb = round(idleN.rss_mb - idle0.rss_mb, 1);
  phase('idle', {
    mailboxes: N,
    ...idleN,
    rss_n0_mb: idle0.rss_mb,
    rss_delta_mb: figures.rssDeltaMb,
    cpu_n0_pct: idle0.cpu_pct,
    logins: idleLogins,
    reconnects: idleTo.reconnects - idleFrom.reconnects,
    logins_per_mailbox_hour: figures.loginsPerMailboxHour,
    // Each wake of a session (new mail, its IDLE refresh) lists the INBOX and saves the cursor (synced_at).
    cursors_saved_in_last_60s: `${refresh.recent}/${refresh.total}`,
    following: idleTo.following,
  });

  // 3. Replies at REPLY_RATE with the probes beside them.
  log(`${REPLIES} replies at ${REPLY_RATE}/s to random mailboxes, webhook probes at ${PROBE_RATE}/s`);
  const addresses = accounts.map((a) => a.address);
  const [landed, probesN] = await Promise.all([replies(addresses, 0, REPLIES, REPLY_RATE), probes('n', phaseSeconds)]);
  await Promise.all([drain(landed, replyArrivals, 120_000), drain(probesN, probeArrivals, 60_000)]);
  const replyStats = latencies(landed, replyArrivals);
  const hooksN = latencies(probesN, probeArrivals);
  figures.replyP95S = round(replyStats.p95_ms / 1000, 2);
  // The ratio waits for the second N = 0 measure (5. below); this one stands if that fails.
  figures.webhookRatio = round(hooksN.p95_ms / hooks0.p95_ms, 2);
  phase('replies', {
    mailboxes: N,
    rate: REPLY_RATE,
    smtp_accepted_to_message_received: replyStats,
    duplicated: duplicates,
    webhook_probes_n0: hooks0,
    webhook_probes_n: hooksN,
  });

  // 4. The mail server restarts.
  log('restarting the mail server');
  const base = await sessions();
  const restartAt = performance.now();
  let upAt: number | undefined;
  /** Sessions that stopped for good (the gauge counts fewer than N, none connecting or waiting, for 30 s). */
  let ended = false;
  const sampling = sampleUntil((s, all) => {
    if (upAt === undefined || s.at < upAt) return false;
    // Every session logged in again (the gauge alone may still show the state before the restart).
    if (allFollowing(s, N) && s.ok - base.ok >= N) return true;
    const before = all.find((x) => x.at >= s.at - 30_000);
    ended =
      s.at - upAt > 30_000 &&
      s.connecting === 0 &&
      s.waiting === 0 &&
      s.following < N &&
      !!before &&
      before.at <= s.at - 29_000 &&
      before.ok === s.ok &&
      before.following === s.following;
    return ended;
  }, RESUME_LIMIT_MS);
  await imapGate.close();
  await stopMailServer(mailPid!, log);
  mailPid = undefined;
  const downAt = performance.now();
  await startMail();
  await imapGate.open();
  upAt = performance.now();
  const restart = [base, ...(await sampling)];
  const end = restart.at(-1)!;
  // The gauge follows on the service's lease tick; the last login is when the last session followed again.
  const lastLogin = restart.find((s) => s.ok === end.ok) ?? end;
  figures.resumed = end.following;
  figures.resumeS = ended ? NaN : round((lastLogin.at - upAt) / 1000, 1);
  if (ended) log(`after the restart only ${end.following} of ${N} sessions follow; the others stopped for good`);
  figures.peakLoginsPerS = round(
    peakPerSecond(restart, (s) => s.ok + s.failed),
    1,
  );
  phase('restart', {
    mailboxes: N,
    following: end.following,
    stop_s: round((downAt - restartAt) / 1000, 1),
    down_s: round((upAt - downAt) / 1000, 1),
    resume_s_from_server_up: figures.resumeS,
    resume_s_from_stop: round((lastLogin.at - restartAt) / 1000, 1),
    gauge_all_following_s_from_server_up: round((end.at - upAt) / 1000, 1),
    logins_ok: end.ok - base.ok,
    logins_failed: end.failed - base.failed,
    reconnects: end.reconnects - base.reconnects,
    leases_lost: end.leasesLost - base.leasesLost,
    peak_logins_per_s: figures.peakLoginsPerS,
    peak_ok_logins_per_s: round(
      peakPerSecond(restart, (s) => s.ok),
      1,
    ),
  });

  // The sessions read mail again.
  if (CHECK_REPLIES > 0) {
    const checked = await replies(addresses, REPLIES, CHECK_REPLIES, REPLY_RATE);
    await drain(checked, replyArrivals, 60_000);
    phase('after_restart', { smtp_accepted_to_message_received: latencies(checked, replyArrivals) });
  }

  await reportAccounts();

  // 5. N = 0 again (the machine's other load drifts over minutes: the N = 0 figure is the mean of the
  //    measures before and after): the mailboxes are disconnected, their sessions end, the same
  //    probes and stand-ins run.
  log(`N = 0 again: ${N} mailboxes disconnected; the same webhook probes and stand-ins`);
  await em.execute(
    `update platform_accounts set status = 'disconnected', updated_at = now() where workspace_id = ? and connector = 'mail'`,
    [ws],
  );
  await sampleUntil((s) => s.following + s.connecting + s.waiting === 0, 120_000);
  await sleep(5_000);
  const [probes0b] = await Promise.all([probes('n0b', phaseSeconds), standIns(phaseSeconds)]);
  await drain(probes0b, probeArrivals, 60_000);
  const hooks0b = latencies(probes0b, probeArrivals);
  const p95Of0 = (hooks0.p95_ms + hooks0b.p95_ms) / 2;
  figures.webhookRatio = round(hooksN.p95_ms / p95Of0, 2);
  phase('webhooks', {
    mailboxes: N,
    probe_rate: PROBE_RATE,
    stand_in_rate: REPLY_RATE,
    p95_ms_n0_before: hooks0.p95_ms,
    p95_ms_n: hooksN.p95_ms,
    p95_ms_n0_after: hooks0b.p95_ms,
    webhook_p95_ratio: figures.webhookRatio,
    probes_n0_after: hooks0b,
  });
}

let failure: unknown;
try {
  await main();
} catch (err) {
  failure = err;
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
}
if (!accountsReported) await reportAccounts();
smtp.close();
await cleanup();
receiver.close();
// The logs stay after a failure (or with BENCH_KEEP), for a look.
if (failure || process.env.BENCH_KEEP) log(`logs: ${workerLog}, ${mailLog}`);
else for (const file of [workerLog, mailLog]) rmSync(file, { force: true });
if (process.env.BENCH_KEEP) log(`BENCH_KEEP: the run's workspace ${workspaceId} is kept`);
else await dropBenchOwner(services.orm.em.fork() as EntityManager, benchUser, log);
await services.close();
await runLock.end().catch(() => undefined);
if (process.env.CI) await stack.stop();

const f = figures;
lines.push(
  `mailboxes: N=${N} on one worker${f.allFollowed ? ', all following' : ', NOT all following'} (goal N=${GOALS.mailboxes}: ${verdict(N >= GOALS.mailboxes && f.allFollowed)})`,
  `reply → message.received p95 ${f.replyP95S} s at ${REPLY_RATE}/s (goal ≤ ${GOALS.replyP95S} s: ${verdict(f.replyP95S <= GOALS.replyP95S)})`,
  `worker RSS ${f.rssDeltaMb >= 0 ? '+' : ''}${f.rssDeltaMb} MB over the idle worker with N=0 (goal ≤ +${GOALS.rssDeltaMb} MB: ${verdict(f.rssDeltaMb <= GOALS.rssDeltaMb)})`,
  `idle CPU ${f.idleCpuPct} % of a core with N following (goal ≤ ${GOALS.idleCpuPct} %: ${verdict(f.idleCpuPct <= GOALS.idleCpuPct)})`,
  `logins ${f.loginsPerMailboxHour} per mailbox per hour in steady state (goal ≤ ${GOALS.loginsPerMailboxHour}: ${verdict(f.loginsPerMailboxHour <= GOALS.loginsPerMailboxHour)})`,
  `after a mail server restart: ${Number.isNaN(f.resumed) ? 'not measured' : `${f.resumed} of ${N} sessions following again`}${Number.isFinite(f.resumeS) ? ` in ${f.resumeS} s` : ''}, peak ${f.peakLoginsPerS} logins/s (goal all ≤ ${GOALS.resumeS} s with ≤ ${GOALS.peakLoginsPerS}/s: ${verdict(f.resumeS <= GOALS.resumeS && f.peakLoginsPerS <= GOALS.peakLoginsPerS)})`,
  `webhook delivery p95 ${f.webhookRatio} × the N=0 figure during the replies (goal ≤ ${GOALS.webhookRatio}: ${verdict(f.webhookRatio <= GOALS.webhookRatio)})`,
);
for (const l of lines) console.log(l);
console.log(
  `bench:mailboxes N=${N} reply_p95_s=${f.replyP95S} rss_delta_mb=${f.rssDeltaMb} idle_cpu_pct=${f.idleCpuPct} logins_per_mailbox_hour=${f.loginsPerMailboxHour} resume_s=${f.resumeS} peak_logins_per_s=${f.peakLoginsPerS} webhook_p95_ratio=${f.webhookRatio}`,
);
process.exit(failure ? 1 : 0);
