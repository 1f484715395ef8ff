// `npm run bench:webhooks`: fan-out benchmark of outbound webhooks on the real stack.
// Brings up the stack, starts a worker (child process: the real workers/worker.ts, with the outbox
// dispatcher), creates N subscriptions (default 1,000) pointing at local receivers on 127.0.0.1,
// emits ONE event and measures how fast all deliveries complete. Then repeats with one receiver
// that never answers among them. Prints both rounds. Stops by itself (hard limit below).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Connection } from '@temporalio/client';
import { stackWithSchema } from './stack-env.js';
import { spawnTsx, stopChild, waitFor } from './children.js';

const N = Number(process.env.BENCH_SUBSCRIPTIONS ?? 1000);
const RECEIVERS = 4;
const HARD_LIMIT_MS = 240_000;
const log = (msg: string) => console.error(`[bench] ${msg}`);
setTimeout(() => {
  console.error('[bench] hard time limit reached; exiting');
  process.exit(2);
}, HARD_LIMIT_MS).unref();

const { env } = await stackWithSchema(log);
const taskQueue = `bench-webhooks-${process.pid}`;
const benchEnv = { ...env, TEMPORAL_TASK_QUEUE: taskQueue, TEMPORAL_SCHEDULES: 'off', OUTBOUND_ALLOW_HOSTS: '127.0.0.1', LOG_LEVEL: 'warn' };
Object.assign(process.env, benchEnv);

// Imported after the environment is set, so loadConfig() sees it.
const { loadConfig } = await import('../lib/config.js');
const { openOrm } = await import('../lib/db.js');
const { encrypt } = await import('../lib/crypto.js');
const { User } = await import('../db/entities/User.js');
const { Workspace } = await import('../db/entities/Workspace.js');
const { WebhookSubscription } = await import('../db/entities/WebhookSubscription.js');
const { emitEvent } = await import('../domain/webhook-events.js');
const { newWebhookSecret } = await import('../domain/webhooks.js');
const { webhookWorkflowIds } = await import('../workflows/ids.js');

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
  const user = em.create(User, { email: `bench-${randomUUID()}@example.test`, name: 'bench', passwordHash: null as never });
  const ws = em.create(Workspace, { owner: user, name: 'bench' });
  await em.flush();
  const secret = newWebhookSecret();
  const sealed = encrypt(secret, config.encryptionKey);
  const rows = Array.from({ length: N }, (_, i) => {
    const port = stalledPort !== undefined && i === Math.floor(N / 2) ? stalledPort : ports[i % ports.length];
    return { workspace: ws, url: `http://127.0.0.1:${port}/b/${tag}/${i}`, events: ['lead.discovered'], active: true, secretEncrypted: sealed, secretLast4: secret.slice(-4) };
  });
  for (const r of rows) em.create(WebhookSubscription, r);
  await em.flush();

  const t0 = performance.now();
  const wall0 = Date.now();
  const eventId = await (orm.em.fork() as EntityManager).transactional((tx) =>
    emitEvent(tx as EntityManager, ws.id, 'lead.discovered', { lead_id: randomUUID(), agent_id: randomUUID(), agent_name: 'bench' }),
  );
  const expected = stalledPort === undefined ? N : N - 1; // the stalled receiver records its request but never answers
  await waitFor(`${expected} deliveries (${name})`, async () => (hits.get(tag)?.length ?? 0) >= N, 120_000);
  const receivedAll = performance.now() - t0;
  // Completion = the delivery row written after the response (or the timeout) of each attempt.
  const conn = orm.em.getConnection();
  await waitFor(`${N} delivery records (${name})`, async () => {
    const [{ n }] = await conn.execute<{ n: string }[]>(`select count(*) as n from webhook_deliveries where event_id = ?`, [eventId]);
    return Number(n) >= N;
  }, 120_000);
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
  await orm.em.fork().nativeDelete(User, { id: user.id }); // cascades to the workspace and subscriptions
  return result;
}

let exitCode = 0;
try {
  const conn = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
  await waitFor('the worker to poll', async () => {
    const r = await conn.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: taskQueue }, taskQueueType: 1 });
    return (r.pollers?.length ?? 0) > 0;
  }, 120_000);
  await conn.close();
  const ports = await Promise.all(Array.from({ length: RECEIVERS }, () => receiver(false)));
  const stalled = await receiver(true);
  log(`worker polling on ${taskQueue}; ${N} subscriptions over ${RECEIVERS} local receivers`);
  const warm = await round('warm-up', ports).catch((e) => ({ error: String(e) }));
  log(`warm-up done: ${JSON.stringify(warm)}`);
  const a = await round('all-healthy', ports);
  const b = await round('one-stalled', ports, stalled);
  console.log(JSON.stringify({ healthy: a, with_one_stalled_receiver: b }, null, 2));
  const goal = (r: typeof a) => r.succeeded === r.expected_successes && r.completion_max_ms <= 10_000;
  console.log(
    `\nall healthy : ${a.succeeded}/${N} ok, ${a.successful_deliveries_per_second} deliveries/s, p95 ${a.completion_p95_ms} ms, all done in ${a.completion_max_ms} ms → ${goal(a) ? 'GOAL MET' : 'goal missed'}` +
      `\none stalled : ${b.succeeded}/${N} ok (+${b.failed} timed out), ${b.successful_deliveries_per_second} deliveries/s, p95 ${b.completion_p95_ms} ms, healthy ones done in ${b.completion_max_ms} ms, workflow done in ${b.workflow_done_ms} ms → ${goal(b) ? 'GOAL MET' : 'goal missed'}`,
  );
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
