import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';

// Inbound connector events as received (POST /hooks/connector, or the sandbox's deliveries), stored
// once per connector event id before the workflow `connector-event:<eventId>` handles them. Later
// consumers (inbox, campaigns) read `message.received` and `invitation.accepted` rows from here.
export const ConnectorEvent = defineEntity({
  name: 'ConnectorEvent',
  tableName: 'connector_events',
  indexes: [
    { properties: ['platformAccountId', 'type', 'receivedAt'] },
    // The inbox processor's claim (domain/inbox/ingest.ts): only the account's unhandled messages and
    // reactions, in order, however many handled rows the account has.
    {
      name: 'connector_events_inbox_pending_idx',
      expression: `create index "connector_events_inbox_pending_idx" on "connector_events" ("platform_account_id", "received_at", "id") where "handled_at" is null and "type" in ('message.received', 'reaction.received')`,
    },
  ],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    /** The connector's event id: unique, so a redelivery is recognised. */
    eventId: p.string().length(200).unique(),
    /** 'sandbox' or 'http' (the connector that sent it). */
    connector: p.string().length(20),
    type: p.string().length(40),
    connectorAccountId: p.string().length(200),
    /** Our platform account, when one holds that connector account id at receipt. */
    platformAccountId: p.uuid().nullable(),
    /** The event as sent (wire JSON, docs/providers.md). */
    payload: p.json<Record<string, unknown>>(),
    receivedAt: p.datetime().onCreate(() => new Date()),
    handledAt: p.datetime().nullable(),
  }),
});
export type IConnectorEvent = InferEntity<typeof ConnectorEvent>;
