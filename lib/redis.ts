import { Redis } from 'ioredis';

/**
 * A client that fails fast while Redis is down, so request paths that use Redis degrade instead of
 * hanging: no offline queue (a command issued while disconnected is rejected at once instead of
 * waiting for the reconnection), a 1 s command timeout (a Redis that accepts but does not answer),
 * and reconnection every 2 s at most, for ever, so the process uses Redis again once it is back.
 */
export function connectRedis(url: string): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    commandTimeout: 1000,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    // Commands issued in the same tick share one write: under load, many rate-limit checks per syscall.
    enableAutoPipelining: true,
  });
  // Connection errors are expected while Redis is down: each command's failure reaches its caller,
  // and /readyz reports it. (Unheard, ioredis prints every reconnection failure to stderr.)
  redis.on('error', () => {});
  return redis;
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
