// `npm run soak:executor -- --runs N [--seed S] [--parallel P]`: the send-time rule's model-based test
// (test/helpers/enrollments-model.ts) over many seeds. Brings up (or reuses) the stack, its own migrated
// database (`outreach_soak_executor`) and a worker on its own task queue, runs seeds S..S+N-1 (S random
// unless given; `--runs 1 --seed S` replays one), P at a time (default 1), prints each failing run with
// its command sequence and the counts (runs, operations, sends, violations), and stops every process
// it started, on failure too. Exit code 1 when any invariant was violated or a run failed.
import { Connection } from '@temporalio/client';
import { reloadConfig } from '../lib/config.js';
import { spawnTsx, stopChild, waitFor } from './children.js';
import { stackWithSchema, testRunEnv } from './stack-env.js';
import type { Stack } from './stack.js';
import type { ChildProcess } from 'node:child_process';

const log = (msg: string) => console.error(`[soak] ${msg}`);

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0) return process.argv[i + 1];
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
}
function intArg(name: string, fallback: number): number {
  const raw = arg(name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`--${name} must be a non-negative integer (got ${raw})`);
    process.exit(2);
  }
  return n;
}

const runs = intArg('runs', 10);
const firstSeed = intArg('seed', Math.floor(Math.random() * 1_000_000));
const parallel = Math.max(1, intArg('parallel', 1));

let stack: Stack | undefined;
let worker: ChildProcess | undefined;
let closeApi: (() => Promise<void>) | undefined;
let stopping: Promise<void> | undefined;
const stopAll = () =>
  (stopping ??= (async () => {
    await closeApi?.().catch((err) => log(`closing the API: ${String(err)}`));
    if (worker) await stopChild(worker);
    await stack?.stop().catch((err) => log(`stopping the stack: ${String(err)}`));
  })());
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    log(`${sig}: stopping`);
    void stopAll().then(() => process.exit(130));
  });
}

let code = 1;
try {
  const s = await stackWithSchema(log, { suffix: 'soak_executor', redisDb: 3 });
  stack = s.stack;
  const taskQueue = `soak-executor-${process.pid}`;
  const env = testRunEnv(s.env, taskQueue);
  Object.assign(process.env, env);
  // The stack's migrations read the configuration before this environment was set (its task queue).
  reloadConfig();
  worker = spawnTsx('workers/worker.ts', env);
  const conn = await Connection.connect({ address: s.env.TEMPORAL_ADDRESS });
  try {
    await waitFor(
      'the worker to poll',
      async () =>
        ((
          await conn.workflowService.describeTaskQueue({
            namespace: 'default',
            taskQueue: { name: taskQueue },
            taskQueueType: 1,
          })
        ).pollers?.length ?? 0) > 0,
      120_000,
    );
  } finally {
    await conn.close();
  }

  // Imported once the environment is set: the in-process API reads it when it starts.
  const apiHelpers = await import('../test/helpers/api.js');
  closeApi = apiHelpers.closeApi;
  const { formatRun, runModel } = await import('../test/helpers/enrollments-model.js');

  log(`seeds ${firstSeed}..${firstSeed + runs - 1}, ${parallel} at a time`);
  const totals = { runs: 0, ops: 0, sends: 0, violations: 0, failedRuns: 0, errors: 0 };
  const failing: number[] = [];
  let next = 0;
  const lane = async () => {
    for (;;) {
      const i = next++;
      if (i >= runs) return;
      const seed = firstSeed + i;
      try {
        const r = await runModel(seed);
        totals.runs++;
        totals.ops += r.counts.ops;
        totals.sends += r.counts.sends;
        totals.violations += r.violations.length;
        if (r.violations.length) {
          totals.failedRuns++;
          failing.push(seed);
          console.log(`\nFAILED ${formatRun(r, `npm run soak:executor -- --runs 1 --seed ${seed}`)}\n`);
        } else {
          console.log(
            `ok seed ${seed}: ${r.counts.ops} ops, ${r.counts.sends} sends, enrollments ${JSON.stringify(r.counts.enrollments)}, ${(r.ms / 1000).toFixed(1)} s${r.notes.length ? ` (${r.notes.length} notes)` : ''}`,
          );
        }
      } catch (err) {
        totals.errors++;
        failing.push(seed);
        console.log(
          `\nERROR seed ${seed} (replay: npm run soak:executor -- --runs 1 --seed ${seed}): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, runs) }, lane));
  console.log(
    `\nruns ${totals.runs}, operations ${totals.ops}, sends ${totals.sends}, violations ${totals.violations} (in ${totals.failedRuns} runs), errors ${totals.errors}` +
      (failing.length ? `; failing seeds: ${failing.join(', ')}` : ''),
  );
  code = totals.violations || totals.errors ? 1 : 0;
} catch (err) {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err));
  code = 1;
} finally {
  await stopAll();
}
process.exit(code);
