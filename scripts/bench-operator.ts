// `npm run bench:operator`: 20 concurrent Operator streams against the real path — the API in this
// process (HTTP), the `operatorTurn` workflow on the bench's own worker and task queue, events through
// Redis — with the local model. Each stream asks for a read tool (two model calls, one tool run).
// Prints the time to the first stream event and to the first model text (p50/p95), and events per
// second across all streams. Goal: first event p50 ≤ 300 ms. Own database (`outreach_bench`).
import type { EntityManager } from '@mikro-orm/postgresql';
import { Connection } from '@temporalio/client';
import { spawnTsx, stopChild } from './children.js';
import { benchApiOwner, benchStack, startApi, workerPolling } from './bench-fixtures.js';

const STREAMS = 20;
const ROUNDS = 5;
const { stack, env, taskQueue, log } = await benchStack(
  'operator',
  { suffix: 'bench', redisDb: 2 },
  { env: { RATE_LIMIT_AGENT_PER_MINUTE: '100000' } },
);

// Imported after the environment is set: config is read once.
const { grantCredits } = await import('../domain/billing/credits.js');

const worker = spawnTsx('workers/worker.ts', env, { quiet: true });
const { services, base, close } = await startApi();
const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });

interface StreamTiming {
  firstEvent: number;
  firstText: number;
  events: number;
  last: string;
}

async function stream(token: string, appId: string): Promise<StreamTiming> {
  const started = performance.now();
  const res = await fetch(`${base}/api/agent/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ app_id: appId, message: 'list products' }),
  });
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  let firstEvent = 0;
  let firstText = 0;
  let events = 0;
  let last = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    for (const m of decoder.decode(chunk, { stream: true }).matchAll(/^event: (\S+)$/gm)) {
      events++;
      last = m[1];
      firstEvent ||= performance.now() - started;
      if (m[1] === 'message_delta') firstText ||= performance.now() - started;
    }
  }
  return { firstEvent, firstText, events, last };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

try {
  await workerPolling(connection, taskQueue);
  const em = services.orm.em.fork() as EntityManager;
  const { actor, app, token: secret } = await benchApiOwner(em);
  await grantCredits(em, actor.workspaceId, STREAMS * (ROUNDS + 1), { reason: 'bench', source: 'admin' });

  log('warm-up round');
  await Promise.all(Array.from({ length: STREAMS }, () => stream(secret, app.id)));
  const timings: StreamTiming[] = [];
  const started = performance.now();
  for (let round = 0; round < ROUNDS; round++)
    timings.push(...(await Promise.all(Array.from({ length: STREAMS }, () => stream(secret, app.id)))));
  const seconds = (performance.now() - started) / 1000;
  const events = timings.reduce((n, x) => n + x.events, 0);
  const first = timings.map((x) => x.firstEvent);
  const text = timings.map((x) => x.firstText);
  const completed = timings.filter((x) => x.last === 'done').length;
  console.log(`bench:operator — ${STREAMS} concurrent streams × ${ROUNDS} rounds, local model, one read tool per turn`);
  console.log(`  turns completed:                  ${completed} of ${timings.length}`);
  console.log(
    `  first stream event  p50 / p95:    ${pct(first, 50).toFixed(0)} ms / ${pct(first, 95).toFixed(0)} ms   (goal p50 ≤ 300 ms: ${pct(first, 50) <= 300 ? 'met' : 'MISSED'})`,
  );
  console.log(`  first model text    p50 / p95:    ${pct(text, 50).toFixed(0)} ms / ${pct(text, 95).toFixed(0)} ms`);
  console.log(
    `  events per second (all streams):  ${(events / seconds).toFixed(0)} (${events} events in ${seconds.toFixed(1)} s)`,
  );
} finally {
  await close();
  await connection.close();
  await stopChild(worker);
  if (process.env.CI) await stack.stop();
}
