// Sliding-window-log rate limiting: a request is allowed when fewer than `limit` requests were
// allowed in the last `period` ms. Exact ("the 21st request inside any minute is refused") and
// without the double burst a fixed window allows at its edge. In Redis each key is a sorted set of
// the allowed requests' timestamps, checked and updated by one Lua script (atomic across API
// processes, clock taken from Redis); the checks of one key made within one turn of the event loop
// share one run of it, decided in order as separate runs would decide them. Refused requests are not recorded, so hammering does not
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

// Checks `n` requests of one key at once (the checks of that key within one turn of the event loop):
// they are taken in order, as n calls of a one-request script at the same Redis time would take
// them. Returns how many were allowed, the count before them and the oldest counted request.
const SCRIPT = `
local key, period, limit, n, prefix, seq = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - period)
local count = redis.call('ZCARD', key)
local allowed = math.max(0, math.min(n, limit - count))
if allowed > 0 then
  local args = {}
  for i = 0, allowed - 1 do
    args[2 * i + 1] = now
    args[2 * i + 2] = prefix .. ':' .. (seq + i)
  end
  redis.call('ZADD', key, unpack(args))
  redis.call('PEXPIRE', key, period)
end
local oldest = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2] or now)
return {allowed, count, oldest + period - now}
`;

export interface RateLimiter {
  check(key: string, limit: number, periodMs: number): Promise<RateDecision>;
}

function decision(
  allowed: boolean,
  limit: number,
  remaining: number,
  untilOldestExpires: number,
  degraded: boolean,
): RateDecision {
  const reset = Math.max(0, Math.ceil(untilOldestExpires / 1000));
  return {
    allowed,
    limit,
    remaining: Math.max(0, remaining),
    retryAfter: allowed ? 0 : Math.max(1, reset),
    reset,
    degraded,
  };
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

/** Checks of one key waiting for the same script call. */
interface Pending {
  key: string;
  limit: number;
  periodMs: number;
  waiters: ((d: RateDecision) => void)[];
}

/** At most this many checks of one key share a script call (its ZADD arguments stay small). */
const MAX_COALESCED = 256;

type WindowPipeline = {
  slidingWindowN(key: string, period: number, limit: number, n: number, prefix: string, seq: number): void;
  exec(): Promise<[Error | null, unknown][] | null>;
};

export function createRateLimiter(redis: Redis, onDegraded: (err: unknown) => void = () => {}): RateLimiter {
  const memory = new MemoryWindow();
  // A defined command runs as EVALSHA (the script is sent once, not with every request).
  if (!('slidingWindowN' in redis)) redis.defineCommand('slidingWindowN', { numberOfKeys: 1, lua: SCRIPT });
  // Sorted-set members only need to be unique: a per-process random prefix and a counter.
  const instance = randomUUID();
  let seq = 0;
  // The checks made within one turn of the event loop go to Redis together, in one pipeline (one
  // write), and the checks of one key among them share one script call: one command, one reply and
  // one Lua run for a busy caller's concurrent requests instead of one each. Decided in order,
  // exactly as separate calls arriving together would be.
  let pending = new Map<string, Pending>();
  let full: Pending[] = [];
  let scheduled = false;

  const degrade = (p: Pending, err: unknown) => {
    onDegraded(err);
    for (const resolve of p.waiters) resolve(memory.check(p.key, p.limit, p.periodMs));
  };

  function flush(): void {
    scheduled = false;
    const batches = [...full, ...pending.values()];
    pending = new Map();
    full = [];
    const pipeline = redis.pipeline() as unknown as WindowPipeline;
    for (const p of batches) {
      pipeline.slidingWindowN(p.key, p.periodMs, p.limit, p.waiters.length, instance, seq + 1);
      seq += p.waiters.length;
    }
    pipeline.exec().then(
      (results) => {
        batches.forEach((p, b) => {
          const [err, reply] = results?.[b] ?? [new Error('no reply'), null];
          if (err) return degrade(p, err);
          const [allowed, before, untilOldest] = reply as number[];
          p.waiters.forEach((resolve, i) => {
            const ok = i < allowed;
            resolve(decision(ok, p.limit, p.limit - before - (ok ? i + 1 : allowed), untilOldest, false));
          });
        });
      },
      (err: unknown) => batches.forEach((p) => degrade(p, err)),
    );
  }

  return {
    check(key, limit, periodMs) {
      return new Promise<RateDecision>((resolve) => {
        const id = `${limit}:${periodMs}:${key}`;
        let p = pending.get(id);
        if (!p || p.waiters.length >= MAX_COALESCED) {
          if (p) full.push(p);
          pending.set(id, (p = { key, limit, periodMs, waiters: [] }));
        }
        p.waiters.push(resolve);
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
  };
}
