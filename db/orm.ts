import { MikroORM } from '@mikro-orm/postgresql';
import { ConnectionException } from '@mikro-orm/core';
import pg from 'pg';
import { ormConfig, type OrmOptions } from './mikro-orm.config.js';

export type Orm = MikroORM;

export async function openOrm(databaseUrl: string, opts: OrmOptions = {}): Promise<MikroORM> {
  return MikroORM.init(ormConfig(databaseUrl, opts));
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

// SQLSTATEs that say the server is going away or not taking sessions yet, not that it refused this
// statement: class 08 (connection exception), 57P01 (admin shutdown: a fast shutdown or a terminated
// session), 57P02 (crash shutdown), 57P03 (cannot connect now: starting up or shutting down), 53300
// (too many connections).
const UNAVAILABLE_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;
// The driver's socket: refused while the server restarts, reset or timed out when it goes away. The
// other adapters (providers, mail, outbound HTTP) wrap their socket errors, so a bare one that reaches
// the error mapper came from the database driver.
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
// node-postgres on a session that ended under it (MikroORM prefixes the statement: "<sql> - <message>"),
// and knex when no pooled connection came within the acquire timeout.
const CONNECTION_LOST =
  /(^|- )(Connection terminated( unexpectedly)?|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)$|^Knex: Timeout acquiring a connection/;

/**
 * Whether `err` says PostgreSQL is unreachable, restarting or out of connections (as opposed to
 * rejecting the statement): the request may be repeated once it is back. Raw node-postgres/knex
 * errors (from `em.execute`) and MikroORM's wrapped ones alike; follows `cause`, and the attempts of
 * an AggregateError (a connect to `localhost` tries each address).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const seen: unknown[] = [err];
  for (let i = 0; i < seen.length && i < 8; i++) {
    const e = seen[i] as
      { code?: unknown; message?: unknown; name?: unknown; cause?: unknown; errors?: unknown } | null | undefined;
    if (!e || typeof e !== 'object') continue;
    if (e instanceof ConnectionException || e.name === 'KnexTimeoutError') return true;
    if (typeof e.code === 'string' && (UNAVAILABLE_SQLSTATE.test(e.code) || SOCKET_CODES.has(e.code))) return true;
    if (typeof e.message === 'string' && CONNECTION_LOST.test(e.message)) return true;
    seen.push(e.cause, ...(Array.isArray(e.errors) ? e.errors : []));
  }
  return false;
}
