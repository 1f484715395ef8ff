import test from 'ava';
import { randomUUID } from 'node:crypto';
import { PlatformAccount } from '../../db/entities/PlatformAccount.js';
import { WebhookEvent } from '../../db/entities/WebhookEvent.js';
import { findTool } from '../../domain/tools/index.js';
import { runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { sandboxDisconnect } from '../../lib/connectors/sandbox-network.js';
import { accountsReconcile, withdrawInvitations } from '../../workflows/accounts.js';
import { deliverSandboxEvents } from '../../workflows/connectors.js';
import { api, call, closeApi, createUser, type TestUser } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { startReceiver, verifySignature } from '../helpers/receiver.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
import { eventDelivery } from '../helpers/webhook-delivery.js';
import { waitFor } from '../../scripts/children.js';
import { encrypt } from '../../lib/crypto.js';
import { createMailbox, mailCredentials, mailServer, uniqueAddress } from '../helpers/mail-server.js';
import { tcpProxy } from '../helpers/tcp-proxy.js';
test.after.always(closeApi);

const taskQueue = process.env.TEMPORAL_TASK_QUEUE!;
const BASE = '/api/platform-accounts';

async function connectedAccount(u: TestUser, channel: 'email' | 'network') {
  const a = (
    await call('POST', BASE, {
      token: u.accessToken,
      body: { channel, display_name: `Ana ${channel}`, time_zone: 'Europe/Paris' },
    })
  ).body;
  const c = await call('POST', `${BASE}/${a.id}/connect`, {
    token: u.accessToken,
    body: { credentials: { username: `ana-${randomUUID()}` } },
  });
  if (c.status !== 200) throw new Error(`connect failed: ${c.status} ${c.text}`);
  return c.body.account as { id: string; connector_account_id: string };
}

const run = <T>(wf: (input: any) => Promise<T>, input: unknown, prefix: string) =>
  api().then(({ services }) =>
    services.temporal.workflow.execute(wf, {
      taskQueue,
      workflowId: `${prefix}:test-${randomUUID()}`,
      args: [input],
      workflowExecutionTimeout: '2 minutes',
    }),
  );

test.serial(
  'a disconnection found by accounts-reconcile makes exactly one signed account.disconnected delivery with the spec’s fields; later reports add none; replays',
  async (t) => {
    const { services } = await api();
    const u = await createUser();
    const ws = await workspaceIdOf(u.id);
    const rx = await startReceiver();
    t.teardown(rx.close);
    const sub = (
      await call('POST', '/api/webhooks/outbound', {
        token: u.accessToken,
        body: { url: rx.url, events: ['account.disconnected'], active: true },
      })
    ).body;
    const account = await connectedAccount(u, 'network');

    const { eventId: connectorEvent } = await sandboxDisconnect(
      await em(),
      account.connector_account_id,
      'credentials_expired',
    );
    const workflowId = `accounts-reconcile:test-${randomUUID()}`;
    const result = await services.temporal.workflow.execute(accountsReconcile, {
      taskQueue,
      workflowId,
      args: [{}],
      workflowExecutionTimeout: '2 minutes',
    });
    t.true(result.checked >= 1);
    t.true(result.disconnected >= 1);
    t.like(await (await em()).findOneOrFail(PlatformAccount, account.id), {
      status: 'disconnected',
      statusReason: 'credentials_expired',
    });

    const [event] = await (await em()).find(WebhookEvent, { workspaceId: ws, name: 'account.disconnected' });
    t.truthy(event);
    t.like(await eventDelivery(services.temporal, event.id), { targets: 1, succeeded: 1 });
    t.is(rx.requests.length, 1);
    const req = rx.requests[0];
    t.true(verifySignature(sub.secret, req.raw, req.headers['x-service-signature']));
    const body = JSON.parse(req.raw.toString());
    t.is(body.event, 'account.disconnected');
    t.deepEqual(body.data, {
      platform_account_id: account.id,
      connector_account_id: account.connector_account_id,
      reason: 'credentials_expired',
    });

    // The connector's own inbound event for the same disconnection, and another reconciliation: no more.
    // Both are done once the reconciliation has returned and the inbound event has been handled (its
    // account.disconnected, if any, would be written in the same transaction as handled_at).
    await run(deliverSandboxEvents, {}, 'sandbox:deliver-due');
    await run(accountsReconcile, {}, 'accounts-reconcile');
    await waitFor(
      'the connector’s account.status event to be handled',
      async () => {
        const rows = await (
          await em()
        ).execute<{ handled: boolean }[]>(
          `select handled_at is not null as handled from connector_events where event_id = ?`,
          [connectorEvent],
        );
        return rows[0]?.handled === true;
      },
      60_000,
    );
    t.is(await (await em()).count(WebhookEvent, { workspaceId: ws, name: 'account.disconnected' }), 1);
    t.is(rx.requests.length, 1);

    t.true((await replayLive(services.temporal, workflowId)) > 0);
    await replayFixture(services.temporal, 'accountsReconcile', workflowId);
  },
);

test.serial(
  'invite-withdrawal withdraws the pending invitations older than the account’s setting, and only for accounts with it on; replays',
  async (t) => {
    const { services } = await api();
    const u = await createOwner();
    const on = await connectedAccount(u, 'network');
    const off = await connectedAccount(u, 'network');
    await call('PATCH', `${BASE}/${on.id}/invite-withdrawal`, {
      token: u.accessToken,
      body: { enabled: true, after_days: 14 },
    });
    for (const a of [on, off]) {
      for (let i = 0; i < 3; i++) {
        await services.connector.sendInvitation(a.connector_account_id, {
          idempotencyKey: randomUUID(),
          recipient: `https://pronet.example/in/p-${randomUUID()}`,
          body: 'Hello',
        });
      }
    }
    const pending = async (id: string) => (await services.connector.pendingInvitations(id, null)).items.length;
    t.is(await pending(on.connector_account_id), 3);

    // Today none is old enough; three weeks later all three are.
    const workflowId = `invite-withdrawal:test-${randomUUID()}`;
    await services.temporal.workflow.execute(withdrawInvitations, {
      taskQueue,
      workflowId: `${workflowId}-now`,
      args: [{}],
      workflowExecutionTimeout: '2 minutes',
    });
    t.is(await pending(on.connector_account_id), 3);
    const later = new Date(Date.now() + 21 * 86_400_000).toISOString();
    const r = await services.temporal.workflow.execute(withdrawInvitations, {
      taskQueue,
      workflowId,
      args: [{ now: later }],
      workflowExecutionTimeout: '2 minutes',
    });
    t.true(r.withdrawn >= 3);
    t.is(await pending(on.connector_account_id), 0);
    t.is(await pending(off.connector_account_id), 3);
    t.true((await replayLive(services.temporal, workflowId)) > 0);
    await replayFixture(services.temporal, 'withdrawInvitations', workflowId);
  },
);

test.serial(
  'accounts-reconcile: only refused credentials disconnect a mailbox; a host refused by the outbound policy or a server that does not answer keeps it connected with the problem, cleared by the next run once the host is back',
  async (t) => {
    const { services } = await api();
    const u = await createOwner();
    const m = mailServer();
    const proxy = await tcpProxy({ host: m.host, port: m.imapPort });
    t.teardown(() => proxy.close());
    const mailbox = async (over: Record<string, string>, password = 'pw') => {
      const address = await createMailbox(uniqueAddress('rec', 'sender.test'), 'pw');
      const a = (
        await call('POST', BASE, {
          token: u.accessToken,
          body: { channel: 'email', display_name: 'Ana mail', time_zone: 'Europe/Paris' },
        })
      ).body as { id: string };
      const seal = (o: Record<string, string>) =>
        encrypt(JSON.stringify(mailCredentials(address, password, o)), services.config.encryptionKey);
      await (
        await em()
      ).execute(
        `update platform_accounts set connector = 'mail', connector_account_id = ?, address = ?, credentials_sealed = ?, status = 'connected', connected_at = now() where id = ?`,
        [`mail:${a.id}`, address, seal(over), a.id],
      );
      t.teardown(async () => {
        await call('DELETE', `${BASE}/${a.id}`, { token: u.accessToken, body: {} });
      });
      return { id: a.id, reseal: (o: Record<string, string>) => seal(o) };
    };
    const unreachable = await mailbox({ imap_port: String(proxy.port) });
    // As after OUTBOUND_ALLOW_HOSTS was narrowed: a loopback address the worker no longer allows.
    const blocked = await mailbox({ imap_host: '127.0.0.2' });
    const refused = await mailbox({}, 'a-stale-password');
    await proxy.cut();
    const row = async (id: string) =>
      (
        await (
          await em()
        ).execute<
          { status: string; status_reason: string | null; problem: { reason: string; detected_by: string } | null }[]
        >(`select status, status_reason, connection_problem as problem from platform_accounts where id = ?`, [id])
      )[0];

    const first = await run(accountsReconcile, {}, 'accounts-reconcile');
    t.true(first.problems >= 2, JSON.stringify(first));
    for (const [a, reason] of [
      [unreachable, 'host_unreachable'],
      [blocked, 'blocked_destination'],
    ] as const) {
      const r = await row(a.id);
      t.like(r, { status: 'connected', status_reason: null, problem: { reason } }, reason);
      // Found by the reconciliation (or by the mailbox sync it starts, which retries the same host).
      t.true(['reconcile', 'sync'].includes(r.problem!.detected_by), r.problem!.detected_by);
    }
    t.like(await row(refused.id), { status: 'disconnected', status_reason: 'credentials_invalid' });
    const events = await (
      await em()
    ).execute<{ body: string }[]>(
      `select body from webhook_events where workspace_id = ? and name = 'account.disconnected'`,
      [await workspaceIdOf(u.id)],
    );
    t.is(events.length, 1, 'only the refused credentials are announced');
    t.true(events[0].body.includes(refused.id));

    // The host back and allowed again: the next run finds both connected and clears the problems.
    await proxy.restore();
    await (
      await em()
    ).execute(`update platform_accounts set credentials_sealed = ? where id = ?`, [blocked.reseal({}), blocked.id]);
    await run(accountsReconcile, {}, 'accounts-reconcile');
    for (const a of [unreachable, blocked]) t.like(await row(a.id), { status: 'connected', problem: null });
  },
);

test('Operator tools: list, usage, setup read; set limits is a change that keeps the plan’s bounds', async (t) => {
  const { services } = await api();
  const u = await createUser();
  const account = await connectedAccount(u, 'email');
  const e = services.orm.em.fork();
  const ctx = {
    em: e,
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(e as never, { userId: u.id, kind: 'session' }, undefined),
  };
  const listed = (await runTool(findTool('list_platform_accounts')!, ctx, {})) as { accounts: { id: string }[] };
  t.deepEqual(
    listed.accounts.map((a) => a.id),
    [account.id],
  );
  const usage = (await runTool(findTool('get_platform_account_usage')!, ctx, { account_id: account.id })) as {
    actions: { action: string }[];
  };
  t.is(usage.actions.length, 4);
  const setup = (await runTool(findTool('get_platform_account_setup')!, ctx, { account_id: account.id })) as {
    account: { status: string };
  };
  t.is(setup.account.status, 'connected');
  const tool = findTool('set_platform_account_limits')!;
  t.is(tool.risk, 'change');
  const changed = (await runTool(tool, ctx, {
    account_id: account.id,
    caps: { email: { daily: 20, weekly: 90 } },
  })) as { caps: unknown };
  t.deepEqual(changed.caps, { email: { daily: 20, weekly: 90 } });
  await t.throwsAsync(runTool(tool, ctx, { account_id: account.id, caps: { email: { daily: 500, weekly: 900 } } }), {
    message: /caps\.email\.daily must be an integer from 1 to 50/,
  });
  const stranger = await createUser();
  const otherCtx = {
    em: services.orm.em.fork(),
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(services.orm.em.fork() as never, { userId: stranger.id, kind: 'session' }, undefined),
  };
  await t.throwsAsync(runTool(findTool('get_platform_account_usage')!, otherCtx, { account_id: account.id }), {
    message: /not found/,
  });
});
