// The short chaos run (`npm run chaos -- --short`, scripts/chaos.ts): the deployed shape on a stack of
// its own — 2 APIs, 2 workers, Temporal, PostgreSQL, Redis, a mail server — with each part killed or
// restarted while a campaign, an import, a webhook stream, Operator turns and prospects' replies to 10
// followed mailboxes run. Its verdict comes back as JSON.
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { markedProcesses } from '../../scripts/children.js';
import { TAKEOVER_LIMIT_S } from '../../scripts/chaos/mail.js';
import type { Verdict } from '../../scripts/chaos/run.js';
import { repoRoot } from '../../lib/config.js';

test('a short chaos run: every fault recovered, nothing lost or doubled, no 5xx but 503 + Retry-After, nothing left running', async (t) => {
  t.timeout(12 * 60_000, 'the short chaos run');
  const result = join(tmpdir(), `chaos-${process.pid}-${Date.now()}.json`);
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/chaos.ts', '--short'], {
    cwd: repoRoot,
    env: { ...process.env, CHAOS_RESULT: result },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c));
  child.stderr.on('data', (c: Buffer) => (output += c));
  t.teardown(() => {
    child.kill('SIGINT'); // the harness stops every process of its run on SIGINT
    rmSync(result, { force: true });
  });
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  t.log(
    output
      .split('\n')
      .filter((l) => l.startsWith('|') || l.startsWith('chaos:') || l.startsWith('- '))
      .join('\n'),
  );
  t.true(existsSync(result), `the run wrote no verdict:\n${output.slice(-3000)}`);
  const v = JSON.parse(readFileSync(result, 'utf8')) as Verdict;
  t.deepEqual(v.problems, []);
  t.is(code, 0);
  t.deepEqual(
    v.faults.map((f) => f.fault),
    [
      'kill -9 worker mid-batch',
      'kill -9 API mid-request',
      'restart Temporal server',
      'restart PostgreSQL',
      'Redis down 5 s',
      'restart mail server',
      'kill -9 worker holding mailboxes',
    ],
  );
  const takeover = v.faults.find((f) => f.fault === 'kill -9 worker holding mailboxes');
  t.true(
    takeover?.recoveryS != null && takeover.recoveryS <= TAKEOVER_LIMIT_S,
    `a killed worker's mailboxes taken over within ${TAKEOVER_LIMIT_S} s: ${takeover?.outcome}`,
  );
  t.deepEqual(
    v.checks.map((c) => c.name).filter((n) => /mailbox|message\.received/.test(n)),
    ['mailbox replies', 'message.received events', 'mailbox leases'],
  );
  for (const f of v.faults) {
    t.not(f.recoveryS, null, `${f.fault} recovered`);
    t.is(
      f.probes.broken + f.probes.hung,
      0,
      `${f.fault}: no 5xx but 503 + Retry-After, no hang (${f.probes.examples.join(' | ')})`,
    );
  }
  for (const c of v.checks) t.deepEqual([c.name, c.lost, c.doubled], [c.name, 0, 0], c.detail);
  t.is(v.workflows.running, 0);
  t.is(v.workflows.failed, 0);
  t.is(v.enrollments.active ?? 0, 0);
  t.true(
    (v.enrollments.completed ?? 0) + (v.enrollments.replied ?? 0) + (v.enrollments.stopped ?? 0) === 200,
    JSON.stringify(v.enrollments),
  );
  t.deepEqual(markedProcesses(String(child.pid), 'OUTREACH_CHAOS_RUN'), [], 'no process of the run outlives it');
});
