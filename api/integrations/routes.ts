// Integrations (docs/integrations.md). The partner's OAuth callback and local authorize page, outside
// /api, are in callback-routes.ts.
import {
  createIntegration,
  deleteIntegration,
  listIntegrations,
  requireIntegration,
  startPartnerInstall,
  testIntegration,
  updateIntegration,
  verifyCredentials,
  type IntegrationDeps,
} from '../../domain/integrations/integrations.js';
import { confirmPartnerEvent, listPartnerEvents } from '../../domain/integrations/partner-sync.js';
import type { PartnerAdapter } from '../../lib/partner/types.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import { defineOperation, reply } from '../operation.js';
import { IdParams } from '../schemas.js';
import type { Services } from '../services.js';
import {
  ConfirmBody,
  ConfirmView,
  CreateBody,
  DeleteView,
  EventParams,
  EventQuery,
  InstallView,
  IntegrationPage,
  IntegrationView,
  ListQuery,
  PartnerEventPage,
  TestView,
  UpdateBody,
  VerifyBody,
  VerifyView,
  toIntegrationView,
  toPartnerEventView,
  toTestView,
  toVerifyView,
} from './schemas.js';

const tag = 'integrations';
const auth = { 401: ['unauthorized'] };
const manage = { 403: ['not_assigned', 'demo_read_only'] };
const unavailable = { 502: ['provider_unavailable'] };

/** The partner adapter of these services (the process's, or a test's). */
export const partnerOf = (s: Services): PartnerAdapter => s.partner;

export const integrationDeps = (s: Services): IntegrationDeps => ({ partner: partnerOf(s), config: s.config });

export const listIntegrationsOp = defineOperation({
  method: 'GET',
  path: '/api/integrations',
  summary: 'The workspace’s integrations (partner CRM, Slack-style and JSON webhooks), credentials masked',
  tag,
  auth: 'user',
  query: ListQuery,
  responses: { 200: IntegrationPage },
  errors: { 400: ['invalid_query', 'invalid_user'], ...auth },
  handler: async ({ em, actor, query }) =>
    page(
      await listIntegrations(em, actor, { ...toPageRequest(query), kind: query.kind }),
      query.limit,
      toIntegrationView,
    ),
});

export const createIntegrationOp = defineOperation({
  method: 'POST',
  path: '/api/integrations',
  summary: 'Add a Slack-style or JSON webhook integration: the destination is verified first, then stored encrypted',
  description:
    'The destination must accept a verification request (2xx) before anything is saved: otherwise 422 `verification_failed` with its status code and error class. A private-network destination is 400 `blocked_destination`. `kind: partner` is 400 `oauth_required` (install it through `POST /api/integrations/partner/install`). At most 50 integrations per workspace (409 `integration_limit_reached`).',
  tag,
  auth: 'user',
  body: CreateBody,
  responses: { 201: IntegrationView },
  errors: {
    400: ['invalid_body', 'invalid_url', 'blocked_destination', 'oauth_required', 'invalid_user'],
    ...auth,
    ...manage,
    409: ['integration_limit_reached'],
    422: ['verification_failed'],
  },
  handler: async ({ em, actor, body, services }) =>
    reply(201, toIntegrationView(await createIntegration(em, actor, integrationDeps(services), body))),
});

export const verifyIntegrationOp = defineOperation({
  method: 'POST',
  path: '/api/integrations/verify',
  summary:
    'Check credentials without saving them: a webhook destination’s answer to a verification request, or a partner access token',
  description:
    '200 either way: `valid` false with the status code and error class when the destination or partner refuses. 400 for a malformed or private-network URL; 502 when the partner cannot be reached.',
  tag,
  auth: 'user',
  body: VerifyBody,
  responses: { 200: VerifyView },
  errors: {
    400: ['invalid_body', 'invalid_url', 'blocked_destination', 'invalid_user'],
    ...auth,
    403: ['demo_read_only'],
    ...unavailable,
  },
  handler: async ({ actor, body, services }) =>
    toVerifyView(await verifyCredentials(actor, integrationDeps(services), body)),
});

export const getIntegrationOp = defineOperation({
  method: 'GET',
  path: '/api/integrations/{id}',
  ids: { path: { id: 'integration' } },
  summary: 'One integration, credentials masked',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: IntegrationView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 404: ['not_found'] },
  handler: async ({ em, actor, params }) => toIntegrationView(await requireIntegration(em, actor, params.id)),
});

export const updateIntegrationOp = defineOperation({
  method: 'PUT',
  path: '/api/integrations/{id}',
  ids: { path: { id: 'integration' } },
  summary: 'Rename, enable or disable an integration, or replace a webhook’s URL or secret (verified before saving)',
  description:
    'A new `url` or `secret` is verified against the destination like a new integration (422 `verification_failed`, nothing changed). The partner CRM’s tokens are replaced by installing it again (400 `invalid_field` for url/secret on it).',
  tag,
  auth: 'user',
  params: IdParams,
  body: UpdateBody,
  responses: { 200: IntegrationView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_url', 'blocked_destination', 'invalid_field', 'invalid_user'],
    ...auth,
    ...manage,
    404: ['not_found'],
    422: ['verification_failed'],
  },
  handler: async ({ em, actor, params, body, services }) =>
    toIntegrationView(await updateIntegration(em, actor, integrationDeps(services), params.id, body)),
});

