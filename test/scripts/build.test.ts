// `npm run build` produces a dist/ that runs on plain Node: no TypeScript loader, only production
// dependencies, and a worker that loads the prebuilt workflow bundle instead of bundling at start-up.
import test from 'ava';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { repoRoot } from '../../lib/config.js';
import { stopChild } from '../../scripts/children.js';
import { deliverWebhookEvent } from '../../workflows/webhooks.js';
import { freePort } from '../../scripts/children.js';

const dist = join(repoRoot, 'dist');
const children: ChildProcess[] = [];

test.before(() => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], { cwd: repoRoot, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm run build failed:\n${r.stdout}${r.stderr}`);
});
test.after.always(() => Promise.all(children.map((c) => stopChild(c))));

/** Starts `node <script>` from the repo root with no loader (NODE_OPTIONS cleared); collects its output. */
function runNode(script: string, env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [script], {
    cwd: repoRoot,
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (b: Buffer) => (output += b));
  child.stderr!.on('data', (b: Buffer) => (output += b));
  /** Resolves with the first output line matching `re`; rejects if the process exits or 30 s pass. */
  const line = (re: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const hit = output.split('\n').find((l) => re.test(l));
        if (hit) return done(() => resolve(hit));
      };
      const onExit = (code: number | null) =>
        done(() => reject(new Error(`${script} exited with ${code}:\n${output}`)));
      const timer = setTimeout(
        () => done(() => reject(new Error(`timed out waiting for ${re} from ${script}:\n${output}`))),
        30_000,
      );
      function done(settle: () => void) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        child.off('exit', onExit);
        settle();
      }
      child.stdout!.on('data', check);
      child.once('exit', onExit);
      check();
    });
  return { child, line, output: () => output };
}

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? jsFiles(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : [],
  );
}

test('compiled code imports only Node built-ins and production dependencies', (t) => {
  const { dependencies } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const imported = new Set<string>();
  for (const file of jsFiles(dist).filter((f) => !f.endsWith('workflow-bundle.js'))) {
    // A specifier has no spaces, parentheses or commas (so `required('from'), x('y')` is not an import).
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(
      /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)['"]([^'"\s(),]+)['"]/g,
    )) {
      if (spec.startsWith('.') || isBuiltin(spec)) continue;
      imported.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
    }
  }
  t.true(imported.has('@temporalio/worker'), 'the scan found the imports');
  t.deepEqual(
    [...imported].filter((p) => !(p in dependencies)),
    [],
  );
  t.false(imported.has('tsx'));
});

test('node dist/api/server.js serves /healthz and /readyz', async (t) => {
  const port = await freePort();
  const api = runNode('dist/api/server.js', { PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' });
  await api.line(/"msg":"API listening"/);
  const health = await fetch(`http://127.0.0.1:${port}/healthz`);
  t.is(health.status, 200);
  // Ready needs PostgreSQL, Redis, Temporal and the test run's worker on its task queue.
  const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
  t.is(ready.status, 200, await ready.text());
});

test('node dist/workers/worker.js loads the prebuilt workflow bundle and runs a workflow', async (t) => {
  // Its own task queue, and no schedules or outbox dispatcher, so it takes no work from other tests.
  const taskQueue = `build-test-${randomUUID()}`;
  const worker = runNode('dist/workers/worker.js', {
    TEMPORAL_TASK_QUEUE: taskQueue,
    TEMPORAL_SCHEDULES: 'off',
    WEBHOOK_DISPATCHER: 'off',
    MAILBOX_SESSIONS: 'off',
    LOG_LEVEL: 'info',
  });
  const polling = JSON.parse(await worker.line(/"msg":"worker polling"/));
  t.deepEqual(polling.workflows, { workflowBundle: { codePath: join(dist, 'workflow-bundle.js') } });
  t.notRegex(worker.output(), /Workflow bundle created/); // what the SDK logs when it runs webpack

  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
  try {
    // An event id with no row: the workflow runs its first activity (a database read) and finds no target.
    const result = await new Client({ connection }).workflow.execute(deliverWebhookEvent, {
      taskQueue,
      workflowId: `build-test:${randomUUID()}`,
      args: [{ eventId: randomUUID(), workspaceId: randomUUID() }],
      workflowExecutionTimeout: '30 seconds',
    });
    t.deepEqual(result, { targets: 0, succeeded: 0, failed: 0 });
  } finally {
    await connection.close();
  }
});
