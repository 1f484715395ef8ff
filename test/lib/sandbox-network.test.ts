// The sandbox network against the real database. Every test here is serial: `deliverDue` hands over
// whatever is due in this run's database, so no two tests may deliver at once (and no other test
// file delivers).
import test from 'ava';
import { deliverSandboxEventsSchedule } from '../../workflows/connectors.js';
import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../../lib/config.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  ConnectorError,
  SandboxNetwork,
  sandboxAcceptInvitation,
  sandboxDisconnect,
  sandboxFate,
  sandboxInjectMessage,
  sandboxReconnect,
  type InboundEvent,
} from '../../lib/connectors/index.js';
import { ingestConnectorEvent } from '../../domain/connectors/events.js';
import { deliverSandboxEvents, handleConnectorEvent } from '../../workflows/connectors.js';
import { connectorWorkflowIds } from '../../lib/workflow-ids.js';
import { ensureSchedules, scheduleDefinitions } from '../../workers/schedules.js';
import { api, closeApi } from '../helpers/api.js';
import { replayFixture } from '../helpers/replay.js';
import { whenStarted } from '../helpers/workflows.js';
import { retryTransient } from '../../jobs/connection.js';
test.after.always(closeApi);

const taskQueue = process.env.TEMPORAL_TASK_QUEUE!;
const HOUR = 3_600_000;

async function setup() {
  const { services } = await api();
  const network = new SandboxNetwork(services.config.sources.corpus, services.orm);
  const em = () => services.orm.em.fork() as EntityManager;
  return { services, network, em };
}

/** A recipient (of this test's own) whose sandbox fate matches. */
function recipient(want: { accepts?: boolean; replies?: boolean }): string {
  for (let i = 0; ; i++) {
    const r = `person-${randomUUID()}-${i}@example.test`;
    const f = sandboxFate(r);
    if (want.accepts !== undefined && (f.acceptsAfterMs !== null) !== want.accepts) continue;
    if (want.replies !== undefined && (f.repliesAfterMs !== null) !== want.replies) continue;
    return r;
  }
}

/** Delivers everything due at `at`, collecting the events. */
/** The due events of `accounts` only: other test files' events are theirs to deliver. */
async function deliver(network: SandboxNetwork, at: Date, accounts: string[]): Promise<InboundEvent[]> {
  const got: InboundEvent[] = [];
  await network.deliverDue(at, async (e) => void got.push(e), 100, accounts);
  return got;
}

async function connected(network: SandboxNetwork, channel: 'email' | 'network' = 'network') {
  const start = await network.connect({
    channel,
    accountId: randomUUID(),
    displayName: 'Ada Sender',
    credentials: { username: 'ada@example.test' },
  });
  return start.connectorAccountId;
}

test.serial('the rules: about 40 % accept, 30 % reply, the same way every time', (t) => {
  let accepts = 0;
  let replies = 0;
  for (let i = 0; i < 2000; i++) {
    const f = sandboxFate(`https://pronet.example/in/p${i}`);
    if (f.acceptsAfterMs !== null) accepts++;
    if (f.repliesAfterMs !== null) replies++;
    t.deepEqual(sandboxFate(` HTTPS://PRONET.EXAMPLE/IN/P${i} `), f); // case and surrounding space ignored
  }
  t.true(accepts > 700 && accepts < 900, String(accepts));
  t.true(replies > 500 && replies < 700, String(replies));
});

test.serial('connect: credentials connect at once; a hosted link completes on the next status read', async (t) => {
  const { network } = await setup();
  const direct = await network.connect({
    channel: 'email',
    accountId: randomUUID(),
    displayName: 'Box',
    credentials: { email: 'box@example.test', password: 'x' },
  });
  t.like(direct, { kind: 'connected', url: null, expiresAt: null });
  t.deepEqual(await network.status(direct.connectorAccountId), {
    connectorAccountId: direct.connectorAccountId,
    state: 'connected',
    reason: null,
    address: 'box@example.test',
  });

  const hosted = await network.connect({ channel: 'network', accountId: randomUUID(), displayName: 'Pro' });
  t.is(hosted.kind, 'hosted_link');
  t.is(hosted.url, `http://sandbox.invalid/connect/${hosted.connectorAccountId}`);
  t.true(hosted.expiresAt! > new Date());
  const [s, unknown] = await network.statuses([hosted.connectorAccountId, 'sbx_acc_nobody']);
  t.like(s, { state: 'connected', reason: null });
  t.regex(s.address!, /^https:\/\/pronet\.example\/in\/sandbox-/);
  t.deepEqual(unknown, {
    connectorAccountId: 'sbx_acc_nobody',
    state: 'disconnected',
    reason: 'not_found',
    address: null,
  });
  // The completion is also pushed as an account.status event.
  const events = await deliver(network, new Date(), [hosted.connectorAccountId]);
  t.like(events, [{ type: 'account.status', state: 'connected' }]);
  t.like(await network.profile(hosted.connectorAccountId), { name: 'Pro', profileUrl: s.address, email: null });
  await t.throwsAsync(network.statuses(Array.from({ length: 101 }, (_, i) => `a${i}`)), {
    instanceOf: ConnectorError,
    message: /at most 100/,
  });
});

