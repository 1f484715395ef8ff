// `npm run admin -- <command> [options]`: support-staff operations against DATABASE_URL (or the
// local default). Applies pending migrations first. Exit status: 0 done, 1 failed (unknown user,
// plan, ...), 2 usage error.
//
//   set-plan --email E --plan free|starter|pro [--status active|none|past_due|canceled]
//   grant-credits --email E --amount N --reason R [--beta]
//   seed-demo
//   sandbox-disconnect --account A --reason R      (the sandbox network's support hooks: each queues
//   sandbox-reconnect --account A                    the inbound event it causes, delivered by the
//   sandbox-inject-message --account A --from F --body B [--thread T]     worker's one-minute schedule)
//   sandbox-accept-invitation --invitation I
//   sandbox-open-message --message M
import { parseArgs } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import { loadConfig } from '../lib/config.js';
import { migrate, openOrm } from '../db/orm.js';
import { stackWithSchema } from './stack-env.js';
import { User } from '../db/entities/User.js';
import { Workspace } from '../db/entities/Workspace.js';
import { SUBSCRIPTION_STATUSES, type SubscriptionStatus } from '../db/entities/Subscription.js';
import { seedDemo } from '../domain/demo/seed.js';
import { grantCredits, creditBalance } from '../domain/billing/credits.js';
import { PLAN_IDS, isPlanId, setPlan } from '../domain/billing/plans.js';
import {
  sandboxAcceptInvitation,
  sandboxDisconnect,
  sandboxInjectMessage,
  sandboxOpenMessage,
  sandboxReconnect,
} from '../lib/connectors/index.js';
import { ANNOUNCEMENT_USAGE, parseAnnouncementCommand, type BoardCommand } from './admin-announcements.js';

const USAGE = `usage: npm run admin -- <command>
  set-plan --email E --plan ${PLAN_IDS.join('|')} [--status ${SUBSCRIPTION_STATUSES.join('|')}]
  grant-credits --email E --amount N --reason R [--beta]
  seed-demo
  sandbox-disconnect --account <connector_account_id> --reason R
  sandbox-reconnect --account <connector_account_id>
  sandbox-inject-message --account <connector_account_id> --from F --body B [--thread T]
  sandbox-accept-invitation --invitation <invitation id>
  sandbox-open-message --message <sent email's message id>
${ANNOUNCEMENT_USAGE}`;

class Failure extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

async function workspaceOf(em: EntityManager, normalised: string): Promise<{ email: string; workspaceId: string }> {
  const user = await em.findOne(User, { email: normalised });
  if (!user) throw new Failure(`no user with email ${normalised}`);
  const ws = await em.findOne(Workspace, { owner: user.id });
  if (!ws) throw new Failure(`user ${normalised} has no workspace`);
  return { email: normalised, workspaceId: ws.id };
}

type Command =
  | { name: 'set-plan'; email: string; plan: string; status?: string }
  | { name: 'grant-credits'; email: string; amount: number; reason: string; beta: boolean }
  | { name: 'seed-demo' }
  | { name: 'sandbox-disconnect'; account: string; reason: string }
  | { name: 'sandbox-reconnect'; account: string }
  | { name: 'sandbox-inject-message'; account: string; from: string; body: string; thread?: string }
  | { name: 'sandbox-accept-invitation'; invitation: string }
  | { name: 'sandbox-open-message'; message: string }
  | BoardCommand;

/** Validates the command line before touching the database (usage errors exit 2). */
function parse(argv: string[]): Command {
  const board = parseAnnouncementCommand(argv, (message, exitCode) => new Failure(message, exitCode));
  if (board) return board;
  const [command, ...rest] = argv;
  let values: {
    email?: string;
    plan?: string;
    status?: string;
    amount?: string;
    reason?: string;
    beta?: boolean;
    account?: string;
    from?: string;
    body?: string;
    thread?: string;
    invitation?: string;
    message?: string;
  };
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        email: { type: 'string' },
        plan: { type: 'string' },
        status: { type: 'string' },
        amount: { type: 'string' },
        reason: { type: 'string' },
        beta: { type: 'boolean', default: false },
        account: { type: 'string' },
        from: { type: 'string' },
        body: { type: 'string' },
        thread: { type: 'string' },
        invitation: { type: 'string' },
        message: { type: 'string' },
      },
      strict: true,
    }));
  } catch (err) {
    throw new Failure(`${(err as Error).message}\n${USAGE}`, 2);
  }
  const required = (key: 'account' | 'reason' | 'from' | 'body' | 'invitation' | 'message') => {
    const v = values[key]?.trim();
    if (!v) throw new Failure(`--${key} is required`, 2);
    return v;
  };
  const email = () => {
    if (!values.email?.trim()) throw new Failure('--email is required', 2);
    return values.email.trim().toLowerCase();
  };
  switch (command) {
    case 'set-plan':
      if (!values.plan) throw new Failure('--plan is required', 2);
      return { name: 'set-plan', email: email(), plan: values.plan, status: values.status };
    case 'grant-credits': {
      const amount = Number(values.amount);
      if (!values.amount || !Number.isSafeInteger(amount) || amount <= 0)
        throw new Failure('--amount must be a positive integer', 2);
      if (!values.reason?.trim()) throw new Failure('--reason is required', 2);
      return {
        name: 'grant-credits',
        email: email(),
        amount,
        reason: values.reason.trim(),
        beta: values.beta ?? false,
      };
    }
    case 'seed-demo':
      return { name: 'seed-demo' };
    case 'sandbox-disconnect':
      return { name: command, account: required('account'), reason: required('reason') };
    case 'sandbox-reconnect':
      return { name: command, account: required('account') };
    case 'sandbox-inject-message':
      return {
        name: command,
        account: required('account'),
        from: required('from'),
        body: required('body'),
        thread: values.thread?.trim() || undefined,
      };
    case 'sandbox-accept-invitation':
      return { name: command, invitation: required('invitation') };
    case 'sandbox-open-message':
      return { name: command, message: required('message') };
    case 'help':
    case '--help':
      throw new Failure(USAGE, 0);
    case undefined:
      throw new Failure(USAGE, 2);
    default:
      throw new Failure(`unknown command "${command}"\n${USAGE}`, 2);
  }
}

