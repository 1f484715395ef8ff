// Inbound connector events (DESIGN.md "External providers, concretely"): stored once per connector
// event id, then handled by the workflow `connector-event:<eventId>`. The hooks route and the sandbox
// network's deliveries both come through `ingestConnectorEvent`.
import type { EntityManager } from '@mikro-orm/postgresql';
import { toInboundEvent } from '../lib/connectors/inbound.js';
import type { InboundEvent } from '../lib/connectors/types.js';
import { uuidv7 } from '../lib/ids.js';
import { applyAccountStatus } from './account-status.js';
import type { Jobs } from './jobs.js';

export interface StoredEvent {
  /** False when the event id was already stored (a redelivery). */
  inserted: boolean;
  /** Already handled by its workflow: nothing more to do. */
  handled: boolean;
  workspaceId: string | null;
}

/** Stores the event as received (idempotent by event id), with the platform account resolved when one holds it. */
export async function storeConnectorEvent(em: EntityManager, connector: string, event: InboundEvent, wire: Record<string, unknown>): Promise<StoredEvent> {
  const rows = await em.execute<{ inserted: boolean; handled: boolean; workspace_id: string | null }[]>(
    `with acc as (select id, workspace_id from platform_accounts where connector = ? and connector_account_id = ?),
          ins as (insert into connector_events (id, event_id, connector, type, connector_account_id, platform_account_id, payload, received_at)
                  values (?, ?, ?, ?, ?, (select id from acc), ?::jsonb, now()) on conflict (event_id) do nothing returning id)
     select exists (select 1 from ins) as inserted,
            coalesce((select handled_at is not null from connector_events where event_id = ?), false) as handled,
            (select workspace_id from acc) as workspace_id`,
    [connector, event.connectorAccountId, uuidv7(), event.eventId, connector, event.type, event.connectorAccountId, JSON.stringify(wire), event.eventId],
  );
  return { inserted: rows[0].inserted, handled: rows[0].handled, workspaceId: rows[0].workspace_id };
}

/**
 * Stores the event and starts its workflow. A repeat stores nothing more; it starts the workflow
 * again only while the event is unhandled (the start is idempotent by workflow id), so an event whose
 * first start failed is not lost.
 */
export async function ingestConnectorEvent(em: EntityManager, jobs: Jobs, connector: string, event: InboundEvent, wire: Record<string, unknown>): Promise<StoredEvent> {
  const stored = await storeConnectorEvent(em, connector, event, wire);
  if (!stored.handled) await jobs.startConnectorEvent({ eventId: event.eventId, type: event.type, workspaceId: stored.workspaceId });
  return stored;
}

/** Handles a stored event by type, once (the activity of `connector-event:<eventId>`). */
export async function handleConnectorEvent(em: EntityManager, eventId: string, jobs?: Jobs): Promise<{ type: string; outcome: 'handled' | 'already_handled' | 'unknown_event' }> {
  return em.transactional(async (tx) => {
    const [row] = await tx.execute<{ connector: string; type: string; payload: unknown; handled_at: Date | null }[]>(
      `select connector, type, payload, handled_at from connector_events where event_id = ? for update`,
      [eventId],
    );
    if (!row) return { type: 'unknown', outcome: 'unknown_event' as const };
    if (row.handled_at) return { type: row.type, outcome: 'already_handled' as const };
    const event = toInboundEvent(row.connector, row.payload);
    if (event.type === 'account.status') {
      await applyAccountStatus(tx as EntityManager, { connectorAccountId: event.connectorAccountId, state: event.state, reason: event.reason, address: null }, 'inbound');
    }
    // Campaigns: a reply reaches its enrollment's workflow, an acceptance is recorded for condition steps
    // (docs/executor.md "Reply routing"). Both also stay queryable here for the inbox.
    if (event.type === 'message.received' && event.message.direction === 'in') {
      await routeReply(tx as EntityManager, jobs, row.connector, event.connectorAccountId, event.message.threadId, event.message.from, event.message.sentAt);
    }
    if (event.type === 'invitation.accepted') {
      await tx.execute(
        `update scheduled_actions a set accepted_at = coalesce(a.accepted_at, ?), updated_at = now() from platform_accounts p
          where p.id = a.account_id and p.connector = ? and p.connector_account_id = ? and a.type = 'invitation' and a.connector_message_id = ?`,
        [event.acceptedAt, row.connector, event.connectorAccountId, event.invitationId],
      );
    }
    if (event.type === 'message.opened') {
      await tx.execute(
        `update scheduled_actions a set opened_at = coalesce(a.opened_at, ?), updated_at = now() from platform_accounts p
          where p.id = a.account_id and p.connector = ? and p.connector_account_id = ? and a.type = 'email' and a.connector_message_id = ?`,
        [event.openedAt, row.connector, event.connectorAccountId, event.messageId],
      );
    }
    await tx.execute(`update connector_events set handled_at = now() where event_id = ?`, [eventId]);
    return { type: row.type, outcome: 'handled' as const };
  });
}

/**
 * A received message that answers a campaign send: the latest executed action of the account whose
 * thread is the message's, or (another thread) whose recipient is the sender. The action and its
 * enrollment record the reply and the enrollment's workflow gets `reply` (before the event counts as
 * handled, so a failed signal is retried with the event).
 */
async function routeReply(em: EntityManager, jobs: Jobs | undefined, connector: string, connectorAccountId: string, threadId: string, from: string, at: Date): Promise<void> {
  const [hit] = await em.execute<{ id: string; enrollment_id: string; campaign_id: string; lead_id: string }[]>(
    `select a.id, a.enrollment_id, a.campaign_id, a.lead_id from scheduled_actions a join platform_accounts p on p.id = a.account_id
      where p.connector = ? and p.connector_account_id = ? and a.state = 'executed'
        and (a.connector_thread_id = ? or lower(trim(a.content->>'recipient')) = lower(trim(?)))
      order by (a.connector_thread_id = ?) desc nulls last, a.executed_at desc limit 1`,
    [connector, connectorAccountId, threadId, from, threadId],
  );
  if (!hit) return;
  await em.execute(`update scheduled_actions set replied_at = coalesce(replied_at, ?), updated_at = now() where id = ?`, [at, hit.id]);
  await em.execute(`update enrollments set replied_at = coalesce(replied_at, ?), updated_at = now() where id = ?`, [at, hit.enrollment_id]);
  if (jobs) await jobs.signalEnrollment(hit.campaign_id, hit.lead_id, 'reply', {});
}
