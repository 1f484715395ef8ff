// `npm run bench:webhooks [-- fanout|sustained]`: outbound webhook benchmarks on the real stack.
// Brings up the stack with the benchmark's OWN database (`outreach_bench`, created and migrated
// here) and starts its own worker (child process: the real workers/worker.ts, with its outbox
// dispatcher) on its own task queue, so nothing is shared with a running `npm start`.
//
// - fanout: N subscriptions (default 1,000) on local receivers, ONE event; how fast all deliveries
//   complete, then again with one receiver that never answers among them.
// - sustained: events emitted like the product does (emitEvent in a transaction → outbox → NOTIFY →
//   dispatcher → the batch workflow `webhook-batch:<batchId>` of the claimed rows, since each event
//   has one target) at BENCH_RATE per second (default 500; a comma list runs one round per rate) for
//   BENCH_SECONDS (30), each to one subscription on a local receiver; BENCH_WORKSPACES (1) spreads
//   them round-robin over that many workspaces (a batch holds one workspace's events).
//   Prints emit → received p50/p95/p99/max, lost and duplicated, where the time goes, and which
//   processes used the CPU. Goal at 500/s: p95 ≤ 2 s, 0 lost.
// Stops by itself (hard limit below).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Client, Connection } from '@temporalio/client';
import { stackWithSchema } from './stack-env.js';
import { spawnTsx, stopChild, waitFor } from './children.js';

const N = Number(process.env.BENCH_SUBSCRIPTIONS ?? 1000);
const RECEIVERS = 4;
const RATES = (process.env.BENCH_RATE ?? '500').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const DRAIN_MS = Number(process.env.BENCH_DRAIN_SECONDS ?? 60) * 1000;
/** sustained: events spread round-robin over this many workspaces (batches are per workspace). */
const WORKSPACES = Math.max(1, Number(process.env.BENCH_WORKSPACES ?? 1));
const TICK_MS = 20;
const args = process.argv.slice(2);
const runFanout = !args.length || args.includes('fanout');
const runSustained = !args.length || args.includes('sustained');
const HARD_LIMIT_MS = 300_000 + (runSustained ? RATES.length * (SECONDS * 1000 + DRAIN_MS + 60_000) : 0);
const log = (msg: string) => console.error(`[bench] ${msg}`);
setTimeout(() => {
  console.error('[bench] hard time limit reached; exiting');
  process.exit(2);
}, HARD_LIMIT_MS).unref();

const { env } = await stackWithSchema(log, { suffix: 'bench', redisDb: 2 });
const taskQueue = `bench-webhooks-${process.pid}`;
const benchEnv = {
  ...env,
  TEMPORAL_TASK_QUEUE: taskQueue,
  TEMPORAL_SCHEDULES: 'off',
  OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
  LOG_LEVEL: 'warn',
};
Object.assign(process.env, benchEnv);

// Imported after the environment is set, so loadConfig() sees it.
const { loadConfig } = await import('../lib/config.js');
const { openOrm } = await import('../db/orm.js');
const { encrypt } = await import('../lib/crypto.js');
const { User } = await import('../db/entities/User.js');
const { Workspace } = await import('../db/entities/Workspace.js');
const { WebhookSubscription } = await import('../db/entities/WebhookSubscription.js');
const { emitEvent } = await import('../domain/webhooks/events.js');
const { newWebhookSecret } = await import('../domain/webhooks/webhooks.js');
/** A lead.discovered payload with every documented field (domain/webhooks/payloads.ts). */
const benchLead = () => ({
  lead_id: randomUUID(),
  agent_id: randomUUID(),
  agent_name: 'bench',
  first_name: 'Ada',
  last_name: 'Lovelace',
  company: 'Bench Ltd',
  headline: null,
  profile_url: null,
  signal_key: null,
});
const { webhookWorkflowIds } = await import('../lib/workflow-ids.js');

const config = loadConfig();
const orm = await openOrm(config.databaseUrl);
const worker = spawnTsx('workers/worker.ts', benchEnv);
const servers: Server[] = [];