async function run(em: EntityManager, cmd: Command): Promise<string> {
  if ('run' in cmd) return cmd.run(em);
  const connector = loadConfig().connector;
  if (cmd.name.startsWith('sandbox-') && connector.provider === 'unipile')
    throw new Failure('sandbox commands need the sandbox network (CONNECTOR_PROVIDER is unipile)');
  switch (cmd.name) {
    case 'set-plan': {
      if (!isPlanId(cmd.plan)) throw new Failure(`unknown plan "${cmd.plan}"; plans: ${PLAN_IDS.join(', ')}`);
      if (cmd.status && !(SUBSCRIPTION_STATUSES as readonly string[]).includes(cmd.status)) {
        throw new Failure(`unknown status "${cmd.status}"; statuses: ${SUBSCRIPTION_STATUSES.join(', ')}`);
      }
      const { email, workspaceId } = await workspaceOf(em, cmd.email);
      const { subscription, creditsGranted } = await setPlan(em, workspaceId, cmd.plan, {
        status: cmd.status as SubscriptionStatus | undefined,
      });
      return `${email}: plan ${subscription.plan}, status ${subscription.status}, credits granted ${creditsGranted}, balance ${await creditBalance(em, workspaceId)}`;
    }
    case 'grant-credits': {
      const { email, workspaceId } = await workspaceOf(em, cmd.email);
      const r = await grantCredits(em, workspaceId, cmd.amount, {
        reason: cmd.reason,
        source: cmd.beta ? 'beta_reward' : 'admin',
      });
      return `${email}: granted ${cmd.amount} credits (${cmd.beta ? 'beta reward' : 'support'}), balance ${r.balance}`;
    }
    case 'seed-demo': {
      const { workspaceId, changed } = await seedDemo(em);
      return `demo workspace ${workspaceId}: ${changed} rows inserted or updated`;
    }
    case 'sandbox-disconnect': {
      const { eventId } = await sandboxDisconnect(em, cmd.account, cmd.reason);
      return `sandbox account ${cmd.account}: disconnected (${cmd.reason}); event ${eventId} queued`;
    }
    case 'sandbox-reconnect': {
      const { eventId } = await sandboxReconnect(em, cmd.account);
      return `sandbox account ${cmd.account}: connected; event ${eventId} queued`;
    }
    case 'sandbox-inject-message': {
      const r = await sandboxInjectMessage(em, cmd.account, { from: cmd.from, body: cmd.body, threadId: cmd.thread });
      return `sandbox account ${cmd.account}: message ${r.messageId} in thread ${r.threadId}; event ${r.eventId} queued`;
    }
    case 'sandbox-accept-invitation': {
      const r = await sandboxAcceptInvitation(em, cmd.invitation);
      if (!r) throw new Failure(`no pending sandbox invitation ${cmd.invitation}`);
      return `sandbox invitation ${cmd.invitation}: accepted; event ${r.eventId} queued`;
    }
    case 'sandbox-open-message': {
      const r = await sandboxOpenMessage(em, cmd.message);
      if (!r) throw new Failure(`no sent sandbox email ${cmd.message}`);
      return `sandbox email ${cmd.message}: opened; event ${r.eventId} queued`;
    }
  }
}

function fail(err: unknown): number {
  if (err instanceof Failure) {
    if (err.exitCode === 0) console.log(err.message);
    else console.error(`error: ${err.message}`);
    return err.exitCode;
  }
  console.error(`error: ${(err as Error).message}`);
  return 1;
}

let cmd: Command;
try {
  cmd = parse(process.argv.slice(2));
} catch (err) {
  process.exit(fail(err));
}
// Without DATABASE_URL the embedded stack is brought up (and stopped again if this run started it),
// so the CLI works on a fresh machine as documented.
const stack = process.env.DATABASE_URL
  ? undefined
  : (await stackWithSchema((msg) => console.error(`[admin] ${msg}`))).stack;
const orm = await openOrm(stack?.databaseUrl ?? loadConfig().databaseUrl);
let exitCode = 0;
try {
  await migrate(orm);
  console.log(await run(orm.em.fork(), cmd));
} catch (err) {
  exitCode = fail(err);
} finally {
  await orm.close();
  await stack?.stop();
}
process.exit(exitCode);
