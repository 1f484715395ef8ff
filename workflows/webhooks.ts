// Deliveries of outbound webhook events: one attempt per matching active subscription, all in
// parallel (a slow receiver never delays the others), no retry. Payloads carry ids only.
//
// Two workflow types, chosen per event by the outbox dispatcher (workers/webhook-dispatcher.ts):
// - `deliverWebhookEventBatch` (`webhook-batch:<batchId>`): the events of one outbox batch (one
//   workspace, each with at most BATCHED_TARGETS_MAX targets), all delivered by ONE activity. What
//   Temporal costs is then per batch, not per event: this is what carries hundreds of events/s.
// - `deliverWebhookEvent` (`webhook-event:<eventId>`): one event with a large fan-out, below.
//
// Shape by size (measured: each activity costs the Temporal server a few persisted writes, and on
// the local dev server that capped per-subscription activities at ~25 deliveries/s for 1,000):
// - up to PER_SUBSCRIPTION_MAX targets: one activity per subscription (`deliverWebhook`), so each
//   delivery is visible on its own in the Temporal UI;
// - above that: activities over slices of BATCH_SIZE subscriptions (`deliverWebhookBatch`), each
//   sending its slice's requests concurrently with independent 10 s deadlines;
// - above DELIVERY_CHUNK targets: child workflows per chunk, so every history stays small.
import { executeChild, isCancellation, patched, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { BatchSummary, DeliverySummary, WebhookActivities } from '../activities/webhooks.js';

export type { BatchSummary, DeliverySummary } from '../activities/webhooks.js';
import { webhookWorkflowIds } from '../lib/workflow-ids.js';
import { jobSearchAttributes } from './search-attributes.js';

export const PER_SUBSCRIPTION_MAX = 20;
export const BATCH_SIZE = 50;
/** Targets a single workflow delivers itself; more fan out to children of this size. */
export const DELIVERY_CHUNK = 2000;

// Reading targets is idempotent, so it may retry.
const { webhookTargets } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 5 },
});
// ... and being a short idempotent read, it runs as a local activity since the patch below: no
// activity task through the server and one workflow task less per event, which is a third of each
// event's Temporal work at sustained rates. Deliveries stay regular activities, each try visible
// in the Temporal UI.
const local = proxyLocalActivities<WebhookActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 5 },
});
// One attempt per delivery (the spec: no retry of a failed delivery or a non-2xx answer), but an
// attempt that was never made is made: the activity is retried when its worker or the database was
// lost, and skips every (subscription, event) already recorded in webhook_deliveries. Only a crash
// between a request and its record sends it again, as a new attempt with its own
// X-Service-Delivery id (the spec: no exactly-once guarantee). The HTTP exchange is capped at
// 10 s inside the activity (lib/outbound-http.ts); this bound also covers loading and recording.
const DELIVERY_RETRY = { maximumAttempts: 6, initialInterval: '1 second', backoffCoefficient: 2 } as const;
const { deliverWebhook, deliverWebhookBatch } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '30 seconds',
  retry: DELIVERY_RETRY,
});

export interface WebhookEventInput {
  eventId: string;
  workspaceId: string;
}

async function deliverAll(eventId: string, subscriptionIds: string[]): Promise<DeliverySummary> {
  if (subscriptionIds.length > PER_SUBSCRIPTION_MAX) return deliverInBatches(eventId, subscriptionIds);
  const outcomes = await Promise.all(
    subscriptionIds.map((subscriptionId) =>
      deliverWebhook({ eventId, subscriptionId }).then(
        (r) => r.success,
        () => false, // an activity failure is a failed delivery, never a failed workflow
      ),
    ),
  );
  const succeeded = outcomes.filter(Boolean).length;
  return { targets: subscriptionIds.length, succeeded, failed: subscriptionIds.length - succeeded };
}

