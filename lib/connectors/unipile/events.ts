// Unipile's webhook payloads (/work/unipile-notes.md §8) as our InboundEvent:
//
//   messaging `message_received` → message.received   event id = message_id; direction `out` when the
//                                                      sender is the account itself (sender's
//                                                      attendee_provider_id = account_info.user_id:
//                                                      Unipile also reports the account's own sends)
//   users `new_relation`         → invitation.accepted event id = new_relation:<account>:<member>;
//                                                      Unipile names the member, not the invitation:
//                                                      invitationId is the member's provider id,
//                                                      recipient their profile URL; no time is given
//                                                      (it may come up to 8 h late): accepted = received
//   `{ AccountStatus: { account_id, account_type, message } }` → account.status
//        OK → connected; CREDENTIALS → disconnected credentials_expired; ERROR → disconnected error;
//        STOPPED → disconnected stopped; PERMISSIONS → disconnected permissions; DELETED →
//        disconnected deleted; CONNECTING, CREATION_SUCCESS, RECONNECTED → pending (the next OK
//        connects; a pending report changes nothing but the check time); event id =
//        account_status:<account>:<message>:<received ms> (the payload has neither id nor time)
//
// Anything else (message_read, message_reaction, message_edited, message_deleted, SYNC_SUCCESS, an
// unknown status or event) is null: acknowledged, not acted on. A payload of a known kind without its
// required fields is ConnectorError `invalid_request`. Unipile signs nothing: the webhook carries a
// secret header of ours (`UNIPILE_SECRET_HEADER`), checked by `checkWebhookSecret`.
import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { SIGNATURE_TOLERANCE_SECONDS } from '../inbound.js';
import { ConnectorError, type ConnectorAccountState, type InboundEvent } from '../types.js';
import { UNIPILE } from './client.js';
import { linkedinProfileUrl, when } from './wire.js';

/** The header our webhooks carry (set in their `headers` when registered): its value is UNIPILE_WEBHOOK_SECRET. */
export const UNIPILE_SECRET_HEADER = 'x-outreach-webhook-secret';

/** An id as our event ids allow it (letters, digits, `_ . : -`). */
const eventPart = z
  .string()
  .trim()
  .min(1)
  .max(120)
  .regex(/^[A-Za-z0-9_.:-]+$/, 'letters, digits and _ . : - only');

const attendee = z.object({
  attendee_provider_id: z.string().trim().min(1).max(200),
  attendee_profile_url: z.string().max(2048).nullish(),
});
const attachment = z.object({
  id: z.string().trim().min(1).max(200),
  file_name: z.string().max(500).nullish(),
  file_size: z.union([z.number(), z.string()]).nullish(),
});

const messageReceived = z.object({
  event: z.literal('message_received'),
  account_id: eventPart,
  account_info: z.object({ user_id: z.string().max(200).nullish() }).nullish(),
  chat_id: z.string().trim().min(1).max(200),
  message_id: eventPart,
  message: z.string().max(200_000).nullish(),
  timestamp: when,
  sender: attendee,
  // One object in the docs' example, a list in practice: both are read.
  attachments: z
    .union([attachment, z.array(attachment).max(100)])
    .nullish()
    .transform((v) => (v ? (Array.isArray(v) ? v : [v]) : [])),
});

const newRelation = z.object({
  event: z.literal('new_relation'),
  account_id: eventPart,
  user_provider_id: eventPart,
  user_public_identifier: z.string().max(200).nullish(),
  user_profile_url: z.string().max(2048).nullish(),
});

const accountStatus = z.object({
  AccountStatus: z.object({
    account_id: eventPart,
    account_type: z.string().max(40).nullish(),
    message: z.string().trim().min(1).max(40),
  }),
});

const ACCOUNT_STATES: Record<string, { state: ConnectorAccountState; reason: string | null }> = {
  OK: { state: 'connected', reason: null },
  CREDENTIALS: { state: 'disconnected', reason: 'credentials_expired' },
  ERROR: { state: 'disconnected', reason: 'error' },
  STOPPED: { state: 'disconnected', reason: 'stopped' },
  PERMISSIONS: { state: 'disconnected', reason: 'permissions' },
  DELETED: { state: 'disconnected', reason: 'deleted' },
  CONNECTING: { state: 'pending', reason: null },
  CREATION_SUCCESS: { state: 'pending', reason: null },
  RECONNECTED: { state: 'pending', reason: null },
};

