// The sandbox network's own signed event envelope: the JSON its events are stored and handed over as,
// and what `POST /hooks/connector` accepts for it (`X-Connector-Signature` with CONNECTOR_WEBHOOK_SECRET),
// the signature scheme, and the mapping to InboundEvent. Unipile's webhooks have their own payloads
// and secret header (./unipile/events.ts).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { ConnectorError, CONNECTOR_ACCOUNT_STATES, type InboundEvent } from './types.js';

export const SIGNATURE_HEADER = 'x-connector-signature';
/** A signature older (or further in the future) than this is refused: a replayed request is stale. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

const id = z.string().trim().min(1).max(200);
const isoDate = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

const wireChatMessage = z.object({
  id,
  thread_id: id,
  direction: z.enum(['in', 'out']),
  from: z.string().max(2048),
  body: z.string().max(200_000),
  sent_at: isoDate,
  attachments: z
    .array(z.object({ id, name: z.string().max(500), size: z.number().int().nonnegative() }))
    .max(100)
    .default([]),
});

const base = {
  id: id.regex(/^[A-Za-z0-9_.:-]+$/, 'event ids are letters, digits and _ . : -'),
  account_id: id,
  created_at: isoDate.optional(),
};

/** The event envelope on the wire; unknown fields are ignored. */
export const wireInboundEvent = z.discriminatedUnion('type', [
  z.object({ ...base, type: z.literal('message.received'), data: z.object({ message: wireChatMessage }) }),
  z.object({
    ...base,
    type: z.literal('invitation.accepted'),
    data: z.object({ invitation_id: id, recipient: z.string().trim().min(1).max(2048), accepted_at: isoDate }),
  }),
  z.object({ ...base, type: z.literal('message.opened'), data: z.object({ message_id: id, opened_at: isoDate }) }),
  z.object({
    ...base,
    type: z.literal('reaction.received'),
    data: z.object({
      message_id: id,
      thread_id: id,
      from: z.string().max(2048),
      reaction: z.string().trim().min(1).max(32),
      reacted_at: isoDate,
    }),
  }),
  z.object({
    ...base,
    type: z.literal('account.status'),
    data: z.object({
      state: z.enum(CONNECTOR_ACCOUNT_STATES),
      reason: z
        .string()
        .trim()
        .max(100)
        .nullish()
        .transform((v) => v || null),
    }),
  }),
]);
export type WireInboundEvent = z.input<typeof wireInboundEvent>;

