// `npm test`: typecheck, bring up (or reuse) the stack, migrate, start a worker, run ava, and end
// with the plain summary line `N passed, N failed`.
import { spawn, spawnSync } from 'node:child_process';
import { repoRoot } from '../lib/config.js';
import { freePort, RUN_MARK, spawnTsx, stopChild, sweepRun, waitFor } from './children.js';
import { stackWithSchema, testRunEnv } from './stack-env.js';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const log = (msg: string) => console.error(`[test] ${msg}`);

// TEST_SKIP_TYPECHECK=1: several people editing one tree at once run their own files without
// tripping over each other's half-done types (CI never sets it).
// The static checks: types, then lint (eslint.config.js: the layering rules and floating promises),
// then the format (Prettier, .prettierrc.json: `npm run format` applies it).
const staticChecks: [string, string[]][] = [
  ['typecheck', ['node_modules/typescript/bin/tsc', '--noEmit']],
  ['lint', ['node_modules/eslint/bin/eslint.js', '--max-warnings', '0', '.']],
  ['format', ['node_modules/prettier/bin/prettier.cjs', '--check', '--log-level', 'warn', '**/*.{ts,js,mjs}']],
];
for (const [name, args] of process.env.TEST_SKIP_TYPECHECK ? [] : staticChecks) {
  log(name);
  if (spawnSync(process.execPath, args, { cwd: repoRoot, stdio: 'inherit' }).status !== 0) {
    console.log('0 passed, 1 failed');
    process.exit(1);
  }
}

// Its own database (outreach_test), Redis database, task queue and so its own outbox dispatcher:
// a test run never shares work with a running `npm start`, nor the reverse.
// TEST_DB_SUFFIX (e.g. `test_llm`) gives a branch under development a database of its own.
const { stack, env } = await stackWithSchema(
  log,
  { suffix: process.env.TEST_DB_SUFFIX ?? 'test', redisDb: 1 },
  { mail: true },
);
const taskQueue = `test-${process.pid}`;
// Every process of the run carries the mark (the worker, ava and its files, the workers tests start),
// so the end of the run, however it ends, stops whatever is still alive (sweepRun).
const runId = String(process.pid);
const testEnv = {
  ...testRunEnv(env, taskQueue),
  OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost',
  // Refused mailbox logins disconnect after 3 s of refusals, not 2 minutes: the tests of refused credentials stay short.
  MAILBOX_REFUSAL_GRACE_MS: '3000',
  [RUN_MARK]: runId,
};
// One bundle of the workflows for the run, made as a worker from source would make it: the run's
// worker and every worker a test file starts load it (WORKFLOW_BUNDLE_PATH) instead of each running
// webpack over the same sources (a CPU-minute apiece on this machine's 2 cores).
const bundlePath = join(repoRoot, '.data', `workflow-bundle-${runId}.js`);
{
  const { code: bundle } = await bundleWorkflowCode({
    workflowsPath: join(repoRoot, 'workflows/index.ts'),
    workflowInterceptorModules: [join(repoRoot, 'workflows/metrics-interceptors.ts')],
    logger: new DefaultLogger('WARN'),
  });
  mkdirSync(dirname(bundlePath), { recursive: true });
  writeFileSync(bundlePath, bundle);
  Object.assign(testEnv, { WORKFLOW_BUNDLE_PATH: bundlePath });
}
// The run's worker serves its /metrics on a free port (test/workflows/metrics.test.ts scrapes it);
// the workers tests start themselves serve none.
const workerMetricsPort = await freePort();
const worker = spawnTsx('workers/worker.ts', { ...testEnv, WORKER_METRICS_PORT: String(workerMetricsPort) });
let ava: ReturnType<typeof spawn> | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping the run's processes`);
    ava?.kill('SIGTERM');
    void stopChild(worker)
      .then(() => sweepRun(runId))
      .finally(() => process.exit(130));
  });
}
let code = 1;
let summary = '0 passed, 1 failed';
try {
  const conn = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
  await waitFor('the worker to poll', async () => {
    const r = await conn.workflowService.describeTaskQueue({
      namespace: 'default',
      taskQueue: { name: taskQueue },
      taskQueueType: 1,
    });
    return (r.pollers?.length ?? 0) > 0;
  });
  await conn.close();

  ava = spawn(process.execPath, ['node_modules/ava/entrypoints/cli.mjs', ...process.argv.slice(2)], {
    cwd: repoRoot,
    env: {
      ...process.env,
      ...testEnv,
      TEST_WORKER_PID: String(worker.pid),
      WORKER_METRICS_PORT: '0',
      TEST_WORKER_METRICS_URL: `http://127.0.0.1:${workerMetricsPort}/metrics`,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  ava.stdout!.on('data', (chunk: Buffer) => {
    process.stdout.write(chunk);
    out += chunk.toString();
  });
  code = await new Promise<number>((res) => ava!.once('exit', (c) => res(c ?? 1)));
  // ava prints "N tests passed" only when nothing failed, so passes are counted per test line.
  const count = (re: RegExp) => Number(re.exec(out)?.[1] ?? 0);
  const passed = (out.match(/^\s+✔ (?!\[)/gm) ?? []).length;
  const failed =
    Math.max(count(/(\d+) tests? failed/), (out.match(/^\s+✘ \[fail\]/gm) ?? []).length) +
    count(/(\d+) uncaught exceptions?/) +
    count(/(\d+) unhandled rejections?/);
  summary = `${passed} passed, ${code !== 0 && failed === 0 ? 1 : failed} failed`;
} catch (err) {
  log(String(err));
} finally {
  await stopChild(worker);
  const left = await sweepRun(runId);
  if (left.length) log(`stopped ${left.length} process(es) the run had left behind: ${left.join(', ')}`);
  await removeTestSchedules().catch((err) => log(`could not remove the run's schedules: ${String(err)}`));
  rmSync(bundlePath, { force: true });
  if (process.env.CI) await stack.stop();
}

/**
 * Agents activated by tests get Temporal Schedules on this run's task queue; remove them so a shared
 * dev server does not keep firing them at a queue nobody polls any more.
 */
async function removeTestSchedules(): Promise<void> {
  const client = new Client({ connection: await Connection.connect({ address: env.TEMPORAL_ADDRESS }) });
  try {
    for await (const s of client.schedule.list()) {
      if (!s.scheduleId.startsWith('schedule:discovery:')) continue;
      const handle = client.schedule.getHandle(s.scheduleId);
      const d = await handle.describe().catch(() => undefined);
      if (d?.action.type === 'startWorkflow' && d.action.taskQueue === taskQueue) await handle.delete().catch(() => {});
    }
  } finally {
    await client.connection.close();
  }
}
console.log(summary);
process.exit(code);
