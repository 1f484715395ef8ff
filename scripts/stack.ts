/**
 * The local stack: PostgreSQL, Redis and a Temporal dev server on loopback, with data under
 * <repo>/.data (DESIGN.md, "The local stack, on a fresh machine").
 *
 * ensureStack() honours DATABASE_URL / REDIS_URL / TEMPORAL_ADDRESS, reuses whatever already answers
 * on our ports, and starts the rest as detached processes whose pids go to .data/<svc>.pid, so several
 * processes (a dev server, test runs) share one stack and it may outlive the process that started it.
 *
 * One file per service under scripts/stack/ (postgres.ts, redis.ts, temporal.ts) and what they share
 * (processes.ts); this one brings them up together and stops them.
 */
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePostgres } from './stack/postgres.js';
import {
  clearPid,
  dataDir,
  errorMessage,
  isAlive,
  isRunning,
  readPid,
  sleep,
  terminate,
  type Log,
  type Service,
  type Started,
} from './stack/processes.js';
import { ensureRedis } from './stack/redis.js';
import { ensureTemporal } from './stack/temporal.js';
import { ensureMailServer, type MailServer } from './stack/mail.js';

export { ensureDatabaseAt } from './stack/postgres.js';
export type { Service } from './stack/processes.js';
export type { MailServer } from './stack/mail.js';

export interface StackInfo {
  databaseUrl: string;
  redisUrl: string;
  temporalAddress: string;
  temporalUiUrl: string | null;
  /** The test mail server, when asked for (`mail: true`: tests and bench:mail, never `npm start`). */
  mail: MailServer | null;
}
export interface Stack extends StackInfo {
  /** Stops only the services this ensureStack() call started. */
  stop(): Promise<void>;
}

const SERVICES: Service[] = ['postgres', 'redis', 'temporal', 'mail'];

/**
 * Brings the three services up (or reuses them) and returns where they are. Ports: PGPORT_EMBEDDED
 * (54329), REDIS_PORT_EMBEDDED (6389), TEMPORAL_PORT_EMBEDDED (7233), TEMPORAL_UI_PORT_EMBEDDED
 * (Temporal's + 1000). Progress goes to `log` (stderr by default).
 */
export async function ensureStack(opts: { log?: Log; mail?: boolean } = {}): Promise<Stack> {
  const log = opts.log ?? ((msg: string) => console.error(`[stack] ${msg}`));
  mkdirSync(dataDir, { recursive: true });
  const started: Started[] = [];
  const [postgres, redis, temporal, mail] = await withLock(log, () =>
    Promise.allSettled([
      ensurePostgres(log, started),
      ensureRedis(log, started),
      ensureTemporal(log, started),
      opts.mail ? ensureMailServer(log, started) : Promise.resolve(null),
    ]),
  );
  const stop = once(() => stopStarted(started, log));
  if (
    postgres.status === 'rejected' ||
    redis.status === 'rejected' ||
    temporal.status === 'rejected' ||
    mail.status === 'rejected'
  ) {
    const errors = [postgres, redis, temporal, mail].flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    for (const err of errors.slice(1)) log(errorMessage(err));
    await stop(); // no half-started stack left behind
    throw errors[0];
  }
  return {
    databaseUrl: postgres.value,
    redisUrl: redis.value,
    temporalAddress: temporal.value.address,
    temporalUiUrl: temporal.value.uiUrl,
    mail: mail.value,
    stop,
  };
}

/** The services recorded in .data/<svc>.pid whose process is running (whoever started it). */
export function runningServices(): Service[] {
  return SERVICES.filter((svc) => {
    const pid = readPid(svc);
    return pid !== null && isRunning(pid, svc);
  });
}

/** Stops every service recorded in .data/<svc>.pid, whoever started it (scripts/stack-down.ts). */
export async function stopStack(opts: { log?: Log } = {}): Promise<Service[]> {
  const log = opts.log ?? ((msg: string) => console.error(`[stack] ${msg}`));
  const stopped: Service[] = [];
  await Promise.all(
    SERVICES.map(async (svc) => {
      const pid = readPid(svc);
      if (pid === null) return;
      if (isRunning(pid, svc)) stopped.push(svc);
      await terminate(pid, svc, log);
      clearPid(svc, pid);
    }),
  );
  return stopped;
}

async function stopStarted(started: Started[], log: Log): Promise<void> {
  await Promise.all(
    started.map(async ({ svc, pid }) => {
      await terminate(pid, svc, log);
      clearPid(svc, pid);
    }),
  );
}

/**
 * Serialises concurrent ensureStack() calls (parallel test processes) so that two of them do not
 * race to initialise or start the same service; the loser then finds it running and reuses it.
 */
async function withLock<T>(log: Log, fn: () => Promise<T>): Promise<T> {
  const file = join(dataDir, 'stack.lock');
  let waitingFor = 0;
  for (;;) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const lock = readLock(file);
    if (!lock) continue; // released meanwhile
    // Stale: its holder died, or never got to write its pid.
    if (lock.pid ? !isAlive(lock.pid) : lock.ageMs > 2000) {
      rmSync(file, { force: true });
      continue;
    }
    if (lock.pid && lock.pid !== waitingFor) {
      log(`waiting for another ensureStack (pid ${lock.pid}) to finish`);
      waitingFor = lock.pid;
    }
    await sleep(250);
  }
  try {
    return await fn();
  } finally {
    rmSync(file, { force: true });
  }
}

function readLock(file: string): { pid: number; ageMs: number } | null {
  try {
    return { pid: Number(readFileSync(file, 'utf8').trim()) || 0, ageMs: Date.now() - statSync(file).mtimeMs };
  } catch {
    return null;
  }
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= fn());
}
