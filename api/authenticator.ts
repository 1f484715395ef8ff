// Bearer authentication on the request path: the credential cache first (no round trip on a hit),
// else one database round trip; failed attempts count against a per-IP limit, and a throttled IP
// is refused before any database work. Acting-as identities are cached beside the credentials.
import type { MikroORM } from '@mikro-orm/postgresql';
import { Counter } from 'prom-client';
import type { Config } from '../lib/config.js';
import { sha256Hex } from '../lib/crypto.js';
import { CredentialCache } from '../lib/credential-cache.js';
import { registry } from '../lib/metrics.js';
import type { RateLimiter } from '../lib/rate-limit.js';
import { bearerToken, resolveCredential, UsageRecorder, type ResolvedCredential } from '../domain/auth.js';
import { AppError, unauthorized } from '../domain/errors.js';
import type { Actor } from '../domain/identity.js';
import { resolveActor } from '../domain/workspaces.js';
import { isUuid } from '../lib/ids.js';

export const authLookups = new Counter({
  name: 'auth_credential_lookups_total',
  help: 'Bearer credential resolutions by outcome: hit (cache), miss (one database round trip), failed (401), throttled (429, no database work)',
  labelNames: ['result'] as const,
  registers: [registry],
});

const WINDOW_MS = 60_000;

/** Per-IP limit on failed authentications. The local block list makes a throttled IP cost nothing. */
class FailureThrottle {
  private blocked = new Map<string, number>();
  constructor(
    private limiter: RateLimiter,
    private limit: number,
  ) {}

  assertAllowed(ip: string, now = Date.now()): void {
    const until = this.blocked.get(ip);
    if (until === undefined) return;
    if (until <= now) {
      this.blocked.delete(ip);
      return;
    }
    throw this.refusal(Math.max(1, Math.ceil((until - now) / 1000)));
  }

  async failed(ip: string, now = Date.now()): Promise<void> {
    const d = await this.limiter.check(`rl:auth-failures:ip:${ip}`, this.limit, WINDOW_MS);
    if (d.allowed && d.remaining > 0) return;
    if (this.blocked.size > 10_000) this.blocked.clear();
    this.blocked.set(ip, now + Math.max(1, d.reset) * 1000);
    if (!d.allowed) throw this.refusal(d.retryAfter);
  }

  private refusal(retryAfter: number): AppError {
    return new AppError(429, 'rate_limited', `too many failed authentications from this address: ${this.limit} per minute; retry after ${retryAfter} s`, undefined, {
      'Retry-After': String(retryAfter),
    });
  }
}

export class Authenticator {
  readonly credentials: CredentialCache<ResolvedCredential>;
  readonly actors: CredentialCache<Actor>;
  readonly usage = new UsageRecorder();
  private failures: FailureThrottle;

  constructor(
    private orm: MikroORM,
    private config: Config,
    limiter: RateLimiter,
  ) {
    this.credentials = new CredentialCache(config.authCacheTtlSeconds * 1000);
    this.actors = new CredentialCache(config.authCacheTtlSeconds * 1000);
    this.failures = new FailureThrottle(limiter, config.rateLimit.authFailuresPerMinute);
  }

  /** Resolves `Authorization: Bearer …` for a request from `ip`; 401 or 429 otherwise. */
  async authenticate(header: string | undefined, ip: string): Promise<{ key: string; credential: ResolvedCredential }> {
    let token: string;
    try {
      token = bearerToken(header);
    } catch (err) {
      this.failures.assertAllowed(ip);
      return this.fail(ip, err);
    }
    const key = sha256Hex(token);
    const hit = this.credentials.get(key);
    if (hit) {
      authLookups.inc({ result: 'hit' });
      this.usage.record(hit.auth);
      return { key, credential: hit };
    }
    try {
      this.failures.assertAllowed(ip);
    } catch (err) {
      authLookups.inc({ result: 'throttled' });
      throw err;
    }
    const epoch = this.credentials.epoch;
    let credential: ResolvedCredential;
    try {
      credential = await resolveCredential(this.orm.em, this.config, token);
    } catch (err) {
      if (err instanceof AppError && err.status === 401) return this.fail(ip, err);
      throw err;
    }
    authLookups.inc({ result: 'miss' });
    this.usage.record(credential.auth);
    this.credentials.set(key, credential.auth.userId, credential, epoch, credential.notAfter);
    return { key, credential };
  }

  /** The identity a request runs as: the caller's own workspace, or (X-Acting-As) a team owner's. */
  async actor(key: string, credential: ResolvedCredential, actingAs: string | undefined): Promise<Actor> {
    const { auth, workspace } = credential;
    if (actingAs !== undefined && !isUuid(actingAs)) throw new AppError(400, 'invalid_user', 'X-Acting-As must be a user id (UUID)');
    const owner = actingAs?.toLowerCase();
    if (owner === undefined || owner === auth.userId) {
      if (!workspace) throw unauthorized('account has no workspace');
      return { userId: auth.userId, workspaceId: workspace.id, ownerId: auth.userId, role: 'owner', allApps: true, appIds: [], actingAs: false, isDemo: workspace.isDemo };
    }
    const cacheKey = `${key}|${owner}`;
    const hit = this.actors.get(cacheKey);
    if (hit) return hit;
    const epoch = this.actors.epoch;
    const actor = await resolveActor(this.orm.em.fork(), auth, owner);
    this.actors.set(cacheKey, auth.userId, actor, epoch, credential.notAfter);
    return actor;
  }

  private async fail(ip: string, err: unknown): Promise<never> {
    authLookups.inc({ result: 'failed' });
    await this.failures.failed(ip); // throws 429 once over the limit
    throw err;
  }
}
