// `npm run admin -- <command> [options]`: support-staff operations against DATABASE_URL (or the
// local default). Applies pending migrations first. Exit status: 0 done, 1 failed (unknown user,
// plan, ...), 2 usage error.
//
//   set-plan --email E --plan free|starter|pro [--status active|none|past_due|canceled]
//   grant-credits --email E --amount N --reason R [--beta]
//   seed-demo
import { parseArgs } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import { loadConfig } from '../lib/config.js';
import { migrate, openOrm } from '../lib/db.js';
import { User } from '../db/entities/User.js';
import { Workspace } from '../db/entities/Workspace.js';
import { SUBSCRIPTION_STATUSES, type SubscriptionStatus } from '../db/entities/Subscription.js';
import { seedDemo } from '../db/seed/demo.js';
import { grantCredits, creditBalance } from '../domain/credits.js';
import { PLAN_IDS, isPlanId, setPlan } from '../domain/plans.js';

const USAGE = `usage: npm run admin -- <command>
  set-plan --email E --plan ${PLAN_IDS.join('|')} [--status ${SUBSCRIPTION_STATUSES.join('|')}]
  grant-credits --email E --amount N --reason R [--beta]
  seed-demo`;

class Failure extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

async function workspaceOf(em: EntityManager, email: string | undefined): Promise<{ email: string; workspaceId: string }> {
  if (!email) throw new Failure('--email is required', 2);
  const normalised = email.trim().toLowerCase();
  const user = await em.findOne(User, { email: normalised });
  if (!user) throw new Failure(`no user with email ${normalised}`);
  const ws = await em.findOne(Workspace, { owner: user.id });
  if (!ws) throw new Failure(`user ${normalised} has no workspace`);
  return { email: normalised, workspaceId: ws.id };
}

async function run(em: EntityManager, argv: string[]): Promise<string> {
  const [command, ...rest] = argv;
  const { values } = (() => {
    try {
      return parseArgs({
        args: rest,
        options: {
          email: { type: 'string' },
          plan: { type: 'string' },
          status: { type: 'string' },
          amount: { type: 'string' },
          reason: { type: 'string' },
          beta: { type: 'boolean', default: false },
        },
        strict: true,
      });
    } catch (err) {
      throw new Failure(`${(err as Error).message}\n${USAGE}`, 2);
    }
  })();
  switch (command) {
    case 'set-plan': {
      if (!values.plan) throw new Failure('--plan is required', 2);
      if (!isPlanId(values.plan)) throw new Failure(`unknown plan "${values.plan}"; plans: ${PLAN_IDS.join(', ')}`);
      if (values.status && !(SUBSCRIPTION_STATUSES as readonly string[]).includes(values.status)) {
        throw new Failure(`unknown status "${values.status}"; statuses: ${SUBSCRIPTION_STATUSES.join(', ')}`);
      }
      const { email, workspaceId } = await workspaceOf(em, values.email);
      const { subscription, creditsGranted } = await setPlan(em, workspaceId, values.plan, { status: values.status as SubscriptionStatus | undefined });
      return `${email}: plan ${subscription.plan}, status ${subscription.status}, credits granted ${creditsGranted}, balance ${await creditBalance(em, workspaceId)}`;
    }
    case 'grant-credits': {
      const amount = Number(values.amount);
      if (!values.amount || !Number.isSafeInteger(amount) || amount <= 0) throw new Failure('--amount must be a positive integer', 2);
      if (!values.reason?.trim()) throw new Failure('--reason is required', 2);
      const { email, workspaceId } = await workspaceOf(em, values.email);
      const r = await grantCredits(em, workspaceId, amount, { reason: values.reason.trim(), source: values.beta ? 'beta_reward' : 'admin' });
      return `${email}: granted ${amount} credits (${values.beta ? 'beta reward' : 'support'}), balance ${r.balance}`;
    }
    case 'seed-demo': {
      const { workspaceId, changed } = await seedDemo(em);
      return `demo workspace ${workspaceId}: ${changed} rows inserted or updated`;
    }
    case undefined:
    case 'help':
    case '--help':
      throw new Failure(USAGE, command ? 0 : 2);
    default:
      throw new Failure(`unknown command "${command}"\n${USAGE}`, 2);
  }
}

const orm = await openOrm(loadConfig().databaseUrl);
let exitCode = 0;
try {
  await migrate(orm);
  console.log(await run(orm.em.fork(), process.argv.slice(2)));
} catch (err) {
  if (err instanceof Failure) {
    (err.exitCode === 0 ? console.log : console.error)(err.exitCode === 0 ? err.message : `error: ${err.message}`);
    exitCode = err.exitCode;
  } else {
    console.error(`error: ${(err as Error).message}`);
    exitCode = 1;
  }
} finally {
  await orm.close();
}
process.exit(exitCode);
