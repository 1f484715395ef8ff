import { randomBytes } from 'node:crypto';

/** UUID v7 (RFC 9562): 48-bit millisecond timestamp, then random bits; sorts by creation time. */
// Entropy is drawn 4 KiB at a time: one getrandom call per 256 ids instead of one per id.
let pool = Buffer.alloc(0);
let offset = 0;
function random16(): Buffer {
  if (offset + 16 > pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  const b = Buffer.from(pool.subarray(offset, offset + 16)); // a copy: the pool is reused
  offset += 16;
  return b;
}

export function uuidv7(now = Date.now()): string {
  const b = random16();
  b.writeUIntBE(now, 0, 6);
  b[6] = (b[6] & 0x0f) | 0x70;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The smallest UUIDv7 of a millisecond: ids below it were minted earlier (a time bound on a UUIDv7 key). */
export const uuidv7Floor = (ms: number): string => `${uuidv7(ms).slice(0, 13)}-7000-8000-000000000000`;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: unknown): s is string => typeof s === 'string' && UUID_RE.test(s);