interface Hit {
  at: number;
}
const hits = new Map<string, Hit[]>(); // round tag → receipts

async function receiver(stall: boolean): Promise<number> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const tag = (req.url ?? '').split('/')[2] ?? '';
      (hits.get(tag) ?? hits.set(tag, []).get(tag)!).push({ at: performance.now() });
      if (!stall) res.writeHead(200).end('ok');
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return (server.address() as AddressInfo).port;
}

const pct = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

async function round(name: string, ports: number[], stalledPort?: number) {
  const tag = `${name}-${randomUUID().slice(0, 8)}`;
  const em = orm.em.fork() as EntityManager;
  const user = em.create(User, {
    email: `bench-${randomUUID()}@example.test`,
    name: 'bench',
    passwordHash: null as never,
  });
  const ws = em.create(Workspace, { owner: user, name: 'bench' });
  await em.flush();
  const secret = newWebhookSecret();
  const sealed = encrypt(secret, config.encryptionKey);
  const rows = Array.from({ length: N }, (_, i) => {
    const port = stalledPort !== undefined && i === Math.floor(N / 2) ? stalledPort : ports[i % ports.length];
    return {
      workspace: ws,
      url: `http://127.0.0.1:${port}/b/${tag}/${i}`,
      events: ['lead.discovered'],
      active: true,
      secretEncrypted: sealed,
      secretLast4: secret.slice(-4),
    };
  });
  for (const r of rows) em.create(WebhookSubscription, r);
  await em.flush();

  const t0 = performance.now();
  const wall0 = Date.now();
  const eventId = await (orm.em.fork() as EntityManager).transactional((tx) =>
    emitEvent(tx as EntityManager, ws.id, 'lead.discovered', benchLead()),
  );
  const expected = stalledPort === undefined ? N : N - 1; // the stalled receiver records its request but never answers
  await waitFor(`${expected} deliveries (${name})`, async () => (hits.get(tag)?.length ?? 0) >= N, 120_000);
  const receivedAll = performance.now() - t0;
  // Completion = the delivery row written after the response (or the timeout) of each attempt.
  const conn = orm.em.getConnection();
  await waitFor(
    `${N} delivery records (${name})`,
    async () => {
      const [{ n }] = await conn.execute<{ n: string }[]>(
        `select count(*) as n from webhook_deliveries where event_id = ?`,
        [eventId],
      );
      return Number(n) >= N;
    },
    120_000,
  );
  const done = await conn.execute<{ ms: number; success: boolean }[]>(
    `select extract(epoch from created_at) * 1000 - ? as ms, success from webhook_deliveries where event_id = ?`,
    [wall0, eventId],
  );
  const ok = done.filter((d) => d.success).map((d) => Number(d.ms));
  const failed = done.length - ok.length;
  const lastOk = Math.max(...ok);
  const result = {
    round: name,
    subscriptions: N,
    succeeded: ok.length,
    failed,
    successful_deliveries_per_second: Math.round(ok.length / (lastOk / 1000)),
    completion_p50_ms: Math.round(pct(ok, 50)),
    completion_p95_ms: Math.round(pct(ok, 95)),
    completion_max_ms: Math.round(lastOk),
    all_requests_received_ms: Math.round(receivedAll),
    workflow_done_ms: Math.round(Math.max(...done.map((d) => Number(d.ms)))),
    workflow_id: webhookWorkflowIds.event(eventId),
    expected_successes: expected,
  };
  await conn.execute(`delete from webhook_deliveries where event_id = ?`, [eventId]); // no foreign keys on these two
  await conn.execute(`delete from webhook_events where id = ?`, [eventId]);
  await orm.em.fork().nativeDelete(User, { id: user.id }); // cascades to the workspace and subscriptions
  return result;
}

// ---------------------------------------------------------------------------------------------
// Sustained round

const temporalPortArg = `\0--port\0${env.TEMPORAL_ADDRESS?.split(':').pop()}\0`;

