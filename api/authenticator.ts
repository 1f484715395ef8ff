// Bearer authentication on the request path: the credential cache first (no round trip on a hit),
// else one database round trip; failed attempts count against a per-IP limit. A throttled (blocked)
// address is refused before any database work, except for a credential proven authentic without the
// database (a session JWT's signature, a personal access token's tag), so one bad client behind a
// shared address does not lock out the others. Acting-as identities are cached beside the credentials.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../lib/config.js';
import { sha256Hex } from '../lib/crypto.js';
import { CredentialCache } from '../lib/credential-cache.js';
import { authLookups } from '../lib/metrics.js';
import type { RateLimiter } from '../lib/rate-limit.js';
import {
  bearerToken,
  loadCredential,
  UsageRecorder,
  verifyBearer,
  type ResolvedCredential,
  type VerifiedBearer,
} from '../domain/auth/auth.js';
import { AppError, unauthorized } from '../domain/errors.js';
import type { Actor } from '../domain/identity.js';
import { resolveActor } from '../domain/workspaces.js';
import { isUuid } from '../lib/ids.js';

const WINDOW_MS = 60_000;
/**
 * Database lookups per minute a blocked address may spend on personal access tokens that carry no
 * tag (minted before tags existed), so their owners are not locked out entirely.
 */
export const BLOCKED_UNTAGGED_LOOKUPS_PER_MINUTE = 5;
/** How long a personal access token that failed its lookup is answered from memory (it cannot become valid). */
const KNOWN_BAD_PAT_MS = 10 * 60_000;

/** Per-IP limit on failed authentications. The local block list makes a throttled IP cost nothing. */
class FailureThrottle {
  private blocked = new Map<string, number>();
  private budgetSpent = new Map<string, number>();
  constructor(
    private limiter: RateLimiter,
    private limit: number,
  ) {}

  /** Seconds until a blocked address is unblocked; undefined when it is not blocked. */
  blockedFor(ip: string, now = Date.now()): number | undefined {
    const until = this.blocked.get(ip);
    if (until === undefined) return undefined;
    if (until <= now) {
      this.blocked.delete(ip);
      this.budgetSpent.delete(ip);
      return undefined;
    }
    return Math.max(1, Math.ceil((until - now) / 1000));
  }

  /** A blocked address's lookup of an untagged token: refused (429) once the small per-minute budget is spent. */
  async spendBlockedLookup(ip: string, now = Date.now()): Promise<void> {
    const spent = this.budgetSpent.get(ip);
    if (spent !== undefined && spent > now)
      throw this.refusal(this.blockedFor(ip, now) ?? Math.ceil((spent - now) / 1000));
    const d = await this.limiter.check(
      `rl:auth-blocked-lookups:ip:${ip}`,
      BLOCKED_UNTAGGED_LOOKUPS_PER_MINUTE,
      WINDOW_MS,
    );
    if (d.allowed) return;
    if (this.budgetSpent.size > 10_000) this.budgetSpent.clear();
    this.budgetSpent.set(ip, now + d.retryAfter * 1000); // the next refusals cost no Redis round trip either
    throw this.refusal(this.blockedFor(ip, now) ?? d.retryAfter);
  }

  async failed(ip: string, now = Date.now()): Promise<void> {
    const d = await this.limiter.check(`rl:auth-failures:ip:${ip}`, this.limit, WINDOW_MS);
    if (d.allowed && d.remaining > 0) return;
    if (this.blocked.size > 10_000) this.blocked.clear();
    this.blocked.set(ip, now + Math.max(1, d.reset) * 1000);
    if (!d.allowed) throw this.refusal(d.retryAfter);
  }

  refusal(retryAfter: number): AppError {
    return new AppError(
      429,
      'rate_limited',
      `too many failed authentications from this address: ${this.limit} per minute; retry after ${retryAfter} s`,
      undefined,
      {
        'Retry-After': String(retryAfter),
      },
    );
  }
}

/**
 * Credentials whose lookup failed (revoked or expired session, revoked or unknown token), answered
 * from memory afterwards: none of them can become valid again, so this needs no invalidation.
 */
class KnownBad {
  private entries = new Map<string, number>();
  constructor(readonly maxEntries = 10_000) {}

  has(key: string, now = Date.now()): boolean {
    const until = this.entries.get(key);
    if (until === undefined) return false;
    if (until > now) return true;
    this.entries.delete(key);
    return false;
  }

  add(key: string, until: number): void {
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, until);
  }
}

export class Authenticator {
  readonly credentials: CredentialCache<ResolvedCredential>;
  readonly actors: CredentialCache<Actor>;
  readonly usage = new UsageRecorder();
  private failures: FailureThrottle;
  private knownBad = new KnownBad();

  constructor(
    private orm: MikroORM,
    private config: Config,
    limiter: RateLimiter,
  ) {
    this.credentials = new CredentialCache(config.authCacheTtlSeconds * 1000);
    this.actors = new CredentialCache(config.authCacheTtlSeconds * 1000);
    this.failures = new FailureThrottle(limiter, config.rateLimit.authFailuresPerMinute);
  }

