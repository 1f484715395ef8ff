// GCRA (generic cell rate algorithm) rate limiting. In Redis the check-and-update is one Lua script,
// so it is atomic across API processes and has no burst at window edges: each request pushes a
// "theoretical arrival time" forward by period/limit, and a request is refused while that time is
// more than one period ahead of now.
//
// When Redis is unreachable we deliberately fail *soft*: the same algorithm runs in process memory,
// so each API process still enforces the limit on its own (a caller spread over N processes could
// get at most N times the limit) and the API stays up. The choice is logged and surfaced in the
// `RateLimit-Policy` header as `;degraded`, never as a 5xx.
import type { Redis } from 'ioredis';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the caller may retry (0 when allowed). */
  retryAfter: number;
  /** Seconds until the bucket is full again. */
  reset: number;
  degraded: boolean;
}

const SCRIPT = `
local key = KEYS[1]
local period = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = period / limit
local tat = tonumber(redis.call('GET', key) or now)
if tat < now then tat = now end
local new_tat = tat + interval
local allow_at = new_tat - period
if now < allow_at then
  return {0, 0, math.ceil(allow_at - now), math.ceil(tat - now)}
end
redis.call('SET', key, tostring(new_tat), 'PX', math.ceil(new_tat - now))
local remaining = math.floor((period - (new_tat - now)) / interval)
return {1, remaining, 0, math.ceil(new_tat - now)}
`;

export interface RateLimiter {
  check(key: string, limit: number, periodMs: number): Promise<RateDecision>;
}

/** The in-memory twin of the Lua script, used when Redis is down. Bounded: old keys are evicted. */
class MemoryGcra {
  private tats = new Map<string, number>();
  check(key: string, limit: number, periodMs: number, now = Date.now()): Omit<RateDecision, 'degraded'> {
    const interval = periodMs / limit;
    const tat = Math.max(this.tats.get(key) ?? now, now);
    const newTat = tat + interval;
    const allowAt = newTat - periodMs;
    if (now < allowAt) {
      return { allowed: false, limit, remaining: 0, retryAfter: Math.ceil((allowAt - now) / 1000), reset: Math.ceil((tat - now) / 1000) };
    }
    this.tats.delete(key);
    this.tats.set(key, newTat);
    if (this.tats.size > 100_000) this.tats.delete(this.tats.keys().next().value as string);
    const remaining = Math.floor((periodMs - (newTat - now)) / interval);
    return { allowed: true, limit, remaining, retryAfter: 0, reset: Math.ceil((newTat - now) / 1000) };
  }
}

export function createRateLimiter(redis: Redis, onDegraded: (err: unknown) => void = () => {}): RateLimiter {
  const memory = new MemoryGcra();
  return {
    async check(key, limit, periodMs) {
      try {
        const [ok, remaining, retryMs, resetMs] = (await redis.eval(SCRIPT, 1, key, periodMs, limit)) as number[];
        return {
          allowed: ok === 1,
          limit,
          remaining,
          retryAfter: Math.ceil(retryMs / 1000),
          reset: Math.ceil(resetMs / 1000),
          degraded: false,
        };
      } catch (err) {
        onDegraded(err);
        return { ...memory.check(key, limit, periodMs), degraded: true };
      }
    },
  };
}
