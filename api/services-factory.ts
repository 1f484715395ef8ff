import { loadConfig, type Config } from '../lib/config.js';
import { openOrm } from '../db/orm.js';
import { logger } from '../lib/logger.js';
import { connectRedis, redisReady } from '../lib/redis.js';
import { connectTemporal, temporalProbe, type TemporalClient } from '../jobs/connection.js';
import { createRateLimiter } from '../lib/rate-limit.js';
import { linkCachesToRedis } from '../lib/credential-cache.js';
import { createProviders } from '../lib/providers.js';
import { providerLookups } from '../domain/provider-lookups.js';
import { Authenticator } from './authenticator.js';
import { temporalJobs } from '../jobs/temporal.js';
import type { Services } from './services.js';

// While PostgreSQL or Temporal is down, a request waits at most this long for a pooled connection,
// or for one Temporal call (retries included: a loaded dev server answers some calls in seconds), then
// answers 503 with Retry-After instead of hanging.
const DATABASE_WAIT_MS = 5_000;
const TEMPORAL_CALL_MS = 10_000;

/** Opens every long-lived connection the API needs. */
/** The services, with the Temporal client for the process's own use (tests, scripts) and `close`. */
export type RunningServices = Services & { temporal: TemporalClient; close(): Promise<void> };

export async function createServices(config: Config = loadConfig()): Promise<RunningServices> {
  const [orm, temporal] = await Promise.all([
    openOrm(config.databaseUrl, { acquireTimeoutMs: DATABASE_WAIT_MS }),
    connectTemporal(config, { callTimeoutMs: TEMPORAL_CALL_MS }),
  ]);
  const redis = connectRedis(config.redisUrl);
  if (!(await redisReady(redis))) logger.warn('Redis not reachable at start-up; continuing degraded');
  let warned = 0;
  const rateLimiter = createRateLimiter(redis, (err) => {
    if (Date.now() - warned > 10_000) {
      warned = Date.now();
      logger.warn({ err: String(err) }, 'rate limiter degraded to in-process limits: Redis unavailable');
    }
  });
  const authenticator = new Authenticator(orm, config, rateLimiter);
  // Revocations reach every API process of this database through one Redis channel.
  const channel = `credentials-changed:${new URL(config.databaseUrl).pathname.slice(1)}`;
  const link = await linkCachesToRedis(
    [authenticator.credentials, authenticator.actors] as never,
    redis,
    channel,
    (msg, err) => logger.warn({ err: err === undefined ? undefined : String(err) }, msg),
  );
  const flushUsage = () =>
    authenticator.usage
      .flush(orm.em.fork())
      .catch((err) => logger.warn({ err: String(err) }, 'credential use not recorded'));
  // The process's providers, made here once (reading every field makes each: a bad setting fails at
  // start-up) and carried on the services to handlers and, as the tool context's, to MCP tools.
  const { close: closeProviders, ...providers } = createProviders(config, orm, providerLookups(orm, config));
  const usageTimer = setInterval(flushUsage, 15_000).unref();
  return {
    config,
    orm,
    redis,
    temporal,
    temporalProbe: temporalProbe(temporal, config.temporal.namespace, config.temporal.taskQueue),
    logger,
    rateLimiter,
    authenticator,
    jobs: temporalJobs(temporal, config.temporal.taskQueue, { kickCoalesceMs: config.inboxKickCoalesceMs }),
    ...providers,
    async close() {
      clearInterval(usageTimer);
      await flushUsage();
      link.close();
      redis.disconnect();
      await closeProviders();
      await Promise.all([orm.close(), temporal.connection.close()]);
    },
  };
}
