// Waiting for the deliveries of an outbound webhook event, whichever workflow carries it: its outbox
// batch `webhook-batch:<batchId>` (the row's batch_id), its own `webhook-event:<id>` (batch_id = its
// id: a large fan-out), or none (dispatched without a batch id: no target).
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { sampleData, isAcceptedEvent, type EventName } from '../../domain/webhooks/events.js';
import { uuidv7 } from '../../lib/ids.js';
import { webhookWorkflowIds } from '../../lib/workflow-ids.js';
import type { BatchSummary, DeliverySummary } from '../../workflows/webhooks.js';
import { api } from './api.js';
import { whenStarted } from './workflows.js';

/**
 * Data for an event a test emits: its documented fields (emitEvent checks them in the suite) with
 * `extra` on top.
 */
export function payload(name: EventName, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const base = isAcceptedEvent(name)
    ? Object.fromEntries(Object.entries(sampleData(name)).filter(([k]) => k !== 'sample'))
    : {
        lead_id: uuidv7(),
        campaign_id: null,
        conversation_id: uuidv7(),
        first_name: null,
        last_name: null,
        reaction: '👍',
      };
  return { ...base, ...extra };
}

export type EventWorkflow =
  | { kind: 'batch'; workflowId: string; batchId: string }
  | { kind: 'event'; workflowId: string }
  | { kind: 'none'; workflowId: null };

/** Waits (up to `timeoutMs`) until the dispatcher has decided the event's workflow, and names it. */
export async function eventWorkflow(temporal: Client, eventId: string, timeoutMs = 60_000): Promise<EventWorkflow> {
  const deadline = Date.now() + timeoutMs;
  const conn = (await api()).services.orm.em.fork().getConnection();
  for (;;) {
    const [row] = await conn.execute<{ batch_id: string | null; dispatched: boolean }[]>(
      `select batch_id, dispatched_at is not null as dispatched from webhook_events where id = ?`,
      [eventId],
    );
    if (row?.batch_id === eventId) return { kind: 'event', workflowId: webhookWorkflowIds.event(eventId) };
    if (row?.batch_id)
      return { kind: 'batch', workflowId: webhookWorkflowIds.batch(row.batch_id), batchId: row.batch_id };
    if (row?.dispatched) {
      // No batch id: no target, so no workflow, unless one was started for it by hand (or before batches existed).
      try {
        await temporal.workflow.getHandle(webhookWorkflowIds.event(eventId)).describe();
        return { kind: 'event', workflowId: webhookWorkflowIds.event(eventId) };
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return { kind: 'none', workflowId: null };
        throw err;
      }
    }
    if (Date.now() > deadline)
      throw new Error(`event ${eventId} was not dispatched within ${timeoutMs} ms${row ? '' : ' (no outbox row)'}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The event's delivery summary, once the workflow that carries it has completed. */
export async function eventDelivery(temporal: Client, eventId: string, timeoutMs = 60_000): Promise<DeliverySummary> {
  const wf = await eventWorkflow(temporal, eventId, timeoutMs);
  if (wf.kind === 'none') return { targets: 0, succeeded: 0, failed: 0 };
  const handle = await whenStarted(temporal.workflow.getHandle(wf.workflowId), timeoutMs);
  if (wf.kind === 'event') return (await handle.result()) as DeliverySummary;
  const summary = ((await handle.result()) as BatchSummary).events[eventId];
  if (!summary) throw new Error(`batch ${wf.batchId} has no summary for event ${eventId}`);
  return summary;
}
