// Deliveries of one outbound webhook event: one attempt per matching active subscription, all in
// parallel (a slow receiver never delays the others), no retry. Payloads carry ids only; above
// DELIVERY_CHUNK targets the work fans out to child workflows so that each history stays small.
import { executeChild, proxyActivities } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks.js';
import { webhookWorkflowIds } from './ids.js';
import { jobSearchAttributes } from './search-attributes.js';

/** Targets a single workflow delivers itself; more fan out to children of this size. */
export const DELIVERY_CHUNK = 250;

// Reading targets is idempotent, so it may retry.
const { webhookTargets } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 5 },
});
// Exactly one attempt per delivery. The HTTP exchange itself is capped at 10 s inside the
// activity (lib/outbound-http.ts); this bound also covers loading the rows and recording the attempt.
const { deliverWebhook } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 1 },
});

export interface WebhookEventInput {
  eventId: string;
  workspaceId: string;
}

export interface DeliverySummary {
  targets: number;
  succeeded: number;
  failed: number;
}

async function deliverAll(eventId: string, subscriptionIds: string[]): Promise<DeliverySummary> {
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

/** Workflow id `webhook-event:<eventId>`, started by the outbox dispatcher. */
export async function deliverWebhookEvent(input: WebhookEventInput): Promise<DeliverySummary> {
  const { subscriptionIds } = await webhookTargets(input.eventId);
  if (subscriptionIds.length <= DELIVERY_CHUNK) return deliverAll(input.eventId, subscriptionIds);
  const chunks: string[][] = [];
  for (let i = 0; i < subscriptionIds.length; i += DELIVERY_CHUNK) chunks.push(subscriptionIds.slice(i, i + DELIVERY_CHUNK));
  const results = await Promise.all(
    chunks.map((ids, index) =>
      executeChild(deliverWebhookChunk, {
        workflowId: webhookWorkflowIds.chunk(input.eventId, index),
        args: [{ eventId: input.eventId, subscriptionIds: ids }],
        typedSearchAttributes: jobSearchAttributes({ kind: 'webhook-event', workspaceId: input.workspaceId }),
      }),
    ),
  );
  return results.reduce((a, r) => ({ targets: a.targets + r.targets, succeeded: a.succeeded + r.succeeded, failed: a.failed + r.failed }), {
    targets: 0,
    succeeded: 0,
    failed: 0,
  });
}

/** Child of deliverWebhookEvent for one slice of the targets. */
export async function deliverWebhookChunk(input: { eventId: string; subscriptionIds: string[] }): Promise<DeliverySummary> {
  return deliverAll(input.eventId, input.subscriptionIds);
}
