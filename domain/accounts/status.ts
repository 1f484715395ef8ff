// What a sender account's status at the connector means here. Reconciliation (workflow
// `accounts-reconcile`), the connector's inbound `account.status` events and setup-status reads all
// come through `applyAccountStatus`, which acts on transitions only. Each report is stamped (an event's
// time and id, or the time we read the status ourselves) and applied by one conditional UPDATE
// (domain/event-order.ts): a report older than the one last applied, or a repeat, changes nothing,
// and concurrent reports of one account apply one after the other on its row lock, so two reports of
// the same disconnection (a scheduled check racing an inbound event) make one notification and one
// `account.disconnected` event.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ConnectorAccountStatus } from '../../lib/connectors/types.js';
import { isNewerThanApplied, observedId, type EventStamp } from '../event-order.js';
import { notify } from '../notifications/notifications.js';
import { emitEvent } from '../webhooks/events.js';

export type StatusSource = 'reconcile' | 'inbound' | 'check';

/** `unchanged` also when the report was older than the one last applied (or a repeat of it). */
export type StatusChange = 'connected' | 'disconnected' | 'unchanged' | 'unknown_account';

interface Applied {
  was: string;
  id: string | null;
  workspace_id: string;
  status: string;
  status_reason: string | null;
  display_name: string;
  channel: string;
  connector_account_id: string;
}

/**
 * Applies what the connector says about one account; returns what changed here. `stamp` places the
 * report among the others about the account: an inbound event's, or our own read's (`observedAt`:
 * a caller that read the status passes when it asked). Without one the report counts as observed
 * now, on the database's clock (microseconds, so reports applied one after the other keep their order).
 */
export async function applyAccountStatus(
  em: EntityManager,
  status: ConnectorAccountStatus,
  source: StatusSource,
  stamp?: EventStamp,
): Promise<StatusChange> {
  // Joins the caller's transaction when there is one (an event's handling marks it handled in the
  // same commit), else runs in its own.
  return em.transactional(async (tx) => {
    const now = new Date();
    // `cur` reads the status before this report (its lock waits for a concurrent apply to commit);
    // the UPDATE applies the report only when it is newer than the one recorded on the row, and what
    // it sets depends on that report alone, so the newest report decides whatever the order:
    // - connected: connected (the warm-up ramp starts at the first connection only);
    // - disconnected: a working account is lost, with the report's reason; a connection still being
    //   finished is not yet one, and stays as it is;
    // - pending says nothing about a connection we hold: it only fills in the address and the check
    //   time, and takes no place in the order.
    const [row] = await tx.execute<Applied[]>(
      `with r (state, reason, address, now, at, eid) as (values (?::text, left(?::text, 100), ?::text, ?::timestamptz, coalesce(?::timestamptz, clock_timestamp()), ?::text)),
            cur as (select id, status from platform_accounts where connector_account_id = ? for update),
            upd as (
              update platform_accounts p set
                status = case when r.state = 'connected' then 'connected'
                              when r.state = 'disconnected' and p.status = 'connected' then 'disconnected'
                              else p.status end,
                status_reason = case when r.state = 'connected' then null
                                     when r.state = 'disconnected' and p.status in ('connected', 'disconnected') then coalesce(r.reason, 'unknown')
                                     else p.status_reason end,
                connected_at = case when r.state = 'connected' and p.status <> 'connected' then r.now else p.connected_at end,
                disconnected_at = case when r.state = 'connected' then null
                                       when r.state = 'disconnected' and p.status = 'connected' then r.now
                                       else p.disconnected_at end,
                warmup_started_at = case when r.state = 'connected' then coalesce(p.warmup_started_at, r.now) else p.warmup_started_at end,
                address = coalesce(p.address, r.address),
                status_checked_at = r.now,
                connection_problem = case when r.state = 'pending' then p.connection_problem else null end,
                status_event_at = case when r.state = 'pending' then p.status_event_at else r.at end,
                status_event_id = case when r.state = 'pending' then p.status_event_id else r.eid end,
                updated_at = r.now
              from r, cur
              where p.id = cur.id and (r.state = 'pending' or ${isNewerThanApplied('p.status_event_at', 'p.status_event_id', ['r.at', 'r.eid'])})
              returning p.id, p.workspace_id, p.status, p.status_reason, p.display_name, p.channel, p.connector_account_id)
       select cur.status as was, upd.* from cur left join upd on upd.id = cur.id limit 1`,
      [
        status.state,
        status.reason,
        status.address,
        now,
        stamp?.at ?? null,
        stamp?.id ?? observedId(source),
        status.connectorAccountId,
      ],
    );
    if (!row) return 'unknown_account';
    if (!row.id) return 'unchanged';
    if (row.was === 'connected' && row.status === 'disconnected') {
      await reportDisconnected(tx as EntityManager, row, source);
      return 'disconnected';
    }
    return row.was !== 'connected' && row.status === 'connected' ? 'connected' : 'unchanged';
  });
}

/**
 * Keeps the last failed check of an account that is retried, not final (`ConnectorAccountStatus.problem`,
 * docs/email.md "What each failure means"): the status stands, the problem is shown by setup-status
 * until a successful check (any applied report) clears it. By connector id; an unknown one changes nothing.
 */
export async function recordConnectionProblem(
  em: EntityManager,
  connectorAccountId: string,
  problem: { reason: string; message: string },
  source: StatusSource | 'sync',
): Promise<void> {
  const value = {
    reason: problem.reason.slice(0, 100),
    message: problem.message.slice(0, 500),
    at: new Date().toISOString(),
    detected_by: source,
  };
  await em.execute(`update platform_accounts set connection_problem = ?::jsonb where connector_account_id = ?`, [
    JSON.stringify(value),
    connectorAccountId,
  ]);
}

/** A successful check that applied no report (reconciliation's unchanged accounts, a sync's login): the problem is over. */
export async function clearConnectionProblem(em: EntityManager, connectorAccountIds: string[]): Promise<void> {
  if (!connectorAccountIds.length) return;
  await em.execute(
    `update platform_accounts set connection_problem = null where connector_account_id in (?) and connection_problem is not null`,
    [connectorAccountIds],
  );
}

async function reportDisconnected(tx: EntityManager, account: Applied, source: StatusSource): Promise<void> {
  // Pending sends of the account wait: the governor grants no slot to an account that is not
  // connected (domain/governor/governor.ts), so enrollments sleep until it is reconnected.
  const reason = account.status_reason ?? 'unknown';
  await notify(tx, account.workspace_id, {
    kind: 'account.disconnected',
    title: `${account.display_name} is disconnected`,
    body: `The ${account.channel === 'email' ? 'mailbox' : 'network profile'} "${account.display_name}" was disconnected (${reason}). Sends from it are paused until you reconnect it (POST /api/platform-accounts/${account.id}/connect).`,
    data: { platform_account_id: account.id, reason, detected_by: source },
  });
  await emitEvent(tx, account.workspace_id, 'account.disconnected', {
    platform_account_id: account.id,
    connector_account_id: account.connector_account_id,
    reason,
  });
}
