// `npm test` stops every process it started, however the run ends (scripts/test.ts): each carries the
// run's mark in its environment, and the end of the run sweeps the marked ones that are still alive —
// one that ignores SIGTERM included.
import test from 'ava';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { markedProcesses, RUN_MARK, sweepRun } from '../../scripts/children.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('the sweep finds the processes of a run by its mark and stops them, SIGKILL for one that ignores SIGTERM', async (t) => {
  const runId = `sweep-${randomUUID()}`;
  const spawnMarked = (code: string) =>
    spawn(process.execPath, ['-e', code], {
      env: { ...process.env, [RUN_MARK]: runId },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  const polite = spawnMarked("console.log('ready'); setInterval(() => {}, 1000)");
  const stubborn = spawnMarked("process.on('SIGTERM', () => {}); console.log('ready'); setInterval(() => {}, 1000)");
  const bystander = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
    env: { ...process.env, [RUN_MARK]: `other-${runId}` },
    stdio: 'ignore',
  });
  t.teardown(() => [polite, stubborn, bystander].forEach((c) => c.kill('SIGKILL')));
  const exited = (c: typeof polite) =>
    new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));
  // Both running their code (the stubborn one's handler installed) before the sweep.
  await Promise.all([polite, stubborn].map((c) => new Promise((r) => c.stdout!.once('data', r))));
  t.deepEqual(markedProcesses(runId).sort(), [polite.pid!, stubborn.pid!].sort());

  const found = await sweepRun(runId, 1_000);
  t.deepEqual(found.sort(), [polite.pid!, stubborn.pid!].sort());
  await Promise.all([exited(polite), exited(stubborn)]);
  t.is(polite.signalCode, 'SIGTERM');
  t.is(stubborn.signalCode, 'SIGKILL');
  t.deepEqual(markedProcesses(runId), []);
  t.true(alive(bystander.pid!), 'another run’s process is left alone');
});
