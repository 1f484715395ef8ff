// The data of each outbound webhook event, as schemas: the OpenAPI document's `webhooks` section is
// generated from them, and under NODE_ENV=test emitEvent checks every event it publishes against
// them, so the documented payloads are the ones the suite saw sent. Objects are open: samples carry
// fields production events do not (`sample`, `discovered_at`, …), and receivers must ignore fields
// they do not know.
import { z } from 'zod';
import type { AcceptedEvent, EventName } from './events.js';

const id = z.uuid();
const text = z.string().nullable();

export const EVENT_DATA = {
  'lead.discovered': z.looseObject({
    lead_id: id,
    agent_id: id,
    agent_name: text,
    first_name: text,
    last_name: text,
    company: text,
    headline: text,
    profile_url: text,
    signal_key: text,
  }),
  'message.received': z.looseObject({
    conversation_id: id,
    lead_id: id,
    campaign_id: id.nullable(),
    sender_name: text,
    sender_provider_id: text,
    message: text,
    is_first_reply: z.boolean(),
    first_name: text,
    last_name: text,
  }),
  'action.executed': z.looseObject({
    action_id: id,
    action_type: z.string().meta({ description: 'The step type that ran, e.g. send_message or send_email.' }),
    lead_id: id,
    campaign_id: id,
  }),
  'account.disconnected': z.looseObject({ platform_account_id: id, connector_account_id: text, reason: z.string() }),
  // Accepted by subscriptions, never emitted (spec): the fields of their test samples.
  'lead.approved': z.looseObject({ lead_id: id, campaign_id: id, first_name: text, last_name: text }),
  'campaign.completed': z.looseObject({ campaign_id: id, app_id: id, name: z.string(), leads_total: z.number().int() }),
  'campaign.paused': z.looseObject({ campaign_id: id, app_id: id, name: z.string(), reason: z.string() }),
} satisfies Record<AcceptedEvent, z.ZodType>;

/** Internal events (never delivered) are checked too. */
const INTERNAL_DATA: Record<Exclude<EventName, AcceptedEvent>, z.ZodType> = {
  'reaction.received': z.looseObject({
    lead_id: id,
    campaign_id: id.nullable(),
    conversation_id: id,
    first_name: text,
    last_name: text,
    reaction: z.string(),
  }),
};

/** The generic test event (`webhook.test`), sent by the test routes without an `event` query. */
export const TEST_EVENT_DATA = z.looseObject({
  subscription_id: id.nullable(),
  message: z.string(),
  test: z.boolean(),
});

export const eventDataSchema = (name: EventName): z.ZodType =>
  name in EVENT_DATA ? EVENT_DATA[name as AcceptedEvent] : INTERNAL_DATA[name as Exclude<EventName, AcceptedEvent>];

/** When each event is sent (the spec's "Trigger" column), for the document. */
export const EVENT_TRIGGERS: Record<AcceptedEvent, string> = {
  'lead.discovered': 'An enrichment worker promoted an agent-discovered lead.',
  'message.received':
    'An incoming message on a messaging network or a connected mailbox matched a known lead; unmatched messages produce no event.',
  'action.executed': 'The campaign executor completed a scheduled action (a send, a connection request, …).',
  'account.disconnected': 'Account reconciliation found a platform account disconnected.',
  'lead.approved': 'Accepted by the subscription API but never emitted; the test route sends a sample.',
  'campaign.completed': 'Accepted by the subscription API but never emitted; the test route sends a sample.',
  'campaign.paused': 'Accepted by the subscription API but never emitted; the test route sends a sample.',
};
