// Inbound connector events (DESIGN.md "External providers, concretely"): stored once per connector
// event id, then handled by the workflow `connector-event:<eventId>`. The hooks route and the sandbox
// network's deliveries both come through `ingestConnectorEvent`.
import type { EntityManager } from '@mikro-orm/postgresql';
import { toInboundEvent } from '../../lib/connectors/inbound.js';
import type { InboundEvent } from '../../lib/connectors/types.js';
import { uuidv7 } from '../../lib/ids.js';
import { logger } from '../../lib/logger.js';
import { applyAccountStatus } from '../accounts/status.js';
import type { Jobs } from '../jobs.js';
import { isDraining } from '../inbox/drain.js';
import { processInboundBatch } from '../inbox/ingest.js';

export interface StoredEvent {
  /** False when the event id was already stored (a redelivery). */
  inserted: boolean;
  /** Already handled by its workflow: nothing more to do. */
  handled: boolean;
  workspaceId: string | null;
  /** Our platform account holding the connector account, when there is one. */
  accountId: string | null;
}

/** Stores the event as received (idempotent by event id), with the platform account resolved when one holds it. */
export async function storeConnectorEvent(
  em: EntityManager,
  connector: string,
  event: InboundEvent,
  wire: Record<string, unknown>,
): Promise<StoredEvent> {
  const rows = await em.execute<
    { inserted: boolean; handled: boolean; workspace_id: string | null; account_id: string | null }[]
  >(
    `with acc as (select id, workspace_id from platform_accounts where connector = ? and connector_account_id = ?),
          ins as (insert into connector_events (id, event_id, connector, type, connector_account_id, platform_account_id, payload, received_at)
                  values (?, ?, ?, ?, ?, (select id from acc), ?::jsonb, now()) on conflict (event_id) do nothing returning id)
     select exists (select 1 from ins) as inserted,
            coalesce((select handled_at is not null from connector_events where event_id = ?), false) as handled,
            (select workspace_id from acc) as workspace_id, (select id from acc) as account_id`,
    [
      connector,
      event.connectorAccountId,
      uuidv7(),
      event.eventId,
      connector,
      event.type,
      event.connectorAccountId,
      JSON.stringify(wire),
      event.eventId,
    ],
  );
  return {
    inserted: rows[0].inserted,
    handled: rows[0].handled,
    workspaceId: rows[0].workspace_id,
    accountId: rows[0].account_id,
  };
}

/** Messages and reactions go to the account's inbox processor in batches; the rest one workflow each. */
const INBOX_TYPES = new Set(['message.received', 'reaction.received']);

/**
 * Stores the event and hands it on: a message or reaction of one of our accounts wakes that account's
 * inbox processor (`inbox-inbound:<accountId>`, docs/inbox.md), anything else starts its own workflow.
 * A repeat stores nothing more; it hands the event on again only while it is unhandled (both hand-offs
 * are idempotent), so an event whose first hand-off failed is not lost.
 */
export async function ingestConnectorEvent(
  em: EntityManager,
  jobs: Jobs,
  connector: string,
  event: InboundEvent,
  wire: Record<string, unknown>,
  /** A caller storing many events at once collects the processors' wake-ups and awaits them together. */
  deferKick?: (kick: Promise<void>) => void,
): Promise<StoredEvent> {
  const stored = await storeConnectorEvent(em, connector, event, wire);
  if (stored.handled) return stored;
  if (INBOX_TYPES.has(event.type) && stored.accountId && stored.workspaceId) {
    const accountId = stored.accountId;
    const kick = jobs.kickInboundProcessor({
      accountId,
      workspaceId: stored.workspaceId,
      draining: () => isDraining(em, accountId),
    });
    if (deferKick) deferKick(kick);
    // The hook answers once the event is stored: its wake-up goes out after (within the coalescing
    // window), and one lost with this process is the sweep's (`inbox-sweep`, docs/inbox.md).
    else
      kick.catch((err: unknown) =>
        logger.warn({ err: String(err), account: accountId }, 'inbox processor not woken; the sweep will'),
      );
  } else
    await jobs.start('connector-event', { eventId: event.eventId, type: event.type, workspaceId: stored.workspaceId });
  return stored;
}

