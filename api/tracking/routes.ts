// The public tracking URLs of emails sent with open or click tracking (docs/tracking.md), beyond the
// spec. Every URL carries the email's signed token (domain/tracking/token.ts); nothing is looked up
// before it holds. The pixel answers the same transparent GIF whatever happens (a bad token, tracking
// off, the database away: a mail client shows nothing broken) and records only for a valid token. A
// link redirects to the URL of the stored email body, never to one the request names (no open
// redirect). HEAD (link checkers) answers the same and records nothing. Rate limit: the `default`
// group per client address (600/min), not the strict `public` one: the image proxies of Google and
// Apple load the pixels of many recipients from a few addresses.
import { z } from 'zod';
import { notFound } from '../../domain/errors.js';
import { recordTrackingHit, trackedLink } from '../../domain/tracking/record.js';
import { readTrackingToken } from '../../domain/tracking/token.js';
import { defineOperation } from '../operation.js';

const tag = 'email';

/** A transparent 1×1 GIF (43 bytes). */
export const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');

const tokenId = { value: 'a signed tracking token (domain/tracking/token.ts), checked by its signature' } as const;
/** The shape of a token: base64url(action id).base64url(MAC). */
const TOKEN_EXAMPLE = 'AZL1zXwaez6aEC8cPU5aAQ.3q2-7wAAAAAAAAAAAAAAAA';

const PixelParams = z.object({
  token: z.string().meta({
    description: 'The signed token of the email (any other string answers the same GIF and records nothing)',
    examples: [TOKEN_EXAMPLE],
  }),
});
const ClickParams = z.object({
  token: z
    .string()
    .max(200)
    .meta({
      description: 'The signed token of the email (a malformed or tampered one is 404)',
      examples: [TOKEN_EXAMPLE],
    }),
  index: z
    .string()
    .regex(/^(0|[1-9][0-9]{0,3})$/)
    .meta({ description: 'The link’s 0-based place among the URLs of the email body', examples: ['0'] }),
});

export const trackingPixelOp = defineOperation({
  method: 'GET',
  path: '/t/{token}/open.gif',
  operationId: 'trackOpen',
  ids: { path: { token: tokenId } },
  summary: 'An email’s open pixel: a transparent GIF; a valid token records an open',
  description:
    'Beyond the spec. Public (the token is the authority). Always 200 (within the rate limit) with the same 43-byte GIF, `Cache-Control: no-store, private` (each open reaches us) and `Cross-Origin-Resource-Policy: cross-origin` (webmail may show it): a bad token, a campaign without `track_opens`, or a failure to record changes nothing of the answer. An open of a sent email of a tracking campaign is recorded, classified `human` or `machine` (proxy prefetch, scanner agent: docs/tracking.md); only a human one sets the action’s `opened_at`. No address or user agent is stored.',
  tag,
  beyondSpec: true,
  auth: 'public',
  rateLimit: 'default',
  params: PixelParams,
  produces: 'image/gif',
  // Declared without content, as the attachment download is: client generators drop an image/gif
  // response with a warning (openapi-python-client), and no client reads this one anyway.
  responses: { 200: null },
  errors: { 400: ['invalid_id'] },
  handler: async ({ ctx, em, params, services }) => {
    const actionId = readTrackingToken(services.config.encryptionKey, params.token);
    if (actionId && ctx.method === 'GET') {
      // Best effort: the image is served whatever the recording does.
      await recordTrackingHit(em, {
        actionId,
        kind: 'open',
        ip: ctx.ip,
        userAgent: ctx.get('user-agent') || null,
      }).catch((err: unknown) => ctx.state.log?.warn({ err: String(err) }, 'tracking: an open was not recorded'));
    }
    ctx.status = 200;
    ctx.set({ 'Cache-Control': 'no-store, private', 'Cross-Origin-Resource-Policy': 'cross-origin' });
    ctx.type = 'image/gif';
    ctx.body = PIXEL_GIF;
  },
});

export const trackingClickOp = defineOperation({
  method: 'GET',
  path: '/t/{token}/l/{index}',
  operationId: 'trackLinkClick',
  ids: { path: { token: tokenId, index: { value: 'the link’s place in the email body (a number, not an id)' } } },
  summary: 'A tracked link of an email: redirects to the link of the sent body; a valid token records a click',
  description:
    'Beyond the spec. Public (the token is the authority). 302 to the URL at `index` among the URLs of the sent email’s body (http or https only, taken from the stored body, never from the request), `Cache-Control: no-store` so that each click reaches us. Recorded when the campaign has `track_clicks`, classified `human` or `machine` (scanner agent, a click before any open in the first minutes, a burst over several links: docs/tracking.md); only a human one sets the action’s `clicked_at`. The link redirects whether the click is recorded or not. A malformed or tampered token, or an index the body has no link at, is 404 `not_found`.',
  tag,
  beyondSpec: true,
  auth: 'public',
  rateLimit: 'default',
  params: ClickParams,
  produces: 'text/plain',
  responses: { 302: z.string().meta({ description: '`Redirecting to <url>`; the target is in `Location`' }) },
  errors: { 400: ['invalid_id'], 404: ['not_found'] },
  handler: async ({ ctx, em, params, services }) => {
    const actionId = readTrackingToken(services.config.encryptionKey, params.token);
    if (!actionId) throw notFound('link');
    const index = Number(params.index);
    const url =
      ctx.method === 'GET'
        ? (
            await recordTrackingHit(em, {
              actionId,
              kind: 'click',
              linkIndex: index,
              ip: ctx.ip,
              userAgent: ctx.get('user-agent') || null,
            })
          ).url
        : await trackedLink(em, actionId, index);
    if (!url) throw notFound('link');
    ctx.status = 302;
    ctx.set('Location', url);
    ctx.type = 'text/plain';
    ctx.body = `Redirecting to ${url}`;
  },
});
