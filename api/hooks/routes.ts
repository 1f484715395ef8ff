// Inbound provider callbacks, outside /api (DESIGN.md "External providers, concretely"): no bearer;
// the provider's signature is the authentication. The body is read raw (the signature covers its
// exact bytes), verified, stored idempotently, and handed to a workflow. With Unipile as the
// connector (docs/providers.md "Unipile"), its webhooks come to `/hooks/connector` (our secret header
// instead of a signature) and its hosted wizard's notify callback to `/hooks/connector/accounts`.
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { z } from 'zod';
import { defineOperation } from '../operation.js';
import { text } from '../schemas.js';
import { AppError } from '../../domain/errors.js';
import { finishHostedConnection } from '../../domain/accounts/accounts.js';
import { ingestConnectorEvent } from '../../domain/connectors/events.js';
import { unipileConnectorOf } from '../../lib/connectors/index.js';
import { toWireEvent, wireInboundEvent } from '../../lib/connectors/inbound.js';
import { ConnectorError } from '../../lib/connectors/types.js';
import { provisionalAccountId, UNIPILE, UNIPILE_SECRET_HEADER } from '../../lib/connectors/unipile/index.js';

/** Connector events are small (a message with attachment metadata); larger bodies are refused unread. */
export const HOOK_BODY_LIMIT_BYTES = 256 * 1024;

export async function readRaw(ctx: Context): Promise<Buffer> {
  try {
    return await getRawBody(ctx.req, { limit: HOOK_BODY_LIMIT_BYTES, length: ctx.req.headers['content-length'] });
  } catch (err) {
    const e = err as { type?: string; status?: number };
    if (e.type === 'entity.too.large' || e.status === 413)
      throw new AppError(413, 'payload_too_large', `request body larger than ${HOOK_BODY_LIMIT_BYTES} bytes`);
    throw new AppError(400, 'invalid_body', 'request body could not be read');
  }
}

export const connectorHook = defineOperation({
  method: 'POST',
  path: '/hooks/connector',
  operationId: 'receiveConnectorEvent',
  summary: 'Inbound events of the messaging-network connector (signed; stored once per event id)',
  description: [
    'Called by the connector, not by users. The JSON body is an event envelope `{ id, type, account_id, created_at, data }`',
    '(`message.received`, `invitation.accepted`, `account.status`; docs/providers.md). It must carry',
    '`X-Connector-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" with CONNECTOR_WEBHOOK_SECRET>`,',
    'at most 5 minutes old (anything else is 401 `invalid_signature` and nothing is stored). A repeated event id answers 200 with `duplicate: true` and changes nothing. `created_at` is when the event happened',
    '(at most 5 minutes ahead of our clock; absent: when we received it): an `account.status` older than the one last applied to the account changes nothing (docs/providers.md, "Order of events").',
    `With Unipile as the connector (CONNECTOR_PROVIDER=unipile) the body is one of Unipile's webhook payloads (\`message_received\`, \`new_relation\`, \`AccountStatus\`) and the request must carry \`${UNIPILE_SECRET_HEADER}\` with UNIPILE_WEBHOOK_SECRET instead of a signature;`,
    'a payload the connector does not act on (a read receipt, a reaction, an unknown event) answers 200 with `ignored: true` and stores nothing.',
  ].join(' '),
  tag: 'hooks',
  auth: 'public',
  rateLimit: 'default',
  responses: {
    200: z.object({
      received: z.literal(true),
      duplicate: z.boolean(),
      ignored: z
        .literal(true)
        .optional()
        .meta({ description: 'present when the event was acknowledged and not stored' }),
    }),
  },
  errors: { 400: ['invalid_body'], 401: ['invalid_signature'], 413: ['payload_too_large'] },
  handler: async ({ ctx, services, em }) => {
    const raw = await readRaw(ctx);
    const headers = Object.fromEntries(
      Object.entries(ctx.req.headers).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]),
    );
    let event;
    try {
      event = services.connector.parseInbound(raw, headers);
    } catch (err) {
      if (!(err instanceof ConnectorError)) throw err;
      // Nothing is stored for a refused request; the reason stays in our logs, not in the answer.
      if (err.code === 'auth')
        throw new AppError(401, 'invalid_signature', 'the request signature is missing, wrong or stale');
      throw new AppError(400, 'invalid_body', err.message.replace(/^[^:]+: [^:]+: /, ''));
    }
    // Authentic, and nothing the connector acts on: acknowledged (a 4xx would have it sent again).
    if (!event) return { received: true as const, duplicate: false, ignored: true as const };
    const json = JSON.parse(raw.toString('utf8')) as unknown;
    // What is stored is read back as our envelope (domain/connectors/events.ts): a provider's own
    // payload (Unipile's) is stored as the envelope of the event it maps to.
    const wire = wireInboundEvent.safeParse(json).success
      ? (json as Record<string, unknown>)
      : toWireEvent(event, new Date());
    const stored = await ingestConnectorEvent(em, services.jobs, services.connector.name, event, wire);
    return { received: true as const, duplicate: !stored.inserted };
  },
});

