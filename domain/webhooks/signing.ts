// Signing of outbound subscription webhooks: the ONE place that builds a delivery's headers, used by
// real deliveries and both test routes (docs/webhooks.md, "Envelope, headers, signature").
//
// Two schemes side by side:
// - the spec's `X-Service-Signature: sha256=<hex>`: HMAC-SHA256 of the raw body, keyed with the whole
//   secret string (`whsec_…` included), unchanged;
// - Standard Webhooks (https://www.standardwebhooks.com): `webhook-id`, `webhook-timestamp`,
//   `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed with the bytes the
//   secret's remainder encodes in base64 — so the libraries verify with the secret as shown.
import { createHash, createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/**
 * `whsec_` + standard base64 (padded) of 32 random bytes: 256 bits, and the form Standard Webhooks
 * libraries decode. Subscriptions created before this form carry base64url without padding (see
 * `standardSigningKey`).
 */
export const newWebhookSecret = (): string => `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;

/** The spec's `sha256=<64 lowercase hex>` over the exact body bytes, keyed with the whole secret string. */
export const signatureHeader = (secret: string, body: string | Buffer): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

const STD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const BASE64URL_UNPADDED = /^[A-Za-z0-9_-]+$/;

/**
 * The Standard Webhooks key of a secret, and how it was read:
 * - `base64`: the remainder after `whsec_` is strict, padded standard base64 (every secret issued now):
 *   libraries accept the secret as is;
 * - `legacy_base64url`: the remainder is unpadded base64url (secrets issued before): the key is the
 *   same 32 random bytes, but libraries need the secret rewritten to standard base64 first
 *   (`toStandardSecret`), since their decoders refuse `-`, `_` and missing padding;
 * - `raw`: anything else (never issued; a hand-made secret): the key is the UTF-8 bytes of the whole
 *   secret, the spec's key, verifiable with the libraries' raw-key mode.
 */
export function standardSigningKey(secret: string): { key: Buffer; form: 'base64' | 'legacy_base64url' | 'raw' } {
  const rest = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (rest.length > 0 && STD_BASE64.test(rest)) return { key: Buffer.from(rest, 'base64'), form: 'base64' };
  // length % 4 === 1 cannot be base64 of anything.
  if (BASE64URL_UNPADDED.test(rest) && rest.length % 4 !== 1)
    return { key: Buffer.from(rest, 'base64url'), form: 'legacy_base64url' };
  return { key: Buffer.from(secret, 'utf8'), form: 'raw' };
}

/** A legacy (base64url) secret in the form Standard Webhooks libraries accept; other secrets unchanged. */
export function toStandardSecret(secret: string): string {
  const { key, form } = standardSigningKey(secret);
  return form === 'legacy_base64url' ? `${SECRET_PREFIX}${key.toString('base64')}` : secret;
}

/**
 * `webhook-id`: the same for every attempt of one event to one subscription (receivers deduplicate
 * on it), different across subscriptions. Derived, not stored, so a retried activity or a resend
 * after a lost record gives the same value. Test deliveries pass their attempt id as `messageKey`.
 */
export const webhookMessageId = (messageKey: string, subscriptionId: string | null): string =>
  `msg_${createHash('sha256')
    .update(`${messageKey}:${subscriptionId ?? ''}`)
    .digest()
    .subarray(0, 16)
    .toString('base64url')}`;

/** `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` with the Standard Webhooks key. */
export function standardSignature(secret: string, id: string, timestamp: number, body: string | Buffer): string {
  const mac = createHmac('sha256', standardSigningKey(secret).key)
    .update(`${id}.${timestamp}.`)
    .update(body)
    .digest('base64');
  return `v1,${mac}`;
}

export interface SignInput {
  secret: string;
  /**
   * The secret a rotation replaced, while its overlap lasts (POST …/{id}/rotate-secret): then
   * `webhook-signature` carries two signatures, `v1,<with secret> v1,<with previousSecret>` (space-separated,
   * as Standard Webhooks allows), and `X-Service-Signature`, which has room for one, stays keyed with
   * `previousSecret` until the overlap ends (receivers that changed nothing keep verifying).
   */
  previousSecret?: string;
  event: string;
  /** Exact body bytes, sent as is. */
  body: string;
  /** `webhookMessageId(...)`. */
  webhookId: string;
  /** The recorded attempt's id (`webhook_deliveries.id`); absent for test-url (nothing recorded). */
  deliveryId?: string;
  /** Time of this attempt (default now). */
  at?: Date;
}

/** Every header a delivery carries besides Content-Type and User-Agent. */
export function deliveryHeaders(input: SignInput): Record<string, string> {
  const timestamp = Math.floor((input.at ?? new Date()).getTime() / 1000);
  return {
    'X-Service-Event': input.event,
    'X-Service-Signature': signatureHeader(input.previousSecret ?? input.secret, input.body),
    ...(input.deliveryId ? { 'X-Service-Delivery': input.deliveryId } : {}),
    'webhook-id': input.webhookId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': [input.secret, ...(input.previousSecret === undefined ? [] : [input.previousSecret])]
      .map((secret) => standardSignature(secret, input.webhookId, timestamp, input.body))
      .join(' '),
  };
}

export interface DeliveryHeaderDoc {
  name: string;
  in: 'header';
  required: boolean;
  description: string;
  schema: { type: 'string'; pattern?: string };
  example: string;
}

/**
 * The request headers of every outbound delivery, as OpenAPI 3.1 header parameters (for the
 * document's `webhooks` section: api/openapi.ts imports this rather than restating it).
 */
export const WEBHOOK_DELIVERY_HEADERS: readonly DeliveryHeaderDoc[] = [
  {
    name: 'X-Service-Event',
    in: 'header',
    required: true,
    description: 'The event name (same as the envelope `event`).',
    schema: { type: 'string' },
    example: 'lead.discovered',
  },
  {
    name: 'X-Service-Signature',
    in: 'header',
    required: true,
    description:
      '`sha256=` + lowercase hex HMAC-SHA256 of the exact raw body, keyed with the whole subscription secret string (`whsec_…` included). Compare in constant time before parsing. During the overlap of a secret rotation (beyond the spec), keyed with the previous secret until the overlap ends.',
    schema: { type: 'string', pattern: '^sha256=[0-9a-f]{64}$' },
    example: 'sha256=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd',
  },
  {
    name: 'X-Service-Delivery',
    in: 'header',
    required: false,
    description:
      'UUID of this attempt (its `webhook_deliveries` record); a new value on every attempt. Absent on test-url deliveries, which are not recorded. Deduplicate on `webhook-id`, not on this.',
    schema: { type: 'string' },
    example: '0190f5d2-7c1a-7b3e-9a10-2f1c3d4e5a10',
  },
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description:
      'Standard Webhooks message id: identical on every attempt of one event to one subscription, different across subscriptions. Deduplicate on it.',
    schema: { type: 'string', pattern: '^msg_[A-Za-z0-9_-]{22}$' },
    example: 'msg_mC2Ukv1Qd8O1a3Zf3bV0xg',
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Unix time in seconds of this attempt (signed). Reject values more than 5 minutes from your clock.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
    example: '1735689600',
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed with base64-decode(secret without `whsec_`). Verifiable with any Standard Webhooks library given the secret as shown. During the overlap of a secret rotation (beyond the spec), two space-separated signatures: `v1,<with the new secret> v1,<with the previous one>`; a library accepts either secret.',
    schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]{43}=(?: v1,[A-Za-z0-9+/]{43}=)?$' },
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  },
];
