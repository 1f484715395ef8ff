// Inbound provider callbacks, outside /api (DESIGN.md "External providers, concretely"): no bearer;
// the provider's signature is the authentication. The body is read raw (the signature covers its
// exact bytes), verified, stored idempotently, and handed to a workflow.
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { z } from 'zod';
import { defineOperation } from '../operation.js';
import { AppError } from '../../domain/errors.js';
import { ingestConnectorEvent } from '../../domain/connectors/events.js';
import { ConnectorError } from '../../lib/connectors/types.js';

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
  summary: 'Inbound events of the messaging-network connector (signed; stored once per event id)',
  description: [
    'Called by the connector, not by users. The JSON body is an event envelope `{ id, type, account_id, created_at, data }`',
    '(`message.received`, `invitation.accepted`, `account.status`; docs/providers.md). It must carry',
    '`X-Connector-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" with CONNECTOR_WEBHOOK_SECRET>`,',
    'at most 5 minutes old. A repeated event id answers 200 with `duplicate: true` and changes nothing. `created_at` is when the event happened',
    '(at most 5 minutes ahead of our clock; absent: when we received it): an `account.status` older than the one last applied to the account changes nothing (docs/providers.md, "Order of events").',
  ].join(' '),
  tag: 'hooks',
  auth: 'public',
  rateLimit: 'default',
  responses: { 200: z.object({ received: z.literal(true), duplicate: z.boolean() }) },
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
    const wire = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    const stored = await ingestConnectorEvent(em, services.jobs, services.connector.name, event, wire);
    return { received: true as const, duplicate: !stored.inserted };
  },
});