/** The hosted wizard's notify callback as Unipile sends it (unknown fields are ignored). */
const HostedNotifyBody = z.object({
  // Bounds within `parseHostedNotify`'s (code points here, UTF-16 units there): what the document allows it accepts.
  status: text({ max: 50, min: 1, trim: true }).meta({ description: '`CREATION_SUCCESS` or `RECONNECTED`' }),
  account_id: text({ max: 100, min: 1, trim: true }).meta({ description: "Unipile's id of the connected account" }),
  name: text({ max: 100, min: 1, trim: true }).meta({ description: 'our platform account id (the link’s `name`)' }),
});

export const connectorAccountsHook = defineOperation({
  method: 'POST',
  path: '/hooks/connector/accounts',
  operationId: 'receiveConnectorAccountEvent',
  summary: 'Unipile’s hosted-auth notify callback: links a platform account to the connected Unipile account',
  description: [
    'Called by Unipile (CONNECTOR_PROVIDER=unipile) when a user finishes the hosted wizard that',
    '`POST /api/platform-accounts/{id}/connect` linked to, not by users. The body is `{ status, account_id, name }`; `name` is our account id.',
    'The `token` query parameter is the one the connect call put in the notify URL (an HMAC of the account id with UNIPILE_WEBHOOK_SECRET,',
    'compared in constant time); missing or wrong, or no Unipile connector configured, is 401 `invalid_signature` and nothing changes.',
    'The account takes Unipile’s `account_id` when it still holds the provisional id of its connect call or holds that id already (a reconnect,',
    'a repeated callback); otherwise 409 `already_linked`. 404 `not_found` for no such account on the Unipile connector. Then its status is read',
    'at Unipile and applied as a status check (connected, or disconnected with the reason): `status` is the account’s status after it.',
  ].join(' '),
  tag: 'hooks',
  beyondSpec: true,
  auth: 'public',
  rateLimit: 'default',
  query: z.object({
    token: z
      .string()
      .max(200)
      .optional()
      .meta({ description: 'the token of the notify URL (authenticates the callback)' }),
  }),
  body: HostedNotifyBody,
  bodyLimitBytes: HOOK_BODY_LIMIT_BYTES,
  ids: { body: { account_id: { value: 'Unipile’s account id (not one of ours)' } } },
  responses: {
    200: z.object({
      received: z.literal(true),
      status: z.string().meta({ description: 'the platform account’s status after the callback' }),
    }),
  },
  errors: {
    400: ['invalid_body'],
    401: ['invalid_signature'],
    404: ['not_found'],
    409: ['already_linked'],
    413: ['payload_too_large'],
  },
  handler: async ({ ctx, services, em, query, body }) => {
    const refuse = (reason: string) => {
      // The reason stays in our logs; the answer does not say whether the account exists.
      ctx.state.log?.warn({ reason }, 'connector accounts hook refused');
      return new AppError(401, 'invalid_signature', 'the notify token is missing or wrong');
    };
    const unipile = unipileConnectorOf(services.connector);
    if (!unipile) throw refuse('the connector is not Unipile');
    let notify;
    try {
      notify = unipile.hostedNotify(body, query.token);
    } catch (err) {
      if (!(err instanceof ConnectorError)) throw err;
      if (err.code === 'auth') throw refuse(err.message);
      throw new AppError(400, 'invalid_body', err.message.replace(/^[^:]+: [^:]+: /, ''));
    }
    const r = await finishHostedConnection(em, services.connector, {
      accountId: notify.accountId,
      connectorAccountId: notify.connectorAccountId,
      provisionalId: provisionalAccountId(notify.accountId),
      connectorName: UNIPILE,
    });
    return { received: true as const, status: r.account.status };
  },
});
