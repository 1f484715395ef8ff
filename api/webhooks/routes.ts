import { defineOperation } from '../operation.js';
import { IdParams } from '../schemas.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import { ACCEPTED_EVENTS, sampleEnvelope, TEST_EVENT, testEventData } from '../../domain/webhooks/events.js';
import {
  createSubscription,
  deleteSubscription,
  listDeliveries,
  listSubscriptions,
  rotateSecret,
  testSubscription,
  testUrl,
  updateSubscription,
} from '../../domain/webhooks/webhooks.js';
import {
  CreateWebhookBody,
  DeletedView,
  ListWebhookDeliveriesQuery,
  ListWebhooksQuery,
  RotateWebhookSecretBody,
  SamplePayloadView,
  TestQuery,
  TestResultView,
  TestUrlBody,
  TestUrlResultView,
  UpdateWebhookBody,
  WebhookDeliveryPage,
  WebhookSecretRotationView,
  WebhookSubscriptionPage,
  WebhookSubscriptionView,
  toTestResultView,
  toWebhookDeliveryView,
  toWebhookSubscriptionView,
  assertDocumentedUrl,
} from './schemas.js';

const tag = 'webhooks';
const common = { 401: ['unauthorized'], 403: ['not_assigned'] };

export const listWebhooks = defineOperation({
  method: 'GET',
  path: '/api/webhooks/outbound',
  summary: 'Outbound webhook subscriptions of the workspace (secrets masked)',
  tag,
  auth: 'user',
  query: ListWebhooksQuery,
  responses: { 200: WebhookSubscriptionPage },
  errors: { 400: ['invalid_query', 'invalid_user'], ...common },
  handler: async ({ em, actor, query }) =>
    page(await listSubscriptions(em, actor, toPageRequest(query)), query.limit, (s) => toWebhookSubscriptionView(s)),
});

export const createWebhook = defineOperation({
  method: 'POST',
  path: '/api/webhooks/outbound',
  ids: { body: { integration_id: { kind: 'integration', missing: [400, 'invalid_integration'] } } },
  summary: 'Create a subscription; its signing secret is returned only in this response',
  tag,
  auth: 'user',
  body: CreateWebhookBody,
  responses: { 201: WebhookSubscriptionView },
  errors: {
    400: ['invalid_body', 'invalid_url', 'blocked_destination', 'invalid_event', 'invalid_integration', 'invalid_user'],
    401: ['unauthorized'],
    403: ['not_assigned', 'demo_read_only'],
  },
  handler: async ({ em, actor, body, services }) => {
    assertDocumentedUrl(body.url, services.config.outboundAllowHosts);
    const { subscription, secret } = await createSubscription(em, actor, services.config, body);
    return toWebhookSubscriptionView(subscription, secret);
  },
});

export const updateWebhook = defineOperation({
  method: 'PUT',
  path: '/api/webhooks/outbound/{id}',
  ids: { path: { id: 'webhook' } },
  summary: 'Change url, events and/or active of a subscription (secret masked in the response)',
  tag,
  auth: 'user',
  params: IdParams,
  body: UpdateWebhookBody,
  responses: { 200: WebhookSubscriptionView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_url', 'blocked_destination', 'invalid_event', 'invalid_user'],
    401: ['unauthorized'],
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params, body, services }) => {
    assertDocumentedUrl(body.url, services.config.outboundAllowHosts);
    return toWebhookSubscriptionView(await updateSubscription(em, actor, services.config, params.id, body));
  },
});

export const deleteWebhook = defineOperation({
  method: 'DELETE',
  path: '/api/webhooks/outbound/{id}',
  ids: { path: { id: 'webhook' } },
  summary: 'Delete a subscription',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: DeletedView },
  errors: {
    400: ['invalid_id', 'invalid_user'],
    401: ['unauthorized'],
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params }) => {
    await deleteSubscription(em, actor, params.id);
    return { id: params.id, deleted: true as const };
  },
});

export const testWebhook = defineOperation({
  method: 'POST',
  path: '/api/webhooks/outbound/{id}/test',
  ids: { path: { id: 'webhook' } },
  summary:
    "Send one signed test delivery (the event's sample, or the generic webhook.test event) with the saved secret",
  tag,
  auth: 'user',
  params: IdParams,
  query: TestQuery,
  responses: { 200: TestResultView },
  errors: {
    400: ['invalid_id', 'invalid_query', 'invalid_event', 'invalid_user'],
    401: ['unauthorized'],
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params, query, services }) =>
    toTestResultView(await testSubscription(em, actor, { config: services.config }, params.id, query.event)),
});

