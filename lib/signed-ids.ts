// Tokens that name ids and prove we made them (the unsubscribe link, the tracking URLs): the ids'
// bytes and an HMAC of them, nothing stored and nothing looked up before the signature holds. Each
// use signs under its own key, derived from the service's secret with HKDF under the use's label:
// a key serves one purpose (an unsubscribe token never passes as a tracking one), and a label's
// version lets a format change without confusion.
import { createHmac, hkdfSync } from 'node:crypto';
import { safeEqual } from './crypto.js';

/** Bytes of the MAC kept in a token (128 bits: forging one is out of reach; links stay short). */
const MAC_BYTES = 16;
const TOKEN = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{22})$/;

const derived = new WeakMap<Buffer, Map<string, Buffer>>();
function signingKey(secret: Buffer, label: string): Buffer {
  let keys = derived.get(secret);
  if (!keys) derived.set(secret, (keys = new Map()));
  let key = keys.get(label);
  if (!key) keys.set(label, (key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), label, 32))));
  return key;
}

const mac = (secret: Buffer, label: string, payload: Buffer): string =>
  createHmac('sha256', signingKey(secret, label)).update(payload).digest().subarray(0, MAC_BYTES).toString('base64url');
const uuidOf = (b: Buffer): string => {
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

/** `base64url(the ids' bytes, in order).base64url(HMAC-SHA256 under the label's key, truncated to 128 bits)`. */
export function signIds(secret: Buffer, label: string, ids: readonly string[]): string {
  const payload = Buffer.concat(
    ids.map((id) => {
      const b = Buffer.from(id.replace(/-/g, ''), 'hex');
      if (b.length !== 16) throw new Error(`${label} token: not a uuid: ${id}`);
      return b;
    }),
  );
  return `${payload.toString('base64url')}.${mac(secret, label, payload)}`;
}

/**
 * The `count` ids a token names, or null when it is malformed, names another number of ids, or its
 * signature does not hold (compared in constant time). One spelling per token: the payload's last
 * character's unused bits must be zero (the MAC's spelling is fixed by the comparison).
 */
export function readSignedIds(secret: Buffer, label: string, token: string, count: number): string[] | null {
  const m = TOKEN.exec(token);
  // The payload's length is known before anything is decoded: 16 bytes per id, unpadded base64url.
  if (!m || m[1].length !== Math.ceil((16 * count * 4) / 3)) return null;
  const payload = Buffer.from(m[1], 'base64url');
  if (payload.length !== 16 * count || payload.toString('base64url') !== m[1]) return null;
  if (!safeEqual(mac(secret, label, payload), m[2])) return null;
  return Array.from({ length: count }, (_, i) => uuidOf(payload.subarray(16 * i, 16 * (i + 1))));
}
