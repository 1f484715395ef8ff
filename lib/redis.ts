import { Redis } from 'ioredis';

/**
 * A client that fails fast while Redis is down (no offline queue, short command timeout), so
 * request paths that use Redis can degrade instead of hanging.
 */
export function connectRedis(url: string): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    commandTimeout: 1000,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    // Commands issued in the same tick share one write: under load, many rate-limit checks per syscall.
    enableAutoPipelining: true,
  });
}

/** Waits for the first connection (bounded), so a process does not start out degraded. */
export async function redisReady(redis: Redis, timeoutMs = 5000): Promise<boolean> {
  if (redis.status === 'ready') return true;
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(false), timeoutMs);
    const done = (ok: boolean) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      resolve(ok);
    };
    const onReady = () => done(true);
    redis.on('ready', onReady);
  });
}