/** The wire JSON as an InboundEvent; throws ConnectorError `invalid_request` when it is not an event. */
export function toInboundEvent(provider: string, json: unknown): InboundEvent {
  const r = wireInboundEvent.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new ConnectorError(
      provider,
      'invalid_request',
      `not a connector event: ${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
  }
  const e = r.data;
  const common = {
    eventId: e.id,
    connectorAccountId: e.account_id,
    ...(e.created_at ? { occurredAt: e.created_at } : {}),
  };
  switch (e.type) {
    case 'message.received': {
      const m = e.data.message;
      return {
        ...common,
        type: e.type,
        message: {
          messageId: m.id,
          threadId: m.thread_id,
          direction: m.direction,
          from: m.from,
          body: m.body,
          sentAt: m.sent_at,
          attachments: m.attachments,
        },
      };
    }
    case 'invitation.accepted':
      return {
        ...common,
        type: e.type,
        invitationId: e.data.invitation_id,
        recipient: e.data.recipient,
        acceptedAt: e.data.accepted_at,
      };
    case 'message.opened':
      return { ...common, type: e.type, messageId: e.data.message_id, openedAt: e.data.opened_at };
    case 'reaction.received':
      return {
        ...common,
        type: e.type,
        messageId: e.data.message_id,
        threadId: e.data.thread_id,
        from: e.data.from,
        reaction: e.data.reaction,
        reactedAt: e.data.reacted_at,
      };
    case 'account.status':
      return { ...common, type: e.type, state: e.data.state, reason: e.data.reason };
  }
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`: the signature header of a sandbox event. */
export function signInbound(secret: string, rawBody: Buffer | string, at = new Date()): string {
  const t = Math.floor(at.getTime() / 1000);
  const mac = createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest('hex');
  return `t=${t},v1=${mac}`;
}

/**
 * Checks the signature header against the body (constant time; any of several `v1` values may match,
 * for secret rotation) and its freshness, then parses the event. Throws ConnectorError `auth` for a
 * missing secret or a missing, malformed, wrong or stale signature, `invalid_request` for a body that
 * is not an event or says it happened later than the signature window allows (a time in the future
 * would make every later event about the same thing look older: domain/event-order.ts).
 */
export function verifyInbound(
  provider: string,
  secret: string | null,
  rawBody: Buffer,
  headers: Record<string, string | undefined>,
  now = new Date(),
): InboundEvent {
  const refuse = (why: string) => new ConnectorError(provider, 'auth', why);
  if (!secret) throw refuse('no webhook secret is configured (CONNECTOR_WEBHOOK_SECRET)');
  const header = headers[SIGNATURE_HEADER];
  if (!header) throw refuse('signature header missing');
  let t: number | undefined;
  const macs: Buffer[] = [];
  for (const part of header.split(',')) {
    const [k, v] = part.trim().split('=', 2);
    if (k === 't' && /^\d{1,12}$/.test(v ?? '')) t = Number(v);
    else if (k === 'v1' && /^[0-9a-f]{64}$/i.test(v ?? '')) macs.push(Buffer.from(v, 'hex'));
  }
  if (t === undefined || macs.length === 0) throw refuse('signature header malformed');
  if (Math.abs(now.getTime() / 1000 - t) > SIGNATURE_TOLERANCE_SECONDS)
    throw refuse('signature timestamp outside the 5-minute window');
  const expected = createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest();
  if (!macs.some((m) => timingSafeEqual(m, expected))) throw refuse('signature does not match');
  let json: unknown;
  try {
    json = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new ConnectorError(provider, 'invalid_request', 'body is not JSON');
  }
  const event = toInboundEvent(provider, json);
  if (event.occurredAt && event.occurredAt.getTime() > now.getTime() + SIGNATURE_TOLERANCE_SECONDS * 1000) {
    throw new ConnectorError(
      provider,
      'invalid_request',
      'not a connector event: created_at: more than 5 minutes in the future',
    );
  }
  return event;
}

/** An InboundEvent as the envelope's JSON (what the sandbox stores and hands over); `created_at` is the event's own time when it has one. */
export function toWireEvent(e: InboundEvent, createdAt: Date): Record<string, unknown> {
  const base = {
    id: e.eventId,
    type: e.type,
    account_id: e.connectorAccountId,
    created_at: (e.occurredAt ?? createdAt).toISOString(),
  };
  switch (e.type) {
    case 'message.received': {
      const m = e.message;
      return {
        ...base,
        data: {
          message: {
            id: m.messageId,
            thread_id: m.threadId,
            direction: m.direction,
            from: m.from,
            body: m.body,
            sent_at: m.sentAt.toISOString(),
            attachments: m.attachments,
          },
        },
      };
    }
    case 'invitation.accepted':
      return {
        ...base,
        data: { invitation_id: e.invitationId, recipient: e.recipient, accepted_at: e.acceptedAt.toISOString() },
      };
    case 'message.opened':
      return { ...base, data: { message_id: e.messageId, opened_at: e.openedAt.toISOString() } };
    case 'reaction.received':
      return {
        ...base,
        data: {
          message_id: e.messageId,
          thread_id: e.threadId,
          from: e.from,
          reaction: e.reaction,
          reacted_at: e.reactedAt.toISOString(),
        },
      };
    case 'account.status':
      return { ...base, data: { state: e.state, reason: e.reason } };
  }
}