export const deleteIntegrationOp = defineOperation({
  method: 'DELETE',
  path: '/api/integrations/{id}',
  ids: { path: { id: 'integration' } },
  summary: 'Delete an integration and its credentials; webhook subscriptions that referenced it are kept, detached',
  description:
    'Subscriptions with this `integration_id` keep delivering with `integration_id: null` (their number is returned). A partner integration’s sync cursors, pushes and partner events go with it; the partner keeps what was pushed.',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: DeleteView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, ...manage, 404: ['not_found'] },
  handler: async ({ em, actor, params }) => {
    const r = await deleteIntegration(em, actor, params.id);
    return { id: r.id, deleted: true as const, detached_webhook_subscriptions: r.detachedWebhookSubscriptions };
  },
});

export const testIntegrationOp = defineOperation({
  method: 'POST',
  path: '/api/integrations/{id}/test',
  ids: { path: { id: 'integration' } },
  summary: 'Send a test record through the integration and report the outcome',
  description:
    'Webhook kinds: one signed request through the guarded outbound client (10 s, no redirects; a destination resolving to a private address is refused: `success: false`, `error_class: blocked_destination`). Partner: its tokens are checked at the partner. A 200 does not mean the receiver succeeded: read `success`. 409 `test_not_supported` for an integration of another provider.',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: TestView },
  errors: {
    400: ['invalid_id', 'invalid_user'],
    ...auth,
    403: ['demo_read_only'],
    404: ['not_found'],
    409: ['test_not_supported'],
  },
  handler: async ({ em, actor, params, services }) => {
    const r = await testIntegration(em, actor, integrationDeps(services), params.id);
    return toTestView(r.integration.id, r.outcome);
  },
});

export const partnerInstallOp = defineOperation({
  method: 'POST',
  path: '/api/integrations/partner/install',
  summary:
    'Install the partner CRM: its authorization URL, with a state bound to you and your workspace (and a PKCE S256 challenge where the partner uses PKCE)',
  description:
    'Open `authorization_url`; the partner sends the browser to `GET /oauth/partner/callback`, which exchanges the code, stores the tokens encrypted, creates the integration (or replaces the tokens of the existing one) and starts `partner-sync:<id>`. The state is single use and expires after 10 minutes.',
  tag,
  auth: 'user',
  responses: { 200: InstallView },
  errors: { 400: ['invalid_user'], ...auth, ...manage },
  handler: async ({ em, actor, services }) => {
    const s = await startPartnerInstall(em, actor, integrationDeps(services));
    return {
      authorization_url: s.authorizationUrl,
      state: s.state,
      redirect_uri: s.redirectUri,
      expires_at: s.expiresAt.toISOString(),
    };
  },
});

export const listPartnerEventsOp = defineOperation({
  method: 'GET',
  path: '/api/integrations/partner/events',
  summary:
    'Records the partner sync holds back for a person: field conflicts, possible duplicates and records the partner rejected, oldest first',
  tag,
  auth: 'user',
  query: EventQuery,
  responses: { 200: PartnerEventPage },
  errors: { 400: ['invalid_query', 'invalid_user'], ...auth },
  handler: async ({ em, actor, query }) =>
    page(
      await listPartnerEvents(em, actor, { ...toPageRequest(query), state: query.state, kind: query.kind }),
      query.limit,
      toPartnerEventView,
    ),
});

export const confirmPartnerEventOp = defineOperation({
  method: 'POST',
  path: '/api/integrations/partner/events/{eventID}/confirm',
  idempotency: true, // applies the resolution at the partner, once
  ids: { path: { eventID: 'partner_event' } },
  summary:
    'Apply a resolution to a held-back record, once: keep ours, keep theirs, merge, link to the existing partner record, keep separate, or retry a rejected one',
  description:
    'The record is pushed to the partner with the resolution in the same transaction (502 and nothing changes when the partner fails). keep_theirs and merge write the chosen values to our contact, marked as edited by a person. 400 `invalid_resolution` for a resolution of the other kind of event, or merge values that are not exactly the conflicting fields; 409 `already_confirmed` the second time; 409 `integration_not_active` while the integration is disabled or its tokens refused.',
  tag,
  auth: 'user',
  params: EventParams,
  body: ConfirmBody,
  responses: { 200: ConfirmView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_resolution', 'invalid_user'],
    ...auth,
    ...manage,
    404: ['not_found'],
    409: ['already_confirmed', 'integration_not_active'],
    ...unavailable,
  },
  handler: async ({ em, actor, params, body, services }) => {
    const r = await confirmPartnerEvent(em, actor, integrationDeps(services), params.eventID, body);
    return { event: toPartnerEventView(r.event), pushed: r.pushed, partner_id: r.partnerId };
  },
});