/** CPU seconds used so far, by process group: where the time goes on this machine. */
function cpuSnapshot(): Map<string, number> {
  const hz = 100; // USER_HZ on Linux
  const groups = new Map<string, number>();
  // Whole machine (busy = all but idle and iowait), so processes that came and went still count.
  const all = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const busy = (all.reduce((a, b) => a + b, 0) - all[3] - all[4]) / hz;
  let known = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from #3 (state) on
      const secs = (Number(f[11]) + Number(f[12])) / hz; // utime + stime
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const group =
        Number(pid) === process.pid
          ? 'bench (emitter + receiver)'
          : Number(pid) === worker.pid
            ? 'bench worker + dispatcher'
            : comm === 'postgres'
              ? 'postgres (all databases)'
              : /temporal\0server\0start-dev/.test(cmd) && cmd.includes(temporalPortArg)
                ? 'temporal dev server'
                : undefined;
      if (!group) continue;
      groups.set(group, (groups.get(group) ?? 0) + secs);
      known += secs;
    } catch {
      // the process ended meanwhile
    }
  }
  groups.set('everything else (other engineers, OS)', busy - known);
  return groups;
}

const stats = (xs: number[]) => ({
  p50: Math.round(pct(xs, 50)),
  p95: Math.round(pct(xs, 95)),
  p99: Math.round(pct(xs, 99)),
  max: Math.round(xs.length ? xs.reduce((a, b) => Math.max(a, b)) : NaN),
});

interface Emitted {
  eventId: string;
  emittedAt: number; // Date.now() when emitEvent was called (also in the payload)
  committedAt: number;
}

