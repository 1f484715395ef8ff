import test from 'ava';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../../lib/config.js';
import { DEMO_WORKSPACE_ID } from '../../domain/demo/seed.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { call, createUser, closeApi } from '../helpers/api.js';
import { em } from '../helpers/billing.js';
test.after.always(closeApi);

/** Runs `npm run admin -- ...args` as support staff would (same script, the tests' DATABASE_URL). */
function admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(repoRoot, 'scripts/admin.ts'), ...args],
      { cwd: repoRoot, env: process.env },
      (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

test('set-plan sets the plan and status and grants the monthly credits', async (t) => {
  const u = await createUser();
  const r = await admin('set-plan', '--email', u.email.toUpperCase(), '--plan', 'pro');
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /plan pro, status active, credits granted 5000/);
  const e = await call('GET', '/api/me/entitlement', { token: u.accessToken });
  t.like(e.body, { plan_id: 'pro', status: 'active', credits: { balance: 5000 } });
  const past = await admin('set-plan', '--email', u.email, '--plan', 'pro', '--status', 'past_due');
  t.is(past.code, 0, past.stderr);
  t.like((await call('GET', '/api/me/entitlement', { token: u.accessToken })).body, {
    status: 'past_due',
    credits: { balance: 5000 },
  });
});

test('grant-credits adds a ledger grant; --beta makes it a beta reward', async (t) => {
  const u = await createUser();
  const r = await admin('grant-credits', '--email', u.email, '--amount', '25', '--reason', 'sorry for the outage');
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /balance 25/);
  const b = await admin('grant-credits', '--email', u.email, '--amount', '10', '--reason', 'found a bug', '--beta');
  t.is(b.code, 0, b.stderr);
  t.is((await call('GET', '/api/me/entitlement', { token: u.accessToken })).body.credits.balance, 35);
  const rewards = await call('GET', '/api/billing/beta-rewards', { token: u.accessToken });
  t.like(rewards.body, { total_credits: 10, rewards: [{ amount: 10, reason: 'found a bug' }] });
});

test('seed-demo seeds the Demo workspace and can run again', async (t) => {
  const r = await admin('seed-demo');
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, new RegExp(`demo workspace ${DEMO_WORKSPACE_ID}`));
  t.true((await (await em()).findOneOrFail(Workspace, DEMO_WORKSPACE_ID)).isDemo);
});

test('failures: unknown user, plan or status exit 1; usage errors exit 2; nothing changes', async (t) => {
  const u = await createUser();
  const cases: [string[], number, RegExp][] = [
    [
      ['set-plan', '--email', 'nobody-here@example.test', '--plan', 'pro'],
      1,
      /no user with email nobody-here@example\.test/,
    ],
    [['set-plan', '--email', u.email, '--plan', 'gold'], 1, /unknown plan "gold"/],
    [['set-plan', '--email', u.email, '--plan', 'pro', '--status', 'paused'], 1, /unknown status "paused"/],
    [['set-plan', '--plan', 'pro'], 2, /--email is required/],
    [['grant-credits', '--email', u.email, '--amount=-3', '--reason', 'x'], 2, /positive integer/],
    [['grant-credits', '--email', u.email, '--amount', 'lots', '--reason', 'x'], 2, /positive integer/],
    [['grant-credits', '--email', u.email, '--amount', '3'], 2, /--reason is required/],
    [['grant-credits', '--email', 'nobody-here@example.test', '--amount', '3', '--reason', 'x'], 1, /no user/],
    [['set-plan', '--email', u.email, '--plan', 'pro', '--bogus'], 2, /Unknown option/],
    [['frobnicate'], 2, /unknown command "frobnicate"/],
    [[], 2, /usage:/],
  ];
  // One at a time: each is a whole process (the machine may be small).
  const results: Awaited<ReturnType<typeof admin>>[] = [];
  for (const [args] of cases) results.push(await admin(...args));
  cases.forEach(([args, code, message], i) => {
    t.is(results[i].code, code, `${args.join(' ')}: ${results[i].stderr}`);
    t.regex(results[i].stderr, message, args.join(' '));
  });
  t.like((await call('GET', '/api/me/entitlement', { token: u.accessToken })).body, {
    plan_id: 'free',
    status: 'none',
    credits: { balance: 0 },
  });
});
