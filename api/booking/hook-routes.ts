// Booking-provider routes outside /api (docs/meetings.md): the signed inbound hook, the OAuth
// callback that finishes a connection, and the local providers' authorization page (offline only).
import { z } from 'zod';
import { AppError, badRequest, notFound } from '../../domain/errors.js';
import { ingestBookingEvent } from '../../domain/booking/events.js';
import { callbackUrl, finishOAuthConnection, hookSecret } from '../../domain/booking/providers.js';
import { isLocalProvider, localAuthorizationCode } from '../../lib/booking/index.js';
import { isBookingProvider, type BookingEvent, type BookingProviderName } from '../../lib/booking/types.js';
import { BOOKING_SIGNATURE_HEADER, checkBookingSignature, parseBookingEvent } from '../../lib/booking/wire.js';
import { readRaw } from '../hooks/routes.js';
import { defineOperation } from '../operation.js';
import { bookingDeps } from './routes.js';
import { ProviderView, toProviderView } from './schemas.js';

export const bookingHook = defineOperation({
  method: 'POST',
  path: '/hooks/booking/{providerId}',
  operationId: 'receiveBookingEvent',
  ids: {
    path: { providerId: { value: 'the booking provider the signed event is for (the signature authenticates it)' } },
  },
  summary:
    'Inbound booking events of one connected provider (signed with its webhook secret; stored once per event id)',
  description: [
    'Called by the booking provider, not by users; registered by `POST /api/booking-providers/{id}/webhook/register`. The body is in the',
    'provider’s own format. The scheduler over Cal.com (docs/scheduler.md): Cal.com’s webhook `{ triggerEvent, createdAt, payload }`',
    '(`BOOKING_CREATED`, `BOOKING_RESCHEDULED`, `BOOKING_CANCELLED`; other triggers are answered and ignored), signed with',
    '`X-Cal-Signature-256: <hex HMAC-SHA256 of the raw body with the webhook secret>`. The local providers (docs/meetings.md):',
    '`{ id, type, created_at, data: { booking } }` signed with `X-Booking-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`,',
    'at most 5 minutes old. A missing or wrong signature, or an unknown or unregistered provider id, is 401 `invalid_signature` and nothing',
    'is stored. A repeated event answers 200 with `duplicate: true` and changes nothing.',
  ].join(' '),
  tag: 'hooks',
  auth: 'public',
  rateLimit: 'default',
  params: z.object({ providerId: z.uuid() }),
  responses: { 200: z.object({ received: z.literal(true), duplicate: z.boolean() }) },
  errors: { 400: ['invalid_body'], 401: ['invalid_signature'], 413: ['payload_too_large'] },
  handler: async ({ ctx, em, params, services }) => {
    const raw = await readRaw(ctx);
    const hook = await hookSecret(em, bookingDeps(services), params.providerId);
    // A provider with webhooks of its own (Cal.com) verifies and reads them; else the local envelope.
    const own = hook ? services.booking.get(hook.connection.provider as BookingProviderName)?.webhooks : undefined;
    const check = !hook
      ? { ok: false as const, reason: 'no webhook registered for this id' }
      : own
        ? own.verify(hook.secret, raw, ctx.headers)
        : checkBookingSignature(hook.secret, raw, ctx.get(BOOKING_SIGNATURE_HEADER) || undefined);
    if (!hook || !check.ok) {
      // The reason stays in our logs; the answer does not say whether the provider id exists.
      ctx.state.log?.warn(
        { provider_id: params.providerId, reason: check.ok ? null : check.reason },
        'booking hook refused',
      );
      throw new AppError(401, 'invalid_signature', 'the request signature is missing, wrong or stale');
    }
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      throw badRequest('invalid_body', 'the body is not JSON');
    }
    let events: BookingEvent[];
    if (own) {
      const parsed = own.parse(json, new Date());
      if ('error' in parsed) throw badRequest('invalid_body', parsed.error);
      events = parsed.events;
    } else {
      const parsed = parseBookingEvent(json, new Date());
      if ('error' in parsed) throw badRequest('invalid_body', parsed.error);
      events = [parsed.event];
    }
    // None: a trigger we do not follow (a ping): answered, nothing stored.
    let duplicate = events.length > 0;
    for (const event of events) {
      const stored = await ingestBookingEvent(em, services.jobs, hook.connection, event);
      duplicate &&= !stored.inserted;
    }
    return { received: true as const, duplicate };
  },
});