async function sustained(rate: number, temporal: Client) {
  const received = new Map<number, number[]>(); // seq → receipt times (Date.now())
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const seq = Number(JSON.parse(Buffer.concat(chunks).toString()).data.bench_seq);
      (received.get(seq) ?? received.set(seq, []).get(seq)!).push(at);
      res.writeHead(200).end('ok');
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  const port = (server.address() as AddressInfo).port;

  const em = orm.em.fork() as EntityManager;
  const users = Array.from({ length: WORKSPACES }, () =>
    em.create(User, { email: `bench-${randomUUID()}@example.test`, name: 'bench', passwordHash: null as never }),
  );
  const workspaces = users.map((user) => em.create(Workspace, { owner: user, name: 'bench sustained' }));
  await em.flush();
  const secret = newWebhookSecret();
  for (const ws of workspaces)
    em.create(WebhookSubscription, {
      workspace: ws,
      url: `http://127.0.0.1:${port}/s`,
      events: ['lead.discovered'],
      active: true,
      secretEncrypted: encrypt(secret, config.encryptionKey),
      secretLast4: secret.slice(-4),
    });
  await em.flush();
  const wsIds = workspaces.map((w) => w.id);
  const wsList = `{${wsIds.join(',')}}`;
  // Visibility queries name the workspaces, 50 at a time.
  const wsQueries: string[] = [];
  for (let i = 0; i < wsIds.length; i += 50)
    wsQueries.push(
      `WorkspaceId IN (${wsIds
        .slice(i, i + 50)
        .map((id) => `"${id}"`)
        .join(', ')})`,
    );

  const total = Math.round(rate * SECONDS);
  const perTick = (rate * TICK_MS) / 1000;
  const emitted = new Map<number, Emitted>();
  let emitErrors = 0;
  const inflight = new Set<Promise<void>>();
  // Each event in its own transaction, as a domain change would emit it.
  const emitOne = (seq: number) => {
    const emittedAt = Date.now();
    const p = (orm.em.fork() as EntityManager)
      .transactional((tx) =>
        emitEvent(tx as EntityManager, wsIds[seq % WORKSPACES], 'lead.discovered', {
          ...benchLead(),
          bench_seq: seq,
          emitted_at: emittedAt,
        }),
      )
      .then(
        (eventId) => void emitted.set(seq, { eventId, emittedAt, committedAt: Date.now() }),
        () => void emitErrors++,
      )
      .finally(() => inflight.delete(p));
    inflight.add(p);
  };

  log(
    `sustained ${rate}/s for ${SECONDS} s (${total} events, ${perTick} per ${TICK_MS} ms tick) to one subscription in each of ${WORKSPACES} workspace(s)`,
  );
  const load0 = loadavg();
  const cpu0 = cpuSnapshot();
  const t0 = performance.now();
  // Paced by the clock, not by the loop: a late tick emits what is due, so the rate holds on average.
  let next = 0;
  while (next < total) {
    const elapsed = performance.now() - t0;
    const due = Math.min(total, Math.floor((Math.floor(elapsed / TICK_MS) + 1) * perTick));
    while (next < due) emitOne(next++);
    await new Promise((r) => setTimeout(r, TICK_MS - (elapsed % TICK_MS)));
  }
  await Promise.all(inflight);
  const emitSeconds = (performance.now() - t0) / 1000;
  const load1 = loadavg();
  const cpuEmit = cpuSnapshot();

  // Drain: every committed event must arrive within DRAIN_MS after the last commit.
  await waitFor('all events received', async () => received.size >= emitted.size, DRAIN_MS).catch(() =>
    log(`drain deadline: ${emitted.size - received.size} not received`),
  );
  await new Promise((r) => setTimeout(r, 1000)); // late duplicates
  const receivedInTime = received.size; // deliveries may still arrive while the figures are gathered
  const drainedSeconds = (performance.now() - t0) / 1000;
  const cpu1 = cpuSnapshot();
  const load2 = loadavg();
  const conn = orm.em.getConnection();
  // Each delivery row is written after the receiver's answer: give the last ones a moment.
  const recorded = async () =>
    Number(
      (
        await conn.execute<{ n: string }[]>(
          `select count(*) as n from webhook_deliveries where workspace_id = any(?::uuid[])`,
          [wsList],
        )
      )[0].n,
    );
  await waitFor('delivery records', async () => (await recorded()) >= received.size, 15_000).catch(() => {});

  let lost = 0;
  let duplicated = 0;
  const latency: number[] = [];
  for (const [seq, e] of emitted) {
    const r = received.get(seq);
    if (!r) lost++;
    else {
      latency.push(r[0] - e.emittedAt);
      duplicated += r.length - 1;
    }
  }

  // Where the time goes, per event: the outbox timestamps, the start and close times of the workflow
  // that carried it (its batch's, or its own for a large fan-out) in Temporal's visibility, and the
  // receipt. dispatched_at is the start of the dispatcher's transaction that started the workflow (now()).
  const rows = await conn.execute<
    { id: string; batch_id: string | null; created: string; dispatched: string | null; records: string }[]
  >(
    `select e.id, e.batch_id, extract(epoch from e.created_at) * 1000 as created, extract(epoch from e.dispatched_at) * 1000 as dispatched,
            (select count(*) from webhook_deliveries d where d.event_id = e.id) as records
       from webhook_events e where e.workspace_id = any(?::uuid[])`,
    [wsList],
  );
  const outbox = new Map(rows.map((r) => [r.id, r]));
  const workflowOf = (eventId: string) => {
    const b = outbox.get(eventId)?.batch_id;
    return !b
      ? webhookWorkflowIds.event(eventId)
      : b === eventId
        ? webhookWorkflowIds.event(eventId)
        : webhookWorkflowIds.batch(b);
  };
  const started = new Map<string, { start: number; close: number | null; type: string }>();
  for (const query of wsQueries)
    for await (const wf of temporal.workflow.list({ query })) {
      started.set(wf.workflowId, {
        start: wf.startTime.getTime(),
        close: wf.closeTime?.getTime() ?? null,
        type: wf.type,
      });
    }
  // Events per batch (the batch id on the outbox rows).
  const perBatch = new Map<string, number>();
  for (const r of rows)
    if (r.batch_id && r.batch_id !== r.id) perBatch.set(r.batch_id, (perBatch.get(r.batch_id) ?? 0) + 1);
  const batchSizes = [...perBatch.values()];
  const phase = {
    commit: [] as number[],
    claim: [] as number[],
    start: [] as number[],
    deliver: [] as number[],
    emitToStart: [] as number[],
  };
  let records = 0;
  let missingRecords = 0;
  let neverStarted = 0;
  for (const [seq, e] of emitted) {
    const o = outbox.get(e.eventId);
    const w = started.get(workflowOf(e.eventId));
    if (!w) neverStarted++;
    const r = received.get(seq)?.[0];
    phase.commit.push(e.committedAt - e.emittedAt);
    const n = Number(o?.records ?? 0);
    records += n;
    if (n === 0) missingRecords++;
    if (o?.dispatched) phase.claim.push(Number(o.dispatched) - e.committedAt);
    if (o?.dispatched && w) phase.start.push(w.start - Number(o.dispatched));
    if (w) phase.emitToStart.push(w.start - e.emittedAt);
    if (w && r) phase.deliver.push(r - w.start);
  }
  // CPU seconds per wall second, by process group (the machine has 2 cores in all).
  const cores = (from: Map<string, number>, to: Map<string, number>, seconds: number) =>
    Object.fromEntries(
      [...to]
        .map(([g, s]) => [g, Number(((s - (from.get(g) ?? 0)) / seconds).toFixed(2))] as const)
        .sort((a, b) => b[1] - a[1]),
    );
  // Leave nothing behind: the outbox has no foreign key to the workspace, so delete the round's rows
  // first (the dispatcher then has nothing more to start), then terminate the workflows still open,
  // which would otherwise stay open forever on this run's task queue (one batch job).
  await conn.execute(`delete from webhook_events where workspace_id = any(?::uuid[])`, [wsList]);
  await conn.execute(`delete from webhook_deliveries where workspace_id = any(?::uuid[])`, [wsList]);
  const stillOpen = started.size - [...started.values()].filter((w) => w.close !== null).length;
  if (stillOpen > 0) {
    for (const query of wsQueries)
      await temporal.workflowService
        .startBatchOperation({
          namespace: config.temporal.namespace,
          jobId: randomUUID(),
          reason: 'bench:webhooks cleanup',
          visibilityQuery: `${query} AND ExecutionStatus = "Running"`,
          terminationOperation: {},
        })
        .catch((err) => log(`could not terminate ${stillOpen} open workflows: ${err}`));
  }
  await orm.em.fork().nativeDelete(User, { id: { $in: users.map((u) => u.id) } }); // cascades to the workspaces and subscriptions
  server.closeAllConnections();
  server.close();
  return {
    target_rate: rate,
    seconds: SECONDS,
    workspaces: WORKSPACES,
    events: total,
    committed: emitted.size,
    emit_errors: emitErrors,
    achieved_emit_rate: Math.round(emitted.size / emitSeconds),
    received: receivedInTime,
    lost,
    duplicated,
    emit_to_received_ms: stats(latency),
    delivery_records: records,
    events_without_record: missingRecords,
    workflows_started: started.size,
    workflows_by_type: [...started.values()].reduce<Record<string, number>>(
      (a, w) => ({ ...a, [w.type]: (a[w.type] ?? 0) + 1 }),
      {},
    ),
    events_per_batch: {
      batches: batchSizes.length,
      ...stats(batchSizes),
      mean: Number((batchSizes.reduce((a, b) => a + b, 0) / Math.max(1, batchSizes.length)).toFixed(1)),
    },
    workflows_open_at_end: stillOpen, // terminated by the bench
    never_started: neverStarted, // events whose workflow never started: still in the outbox at the end (deleted by the bench)
    phases_ms: {
      emit_to_commit: stats(phase.commit),
      commit_to_dispatcher_claim: stats(phase.claim),
      claim_to_workflow_start: stats(phase.start),
      emit_to_workflow_start: stats(phase.emitToStart),
      workflow_start_to_received: stats(phase.deliver),
    },
    load_average: {
      before: load0.map((l) => l.toFixed(2)).join(' '),
      end_of_emission: load1.map((l) => l.toFixed(2)).join(' '),
      after_drain: load2.map((l) => l.toFixed(2)).join(' '),
    },
    cpu_cores_used: {
      during_emission: cores(cpu0, cpuEmit, emitSeconds),
      during_drain: cores(cpuEmit, cpu1, drainedSeconds - emitSeconds),
    },
    // Robust to other load on the machine (unlike latency): what one event costs each of our parts,
    // from the first emit to the end of the drain. 2,000 ms of CPU per second is the whole machine.
    // Per received event: meaningful when the round drained (lost = 0).
    cpu_ms_per_event: Object.fromEntries(
      [...cpu1]
        .filter(([g]) => !g.startsWith('everything'))
        .map(([g, s]) => [g, Number((((s - (cpu0.get(g) ?? 0)) * 1000) / Math.max(1, receivedInTime)).toFixed(1))]),
    ),
    drained_after_s: Number(drainedSeconds.toFixed(1)),
  };
}

