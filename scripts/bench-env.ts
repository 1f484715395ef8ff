// Benchmarks' own database on the local stack: `npm run bench:*` must never share rows (or the
// outbox dispatcher's work) with a running `npm start`, which uses the stack's default database.
// Brings the stack up, creates the named database on the same server when missing, migrates it and
// returns the env pointing at it. (Same job as scripts/stack-env.ts does for `npm test`; to be
// unified with it.)
import pg from 'pg';
import { ensureStack, type Stack } from './stack.js';
import { migrate, openOrm } from '../lib/db.js';

export async function stackWithDatabase(database: string, log: (msg: string) => void): Promise<{ stack: Stack; env: NodeJS.ProcessEnv }> {
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`unsafe database name "${database}"`);
  const stack = await ensureStack({ log });
  const url = new URL(stack.databaseUrl);
  url.pathname = `/${database}`;
  const databaseUrl = url.toString();
  await createDatabase(stack.databaseUrl, database, log);
  const env = { DATABASE_URL: databaseUrl, REDIS_URL: stack.redisUrl, TEMPORAL_ADDRESS: stack.temporalAddress };
  Object.assign(process.env, env);
  const orm = await openOrm(databaseUrl);
  try {
    await migrate(orm);
  } finally {
    await orm.close();
  }
  return { stack, env };
}

/** CREATE DATABASE has no IF NOT EXISTS: check, create, and accept losing a race to another runner. */
async function createDatabase(serverUrl: string, database: string, log: (msg: string) => void): Promise<void> {
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  try {
    const { rowCount } = await c.query('select 1 from pg_database where datname = $1', [database]);
    if (rowCount) return;
    log(`creating database ${database}`);
    await c.query(`create database "${database}"`);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code !== '42P04' /* duplicate_database */ && code !== '23505' /* concurrent create */) throw err;
  } finally {
    await c.end();
  }
}
