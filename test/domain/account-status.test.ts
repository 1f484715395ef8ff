import test from 'ava';
import { randomUUID } from 'node:crypto';
import { PlatformAccount, type IPlatformAccount } from '../../db/entities/PlatformAccount.js';
import { Notification } from '../../db/entities/Notification.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { applyAccountStatus } from '../../domain/accounts/status.js';
import { reconcilePage, withdrawalPage } from '../../domain/accounts/jobs.js';
import {
  ConnectorError,
  type AccountConnector,
  type ConnectorAccountStatus,
  type PendingInvitation,
} from '../../lib/connectors/types.js';
import { closeApi, createUser } from '../helpers/api.js';
import { em, workspaceIdOf } from '../helpers/billing.js';
test.after.always(closeApi);

/** The connector as seen by reconciliation: scripted statuses and invitations, calls recorded. */
class ScriptedConnector {
  readonly name = `scripted-${randomUUID().slice(0, 8)}`;
  states = new Map<string, ConnectorAccountStatus>();
  invitations = new Map<string, PendingInvitation[]>();
  statusCalls: string[][] = [];
  withdrawn: string[] = [];
  failFor = new Set<string>();
  async statuses(ids: string[]) {
    this.statusCalls.push(ids);
    if (ids.some((id) => this.failFor.has(id))) throw new ConnectorError(this.name, 'unavailable', 'down');
    return ids.map(
      (id) =>
        this.states.get(id) ?? {
          connectorAccountId: id,
          state: 'disconnected' as const,
          reason: 'not_found',
          address: null,
        },
    );
  }
  async pendingInvitations(id: string, cursor: string | null) {
    if (this.failFor.has(id)) throw new ConnectorError(this.name, 'unavailable', 'down');
    const all = this.invitations.get(id) ?? [];
    const from = cursor ? Number(cursor) : 0;
    return { items: all.slice(from, from + 2), cursor: from + 2 < all.length ? String(from + 2) : null };
  }
  async withdrawInvitation(id: string, invitationId: string) {
    this.withdrawn.push(`${id}/${invitationId}`);
  }
  asConnector = () => this as unknown as AccountConnector;
}

