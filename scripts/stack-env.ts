// Brings the local stack up and applies migrations; returns the env the API, worker and tests use.
import { ensureDatabaseAt, ensureStack, type Stack } from './stack.js';
import { migrate, openOrm } from '../db/orm.js';

/**
 * Where a run keeps its state apart from others on the same servers: tests and benchmarks use their
 * own database (e.g. `outreach_test`, created and migrated here) and their own Redis logical
 * database, so they never share rows, outbox events, rate-limit windows or invalidations with a
 * running `npm start`.
 */
export interface Isolation {
  /** Suffix of the database name: `outreach` → `outreach_<suffix>`. */
  suffix: string;
  /** Redis logical database number (the service uses 0). */
  redisDb: number;
}

export function isolatedUrls(
  databaseUrl: string,
  redisUrl: string,
  iso: Isolation,
): { databaseUrl: string; redisUrl: string } {
  const db = new URL(databaseUrl);
  db.pathname = `/${decodeURIComponent(db.pathname.slice(1))}_${iso.suffix}`;
  const redis = new URL(redisUrl);
  redis.pathname = `/${iso.redisDb}`;
  return { databaseUrl: db.toString(), redisUrl: redis.toString() };
}

export async function stackWithSchema(
  log: (msg: string) => void,
  iso?: Isolation,
  opts: { mail?: boolean } = {},
): Promise<{ stack: Stack; env: NodeJS.ProcessEnv }> {
  const stack = await ensureStack({ log, mail: opts.mail });
  const urls = iso
    ? isolatedUrls(stack.databaseUrl, stack.redisUrl, iso)
    : { databaseUrl: stack.databaseUrl, redisUrl: stack.redisUrl };
  if (iso) await ensureDatabaseAt(urls.databaseUrl);
  const env: NodeJS.ProcessEnv = {
    DATABASE_URL: urls.databaseUrl,
    REDIS_URL: urls.redisUrl,
    TEMPORAL_ADDRESS: stack.temporalAddress,
  };
  // Where the test mail server is (test/helpers/mail-server.ts reads these).
  if (stack.mail) {
    Object.assign(env, {
      TEST_MAIL_HOST: stack.mail.host,
      TEST_MAIL_SMTP_PORT: String(stack.mail.smtpPort),
      TEST_MAIL_IMAP_PORT: String(stack.mail.imapPort),
      TEST_MAIL_SMTPS_PORT: String(stack.mail.smtpsPort),
      TEST_MAIL_IMAPS_PORT: String(stack.mail.imapsPort),
      TEST_MAIL_API_URL: stack.mail.apiUrl,
    });
  }
  Object.assign(process.env, env);
  const orm = await openOrm(urls.databaseUrl);
  try {
    await migrate(orm);
  } finally {
    await orm.close();
  }
  return { stack, env };
}

/**
 * The environment of a test run's worker and in-process API (npm test, soaks): its own task queue, no
 * Schedules, quiet logs, and rate limits out of the way (many users from one IP; the limits have
 * their own tests).
 */
export function testRunEnv(env: NodeJS.ProcessEnv, taskQueue: string): NodeJS.ProcessEnv {
  return {
    ...env,
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
    TEMPORAL_TASK_QUEUE: taskQueue,
    TEMPORAL_SCHEDULES: 'off',
    RATE_LIMIT_DEFAULT_PER_MINUTE: '100000',
    RATE_LIMIT_PUBLIC_PER_MINUTE: '100000',
    RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '100000',
  };
}