test.serial('sends are recorded once per idempotency key; a repeat returns the first result', async (t) => {
  const { network, em } = await setup();
  const box = await connected(network, 'email');
  const acc = await connected(network);
  const to = recipient({ replies: false });
  const first = await network.sendEmail(box, { idempotencyKey: 'action-1', to, subject: 'Hi', body: 'Hello' });
  const again = await network.sendEmail(box, {
    idempotencyKey: 'action-1',
    to,
    subject: 'Hi (edited)',
    body: 'Hello again',
  });
  t.deepEqual(again, first);
  const second = await network.sendEmail(box, { idempotencyKey: 'action-1b', to, subject: 'Hi', body: 'Hello' });
  t.is(second.threadId, first.threadId); // one conversation per counterpart
  t.not(second.messageId, first.messageId);
  await network.sendMessage(acc, { idempotencyKey: 'action-2', recipient: to, body: 'Ping' });
  const [r1, r2] = await Promise.all([
    network.sendInvitation(acc, { idempotencyKey: 'action-3', recipient: to, body: 'Connect?' }),
    network.sendInvitation(acc, { idempotencyKey: 'action-3', recipient: to, body: 'Connect?' }),
  ]);
  t.deepEqual(r1, r2);
  t.is(
    Number(
      (
        await em().execute(`select count(*) as n from sandbox_messages where connector_account_id in (?)`, [[box, acc]])
      )[0].n,
    ),
    3,
  );
  // Emails go out from mailboxes, messages and invitations from network profiles.
  await t.throwsAsync(network.sendEmail(acc, { idempotencyKey: 'x1', to, subject: 'Hi', body: 'Hello' }), {
    instanceOf: ConnectorError,
    message: /not email/,
  });
  await t.throwsAsync(network.sendInvitation(box, { idempotencyKey: 'x2', recipient: to, body: 'Hello' }), {
    instanceOf: ConnectorError,
    message: /not network/,
  });
  // A repeat answers the first send even once the account is disconnected; a new send is refused.
  await sandboxDisconnect(em(), box, 'checkpoint');
  t.deepEqual(await network.sendEmail(box, { idempotencyKey: 'action-1', to, subject: 'Hi', body: 'Hello' }), first);
  await t.throwsAsync(network.sendEmail(box, { idempotencyKey: 'action-9', to, subject: 'Hi', body: 'Hello' }), {
    message: /disconnected \(checkpoint\)/,
  });
  const pending = await network.pendingInvitations(acc, null);
  t.deepEqual(pending, { items: [{ invitationId: r1.invitationId, recipient: to, sentAt: r1.sentAt }], cursor: null });
  const err = await t.throwsAsync(
    network.sendMessage('sbx_acc_nobody', { idempotencyKey: 'k', recipient: to, body: 'x' }),
    { instanceOf: ConnectorError },
  );
  t.is(err!.code, 'invalid_request');
});

