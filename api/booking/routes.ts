// Booking providers and their events (docs/meetings.md). The hook and the OAuth callback, outside
// /api, are in hook-routes.ts.
import { attachEvent, dismissEvent, listUnmatched } from '../../domain/booking/events.js';
import { wakeStopped } from '../../domain/booking/meeting-stops.js';
import { latestBackfills, startBackfill } from '../../domain/booking/backfill.js';
import {
  connectApiKey,
  disconnectConnection,
  listConnections,
  registerBookingWebhook,
  startOAuthConnection,
  verifyConnection,
  type BookingDeps,
} from '../../domain/booking/providers.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import { defineOperation, reply } from '../operation.js';
import { IdParams } from '../schemas.js';
import type { Services } from '../services.js';
import { toMeetingView } from '../meetings/schemas.js';
import {
  ApiKeyBody,
  AttachBody,
  AttachView,
  BackfillBody,
  BackfillView,
  EventPage,
  EventView,
  ListQuery,
  OAuthStartBody,
  OAuthStartView,
  ProviderPage,
  ProviderParams,
  ProviderView,
  VerifyView,
  WebhookView,
  toBackfillView,
  toEventView,
  toProviderView,
} from './schemas.js';

const tag = 'booking-providers';
const auth = { 401: ['unauthorized'] };
const manage = { 403: ['not_assigned', 'demo_read_only'], 404: ['not_found'] };
const unavailable = { 502: ['provider_unavailable'] };

export const bookingDeps = (s: Services): BookingDeps => ({
  providers: s.booking,
  encryptionKey: s.config.encryptionKey,
  publicBaseUrl: s.config.publicBaseUrl,
});

export const listProvidersOp = defineOperation({
  method: 'GET',
  path: '/api/booking-providers',
  summary: 'The workspace’s booking-provider connections, credentials masked, with their webhook and latest backfill',
  tag,
  auth: 'user',
  query: ListQuery,
  responses: { 200: ProviderPage },
  errors: { 400: ['invalid_query', 'invalid_user'], ...auth },
  handler: async ({ em, actor, query, services }) => {
    const rows = await listConnections(em, actor, toPageRequest(query));
    const backfills = await latestBackfills(
      em,
      rows.map((r) => r.id),
    );
    return page(rows, query.limit, (c) =>
      toProviderView(c, services.config.publicBaseUrl, backfills.get(c.id) ?? null),
    );
  },
});

export const connectSchedulerOp = defineOperation({
  method: 'POST',
  path: '/api/booking-providers/scheduler/api-key',
  summary: 'Connect the scheduler with an API key (checked at the provider first; stored encrypted)',
  description:
    '201 with the new connection; 200 when the key belongs to an account already connected (its key is replaced). A key the provider refuses is 422 `invalid_credentials` and nothing is saved.',
  tag,
  auth: 'user',
  body: ApiKeyBody,
  responses: { 201: ProviderView, 200: ProviderView },
  errors: {
    400: ['invalid_body', 'invalid_user'],
    ...auth,
    403: ['not_assigned', 'demo_read_only'],
    409: ['provider_limit_reached'],
    422: ['invalid_credentials'],
    ...unavailable,
  },
  handler: async ({ em, actor, body, services }) => {
    const { connection, created } = await connectApiKey(em, actor, bookingDeps(services), body.api_key);
    return reply(created ? 201 : 200, toProviderView(connection, services.config.publicBaseUrl));
  },
});

export const oauthStartOp = defineOperation({
  method: 'POST',
  path: '/api/booking-providers/{provider}/oauth/start',
  ids: { path: { provider: { value: 'a provider name' } } },
  summary: 'Start connecting an OAuth booking provider: the authorization URL, with a state bound to you (PKCE)',
  description:
    'The state is single use and expires after 10 minutes; the provider sends the browser to `GET /oauth/booking/{provider}/callback`, which finishes the connection in your workspace. `scheduler` connects with an API key instead (400 `oauth_not_supported`); an unknown provider is 404.',
  tag,
  auth: 'user',
  params: ProviderParams,
  body: OAuthStartBody,
  responses: { 200: OAuthStartView },
  errors: { 400: ['invalid_id', 'invalid_body', 'oauth_not_supported', 'invalid_user'], ...auth, ...manage },
  handler: async ({ em, actor, params, body, services }) => {
    const s = await startOAuthConnection(em, actor, bookingDeps(services), params.provider, {
      loginHint: body.login_hint,
    });
    return {
      provider: s.provider,
      authorization_url: s.authorizationUrl,
      state: s.state,
      redirect_uri: s.redirectUri,
      expires_at: s.expiresAt.toISOString(),
    };
  },
});

export const verifyProviderOp = defineOperation({
  method: 'POST',
  path: '/api/booking-providers/{id}/verify',
  ids: { path: { id: 'booking_provider' } },
  summary: 'Re-check the stored credentials at the provider (the status follows the answer)',
  description:
    '200 either way: `verification.ok` false and status `invalid_credentials` when the provider refuses them. 502 when it cannot be asked (the status is unchanged).',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: VerifyView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, ...manage, ...unavailable },
  handler: async ({ em, actor, params, services }) => {
    const r = await verifyConnection(em, actor, bookingDeps(services), params.id);
    return {
      booking_provider: toProviderView(r.connection, services.config.publicBaseUrl),
      verification: { ok: r.ok, error: r.error },
    };
  },
});