export const samplePayload = defineOperation({
  method: 'GET',
  path: '/api/webhooks/outbound/sample-payload',
  summary: 'One sample envelope per accepted event name, plus the generic test event',
  tag,
  auth: 'user',
  responses: { 200: SamplePayloadView },
  errors: { 400: ['invalid_user'], ...common },
  handler: () => {
    const at = new Date();
    return {
      events: [...ACCEPTED_EVENTS],
      samples: Object.fromEntries(ACCEPTED_EVENTS.map((e) => [e, sampleEnvelope(e, at)])),
      test_event: { event: TEST_EVENT, timestamp: at.toISOString(), data: testEventData(null) },
    };
  },
});

export const testWebhookUrl = defineOperation({
  method: 'POST',
  path: '/api/webhooks/outbound/test-url',
  operationId: 'testWebhookUrl',
  summary: 'Send one signed test delivery to an unsaved URL, signed with a temporary secret returned in the body',
  tag,
  auth: 'user',
  body: TestUrlBody,
  responses: { 200: TestUrlResultView },
  errors: {
    400: ['invalid_body', 'invalid_url', 'blocked_destination', 'invalid_event', 'invalid_user'],
    401: ['unauthorized'],
    403: ['not_assigned', 'demo_read_only'],
  },
  handler: async ({ em, actor, body, services }) => {
    assertDocumentedUrl(body.url, services.config.outboundAllowHosts);
    const r = await testUrl(em, actor, { config: services.config }, body);
    return { ...toTestResultView(r), secret: r.secret };
  },
});

export const listWebhookDeliveries = defineOperation({
  method: 'GET',
  path: '/api/webhooks/outbound/{id}/deliveries',
  ids: { path: { id: 'webhook' } },
  summary: "The subscription's delivery attempts, newest first (kept WEBHOOK_HISTORY_DAYS, 30 by default)",
  description:
    'Every recorded attempt to this subscription: real events (one attempt each, never retried) and the test route\'s deliveries (`event_id` null). Keyset pages (`limit`, `cursor`); filters `success` and `event`. Attempts older than the retention (the deployment\'s WEBHOOK_HISTORY_DAYS, 30 days by default) are not listed and are deleted by a daily job. See docs/webhooks.md, "Delivery log".',
  tag,
  auth: 'user',
  beyondSpec: true,
  params: IdParams,
  query: ListWebhookDeliveriesQuery,
  responses: { 200: WebhookDeliveryPage },
  errors: {
    400: ['invalid_id', 'invalid_query', 'invalid_user'],
    401: ['unauthorized'],
    403: ['not_assigned'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params, query, services }) =>
    page(
      await listDeliveries(
        em,
        actor,
        params.id,
        { success: query.success === undefined ? undefined : query.success === 'true', event: query.event },
        toPageRequest(query),
        services.config.webhookHistoryDays,
      ),
      query.limit,
      toWebhookDeliveryView,
    ),
});

export const rotateWebhookSecret = defineOperation({
  method: 'POST',
  path: '/api/webhooks/outbound/{id}/rotate-secret',
  ids: { path: { id: 'webhook' } },
  summary: 'Replace the signing secret; the previous one keeps signing beside it for the overlap',
  description:
    'The new secret is returned only in this response and signs every delivery from now on. For `overlap_seconds` (default 86400, at most 604800; 0: none) the previous secret signs too: `webhook-signature` carries `v1,<new> v1,<previous>`, so a Standard Webhooks receiver verifying with either accepts, and `X-Service-Signature` (one value) stays keyed with the previous secret until the overlap ends. 409 `rotation_in_progress` while a previous overlap runs. Send an `Idempotency-Key` so that a retry after a lost answer gets the same secret back. See docs/webhooks.md, "Rotating the secret".',
  tag,
  auth: 'user',
  beyondSpec: true,
  // The new secret is shown once: a retry after a lost answer replays it (sealed while kept) instead of
  // meeting 409 rotation_in_progress with the secret unknown (docs/idempotency.md).
  idempotency: true,
  params: IdParams,
  body: RotateWebhookSecretBody,
  responses: { 200: WebhookSecretRotationView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_user'],
    401: ['unauthorized'],
    403: ['not_assigned', 'demo_read_only'],
    404: ['not_found'],
    409: ['rotation_in_progress'],
  },
  handler: async ({ em, actor, params, body, services }) => {
    const r = await rotateSecret(em, actor, services.config, params.id, body.overlap_seconds);
    return {
      id: r.subscription.id,
      secret: r.secret,
      rotated_at: r.rotatedAt.toISOString(),
      previous_secret_expires_at: r.previousSecretExpiresAt?.toISOString() ?? null,
    };
  },
});
