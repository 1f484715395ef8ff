import { defineOperation } from '../operation.js';
import { IdParams } from '../schemas.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import { ACCEPTED_EVENTS, sampleEnvelope, TEST_EVENT, testEventData } from '../../domain/webhooks/events.js';
import {
  createSubscription,
  deleteSubscription,
  listSubscriptions,
  testSubscription,
  testUrl,
  updateSubscription,
} from '../../domain/webhooks/webhooks.js';
import {
  CreateWebhookBody,
  DeletedView,
  ListWebhooksQuery,
  SamplePayloadView,
  TestQuery,
  TestResultView,
  TestUrlBody,
  TestUrlResultView,
  UpdateWebhookBody,
  WebhookSubscriptionPage,
  WebhookSubscriptionView,
  toTestResultView,
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