/** Handles a stored event by type, once (the activity of `connector-event:<eventId>`). */
export async function handleConnectorEvent(
  em: EntityManager,
  eventId: string,
  jobs: Jobs,
): Promise<{ type: string; outcome: 'handled' | 'already_handled' | 'unknown_event' }> {
  // A message or reaction (one stored before the inbox processor existed): its account's batch takes it.
  const [inbox] = await em.execute<{ platform_account_id: string | null }[]>(
    `select platform_account_id from connector_events where event_id = ? and type in ('message.received', 'reaction.received') and handled_at is null`,
    [eventId],
  );
  if (inbox?.platform_account_id) {
    for (let more = true; more;) more = (await processInboundBatch(em, jobs, inbox.platform_account_id)).more;
  }
  return em.transactional(async (tx) => {
    const [row] = await tx.execute<
      { connector: string; type: string; payload: unknown; received_at: string; handled_at: string | null }[]
    >(`select connector, type, payload, received_at, handled_at from connector_events where event_id = ? for update`, [
      eventId,
    ]);
    if (!row) return { type: 'unknown', outcome: 'unknown_event' as const };
    if (row.handled_at) return { type: row.type, outcome: 'already_handled' as const };
    const event = toInboundEvent(row.connector, row.payload);
    if (event.type === 'account.status') {
      // Ordered by when it happened (domain/event-order.ts): an older report than the account's last changes nothing.
      const stamp = { at: event.occurredAt ?? new Date(row.received_at), id: event.eventId };
      await applyAccountStatus(
        tx as EntityManager,
        { connectorAccountId: event.connectorAccountId, state: event.state, reason: event.reason, address: null },
        'inbound',
        stamp,
      );
    }
    // Messages and reactions are the inbox processor's (docs/inbox.md); one left here has no account of ours.
    // An acceptance and an open are facts recorded once for condition steps (docs/executor.md): they keep
    // the earliest time any event reported, so neither the order of deliveries nor a repeat changes them.
    if (event.type === 'invitation.accepted')
      await recordFirst(
        tx as EntityManager,
        'accepted_at',
        'invitation',
        row.connector,
        event.connectorAccountId,
        event.invitationId,
        event.acceptedAt,
      );
    if (event.type === 'message.opened')
      await recordFirst(
        tx as EntityManager,
        'opened_at',
        'email',
        row.connector,
        event.connectorAccountId,
        event.messageId,
        event.openedAt,
      );
    await tx.execute(`update connector_events set handled_at = now() where event_id = ?`, [eventId]);
    return { type: row.type, outcome: 'handled' as const };
  });
}

/**
 * Sets the sent action's `column` to `at` unless it already holds that time or an earlier one. The
 * event names the action's connector message id or, for an acceptance, possibly the recipient's id
 * (Unipile's `new_relation` names the member, not the invitation: `connector_recipient_id`).
 */
function recordFirst(
  tx: EntityManager,
  column: 'accepted_at' | 'opened_at',
  actionType: string,
  connector: string,
  connectorAccountId: string,
  connectorMessageId: string,
  at: Date,
) {
  return tx.execute(
    `update scheduled_actions a set ${column} = ?, updated_at = now() from platform_accounts p
      where p.id = a.account_id and p.connector = ? and p.connector_account_id = ? and a.type = ?
        and (a.connector_message_id = ? or (a.type = 'invitation' and a.connector_recipient_id = ?))
        and (a.${column} is null or a.${column} > ?)`,
    [at, connector, connectorAccountId, actionType, connectorMessageId, connectorMessageId, at],
  );
}
