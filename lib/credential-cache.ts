// In-process cache of resolved bearer credentials, keyed by the SHA-256 of the token, so an
// authenticated request costs no database round trip on a hit. Correctness rests on three rules:
//  1. Entries live at most `ttlMs` (and never past the credential's own expiry).
//  2. Every change that can revoke or alter a credential (logout, token delete, session revoke,
//     password change, membership removal, profile edit) calls `credentialsChanged(userId)` after its
//     commit; the API process drops the user's entries and publishes the user id on Redis, and every
//     other API process drops them on receipt.
//  3. While the invalidation channel is not subscribed (Redis down or reconnecting) the cache is
//     bypassed and emptied, because invalidations could be missed. A load that started before an
//     invalidation is not stored (an epoch check), so a stale read cannot repopulate it.
import type { Redis } from 'ioredis';

export interface CacheEntry<V> {
  userId: string;
  value: V;
  expiresAt: number;
}

export class CredentialCache<V> {
  private entries = new Map<string, CacheEntry<V>>();
  private epochValue = 0;
  enabled = true;

  constructor(
    readonly ttlMs: number,
    readonly maxEntries = 10_000,
  ) {}

  get epoch(): number {
    return this.epochValue;
  }

  get(key: string, now = Date.now()): V | undefined {
    if (!this.enabled) return undefined;
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  /** Stores a value loaded since `epoch`; refused when an invalidation happened in between. */
  set(key: string, userId: string, value: V, epoch: number, notAfter = Infinity, now = Date.now()): void {
    if (!this.enabled || epoch !== this.epochValue || this.ttlMs === 0) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { userId, value, expiresAt: Math.min(now + this.ttlMs, notAfter) });
  }

  dropUser(userId: string): void {
    this.epochValue++;
    for (const [k, e] of this.entries) if (e.userId === userId) this.entries.delete(k);
  }

  clear(): void {
    this.epochValue++;
    this.entries.clear();
  }
}

// Domain code announces credential changes here; the API process wires the announcement to its
// cache and to Redis. Processes with no listener (the worker, CLIs) have nothing cached.
type Listener = (userId: string) => Promise<void> | void;
const listeners = new Set<Listener>();

export function onCredentialsChanged(fn: Listener): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/**
 * Call after the transaction that revoked or changed something of this user has committed. Resolves
 * once the invalidation is published, so the response that reports the revocation is sent after
 * every other API process has been told.
 */
export async function credentialsChanged(userId: string): Promise<void> {
  await Promise.all([...listeners].map((fn) => fn(userId)));
}

/**
 * Connects a cache to the Redis invalidation channel: publishes local changes, applies remote ones,
 * and keeps the cache disabled whenever the subscription is not live.
 */
export async function linkCachesToRedis(
  caches: CredentialCache<unknown>[],
  redis: Redis,
  channel: string,
  warn: (msg: string, err?: unknown) => void,
): Promise<{ close(): void }> {
  const sub = redis.duplicate({ enableOfflineQueue: true, commandTimeout: undefined, maxRetriesPerRequest: null });
  sub.on('error', () => {});
  const down = () => {
    if (caches.some((c) => c.enabled)) warn('credential cache bypassed: invalidation channel not subscribed');
    for (const c of caches) {
      c.enabled = false;
      c.clear();
    }
  };
  down();
  sub.on('close', down);
  sub.on('end', down);
  sub.on('message', (ch: string, userId: string) => {
    if (ch === channel) for (const c of caches) c.dropUser(userId);
  });
  let first: () => void = () => {};
  const subscribed = new Promise<void>((res) => (first = res));
  const subscribe = async () => {
    try {
      await sub.subscribe(channel); // idempotent; ioredis also resubscribes after a reconnect
      for (const c of caches) {
        c.clear();
        c.enabled = true;
      }
      first();
    } catch (err) {
      warn('credential cache: subscribe failed', err);
    }
  };
  sub.on('ready', () => void subscribe());
  if (sub.status === 'ready') void subscribe();
  // Start-up waits briefly for the channel; until it is live the cache simply stays bypassed.
  await Promise.race([subscribed, new Promise((res) => setTimeout(res, 2000).unref())]);
  const unlisten = onCredentialsChanged(async (userId) => {
    for (const c of caches) c.dropUser(userId);
    await redis.publish(channel, userId).catch((err) => warn('credential invalidation not published', err));
  });
  return {
    close() {
      unlisten();
      sub.disconnect();
    },
  };
}