async function account(
  workspaceId: string,
  connector: string,
  over: Partial<IPlatformAccount> = {},
): Promise<IPlatformAccount> {
  const e = await em();
  const a = e.create(PlatformAccount, {
    workspace: e.getReference(Workspace, workspaceId),
    channel: 'network',
    displayName: 'Ana (network)',
    timeZone: 'Europe/Berlin',
    workingHours: { days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' },
    connector,
    connectorAccountId: `acc_${randomUUID()}`,
    status: 'connected',
    connectedAt: new Date(),
    warmupStartedAt: new Date('2026-01-01T00:00:00Z'),
    ...over,
  });
  await e.flush();
  return a;
}

const events = async (workspaceId: string) =>
  (await (
    await em()
  )
    .getConnection()
    .execute(`select name, body from webhook_events where workspace_id = ? and name = 'account.disconnected'`, [
      workspaceId,
    ])) as { name: string; body: string }[];

test('a disconnection is applied once: status, one notification, one account.disconnected with exactly the spec fields', async (t) => {
  const ws = await workspaceIdOf((await createUser()).id);
  const a = await account(ws, 'sandbox');
  const down: ConnectorAccountStatus = {
    connectorAccountId: a.connectorAccountId!,
    state: 'disconnected',
    reason: 'credentials_expired',
    address: null,
  };
  // Reconciliation and an inbound event report it at the same moment, several times.
  const e = await em();
  const results = await Promise.all(
    [...Array(6)].map((_, i) => applyAccountStatus(e.fork(), down, i % 2 ? 'inbound' : 'reconcile')),
  );
  t.is(results.filter((r) => r === 'disconnected').length, 1);
  t.is(results.filter((r) => r === 'unchanged').length, 5);
  const stored = await (await em()).findOneOrFail(PlatformAccount, a.id);
  t.like(stored, { status: 'disconnected', statusReason: 'credentials_expired' });
  t.truthy(stored.disconnectedAt);
  const evs = await events(ws);
  t.is(evs.length, 1);
  const body = JSON.parse(evs[0].body);
  t.is(body.event, 'account.disconnected');
  t.deepEqual(body.data, {
    platform_account_id: a.id,
    connector_account_id: a.connectorAccountId,
    reason: 'credentials_expired',
  });
  const notes = await (await em()).find(Notification, { workspace: ws, kind: 'account.disconnected' });
  t.is(notes.length, 1);
  t.regex(notes[0].body, /credentials_expired/);

  // Reconnected, then lost again: a second transition, a second event; the warm-up start is kept.
  t.is(await applyAccountStatus(e.fork(), { ...down, state: 'connected', reason: null }, 'reconcile'), 'connected');
  const back = await (await em()).findOneOrFail(PlatformAccount, a.id);
  t.like(back, { status: 'connected', statusReason: null, disconnectedAt: null });
  t.deepEqual(back.warmupStartedAt, new Date('2026-01-01T00:00:00Z'));
  t.is(await applyAccountStatus(e.fork(), { ...down, reason: 'checkpoint' }, 'inbound'), 'disconnected');
  t.is((await events(ws)).length, 2);
});

test('an account still connecting or never connected is not "disconnected"; an unknown id changes nothing', async (t) => {
  const ws = await workspaceIdOf((await createUser()).id);
  const a = await account(ws, 'sandbox', { status: 'connecting', connectedAt: null });
  const e = await em();
  t.is(
    await applyAccountStatus(
      e.fork(),
      { connectorAccountId: a.connectorAccountId!, state: 'disconnected', reason: 'expired_link', address: null },
      'reconcile',
    ),
    'unchanged',
  );
  t.is((await events(ws)).length, 0);
  // The hosted link was finished: connected, with the address the connector now knows.
  t.is(
    await applyAccountStatus(
      e.fork(),
      { connectorAccountId: a.connectorAccountId!, state: 'connected', reason: null, address: 'ana@acme.example' },
      'inbound',
    ),
    'connected',
  );
  const stored = await (await em()).findOneOrFail(PlatformAccount, a.id);
  t.like(stored, { status: 'connected', address: 'ana@acme.example' });
  t.truthy(stored.warmupStartedAt);
  t.is(
    await applyAccountStatus(
      e.fork(),
      { connectorAccountId: 'acc_nobody', state: 'disconnected', reason: 'x', address: null },
      'inbound',
    ),
    'unknown_account',
  );
});

test('reconcilePage reads statuses in pages with bounded concurrency, applies only transitions, and counts failed pages', async (t) => {
  const ws = await workspaceIdOf((await createUser()).id);
  const c = new ScriptedConnector();
  const accounts: IPlatformAccount[] = [];
  for (let i = 0; i < 7; i++) accounts.push(await account(ws, c.name));
  for (const a of accounts)
    c.states.set(a.connectorAccountId!, {
      connectorAccountId: a.connectorAccountId!,
      state: 'connected',
      reason: null,
      address: null,
    });
  c.states.set(accounts[1].connectorAccountId!, {
    connectorAccountId: accounts[1].connectorAccountId!,
    state: 'disconnected',
    reason: 'revoked',
    address: null,
  });
  c.failFor.add(accounts[6].connectorAccountId!); // the last page fails

  const first = await reconcilePage(await em(), c.asConnector(), { afterId: null, pageSize: 2, concurrency: 2 });
  t.like(first, { checked: 4, disconnected: 1, connected: 0, failedPages: 0, lastId: accounts[3].id });
  t.deepEqual(
    c.statusCalls.map((ids) => ids.length),
    [2, 2],
  );
  const second = await reconcilePage(await em(), c.asConnector(), {
    afterId: first.lastId,
    pageSize: 2,
    concurrency: 2,
  });
  t.like(second, { checked: 2, disconnected: 0, failedPages: 1, lastId: null });
  t.is((await events(ws)).length, 1);
  const checked = await (await em()).find(PlatformAccount, { workspace: ws }, { orderBy: { id: 'asc' } });
  t.truthy(checked[0].statusCheckedAt); // unchanged ones are stamped too
  t.is(checked[6].statusCheckedAt ?? null, null); // its page failed
  t.is(checked[1].status, 'disconnected');
});

test('withdrawalPage withdraws only invitations older than each account’s setting, across the connector’s pages', async (t) => {
  const ws = await workspaceIdOf((await createUser()).id);
  const c = new ScriptedConnector();
  const now = new Date('2026-11-22T12:00:00Z');
  const daysAgo = (d: number) => new Date(now.getTime() - d * 86_400_000);
  const on = await account(ws, c.name, { inviteWithdrawalDays: 14 });
  const off = await account(ws, c.name, { inviteWithdrawalDays: null });
  const email = await account(ws, c.name, { channel: 'email', inviteWithdrawalDays: 14 });
  const failing = await account(ws, c.name, { inviteWithdrawalDays: 7 });
  c.invitations.set(on.connectorAccountId!, [
    { invitationId: 'i1', recipient: 'a', sentAt: daysAgo(30) },
    { invitationId: 'i2', recipient: 'b', sentAt: daysAgo(3) },
    { invitationId: 'i3', recipient: 'c', sentAt: daysAgo(15) },
    { invitationId: 'i4', recipient: 'd', sentAt: daysAgo(13) },
    { invitationId: 'i5', recipient: 'e', sentAt: daysAgo(20) },
  ]);
  c.invitations.set(off.connectorAccountId!, [{ invitationId: 'x', recipient: 'x', sentAt: daysAgo(90) }]);
  c.failFor.add(failing.connectorAccountId!);
  void email;
  const r = await withdrawalPage(await em(), c.asConnector(), { afterId: null, now, pageSize: 20 });
  t.like(r, { accounts: 2, withdrawn: 3, failedAccounts: 1, lastId: null });
  t.deepEqual(c.withdrawn.sort(), [
    `${on.connectorAccountId}/i1`,
    `${on.connectorAccountId}/i3`,
    `${on.connectorAccountId}/i5`,
  ]);
});
