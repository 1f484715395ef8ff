// Brings the local stack up and applies migrations; returns the env the API, worker and tests use.
import { ensureStack, type Stack } from './stack.js';
import { migrate, openOrm } from '../lib/db.js';

export async function stackWithSchema(log: (msg: string) => void): Promise<{ stack: Stack; env: NodeJS.ProcessEnv }> {
  const stack = await ensureStack({ log });
  const env = { DATABASE_URL: stack.databaseUrl, REDIS_URL: stack.redisUrl, TEMPORAL_ADDRESS: stack.temporalAddress };
  Object.assign(process.env, env);
  const orm = await openOrm(stack.databaseUrl);
  try {
    await migrate(orm);
  } finally {
    await orm.close();
  }
  return { stack, env };
}