let exitCode = 0;
try {
  const conn = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
  await waitFor(
    'the worker to poll',
    async () => {
      const r = await conn.workflowService.describeTaskQueue({
        namespace: 'default',
        taskQueue: { name: taskQueue },
        taskQueueType: 1,
      });
      return (r.pollers?.length ?? 0) > 0;
    },
    120_000,
  );
  await conn.close();
  log(`worker polling on ${taskQueue}; database outreach_bench`);
  if (runFanout) {
    const ports = await Promise.all(Array.from({ length: RECEIVERS }, () => receiver(false)));
    const stalled = await receiver(true);
    log(`${N} subscriptions over ${RECEIVERS} local receivers`);
    const warm = await round('warm-up', ports).catch((e) => ({ error: String(e) }));
    log(`warm-up done: ${JSON.stringify(warm)}`);
    const a = await round('all-healthy', ports);
    const b = await round('one-stalled', ports, stalled);
    console.log(JSON.stringify({ healthy: a, with_one_stalled_receiver: b }, null, 2));
    const goal = (r: typeof a) => r.succeeded === r.expected_successes && r.completion_max_ms <= 10_000;
    console.log(
      `\nall healthy : ${a.succeeded}/${N} ok, ${a.successful_deliveries_per_second} deliveries/s, p95 ${a.completion_p95_ms} ms, all done in ${a.completion_max_ms} ms → ${goal(a) ? 'GOAL MET' : 'goal missed'}` +
        `\none stalled : ${b.succeeded}/${N} ok (+${b.failed} timed out), ${b.successful_deliveries_per_second} deliveries/s, p95 ${b.completion_p95_ms} ms, healthy ones done in ${b.completion_max_ms} ms, workflow done in ${b.workflow_done_ms} ms → ${goal(b) ? 'GOAL MET' : 'goal missed'}\n`,
    );
  }
  if (runSustained) {
    const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
    const temporal = new Client({ connection, namespace: config.temporal.namespace });
    const lines: string[] = [];
    for (const rate of RATES) {
      const r = await sustained(rate, temporal);
      console.log(JSON.stringify({ sustained: r }, null, 2));
      const met = r.lost === 0 && r.emit_to_received_ms.p95 <= 2000;
      const l = r.emit_to_received_ms;
      lines.push(
        `sustained ${rate}/s × ${SECONDS} s${WORKSPACES > 1 ? ` over ${WORKSPACES} workspaces` : ''}: emitted ${r.achieved_emit_rate}/s, emit → received p50 ${l.p50} / p95 ${l.p95} / p99 ${l.p99} / max ${l.max} ms, ` +
          `lost ${r.lost}, duplicated ${r.duplicated}, load ${r.load_average.end_of_emission} → ${met ? 'GOAL MET' : 'goal missed'} (p95 ≤ 2000 ms, 0 lost)`,
      );
    }
    console.log(`\n${lines.join('\n')}`);
    await connection.close();
  }
} catch (err) {
  console.error('[bench] failed:', err);
  exitCode = 1;
} finally {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
  await stopChild(worker);
  await orm.close();
}
process.exit(exitCode);