test.serial(
  'acceptances and replies follow the rules, after their delay, and are delivered exactly once',
  async (t) => {
    const { network } = await setup();
    const acc = await connected(network);
    const accepter = recipient({ accepts: true, replies: true });
    const silent = recipient({ accepts: false, replies: false });
    const withdrawn = recipient({ accepts: true });
    const inv = await network.sendInvitation(acc, { idempotencyKey: 'i1', recipient: accepter, body: 'Connect?' });
    await network.sendInvitation(acc, { idempotencyKey: 'i2', recipient: silent, body: 'Connect?' });
    const inv3 = await network.sendInvitation(acc, { idempotencyKey: 'i3', recipient: withdrawn, body: 'Connect?' });
    await network.withdrawInvitation(acc, inv3.invitationId);
    await network.withdrawInvitation(acc, inv3.invitationId); // idempotent
    const msg = await network.sendMessage(acc, { idempotencyKey: 'm1', recipient: accepter, body: 'Hello' });
    await network.sendMessage(acc, { idempotencyKey: 'm2', recipient: silent, body: 'Hello' });

    const mine = (events: InboundEvent[]) => events.filter((e) => e.connectorAccountId === acc);
    t.deepEqual(mine(await deliver(network, new Date(Date.now() + 60_000), [acc])), [], 'nothing is due yet');

    const fate = sandboxFate(accepter);
    const later = new Date(Date.now() + 3 * HOUR);
    const events = mine(await deliver(network, later, [acc]));
    const accepted = events.filter((e) => e.type === 'invitation.accepted');
    const replies = events.filter((e) => e.type === 'message.received');
    t.like(accepted, [{ invitationId: inv.invitationId, recipient: accepter }]);
    t.true(
      accepted[0].type === 'invitation.accepted' &&
        accepted[0].acceptedAt.getTime() - inv.sentAt.getTime() === fate.acceptsAfterMs,
    );
    t.is(replies.length, 1);
    t.like(replies[0], { message: { threadId: msg.threadId, direction: 'in', from: accepter } });
    t.deepEqual(mine(await deliver(network, later, [acc])), [], 'each event is delivered once');

    t.deepEqual(
      (await network.pendingInvitations(acc, null)).items.map((i) => i.recipient),
      [silent],
    );
    const thread = await network.messages(acc, msg.threadId, null);
    t.deepEqual(
      thread.items.map((m) => [m.direction, m.from === accepter]),
      [
        ['out', false],
        ['in', true],
      ],
    );
    const chats = await network.chats(acc, null);
    t.is(chats.items.length, 2);
    t.is(chats.items.find((c) => c.threadId === msg.threadId)?.counterpart, accepter);
  },
);

test.serial(
  'support hooks: inject a message (with an attachment), accept an invitation, disconnect and reconnect',
  async (t) => {
    const { network, em } = await setup();
    const acc = await connected(network);
    const injected = await sandboxInjectMessage(em(), acc, {
      from: 'grace@example.test',
      body: 'Are you free?',
      attachments: [{ name: 'a.txt', contentType: 'text/plain', data: Buffer.from('hi') }],
    });
    const silent = recipient({ accepts: false });
    const inv = await network.sendInvitation(acc, { idempotencyKey: 'i1', recipient: silent, body: 'Connect?' });
    t.truthy(await sandboxAcceptInvitation(em(), inv.invitationId));
    t.is(await sandboxAcceptInvitation(em(), 'sbx_inv_nobody'), null);
    await sandboxDisconnect(em(), acc, 'checkpoint');
    t.like(await network.status(acc), { state: 'disconnected', reason: 'checkpoint' });
    const refused = await t.throwsAsync(
      network.sendMessage(acc, { idempotencyKey: 'k', recipient: silent, body: 'x' }),
      { instanceOf: ConnectorError, message: /disconnected \(checkpoint\)/ },
    );
    t.is(refused!.code, 'invalid_request');
    await sandboxReconnect(em(), acc);
    t.like(await network.status(acc), { state: 'connected', reason: null });

    const events = await deliver(network, new Date(), [acc]);
    t.deepEqual(
      events.map((e) => e.type),
      ['message.received', 'invitation.accepted', 'account.status', 'account.status'],
    );
    t.like(events[0], {
      eventId: injected.eventId,
      message: { messageId: injected.messageId, from: 'grace@example.test', attachments: [{ name: 'a.txt', size: 2 }] },
    });
    t.like(events[2], { state: 'disconnected', reason: 'checkpoint' });
    const m = events[0].type === 'message.received' ? events[0].message : undefined;
    const att = await network.attachment(acc, m!.messageId, m!.attachments[0].id, { maxBytes: 1024 });
    t.like(att, { name: 'a.txt', contentType: 'text/plain', size: 2 });
    const chunks: Buffer[] = [];
    for await (const c of att.body) chunks.push(c);
    t.deepEqual(Buffer.concat(chunks), Buffer.from('hi'));
    await t.throwsAsync(network.attachment(acc, m!.messageId, m!.attachments[0].id, { maxBytes: 1 }), {
      message: /larger than 1 bytes/,
    });
    t.is((await network.pendingInvitations(acc, null)).items.length, 0);
    await t.throwsAsync(sandboxDisconnect(em(), 'sbx_acc_nobody', 'x'), { message: /unknown sandbox account/ });

    await network.disconnect(acc);
    await network.disconnect(acc); // idempotent
    t.like(await network.status(acc), { state: 'disconnected', reason: 'not_found' });
  },
);

