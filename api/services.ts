import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Redis } from 'ioredis';
import type { Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import { createModelAdapter, type ModelAdapter } from '../lib/llm/index.js';
import type { RateLimiter } from '../lib/rate-limit.js';
import type { Authenticator } from './authenticator.js';
import type { Jobs } from '../domain/jobs.js';

/** Long-lived dependencies the API hands to every handler. */
export interface Services {
  config: Config;
  orm: MikroORM;
  redis: Redis;
  temporal: Client;
  logger: Logger;
  rateLimiter: RateLimiter;
  authenticator: Authenticator;
  /** Long-running jobs (workflows) that handlers and Operator tools start. */
  jobs: Jobs;
  /** The model every AI operation uses; absent means createModelAdapter(config.llm) (see modelOf). */
  llm?: ModelAdapter;
}

const fallbackModels = new WeakMap<Services, ModelAdapter>();
/** The services' model adapter, or one made once from their configuration when none was given. */
export function modelOf(services: Services): ModelAdapter {
  if (services.llm) return services.llm;
  let m = fallbackModels.get(services);
  if (!m) fallbackModels.set(services, (m = createModelAdapter(services.config.llm)));
  return m;
}
