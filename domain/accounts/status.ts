// What a sender account's status at the connector means here. Reconciliation (workflow
// `accounts-reconcile`), the connector's inbound `account.status` events and setup-status reads all
// come through `applyAccountStatus`, which acts on transitions only: the account row is locked, so
// two reports of the same disconnection (a scheduled check racing an inbound event) make one
// notification and one `account.disconnected` event.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { PlatformAccount, type IPlatformAccount } from '../../db/entities/PlatformAccount.js';
import type { ConnectorAccountStatus } from '../../lib/connectors/types.js';
import { notify } from '../notifications/notifications.js';
import { emitEvent } from '../webhooks/events.js';

export type StatusSource = 'reconcile' | 'inbound' | 'check';

export type StatusChange = 'connected' | 'disconnected' | 'unchanged' | 'unknown_account';

/** Applies what the connector says about one account; returns what changed here. */
export async function applyAccountStatus(em: EntityManager, status: ConnectorAccountStatus, source: StatusSource): Promise<StatusChange> {
  return em.fork().transactional(async (tx) => {
    const account = await tx.findOne(PlatformAccount, { connectorAccountId: status.connectorAccountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!account) return 'unknown_account';
    const now = new Date();
    account.statusCheckedAt = now;
    if (status.address && !account.address) account.address = status.address;
    let change: StatusChange = 'unchanged';
    // Only a working account can be lost; a connection still being finished is not yet one.
    if (status.state === 'disconnected' && account.status === 'connected') {
      await markDisconnected(tx, account, status.reason ?? 'unknown', source, now);
      change = 'disconnected';
    } else if (status.state === 'connected' && account.status !== 'connected') {
      account.status = 'connected';
      account.statusReason = null;
      account.connectedAt = now;
      account.disconnectedAt = null;
      // The warm-up ramp starts at the first connection only; a reconnection keeps its progress.
      account.warmupStartedAt ??= now;
      change = 'connected';
    } else if (status.state === 'disconnected' && account.status === 'disconnected' && status.reason && status.reason !== account.statusReason) {
      account.statusReason = status.reason.slice(0, 100);
    }
    await tx.flush();
    return change;
  });
}

async function markDisconnected(tx: EntityManager, account: IPlatformAccount, reason: string, source: StatusSource, now: Date): Promise<void> {
  account.status = 'disconnected';
  account.statusReason = reason.slice(0, 100);
  account.disconnectedAt = now;
  await tx.flush();
  // Pending sends of the account wait: the governor grants no slot to an account that is not
  // connected (domain/governor/governor.ts), so enrollments sleep until it is reconnected.
  const workspaceId = account.workspace.id;
  await notify(tx, workspaceId, {
    kind: 'account.disconnected',
    title: `${account.displayName} is disconnected`,
    body: `The ${account.channel === 'email' ? 'mailbox' : 'network profile'} "${account.displayName}" was disconnected (${reason}). Sends from it are paused until you reconnect it (POST /api/platform-accounts/${account.id}/connect).`,
    data: { platform_account_id: account.id, reason, detected_by: source },
  });
  await emitEvent(tx, workspaceId, 'account.disconnected', {
    platform_account_id: account.id,
    connector_account_id: account.connectorAccountId,
    reason,
  });
}
