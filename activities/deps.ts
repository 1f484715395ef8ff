// What every activity is given, built once per worker (workers/worker.ts): its own module, so the
// activity factories and the registry (index.ts) do not import each other.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Redis } from 'ioredis';
import type { Config } from '../lib/config.js';
import type { Logger } from '../lib/logger.js';
import type { Jobs } from '../domain/jobs.js';
import type { Providers } from '../lib/providers.js';

export interface ActivityDeps {
  orm: MikroORM;
  config: Config;
  logger: Logger;
  /** The jobs port over the worker's Temporal client (workers/worker.ts): activities never build a client of their own. */
  jobs: Jobs;
  /** The worker's Redis connection (the Operator's stream publisher). */
  redis: Redis;
  /**
   * The process's providers (lib/providers.ts), built once by workers/worker.ts. A factory that takes
   * a second argument (a partial Providers) uses those over these: a test's fakes.
   */
  providers: Providers;
}
