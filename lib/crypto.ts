// Hashing and comparison of secrets. Passwords use scrypt (memory-hard, built into Node);
// bearer secrets are high-entropy, so a SHA-256 digest is enough to store and look them up.
import { createCipheriv, createDecipheriv, createHash, hash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 };

function scryptAsync(password: string, salt: Buffer, o: typeof SCRYPT): Promise<Buffer> {
  return new Promise((res, rej) =>
    scrypt(password, salt, o.keylen, { N: o.N, r: o.r, p: o.p, maxmem: 64 * 1024 * 1024 }, (e, k) =>
      e ? rej(e) : res(k),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, N, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64url'), {
    N: +N,
    r: +r,
    p: +p,
    keylen: expected.length,
  });
  return timingSafeEqual(actual, expected);
}

/** A hash to compare against when the user does not exist, so login timing does not reveal it. */
export const DUMMY_PASSWORD_HASH = `scrypt$16384$8$1$${Buffer.alloc(16).toString('base64url')}$${Buffer.alloc(32).toString('base64url')}`;

/** One-shot (no Hash object per call: it runs for every authenticated request). */
export const sha256Hex = (s: string | Buffer): string => hash('sha256', s, 'hex');

/** A random bearer secret with a readable prefix, e.g. `pat_…` (256 bits of entropy). */
export const randomSecret = (prefix: string, bytes = 32): string =>
  `${prefix}${randomBytes(bytes).toString('base64url')}`;

/** Constant-time string equality that does not throw on length mismatch. */
export function safeEqual(a: string, b: string): boolean {
  const x = createHash('sha256').update(a).digest();
  const y = createHash('sha256').update(b).digest();
  return timingSafeEqual(x, y) && a.length === b.length;
}

/** AES-256-GCM for secrets the service must read back (stored as iv.tag.ciphertext, base64url). */
export function encrypt(plain: string, key: Buffer): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return [iv, c.getAuthTag(), body].map((b) => b.toString('base64url')).join('.');
}

export function decrypt(sealed: string, key: Buffer): string {
  const [iv, tag, body] = sealed.split('.').map((s) => Buffer.from(s, 'base64url'));
  const d = createDecipheriv('aes-256-gcm', key, iv);
  d.setAuthTag(tag);
  return Buffer.concat([d.update(body), d.final()]).toString('utf8');
}
