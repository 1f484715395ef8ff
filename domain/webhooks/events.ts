// Outbound webhook events: the accepted names, the envelope, the sample payloads, and `emitEvent`,
// the ONE function every domain calls to publish an event.
//
// emitEvent inserts a row into the transactional outbox (`webhook_events`) with the caller's
// EntityManager, i.e. inside the caller's transaction: if that transaction rolls back, the event
// never existed. A `NOTIFY webhook_events` in the same transaction wakes the dispatcher
// (workers/webhook-dispatcher.ts) at commit; it puts the event in an outbox batch delivered by the
// workflow `webhook-batch:<batchId>` (or, for a large fan-out, starts `webhook-event:<eventId>`).
import type { EntityManager } from '@mikro-orm/postgresql';
import { WebhookEvent } from '../../db/entities/WebhookEvent.js';
import { uuidv7 } from '../../lib/ids.js';
import { eventDataSchema } from './payloads.js';

/** Event names a subscription may list (spec: "Accepted event names for subscriptions"). */
export const ACCEPTED_EVENTS = [
  'lead.discovered',
  'message.received',
  'action.executed',
  'account.disconnected',
  'lead.approved',
  'campaign.completed',
  'campaign.paused',
] as const;
export type AcceptedEvent = (typeof ACCEPTED_EVENTS)[number];
/** Produced by the backend but rejected by the subscription API, so it never reaches a receiver. */
export type InternalEvent = 'reaction.received';
export type EventName = AcceptedEvent | InternalEvent;

export const isAcceptedEvent = (name: string): name is AcceptedEvent =>
  (ACCEPTED_EVENTS as readonly string[]).includes(name);

/** The generic event the test route sends when no `event` query is given. */
export const TEST_EVENT = 'webhook.test';