const param = (max: number) => z.string().max(max).optional();

export const oauthCallback = defineOperation({
  method: 'GET',
  path: '/oauth/booking/{provider}/callback',
  ids: { path: { provider: { value: 'a provider name' } } },
  summary: 'Where an OAuth booking provider sends the browser back: finishes the connection started by oauth/start',
  description:
    'The state must be one `POST /api/booking-providers/{provider}/oauth/start` issued, unused and under 10 minutes old (400 `invalid_state`; spent either way). The code is exchanged with the PKCE verifier; a refusal, or `error` from the provider, is 400 `oauth_denied`. The connection lands in the workspace of the user who started, who must still manage it (403 `not_assigned`).',
  tag: 'booking-providers',
  auth: 'public',
  params: z.object({ provider: z.string().max(40) }),
  query: z
    .object({
      code: param(4096),
      state: param(512),
      error: param(200),
      error_description: param(2000),
      error_uri: param(2048),
      iss: param(2048),
      scope: param(2000),
    })
    .strict(),
  responses: {
    200: z.object({ status: z.literal('connected'), created: z.boolean(), booking_provider: ProviderView }),
  },
  errors: {
    400: ['invalid_id', 'invalid_state', 'oauth_denied', 'oauth_not_supported'],
    403: ['not_assigned'],
    404: ['not_found'],
    502: ['provider_unavailable'],
  },
  handler: async ({ em, params, query, services }) => {
    const r = await finishOAuthConnection(em, bookingDeps(services), params.provider, query);
    return {
      status: 'connected' as const,
      created: r.created,
      booking_provider: toProviderView(r.connection, services.config.publicBaseUrl),
    };
  },
});

export const localAuthorize = defineOperation({
  method: 'GET',
  path: '/oauth/booking/local/authorize',
  ids: { query: { client_id: { value: 'an OAuth client id' } } },
  summary:
    'The local OAuth booking providers’ authorization page: consents at once and redirects to our callback (offline runs only)',
  description:
    'Answers 302 to `redirect_uri` with `code` and `state`. Only while the provider is the local stand-in (the calendar with `BOOKING_CALENDAR_PROVIDER` unset or `local`; 404 otherwise), and only to our own callback URL (400 `invalid_redirect_uri`).',
  tag: 'booking-providers',
  auth: 'public',
  query: z
    .object({
      provider: z.string().max(40),
      response_type: z.literal('code'),
      client_id: param(200),
      redirect_uri: z.string().max(2048),
      state: z.string().min(1).max(512),
      code_challenge: param(128),
      code_challenge_method: z.literal('S256').optional(),
      login_hint: param(320),
      scope: param(2000),
    })
    .strict(),
  produces: 'text/plain',
  responses: { 302: z.string() },
  errors: { 400: ['invalid_redirect_uri'], 404: ['not_found'] },
  handler: ({ ctx, query, services }) => {
    const name = query.provider.toLowerCase();
    const provider = isBookingProvider(name) ? services.booking.get(name) : undefined;
    if (!provider || provider.auth !== 'oauth' || !isLocalProvider(provider)) throw notFound('local OAuth provider');
    if (query.redirect_uri !== callbackUrl(bookingDeps(services), name))
      throw badRequest('invalid_redirect_uri', 'redirect_uri must be this service’s callback for the provider');
    const to = new URL(query.redirect_uri);
    to.searchParams.set(
      'code',
      localAuthorizationCode({
        provider: name,
        redirectUri: query.redirect_uri,
        codeChallenge: query.code_challenge ?? null,
        loginHint: query.login_hint,
      }),
    );
    to.searchParams.set('state', query.state);
    ctx.status = 302;
    ctx.set('Location', to.toString());
    ctx.type = 'text/plain';
    ctx.body = `Redirecting to ${to.toString()}`;
  },
});