test.serial(
  'deliverSandboxEvents (the scheduled workflow) stores each due event once and starts its workflow; replays',
  async (t) => {
    const { services, network, em } = await setup();
    const acc = await connected(network);
    const { eventId } = await sandboxInjectMessage(em(), acc, {
      from: 'grace@example.test',
      body: 'Hello from the sandbox',
    });
    const workflowId = `sandbox:deliver-due:test-${randomUUID()}`;
    const r = await services.temporal.workflow.execute(deliverSandboxEvents, {
      taskQueue,
      workflowId,
      workflowExecutionTimeout: '1 minute',
    });
    t.true(r.delivered >= 1);
    const handled = await services.temporal.workflow.getHandle<typeof handleConnectorEvent>(
      connectorWorkflowIds.event(eventId),
    );
    t.like(await (await whenStarted(handled)).result(), { type: 'message.received', outcome: 'handled' });
    const rows = await em().execute(
      `select type, connector, connector_account_id, handled_at from connector_events where event_id = ?`,
      [eventId],
    );
    t.is(rows.length, 1);
    t.like(rows[0], { type: 'message.received', connector: 'sandbox', connector_account_id: acc });
    t.truthy(rows[0].handled_at);

    // The same event handed over again (a retried batch) stores nothing more and starts nothing new.
    const again = await ingestConnectorEvent(
      em(),
      services.jobs,
      'sandbox',
      { type: 'account.status', eventId, connectorAccountId: acc, state: 'connected', reason: null },
      {},
    );
    t.like(again, { inserted: false, handled: true });
    t.is((await em().execute(`select count(*) as n from connector_events where event_id = ?`, [eventId]))[0].n, '1');
    await replayFixture(services.temporal, 'deliverSandboxEvents', workflowId);
  },
);

test.serial(
  'the delivery Schedule runs every minute while the connector is the sandbox, and goes away otherwise',
  async (t) => {
    const { services } = await setup();
    const prefix = `test-${randomUUID()}:`;
    t.teardown(() =>
      Promise.all(
        scheduleDefinitions(taskQueue, prefix).map((d) =>
          services.temporal.schedule
            .getHandle(d.scheduleId)
            .delete()
            .catch(() => {}),
        ),
      ),
    );
    await ensureSchedules(services.temporal, taskQueue, prefix);
    const handle = services.temporal.schedule.getHandle(prefix + deliverSandboxEventsSchedule.id);
    const d = await retryTransient(() => handle.describe());
    if (d.action.type === 'startWorkflow') t.is(d.action.workflowType, 'deliverSandboxEvents');
    t.is(d.spec.intervals?.[0]?.every, 60_000);
    t.true(d.state.paused, 'a test copy never fires');
    await ensureSchedules(services.temporal, taskQueue, prefix, { sandboxConnector: false });
    await t.throwsAsync(handle.describe());
  },
);

/** `npm run admin -- …` as support staff would run it (same script, this run's DATABASE_URL). */
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

test.serial(
  'admin CLI: sandbox-disconnect, sandbox-reconnect, sandbox-inject-message, sandbox-accept-invitation',
  async (t) => {
    const { network } = await setup();
    const acc = await connected(network);
    const off = await admin('sandbox-disconnect', '--account', acc, '--reason', 'credentials_expired');
    t.is(off.code, 0, off.stderr);
    t.regex(off.stdout, /disconnected \(credentials_expired\); event sbx_evt_\w+ queued/);
    t.like(await network.status(acc), { state: 'disconnected', reason: 'credentials_expired' });
    const on = await admin('sandbox-reconnect', '--account', acc);
    t.is(on.code, 0, on.stderr);
    t.like(await network.status(acc), { state: 'connected' });
    const msg = await admin(
      'sandbox-inject-message',
      '--account',
      acc,
      '--from',
      'grace@example.test',
      '--body',
      'Hello there',
    );
    t.is(msg.code, 0, msg.stderr);
    const inv = await network.sendInvitation(acc, {
      idempotencyKey: 'cli',
      recipient: recipient({ accepts: false }),
      body: 'Connect?',
    });
    const acc2 = await admin('sandbox-accept-invitation', '--invitation', inv.invitationId);
    t.is(acc2.code, 0, acc2.stderr);
    const events = await deliver(network, new Date(), [acc]);
    t.deepEqual(
      events.map((e) => e.type),
      ['account.status', 'account.status', 'message.received', 'invitation.accepted'],
    );

    const failures: [string[], number, RegExp][] = [
      [['sandbox-accept-invitation', '--invitation', inv.invitationId], 1, /no pending sandbox invitation/],
      [['sandbox-disconnect', '--account', 'sbx_acc_nobody', '--reason', 'x'], 1, /unknown sandbox account/],
      [['sandbox-disconnect', '--account', acc], 2, /--reason is required/],
    ];
    for (const [args, code, message] of failures) {
      const r = await admin(...args);
      t.is(r.code, code, args.join(' '));
      t.regex(r.stderr, message);
    }
  },
);
