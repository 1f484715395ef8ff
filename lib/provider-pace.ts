// The pace of calls to an external service, per credential: a token bucket at the service's documented
// rate (HubSpot's 100 per 10 s per app install, Hunter's 15 per second per key, …). A call waits for a
// token instead of failing, and a 429's reset (Retry-After, X-RateLimit-Reset) pauses the credential
// until then, so the next calls wait rather than be refused again. Per process: each process keeps
// within the rate on its own (the docs of each service say how the budget divides between them).
import { createHash } from 'node:crypto';

export interface Rate {
  /** Calls allowed in a burst (the bucket's size). */
  burst: number;
  /** One token comes back every this many ms. */
  everyMs: number;
}

interface Bucket {
  tokens: number;
  at: number;
  pausedUntil: number;
}

/** Waits longer than this are a failure of the caller's budget, not a pace: the call is refused. */
export const MAX_PACE_WAIT_MS = 120_000;

export class ProviderPace {
  private buckets = new Map<string, Bucket>();
  constructor(
    private readonly rate: Rate,
    private readonly now: () => number = Date.now,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  /** The credential is never kept in memory as such, only its digest. */
  private bucket(credential: string): Bucket {
    const key = createHash('sha256').update(credential).digest('base64url').slice(0, 22);
    let b = this.buckets.get(key);
    if (!b) {
      b = { tokens: this.rate.burst, at: this.now(), pausedUntil: 0 };
      this.buckets.set(key, b);
      if (this.buckets.size > 10_000) this.buckets.delete(this.buckets.keys().next().value as string);
    }
    return b;
  }

  /** How long the next call of this credential must wait (0: now), without taking a token. */
  private wait(b: Bucket): number {
    const now = this.now();
    const refilled = Math.min(this.rate.burst, b.tokens + (now - b.at) / this.rate.everyMs);
    b.tokens = refilled;
    b.at = now;
    const paused = Math.max(0, b.pausedUntil - now);
    const empty = refilled >= 1 ? 0 : Math.ceil((1 - refilled) * this.rate.everyMs);
    return Math.max(paused, empty);
  }

  /** Resolves when the credential may make one call (its token taken); throws past MAX_PACE_WAIT_MS. */
  async take(credential: string): Promise<void> {
    const b = this.bucket(credential);
    for (let ms = this.wait(b); ms > 0; ms = this.wait(b)) {
      if (ms > MAX_PACE_WAIT_MS) throw new PaceExceeded(ms);
      await this.sleep(ms);
    }
    b.tokens -= 1;
  }

  /** The service said "not before `until`" (a 429's reset): calls of this credential wait until then. */
  pause(credential: string, until: Date): void {
    const b = this.bucket(credential);
    b.pausedUntil = Math.max(b.pausedUntil, until.getTime());
  }
}

export class PaceExceeded extends Error {
  constructor(readonly waitMs: number) {
    super(`the service's rate allows the next call in ${Math.ceil(waitMs / 1000)} s`);
  }
}