  /**
   * Resolves `Authorization: Bearer …` for a request from `ip`; 401 or 429 otherwise. In order, none
   * of the first four steps touches the database:
   *  1. a missing or malformed header fails;
   *  2. a cached credential is answered (also from a blocked address);
   *  3. a credential whose lookup already failed fails;
   *  4. the credential is verified: a JWT's signature and claims, a PAT's format and tag; it fails
   *     when it cannot be valid;
   *  5. only then the block: a verified JWT or tagged PAT passes it (an attacker cannot forge them);
   *     an untagged PAT from a blocked address spends a small per-address budget of lookups (429 once
   *     spent); then one database round trip.
   * A failure counts against the address (429 instead of 401 once over the limit); a failure from a
   * blocked address is 429 at once, with no database work unless step 5 let it through.
   */
  async authenticate(header: string | undefined, ip: string): Promise<{ key: string; credential: ResolvedCredential }> {
    let token: string;
    try {
      token = bearerToken(header);
    } catch (err) {
      return this.reject(ip, err);
    }
    const key = sha256Hex(token);
    const hit = this.credentials.get(key);
    if (hit) {
      authLookups.inc({ result: 'hit' });
      this.usage.record(hit.auth);
      return { key, credential: hit };
    }
    if (this.knownBad.has(key)) return this.reject(ip, unauthorized('invalid, expired or revoked credential'));
    let verified: VerifiedBearer;
    try {
      verified = await verifyBearer(this.config, token);
    } catch (err) {
      return this.reject(ip, err);
    }
    if (verified.kind === 'pat' && !verified.tagged && this.failures.blockedFor(ip) !== undefined) {
      try {
        await this.failures.spendBlockedLookup(ip);
      } catch (err) {
        authLookups.inc({ result: 'throttled' });
        throw err;
      }
    }
    const epoch = this.credentials.epoch;
    let credential: ResolvedCredential;
    try {
      credential = await loadCredential(this.orm.em, verified);
    } catch (err) {
      if (!(err instanceof AppError && err.status === 401)) throw err;
      this.knownBad.add(key, verified.kind === 'session' ? verified.expiresAt : Date.now() + KNOWN_BAD_PAT_MS);
      return this.fail(ip, err);
    }
    authLookups.inc({ result: 'miss' });
    this.usage.record(credential.auth);
    this.credentials.set(key, credential.auth.userId, credential, epoch, credential.notAfter);
    return { key, credential };
  }

  /**
   * A wrong password at `POST /api/auth/login` counts as a failed authentication of the address,
   * like a bad bearer credential: 429 once over the limit, else `err` (the 401) is rethrown. The login
   * itself never consults the block first, so a correct password works from a blocked address (its
   * cost is bounded by the `public` group's per-IP limit).
   */
  async loginFailed(ip: string, err: unknown): Promise<never> {
    const wait = this.failures.blockedFor(ip);
    if (wait !== undefined) throw this.failures.refusal(wait);
    await this.failures.failed(ip); // throws 429 once over the limit
    throw err;
  }

  /** The identity a request runs as: the caller's own workspace, or (X-Acting-As) a team owner's. */
  async actor(key: string, credential: ResolvedCredential, actingAs: string | undefined): Promise<Actor> {
    const { auth, workspace } = credential;
    if (actingAs !== undefined && !isUuid(actingAs))
      throw new AppError(400, 'invalid_user', 'X-Acting-As must be a user id (UUID)');
    const owner = actingAs?.toLowerCase();
    if (owner === undefined || owner === auth.userId) {
      if (!workspace) throw unauthorized('account has no workspace');
      return {
        userId: auth.userId,
        workspaceId: workspace.id,
        ownerId: auth.userId,
        role: 'owner',
        allApps: true,
        appIds: [],
        actingAs: false,
        isDemo: workspace.isDemo,
      };
    }
    const cacheKey = `${key}|${owner}`;
    const hit = this.actors.get(cacheKey);
    if (hit) return hit;
    const epoch = this.actors.epoch;
    const actor = await resolveActor(this.orm.em.fork(), auth, owner);
    this.actors.set(cacheKey, auth.userId, actor, epoch, credential.notAfter);
    return actor;
  }

  /** A failure found without database work: 429 from the local block list when blocked, else counted. */
  private async reject(ip: string, err: unknown): Promise<never> {
    const wait = this.failures.blockedFor(ip);
    if (wait !== undefined) {
      authLookups.inc({ result: 'throttled' });
      throw this.failures.refusal(wait);
    }
    return this.fail(ip, err);
  }

  private async fail(ip: string, err: unknown): Promise<never> {
    authLookups.inc({ result: 'failed' });
    await this.failures.failed(ip); // throws 429 once over the limit
    throw err;
  }
}