async function deliverInBatches(eventId: string, subscriptionIds: string[]): Promise<DeliverySummary> {
  const slices: string[][] = [];
  for (let i = 0; i < subscriptionIds.length; i += BATCH_SIZE) slices.push(subscriptionIds.slice(i, i + BATCH_SIZE));
  const results = await Promise.all(
    slices.map((ids) =>
      deliverWebhookBatch({ eventId, subscriptionIds: ids }).then(
        (r) => r.succeeded,
        () => 0,
      ),
    ),
  );
  const succeeded = results.reduce((a, b) => a + b, 0);
  return { targets: subscriptionIds.length, succeeded, failed: subscriptionIds.length - succeeded };
}

/** Workflow id `webhook-event:<eventId>`, started by the outbox dispatcher. */
export async function deliverWebhookEvent(input: WebhookEventInput): Promise<DeliverySummary> {
  const { subscriptionIds } = await (patched('webhook-targets-local')
    ? local.webhookTargets(input.eventId)
    : webhookTargets(input.eventId));
  if (subscriptionIds.length <= DELIVERY_CHUNK) return deliverAll(input.eventId, subscriptionIds);
  const chunks: string[][] = [];
  for (let i = 0; i < subscriptionIds.length; i += DELIVERY_CHUNK)
    chunks.push(subscriptionIds.slice(i, i + DELIVERY_CHUNK));
  const results = await Promise.all(
    chunks.map((ids, index) =>
      executeChild(deliverWebhookChunk, {
        workflowId: webhookWorkflowIds.chunk(input.eventId, index),
        args: [{ eventId: input.eventId, subscriptionIds: ids }],
        typedSearchAttributes: jobSearchAttributes({ kind: 'webhook-event', workspaceId: input.workspaceId }),
      }),
    ),
  );
  return results.reduce(
    (a, r) => ({ targets: a.targets + r.targets, succeeded: a.succeeded + r.succeeded, failed: a.failed + r.failed }),
    {
      targets: 0,
      succeeded: 0,
      failed: 0,
    },
  );
}

/** Child of deliverWebhookEvent for one slice of the targets. */
export async function deliverWebhookChunk(input: {
  eventId: string;
  subscriptionIds: string[];
}): Promise<DeliverySummary> {
  return deliverAll(input.eventId, input.subscriptionIds);
}

// ---------------------------------------------------------------------------------------------
// Batches

/**
 * Events with at most this many targets (matching active subscriptions, counted by the dispatcher)
 * go into a batch; more keep their own `webhook-event:<id>` workflow. The same bound as the
 * per-subscription shape above: at or below it an event's deliveries are few enough to share one
 * activity with up to 99 other events (≤ 2,000 requests, BATCH_CONCURRENCY at a time); above it the
 * event's own workflow spreads them over activities (and children) of their own.
 */
export const BATCHED_TARGETS_MAX = PER_SUBSCRIPTION_MAX;

// As above: a batch whose activity failed (worker crash, database restart) is tried again and
// delivers only the pairs not yet recorded (the unique (subscription_id, event_id) of
// webhook_deliveries). The activity heartbeats after each delivery, so a lost worker is noticed
// within the heartbeat timeout; the start-to-close bound covers a batch whose every receiver stalls
// (≤ 2,000 requests, 10 s each, BATCH_CONCURRENCY at a time: 200 s).
const batchActivities = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: DELIVERY_RETRY,
});
// Reading what was recorded is idempotent (only after a failed delivery activity).
const batchReads = proxyLocalActivities<WebhookActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 5 },
});

export interface WebhookBatchInput {
  batchId: string;
  workspaceId: string;
}

/** Workflow id `webhook-batch:<batchId>`, started by the outbox dispatcher for the rows carrying that batch id. */
export async function deliverWebhookEventBatch(input: WebhookBatchInput): Promise<BatchSummary> {
  try {
    return await batchActivities.deliverWebhookEventsOfBatch({ batchId: input.batchId });
  } catch (err) {
    if (isCancellation(err)) throw err;
    // Every try failed: report what was recorded.
    return { events: await batchReads.recordedDeliveriesOfBatch({ batchId: input.batchId }), incomplete: true };
  }
}