export interface Envelope {
  event: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** The exact body bytes of an event: `{event, timestamp, data}`, timestamp = ISO 8601 UTC now. */
export const envelopeJson = (event: string, data: Record<string, unknown>, at = new Date()): string =>
  JSON.stringify({ event, timestamp: at.toISOString(), data } satisfies Envelope);

export const WEBHOOK_EVENTS_CHANNEL = 'webhook_events';

/** In the test suite every published event must match its documented payload (domain/webhooks/payloads.ts). */
function checkDocumented(name: EventName, data: Record<string, unknown>): void {
  if (process.env.NODE_ENV !== 'test') return;
  const result = eventDataSchema(name).safeParse(data);
  if (!result.success) throw new Error(`event ${name} does not match its documented payload: ${result.error.message}`);
}

/**
 * Publishes an event of `workspaceId`. Call it inside the transaction of the change it reports
 * (`em.transactional(async (em) => { ...; await emitEvent(em, ws, 'lead.discovered', data) })`).
 * Returns the event id (the outbox row's `batch_id` then names the workflow that delivers it).
 */
export async function emitEvent(
  em: EntityManager,
  workspaceId: string,
  name: EventName,
  data: Record<string, unknown>,
): Promise<string> {
  checkDocumented(name, data);
  const id = uuidv7();
  await em.insert(WebhookEvent, {
    id,
    workspaceId,
    name,
    body: envelopeJson(name, data),
    createdAt: new Date(),
    dispatchedAt: null,
  });
  // Delivered to listeners only when (and if) the surrounding transaction commits.
  await em.execute(`select pg_notify('${WEBHOOK_EVENTS_CHANNEL}', ?)`, [id]);
  return id;
}

/** `emitEvent` for many events of one name at once: one insert and one notification (inbound batches). */
export async function emitEvents(
  em: EntityManager,
  workspaceId: string,
  name: EventName,
  data: Record<string, unknown>[],
): Promise<string[]> {
  if (!data.length) return [];
  for (const d of data) checkDocumented(name, d);
  const now = new Date();
  const rows = data.map((d) => ({
    id: uuidv7(),
    workspaceId,
    name,
    body: envelopeJson(name, d, now),
    createdAt: now,
    dispatchedAt: null,
  }));
  await em.insertMany(WebhookEvent, rows);
  await em.execute(`select pg_notify('${WEBHOOK_EVENTS_CHANNEL}', ?)`, [rows[0].id]);
  return rows.map((r) => r.id);
}

// ---------------------------------------------------------------------------------------------
// Samples: one per accepted name, with the spec's data fields for the four emitted events and
// plausible fields for the three never-emitted ones. Samples may carry fields production events do
// not (discovered_at, executed_at, `sample: true`): use the envelope timestamp in production.

const S = {
  lead: '0190f5d2-7c1a-7b3e-9a10-2f1c3d4e5a01',
  agent: '0190f5d2-7c1a-7b3e-9a10-2f1c3d4e5a02',
  campaign: '0190f5d2-7c1a-7b3e-9a10-2f1c3d4e5a03',
  conversation: '0190f5d2-7c1a-7b3e-9a10-2f1c3d4e5a04',
  action: '0190f5d2-7c1a-7b3e-9a10-2f1c3d4e5a05',
  account: '0190f5d2-7c1a-7b3e-9a10-2f1c3d4e5a06',
  app: '0190f5d2-7c1a-7b3e-9a10-2f1c3d4e5a07',
};

export function sampleData(name: AcceptedEvent, at = new Date()): Record<string, unknown> {
  const ts = at.toISOString();
  switch (name) {
    case 'lead.discovered':
      return {
        lead_id: S.lead,
        agent_id: S.agent,
        agent_name: 'EU fintech CTOs',
        first_name: 'Ada',
        last_name: 'Lovelace',
        company: 'Analytical Engines Ltd',
        headline: 'CTO at Analytical Engines',
        profile_url: 'https://www.linkedin.com/in/ada-lovelace-sample',
        signal_key: 'hiring_engineers',
        discovered_at: ts,
        sample: true,
      };
    case 'message.received':
      return {
        conversation_id: S.conversation,
        lead_id: S.lead,
        campaign_id: S.campaign,
        sender_name: 'Ada Lovelace',
        sender_provider_id: 'ACoAAB1234567890sample',
        message: 'Thanks for reaching out. Happy to talk next week.',
        is_first_reply: true,
        first_name: 'Ada',
        last_name: 'Lovelace',
        sample: true,
      };
    case 'action.executed':
      return {
        action_id: S.action,
        action_type: 'send_message',
        lead_id: S.lead,
        campaign_id: S.campaign,
        executed_at: ts,
        sample: true,
      };
    case 'account.disconnected':
      return {
        platform_account_id: S.account,
        connector_account_id: 'acc_sample_123',
        reason: 'credentials_expired',
        sample: true,
      };
    case 'lead.approved':
      return {
        lead_id: S.lead,
        campaign_id: S.campaign,
        first_name: 'Ada',
        last_name: 'Lovelace',
        approved_at: ts,
        sample: true,
      };
    case 'campaign.completed':
      return {
        campaign_id: S.campaign,
        app_id: S.app,
        name: 'Q3 outreach',
        leads_total: 120,
        completed_at: ts,
        sample: true,
      };
    case 'campaign.paused':
      return {
        campaign_id: S.campaign,
        app_id: S.app,
        name: 'Q3 outreach',
        reason: 'paused_by_user',
        paused_at: ts,
        sample: true,
      };
  }
}

export function sampleEnvelope(name: AcceptedEvent, at = new Date()): Envelope {
  return { event: name, timestamp: at.toISOString(), data: sampleData(name, at) };
}

/** Data of the generic test event (`webhook.test`). */
export const testEventData = (subscriptionId: string | null): Record<string, unknown> => ({
  subscription_id: subscriptionId,
  message: 'This is a test event. Your endpoint is reachable and can verify signatures.',
  test: true,
});
