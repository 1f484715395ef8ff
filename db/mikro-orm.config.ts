import { defineConfig } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../lib/config.js';
import * as entities from './entities/index.js';

const here = dirname(fileURLToPath(import.meta.url));

export function ormConfig(databaseUrl: string) {
  const { db } = loadConfig();
  return defineConfig({
    clientUrl: databaseUrl,
    entities: Object.values(entities),
    extensions: [Migrator],
    // Entities are schemas (defineEntity), so no decorator metadata or reflection is needed.
    discovery: { warnWhenNoEntities: true },
    forceUtcTimezone: true,
    pool: { min: 0, max: db.poolMax },
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
  });
}
