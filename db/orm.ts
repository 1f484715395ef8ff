import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { ormConfig } from './mikro-orm.config.js';

export type Orm = MikroORM;

export async function openOrm(databaseUrl: string): Promise<MikroORM> {
  return MikroORM.init(ormConfig(databaseUrl));
}

/**
 * Applies committed migrations. Several processes (API, worker, test runners) may start at once, so
 * a PostgreSQL advisory lock, held on one dedicated connection, lets exactly one of them migrate.
 */
export async function migrate(orm: MikroORM): Promise<void> {
  const lock = new pg.Client({ connectionString: orm.config.get('clientUrl') });
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock(727272)');
    await orm.getMigrator().up();
  } finally {
    await lock.end(); // closing the session releases the lock
  }
}
