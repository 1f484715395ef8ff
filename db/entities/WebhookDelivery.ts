import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';

// One row per delivery attempt (there is exactly one attempt per subscription and event; no retry).
// `eventId` is null for test deliveries (POST /api/webhooks/outbound/{id}/test).
export const WebhookDelivery = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  uniques: [{ properties: ['subscriptionId', 'eventId'] }],
  // The delivery log (GET /api/webhooks/outbound/{id}/deliveries): a subscription's rows by id, newest first.
  indexes: [{ properties: ['subscriptionId', 'id'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    subscriptionId: p.uuid(),
    workspaceId: p.uuid().index(),
    eventId: p.uuid().nullable().index(),
    eventName: p.string().length(100),
    success: p.boolean(),
    statusCode: p.integer().nullable(),
    durationMs: p.integer(),
    /** timeout | blocked_destination | connection_error | http_status | invalid_url, null on success. */
    errorClass: p.string().length(40).nullable(),
    error: p.text().nullable(),
    responseExcerpt: p.text().nullable(),
    /**
     * Whether the delivery log may show `responseExcerpt`: false when the destination was on
     * OUTBOUND_ALLOW_HOSTS (possibly an internal service, whose answers a workspace must not read).
     */
    responseExcerptVisible: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type IWebhookDelivery = InferEntity<typeof WebhookDelivery>;
