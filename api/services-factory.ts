import { loadConfig, type Config } from '../lib/config.js';
import { openOrm } from '../db/orm.js';
import { logger } from '../lib/logger.js';
import { connectRedis, redisReady } from '../lib/redis.js';
import { connectTemporal } from '../lib/temporal.js';
import { createRateLimiter } from '../lib/rate-limit.js';
import { linkCachesToRedis } from '../lib/credential-cache.js';
import { createModelAdapter } from '../lib/llm/index.js';
import { createSources } from '../lib/sources/index.js';
import { createConnector } from '../lib/connectors/index.js';
import { loadPdfExtractor } from '../lib/pdf-text.js';
import { createDns } from '../lib/dns.js';
import { createBookingProviders } from '../lib/booking/index.js';
import { createPartner } from '../lib/partner/index.js';
import { Authenticator } from './authenticator.js';
import { temporalJobs } from '../jobs/temporal.js';
import type { Services } from './services.js';

/** Opens every long-lived connection the API needs. */
export async function createServices(config: Config = loadConfig()): Promise<Services & { close(): Promise<void> }> {
  const [orm, temporal] = await Promise.all([openOrm(config.databaseUrl), connectTemporal(config)]);
  const redis = connectRedis(config.redisUrl);
  redis.on('error', () => {}); // surfaced through readiness and the rate limiter's degraded mode
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
  const link = await linkCachesToRedis([authenticator.credentials, authenticator.actors] as never, redis, channel, (msg, err) =>
    logger.warn({ err: err === undefined ? undefined : String(err) }, msg),
  );
  const flushUsage = () => authenticator.usage.flush(orm.em.fork()).catch((err) => logger.warn({ err: String(err) }, 'credential use not recorded'));
  const llm = createModelAdapter(config.llm);
  const sources = createSources(config.sources);
  const connector = createConnector(config.connector, config.sources.corpus, orm);
  const booking = createBookingProviders(config.booking, config.publicBaseUrl);
  const partner = createPartner(config.partner, config.publicBaseUrl, orm);
  const usageTimer = setInterval(flushUsage, 15_000).unref();
  return {
    config,
    orm,
    redis,
    temporal,
    logger,
    rateLimiter,
    authenticator,
    jobs: temporalJobs(temporal, config.temporal.taskQueue),
    llm,
    sources,
    connector,
    pdf: loadPdfExtractor,
    dns: createDns(config.dns),
    booking,
    partner,
    async close() {
      clearInterval(usageTimer);
      await flushUsage();
      link.close();
      redis.disconnect();
      await Promise.all([orm.close(), temporal.connection.close(), sources.close(), connector.close?.(), booking.close(), partner.close?.()]);
    },
  };
}