function parsed<T extends z.ZodType>(schema: T, body: unknown, what: string): z.infer<T> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  throw new ConnectorError(
    UNIPILE,
    'invalid_request',
    `not a Unipile ${what} event: ${issue.path.join('.') || '(root)'}: ${issue.message}`,
  );
}

const sizeOf = (v: number | string | null | undefined) => {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : 0;
};

/**
 * A Unipile webhook's JSON body as an InboundEvent, or null for what we do not act on. `receivedAt`
 * stands for the time of payloads that carry none (new_relation, AccountStatus).
 */
export function parseUnipileWebhook(body: unknown, opts: { receivedAt?: Date } = {}): InboundEvent | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null;
  const b = body as Record<string, unknown>;
  const receivedAt = opts.receivedAt ?? new Date();

  if ('AccountStatus' in b) {
    const s = parsed(accountStatus, b, 'account status').AccountStatus;
    const mapped = ACCOUNT_STATES[s.message];
    if (!mapped) return null;
    return {
      type: 'account.status',
      eventId: `account_status:${s.account_id}:${s.message.replace(/[^A-Za-z0-9_]/g, '_')}:${receivedAt.getTime()}`,
      connectorAccountId: s.account_id,
      occurredAt: null,
      state: mapped.state,
      reason: mapped.reason,
    };
  }

  if (b.event === 'message_received') {
    const m = parsed(messageReceived, b, 'message');
    // A time in the future would make every later event about the thread look older (domain/event-order.ts).
    if (m.timestamp.getTime() > receivedAt.getTime() + SIGNATURE_TOLERANCE_SECONDS * 1000)
      throw new ConnectorError(UNIPILE, 'invalid_request', 'not a Unipile message event: timestamp: in the future');
    const self = m.account_info?.user_id ?? null;
    return {
      type: 'message.received',
      eventId: m.message_id,
      connectorAccountId: m.account_id,
      occurredAt: m.timestamp,
      message: {
        messageId: m.message_id,
        threadId: m.chat_id,
        direction: self !== null && m.sender.attendee_provider_id === self ? 'out' : 'in',
        from: m.sender.attendee_provider_id,
        body: m.message ?? '',
        sentAt: m.timestamp,
        attachments: m.attachments.map((a) => ({ id: a.id, name: a.file_name || a.id, size: sizeOf(a.file_size) })),
      },
    };
  }

  if (b.event === 'new_relation') {
    const r = parsed(newRelation, b, 'new relation');
    const url = r.user_profile_url && /^https?:\/\//i.test(r.user_profile_url) ? r.user_profile_url : null;
    return {
      type: 'invitation.accepted',
      eventId: `new_relation:${r.account_id}:${r.user_provider_id}`,
      connectorAccountId: r.account_id,
      occurredAt: null,
      invitationId: r.user_provider_id,
      recipient: url ?? (r.user_public_identifier ? linkedinProfileUrl(r.user_public_identifier) : r.user_provider_id),
      acceptedAt: receivedAt,
    };
  }

  return null;
}

/** Whether the request carries our webhook secret (constant time). No secret configured: false. */
export function checkWebhookSecret(headers: Record<string, string | undefined>, secret: string | null): boolean {
  if (!secret) return false;
  const got = Buffer.from(headers[UNIPILE_SECRET_HEADER] ?? '');
  const expected = Buffer.from(secret);
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/**
 * The connector's `parseInbound`: the secret header checked in constant time (ConnectorError `auth`),
 * the body parsed with `parseUnipileWebhook`; a payload we do not act on is null (the hooks route
 * answers 200 to it and stores nothing, or Unipile would retry it five times).
 */
export function verifyUnipileInbound(
  secret: string | null,
  rawBody: Buffer,
  headers: Record<string, string | undefined>,
  receivedAt = new Date(),
): InboundEvent | null {
  if (!secret) throw new ConnectorError(UNIPILE, 'auth', 'no webhook secret is configured (UNIPILE_WEBHOOK_SECRET)');
  if (!checkWebhookSecret(headers, secret))
    throw new ConnectorError(UNIPILE, 'auth', `the ${UNIPILE_SECRET_HEADER} header is missing or wrong`);
  let json: unknown;
  try {
    json = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new ConnectorError(UNIPILE, 'invalid_request', 'body is not JSON');
  }
  return parseUnipileWebhook(json, { receivedAt });
}
