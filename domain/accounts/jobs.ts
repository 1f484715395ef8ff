// The recurring account jobs, one page at a time (activities/accounts.ts loops and heartbeats):
// reconciliation of statuses with the connector, and withdrawal of old pending invitations.
import type { EntityManager } from '@mikro-orm/postgresql';
import { PlatformAccount, type IPlatformAccount } from '../../db/entities/PlatformAccount.js';
import { ConnectorError, type AccountConnector, type ConnectorAccountStatus } from '../../lib/connectors/types.js';
import { observedAt, type EventStamp } from '../event-order.js';
import { applyAccountStatus, recordConnectionProblem } from './status.js';

/** Runs `fn` over `items` with at most `limit` in flight, results in input order. */
async function inPool<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

const sameState = (a: IPlatformAccount, s: ConnectorAccountStatus) =>
  (a.status === 'connected' && s.state === 'connected') || (a.status !== 'connected' && s.state !== 'connected');

/**
 * One window of `pageSize × concurrency` accounts (by id, after `afterId`) held by this connector
 * (every connector it serves: a routing connector's mail accounts too):
 * their statuses are read `pageSize` at a time with `concurrency` requests in flight. Accounts whose
 * state did not change get `status_checked_at` in one statement; the others go through
 * applyAccountStatus (row lock, notification and event once per transition), stamped with the time
 * their page was asked for, so an inbound event that happened since wins over the answer. A failed
 * page is counted and left for the next run. An account whose check failed for a reason that is retried
 * (`problem`: a host unreachable or refused by the outbound policy, TLS) keeps its status and gets the
 * problem recorded for its setup status; only refused credentials or a revoked grant disconnect it.
 */
export async function reconcilePage(
  em: EntityManager,
  connector: AccountConnector,
  opts: { afterId: string | null; pageSize: number; concurrency: number },
): Promise<{
  checked: number;
  disconnected: number;
  connected: number;
  problems: number;
  failedPages: number;
  lastId: string | null;
}> {
  const window = opts.pageSize * opts.concurrency;
  const accounts = await em.find(
    PlatformAccount,
    {
      connector: { $in: [...(connector.serves ?? [connector.name])] },
      connectorAccountId: { $ne: null },
      ...(opts.afterId ? { id: { $gt: opts.afterId } } : {}),
    },
    { orderBy: { id: 'asc' }, limit: window },
  );
  const pages: IPlatformAccount[][] = [];
  for (let i = 0; i < accounts.length; i += opts.pageSize) pages.push(accounts.slice(i, i + opts.pageSize));
  const result = {
    checked: 0,
    disconnected: 0,
    connected: 0,
    problems: 0,
    failedPages: 0,
    lastId: accounts.length === window ? accounts[accounts.length - 1].id : null,
  };
  const answers = await inPool(
    pages,
    opts.concurrency,
    async (page): Promise<{ statuses: ConnectorAccountStatus[]; stamp: EventStamp } | null> => {
      const stamp = observedAt(new Date(), 'reconcile');
      try {
        return { statuses: await connector.statuses(page.map((a) => a.connectorAccountId!)), stamp };
      } catch (err) {
        if (!(err instanceof ConnectorError)) throw err;
        result.failedPages++;
        return null;
      }
    },
  );
  const unchanged: string[] = [];
  for (const [i, answer] of answers.entries()) {
    if (!answer) continue;
    const byId = new Map(answer.statuses.map((s) => [s.connectorAccountId, s]));
    for (const account of pages[i]) {
      const status = byId.get(account.connectorAccountId!);
      if (!status) continue;
      result.checked++;
      if (status.problem) {
        result.problems++;
        await recordConnectionProblem(em, status.connectorAccountId, status.problem, 'reconcile');
        continue;
      }
      if (sameState(account, status)) {
        unchanged.push(account.id);
        continue;
      }
      const change = await applyAccountStatus(em, status, 'reconcile', answer.stamp);
      if (change === 'disconnected') result.disconnected++;
      if (change === 'connected') result.connected++;
    }
  }
  if (unchanged.length)
    await em.nativeUpdate(
      PlatformAccount,
      { id: { $in: unchanged } },
      { statusCheckedAt: new Date(), connectionProblem: null },
    );
  return result;
}

/**
 * One page of network accounts with the withdrawal setting on: for each, its pending invitations
 * older than its setting are withdrawn (the connector's pages, oldest first or not, are all read).
 * An account whose connector calls fail is counted and retried on the next run.
 */
export async function withdrawalPage(
  em: EntityManager,
  connector: AccountConnector,
  opts: { afterId: string | null; now: Date; pageSize: number; heartbeat?: () => void },
): Promise<{ accounts: number; withdrawn: number; failedAccounts: number; lastId: string | null }> {
  const accounts = await em.find(
    PlatformAccount,
    {
      connector: connector.name,
      channel: 'network',
      status: 'connected',
      inviteWithdrawalDays: { $ne: null },
      connectorAccountId: { $ne: null },
      ...(opts.afterId ? { id: { $gt: opts.afterId } } : {}),
    },
    { orderBy: { id: 'asc' }, limit: opts.pageSize },
  );
  const result = {
    accounts: accounts.length,
    withdrawn: 0,
    failedAccounts: 0,
    lastId: accounts.length === opts.pageSize ? accounts[accounts.length - 1].id : null,
  };
  await inPool(accounts, 4, async (account) => {
    const cutoff = opts.now.getTime() - account.inviteWithdrawalDays! * 86_400_000;
    try {
      let cursor: string | null = null;
      do {
        const page = await connector.pendingInvitations(account.connectorAccountId!, cursor);
        for (const inv of page.items) {
          if (inv.sentAt.getTime() >= cutoff) continue;
          await connector.withdrawInvitation(account.connectorAccountId!, inv.invitationId);
          result.withdrawn++;
        }
        opts.heartbeat?.();
        cursor = page.cursor;
      } while (cursor);
    } catch (err) {
      if (!(err instanceof ConnectorError)) throw err;
      result.failedAccounts++;
    }
  });
  return result;
}
