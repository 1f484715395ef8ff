import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';

// Transactional outbox of outbound webhook events. A row is inserted inside the transaction of the
// change that caused it (domain/webhooks/events.ts emitEvent); the dispatcher in the worker decides
// which workflow delivers it, commits that in `batchId`, starts the workflow and sets `dispatchedAt`
// (workers/webhook-dispatcher.ts). `body` holds the exact envelope JSON bytes every delivery of this
// event sends and signs.
export const WebhookEvent = defineEntity({
  name: 'WebhookEvent',
  tableName: 'webhook_events',
  indexes: [
    {
      name: 'webhook_events_pending_idx',
      expression: 'create index "webhook_events_pending_idx" on "webhook_events" ("id") where "dispatched_at" is null',
    },
  ],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    // Plain column (no FK object needed by the dispatcher); cascades with the workspace.
    workspaceId: p.uuid().index(),
    name: p.string().length(100),
    body: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
    dispatchedAt: p.datetime().nullable(),
    /**
     * Which workflow delivers the event, committed before it is started: another id → the batch
     * workflow `webhook-batch:<batchId>` (few targets); the event's own id → its own workflow
     * `webhook-event:<id>` (large fan-out); null once dispatched → no target, no workflow (or a row
     * dispatched before batches existed, by `webhook-event:<id>`).
     */
    batchId: p.uuid().nullable().index(),
  }),
});
export type IWebhookEvent = InferEntity<typeof WebhookEvent>;
