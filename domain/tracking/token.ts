// The signed token of an email's tracking URLs (docs/tracking.md "The URLs"). One token per sent
// email (scheduled action): the open pixel and every link redirect of that email carry it. Signed as
// the unsubscribe token is (domain/suppressions/unsubscribe.ts), under its own derived key: nothing to
// store, nothing looked up before the signature holds, and a token names one action only.
import { createHmac, hkdfSync } from 'node:crypto';
import { safeEqual } from '../../lib/crypto.js';

/** What signs tracking URLs: the service's encryption key and public base URL (a Config is one). */
export interface TrackingSigning {
  encryptionKey: Buffer;
  publicBaseUrl: string;
}

/** Bytes of the MAC kept in a token (128 bits: forging one is out of reach; the URL stays short). */
const MAC_BYTES = 16;
/** `base64url(16 id bytes)` (22 characters) `.` `base64url(MAC)` (22 characters). */
const TOKEN = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{22})$/;

// The HMAC key is derived (HKDF-SHA256, label `tracking-v1`) rather than the encryption key used as
// is: a key serves one purpose (an unsubscribe token can never pass as a tracking one, nor the
// reverse), and the label's version lets the format change without confusion.
const derived = new WeakMap<Buffer, Buffer>();
function signingKey(secret: Buffer): Buffer {
  let key = derived.get(secret);
  if (!key) derived.set(secret, (key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'tracking-v1', 32))));
  return key;
}

const mac = (secret: Buffer, payload: Buffer): string => createHmac('sha256', signingKey(secret)).update(payload).digest().subarray(0, MAC_BYTES).toString('base64url');
const uuidBytes = (id: string): Buffer => Buffer.from(id.replace(/-/g, ''), 'hex');
const uuidOf = (b: Buffer): string => {
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

/** `base64url(action id bytes).base64url(HMAC-SHA256 truncated to 128 bits)`. */
export function trackingToken(secret: Buffer, actionId: string): string {
  const payload = uuidBytes(actionId);
  if (payload.length !== 16) throw new Error(`tracking token: not a uuid: ${actionId}`);
  return `${payload.toString('base64url')}.${mac(secret, payload)}`;
}

/** The action id a token names, or null when it is malformed or its signature does not hold (compared in constant time). */
export function readTrackingToken(secret: Buffer, token: string): string | null {
  const m = TOKEN.exec(token);
  if (!m) return null;
  const payload = Buffer.from(m[1], 'base64url');
  // One spelling per token: the last character's unused bits must be zero (the MAC's spelling is
  // fixed by the comparison with the canonical one).
  if (payload.length !== 16 || payload.toString('base64url') !== m[1]) return null;
  if (!safeEqual(mac(secret, payload), m[2])) return null;
  return uuidOf(payload);
}

/** The path prefix of every tracking URL (short: the URLs stand in every link of a tracked email). */
export const TRACKING_PREFIX = '/t';

/**
 * The tracking URLs of one sent email, under the public base URL: `open` the pixel
 * (`/t/<token>/open.gif`), `click(i)` the redirect to the body's link i (`/t/<token>/l/<i>`, i in
 * `linksOf` order). What the executor hands the mail connector as `SendEmailInput.tracking`.
 */
export function trackingUrls(signing: TrackingSigning, actionId: string): { open: string; click: (index: number) => string } {
  const base = `${signing.publicBaseUrl.replace(/\/+$/, '')}${TRACKING_PREFIX}/${trackingToken(signing.encryptionKey, actionId)}`;
  return { open: `${base}/open.gif`, click: (index: number) => `${base}/l/${index}` };
}
