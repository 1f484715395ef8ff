// `npm run bench:discovery`: one discovery run over the local corpus (a people search matching
// every one of its 10,000+ people), through the real path: launch → `discoveryRun` workflow on the
// bench's own worker and task queue → one activity per 200-candidate page (dedupe, qualification by
// the local model in a batch, bulk inserts). Prints candidates qualified per second and the total
// run time against the goals (≥ 2,000 candidates/s, ≤ 10 s). Own database (`outreach_bench`).
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Connection, Client } from '@temporalio/client';
import { spawnTsx, stopChild } from './children.js';
import { benchOwner, benchStack, workerPolling } from './bench-fixtures.js';

const { stack, env, taskQueue, log } = await benchStack('discovery', { suffix: 'bench', redisDb: 2 });

// Imported after the environment is set: config is read once.
const { openOrm } = await import('../db/orm.js');
const { createAgent, replaceSignals, setSource } = await import('../domain/agents/agents.js');
const { createRun, planRun } = await import('../domain/agents/discovery.js');
const { discoveryWorkflowIds } = await import('../lib/workflow-ids.js');

const worker = spawnTsx('workers/worker.ts', env, { quiet: true });
const orm = await openOrm(env.DATABASE_URL!);
const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
const client = new Client({ connection });
try {
  await workerPolling(connection, taskQueue);
  const em = orm.em.fork() as EntityManager;
  const { actor, app } = await benchOwner(em);
  app.icpDescription = 'Revenue and engineering leaders at software companies';
  app.icpFilters = {
    titles: ['Chief Revenue Officer', 'CTO', 'Account Executive'],
    keywords: ['outbound', 'kubernetes'],
  };
  await em.flush();
  const agent = await createAgent(em, actor, app.id, { name: 'Everyone' });
  const [signal] = await replaceSignals(em, actor, agent.id, [
    { key: 'everyone', kind: 'people_search', name: 'Every person in the corpus' },
  ]);
  await setSource(em, actor, agent.id, 'pronet', { enabled: true });

  const plan = await planRun(em, actor, agent.id, randomUUID(), signal.id);
  await createRun(em, plan, 'manual');
  log('running one discovery run over the local corpus');
  const started = performance.now();
  const totals = (await client.workflow.execute('discoveryRun', {
    taskQueue,
    workflowId: discoveryWorkflowIds.run(plan.agentId, plan.runId),
    args: [{ plan }],
  })) as { candidates: number; qualified: number; rejected: number; duplicates: number; pages: number };
  const seconds = (performance.now() - started) / 1000;
  const rate = totals.candidates / seconds;
  console.log(
    [
      `discovery run: ${totals.candidates.toLocaleString('en-US')} candidates in ${totals.pages} pages → ${totals.qualified.toLocaleString('en-US')} qualified, ${totals.rejected.toLocaleString('en-US')} rejected, ${totals.duplicates} duplicates`,
      `candidates qualified per second: ${Math.round(rate).toLocaleString('en-US')} (goal ≥ 2,000) ${rate >= 2000 ? 'MET' : 'MISSED'}`,
      `whole run: ${seconds.toFixed(2)} s (goal ≤ 10 s) ${seconds <= 10 ? 'MET' : 'MISSED'}`,
    ].join('\n'),
  );
  if (totals.candidates < 10_000)
    console.log(`note: only ${totals.candidates} candidates (the goal is measured over 10,000)`);
} finally {
  await stopChild(worker, 10_000);
  await connection.close();
  await orm.close();
  if (process.env.CI) await stack.stop();
}
process.exit(0);
