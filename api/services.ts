import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Redis } from 'ioredis';
import type { Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import type { RateLimiter } from '../lib/rate-limit.js';
import type { ModelAdapter } from '../lib/llm/types.js';
import type { Sources } from '../lib/sources/index.js';
import type { Authenticator } from './authenticator.js';

/** Long-lived dependencies the API hands to every handler. */
export interface Services {
  config: Config;
  orm: MikroORM;
  redis: Redis;
  temporal: Client;
  logger: Logger;
  rateLimiter: RateLimiter;
  authenticator: Authenticator;
  /** The model adapter and discovery sources, for synchronous, bounded AI work (signal preview). */
  llm: ModelAdapter;
  sources: Sources;
}
