import { defineConfig } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../lib/config.js';
import * as entities from './entities/index.js';
import { AfterCommitHooks } from './after-commit.js';

const here = dirname(fileURLToPath(import.meta.url));

export interface OrmOptions {
  /**
   * How long a caller waits for a pooled connection before failing (knex's default: 60 s). The API
   * sets a short one, so that a request fails fast (503, see api/middleware/errors.ts) when
   * PostgreSQL does not answer or the pool is exhausted; the worker keeps the default, as its
   * activities queue for connections under load by design.
   */
  acquireTimeoutMs?: number;
}

export function ormConfig(databaseUrl: string, opts: OrmOptions = {}) {
  const { db } = loadConfig();
  return defineConfig({
    clientUrl: databaseUrl,
    entities: Object.values(entities),
    extensions: [Migrator],
    // Entities are schemas (defineEntity), so no decorator metadata or reflection is needed.
    discovery: { warnWhenNoEntities: true },
    forceUtcTimezone: true,
    // Broken sessions (a restart's 57P01, a reset socket) are marked by knex and discarded at the next
    // acquire, so the pool heals itself once the server is back.
    pool: {
      min: 0,
      max: db.poolMax,
      ...(opts.acquireTimeoutMs ? { acquireTimeoutMillis: opts.acquireTimeoutMs } : {}),
    },
    migrations: {
      // Beside this module: db/migrations/*.ts from source (tsx), dist/db/migrations/*.js once built.
      path: join(here, 'migrations'),
      glob: '!(*.d).{js,ts}',
      tableName: 'mikro_orm_migrations',
      transactional: true,
      emit: 'ts',
      // No snapshot file: new migrations diff against a database migrated to the latest state, so
      // parallel branches never conflict on a shared snapshot.
      snapshot: false,
    },
    debug: db.debug,
    // afterCommit (db/after-commit.ts): side effects that must follow a commit, never a rollback.
    subscribers: [new AfterCommitHooks()],
  });
}
