import type { MikroORM } from '@mikro-orm/postgresql';
import type { Redis } from 'ioredis';
import type { Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import type { RateLimiter } from '../lib/rate-limit.js';
import type { Authenticator } from './authenticator.js';
import type { Jobs } from '../domain/jobs.js';
import type { Providers } from '../lib/providers.js';

/**
 * Long-lived dependencies the API hands to every handler: its connections and the process's providers
 * (lib/providers.ts: llm, sources, enrichment, connector, booking, partner, dns, email, pdf), built once
 * by api/services-factory.ts. A test replaces one by spreading: `{ ...services, llm: failingModel }`.
 */
export interface Services extends Providers {
  config: Config;
  orm: MikroORM;
  redis: Redis;
  /** Whether Temporal answers and workers poll (readiness); the client itself stays in jobs/. */
  temporalProbe: {
    reachable(deadline: number): Promise<void>;
    workflowPollers(deadline: number): Promise<number>;
  };
  logger: Logger;
  rateLimiter: RateLimiter;
  authenticator: Authenticator;
  /** Long-running jobs (workflows) that handlers and Operator tools start. */
  jobs: Jobs;
}