export const registerWebhookOp = defineOperation({
  method: 'POST',
  path: '/api/booking-providers/{id}/webhook/register',
  idempotency: true, // a new secret each time: a retry would replace the one the first answer showed
  ids: { path: { id: 'booking_provider' } },
  summary: 'Register our inbound booking route at the provider, with a new signing secret (shown once)',
  description:
    'The provider is subscribed to `booking.created`, `booking.rescheduled` and `booking.canceled` at `POST /hooks/booking/{id}`, signed with the returned secret. Calling it again replaces the subscription and rotates the secret at once. 409 `provider_not_connected` while the credentials are refused. A calendar read by polling (Google Calendar: docs/calendar.md) has no webhook: 400 `webhook_not_supported`.',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: WebhookView },
  errors: {
    400: ['invalid_id', 'invalid_user', 'webhook_not_supported'],
    ...auth,
    ...manage,
    409: ['provider_not_connected'],
    ...unavailable,
  },
  handler: async ({ em, actor, params, services }) => {
    const r = await registerBookingWebhook(em, actor, bookingDeps(services), params.id);
    return {
      booking_provider: toProviderView(r.connection, services.config.publicBaseUrl),
      webhook: { url: r.url, secret: r.secret, registered_at: r.connection.webhookRegisteredAt!.toISOString() },
    };
  },
});

export const backfillOp = defineOperation({
  method: 'POST',
  path: '/api/booking-providers/{id}/backfill',
  ids: { path: { id: 'booking_provider' } },
  summary: 'Import past bookings as meetings: the job `booking-backfill:<providerId>:<id>` with exact progress',
  description:
    '202 with the job while it is queued or running, 200 once it finished. Repeating the request with the same `client_key`, or while a backfill of this provider runs, returns that job (with its progress) and starts nothing new; 409 `client_key_reused` for the same key with another `since`. The latest job is also in `GET /api/booking-providers`.',
  tag,
  auth: 'user',
  params: IdParams,
  body: BackfillBody,
  responses: { 202: BackfillView, 200: BackfillView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_since', 'invalid_user'],
    ...auth,
    ...manage,
    409: ['provider_not_connected', 'client_key_reused'],
  },
  handler: async ({ em, actor, params, body, services }) => {
    const { backfill } = await startBackfill(em, services.jobs, actor, params.id, {
      since: body.since,
      clientKey: body.client_key,
    });
    return reply(backfill.status === 'queued' || backfill.status === 'running' ? 202 : 200, toBackfillView(backfill));
  },
});

export const deleteProviderOp = defineOperation({
  method: 'DELETE',
  path: '/api/booking-providers/{id}',
  ids: { path: { id: 'booking_provider' } },
  summary: 'Disconnect: our webhook is removed at the provider (best effort), the credentials deleted; meetings stay',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 204: null },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, ...manage },
  handler: async ({ em, actor, params, services }) => {
    await disconnectConnection(em, actor, bookingDeps(services), params.id);
    return reply(204, undefined);
  },
});

export const listUnmatchedOp = defineOperation({
  method: 'GET',
  path: '/api/booking-provider-events/unmatched',
  operationId: 'listUnmatchedBookingEvents',
  summary: 'Bookings no lead was found for, oldest first: attach each to a lead or dismiss it',
  tag,
  auth: 'user',
  query: ListQuery,
  responses: { 200: EventPage },
  errors: { 400: ['invalid_query', 'invalid_user'], ...auth },
  handler: async ({ em, actor, query }) =>
    page(await listUnmatched(em, actor, toPageRequest(query)), query.limit, toEventView),
});

export const attachEventOp = defineOperation({
  method: 'POST',
  path: '/api/booking-provider-events/{id}/attach',
  idempotency: true, // creates the booking's meeting
  ids: { path: { id: 'booking_event' }, body: { lead_id: { kind: 'lead', missing: [400, 'invalid_lead'] } } },
  summary: 'Attach an unmatched booking to a lead: its meeting is created, and later events of the booking follow it',
  tag,
  auth: 'user',
  params: IdParams,
  body: AttachBody,
  responses: { 200: AttachView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_lead', 'invalid_user'],
    ...auth,
    ...manage,
    409: ['invalid_transition'],
  },
  handler: async ({ em, actor, params, body, services }) => {
    const r = await attachEvent(em, actor, params.id, body.lead_id);
    await wakeStopped(services.jobs, r.stopped);
    return { event: toEventView(r.event), meeting: toMeetingView(r.meeting) };
  },
});

export const dismissEventOp = defineOperation({
  method: 'POST',
  path: '/api/booking-provider-events/{id}/dismiss',
  ids: { path: { id: 'booking_event' } },
  summary: 'Dismiss an unmatched booking: it leaves the list, and its later events are dismissed too',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: EventView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, ...manage, 409: ['invalid_transition'] },
  handler: async ({ em, actor, params }) => toEventView(await dismissEvent(em, actor, params.id)),
});
