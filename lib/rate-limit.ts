// Sliding-window-log rate limiting: a request is allowed when fewer than `limit` requests were
// allowed in the last `period` ms. Exact ("the 21st request inside any minute is refused") and
// without the double burst a fixed window allows at its edge. In Redis each key is a sorted set of
// the allowed requests' timestamps, checked and updated by one Lua script (atomic across API
// processes, clock taken from Redis). Refused requests are not recorded, so hammering does not
// extend a lockout. Memory is O(limit) per active caller.
//
// When Redis is unreachable we deliberately fail *soft*: the same algorithm runs in process memory,
// so each API process still enforces the limit on its own (a caller spread over N processes could
// get at most N times the limit) and the API stays up. The caller is told via `degraded` (logged;
// /readyz reports Redis down), never with a 5xx.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the caller may retry (0 when allowed). */
  retryAfter: number;
  /** Seconds until the oldest counted request leaves the window (a slot frees up). */
  reset: number;
  degraded: boolean;
}

const SCRIPT = `
local key, period, limit, member = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - period)
local count = redis.call('ZCARD', key)
local allowed = 0
if count < limit then
  redis.call('ZADD', key, now, member)
  redis.call('PEXPIRE', key, period)
  count = count + 1
  allowed = 1
end
local oldest = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2] or now)
return {allowed, limit - count, oldest + period - now}
`;

export interface RateLimiter {
  check(key: string, limit: number, periodMs: number): Promise<RateDecision>;
}

function decision(allowed: boolean, limit: number, remaining: number, untilOldestExpires: number, degraded: boolean): RateDecision {
  const reset = Math.max(0, Math.ceil(untilOldestExpires / 1000));
  return { allowed, limit, remaining: Math.max(0, remaining), retryAfter: allowed ? 0 : Math.max(1, reset), reset, degraded };
}

/** The in-memory twin of the Lua script, used while Redis is down. Bounded in keys. */
class MemoryWindow {
  private logs = new Map<string, number[]>();
  check(key: string, limit: number, periodMs: number, now = Date.now()): RateDecision {
    const log = (this.logs.get(key) ?? []).filter((ts) => ts > now - periodMs);
    const allowed = log.length < limit;
    if (allowed) log.push(now);
    this.logs.delete(key); // re-insert: the Map's order is least recently used first
    this.logs.set(key, log);
    if (this.logs.size > 10_000) this.logs.delete(this.logs.keys().next().value as string);
    return decision(allowed, limit, limit - log.length, (log[0] ?? now) + periodMs - now, true);
  }
}

type WithWindow = Redis & { slidingWindow(key: string, period: number, limit: number, member: string): Promise<number[]> };

export function createRateLimiter(redis: Redis, onDegraded: (err: unknown) => void = () => {}): RateLimiter {
  const memory = new MemoryWindow();
  // A defined command runs as EVALSHA (the script is sent once, not with every request).
  if (!('slidingWindow' in redis)) redis.defineCommand('slidingWindow', { numberOfKeys: 1, lua: SCRIPT });
  const r = redis as WithWindow;
  return {
    async check(key, limit, periodMs) {
      try {
        const [ok, remaining, untilOldest] = await r.slidingWindow(key, periodMs, limit, randomUUID());
        return decision(ok === 1, limit, remaining, untilOldest, false);
      } catch (err) {
        onDegraded(err);
        return memory.check(key, limit, periodMs);
      }
    },
  };
}
