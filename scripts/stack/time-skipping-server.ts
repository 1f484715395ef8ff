// Temporal's time-skipping test server for `TestWorkflowEnvironment.createTimeSkipping()` (test/workflows/
// time-skipping.test.ts), without temporal.download: the SDK would fetch a native build of the Java SDK's
// test server from there, which this machine cannot reach. Maven Central carries the same server as
// `io.temporal:temporal-test-server`; this fetches it and its runtime classpath (pinned below, each jar
// checked against its pinned SHA-1 and Maven Central's `.sha1`) into `.data/` once, and writes a launcher
// the SDK runs as `server: { executable: { type: 'existing-path', path } }`.
//
// How the SDK runs it (@temporalio/core-bridge, sdk-core `ephemeral_server/mod.rs`, TestServerConfig):
// `<path> <port> [...extraArgs]` — the port first (a free one it picked), then the `extraArgs` of the
// `time-skipping` server config; it probes `127.0.0.1:<port>` over gRPC every 100 ms for 5 s and kills
// the process (SIGKILL to the pid it spawned) at teardown. So the launcher `exec`s java (the pid the SDK
// holds is the JVM's) with `io.temporal.testserver.TestServer "$@"`; the server's own output (SLF4J's
// no-binding notice, gRPC's logs) goes to a log file beside the jars instead of the test's output.
//
// Usage: `const launcher = await ensureTimeSkippingServer(log)`; idempotent (a second call, or another
// process at the same time, reuses the verified jars; every file is written aside and renamed in place).
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { onPath, repoRoot, type Log } from './processes.js';

/** The Java SDK release of the server; the same as scripts/stack/temporal.ts' last-resort fallback. */
export const TIME_SKIPPING_SERVER_VERSION = '1.38.0';
const MAIN_CLASS = 'io.temporal.testserver.TestServer';
const CENTRAL = 'https://repo1.maven.org/maven2';

/**
 * The server's runtime classpath, `group:artifact:version sha1 bytes`: Maven's resolution of
 * `io.temporal:temporal-test-server:1.38.0` (scope runtime; `mvn dependency:list`), the SHA-1 of each
 * jar as Maven Central's `.sha1` file gives it. A new version: resolve again and replace the list.
 */
const CLASSPATH = `
io.temporal:temporal-test-server:1.38.0 04eb2537f08cdf64c758e5e890b85ec94aabf9e7 377858
io.temporal:temporal-sdk:1.38.0 9353388faed818b9e8ae1eaf20dd520d38630039 1888924
io.temporal:temporal-serviceclient:1.38.0 adc1c059cd35f22fb11afed80c1d3355e86224b4 12581842
io.nexusrpc:nexus-sdk:0.5.0-alpha 8ed04599b76a407bb7ca6f160a242ff5be061662 68396
io.grpc:grpc-api:1.76.0 f213e3ee49b82497dfc0f5eb30bac62d917f1a52 324402
io.grpc:grpc-context:1.76.0 529d9887c6ec08ac5c6ff32699eb314a724f63b4 293
io.grpc:grpc-core:1.76.0 44e562312b45d848297b80963fe0f93f5b71589c 661669
io.grpc:grpc-inprocess:1.76.0 e982c13b380284308b71bf277bd768c04b9e0ad3 39510
io.grpc:grpc-netty-shaded:1.76.0 a74011488cb0ad7f06c74c864c444e25be7c026e 10573707
io.grpc:grpc-protobuf-lite:1.76.0 aa913fd7efa0047f4ecf94896caf7d3264a9c94e 7815
io.grpc:grpc-protobuf:1.76.0 46ad89c9e74468c8e488b32c192ca18626b68a49 5204
io.grpc:grpc-services:1.76.0 6cbd545ad99445170b73e57f1818bbddbf206ba3 950148
io.grpc:grpc-stub:1.76.0 a3f668a0cfea0c0b92d85e7e243b6dc4d5f0380d 61955
io.grpc:grpc-util:1.76.0 ba5ea4f0abf4ba97314fb38862c6bae9b45e14cd 98979
io.perfmark:perfmark-api:0.27.0 f86f575a41b091786a4b027cd9c0c1d2e3fc1c01 6954
io.micrometer:micrometer-core:1.9.9 71ca38f65a24b2fda26ff5c0cce78699c9d31d49 661566
com.uber.m3:tally-core:0.13.0 f16036272ad126c72c3730e9bc575dbf5317814a 57037
com.google.protobuf:protobuf-java:3.25.8 2ba593767658038775b2ea9724c3686609874470 1876626
com.google.protobuf:protobuf-java-util:3.25.8 0be3cb8bef1415d3b87cf5bf4de0b9149f6a0990 73138
com.google.api.grpc:proto-google-common-protos:2.59.2 7de5fb9d2ad6cd65e59194ff0cba99c1152e7786 2713811
com.google.guava:guava:33.4.8-android 0cb7510a733595f02fe633ffff62d40cfc3056e9 2936569
com.google.guava:failureaccess:1.0.3 aeaffd00d57023a2c947393ed251f0354f0985fc 10763
com.google.guava:listenablefuture:9999.0-empty-to-avoid-conflict-with-guava b421526c5f297295adef1c886e5246c39d4ac629 2199
com.google.code.gson:gson:2.10.1 b3add478d4382b78ea20b1671390a858002feb6c 283367
com.google.code.findbugs:jsr305:3.0.2 25ea2e8b0c338a877313bd4672d3fe056ea78f0d 19936
com.google.errorprone:error_prone_annotations:2.36.0 227d4d4957ccc3dc5761bd897e3a0ee587e750a7 19401
com.google.j2objc:j2objc-annotations:3.0.0 7399e65dd7e9ff3404f4535b2f017093bdb134c7 12467
com.google.android:annotations:4.1.1.4 a1678ba907bf92691d879fef34e1a187038f9259 3120
com.fasterxml.jackson.core:jackson-annotations:2.15.4 5223ea5a9bf52cdc9c5e537a0e52f2432eaf208b 75569
com.fasterxml.jackson.core:jackson-core:2.15.4 aebe84b45360debad94f692a4074c6aceb535fa0 548185
com.fasterxml.jackson.core:jackson-databind:2.15.4 560309fc381f77d4d15c4a4cdaa0db5025c4fd13 1620433
com.fasterxml.jackson.datatype:jackson-datatype-jdk8:2.15.4 694777f182334a21bf1aeab1b04cc4398c801f3f 36111
com.fasterxml.jackson.datatype:jackson-datatype-jsr310:2.15.4 7de629770a4559db57128d35ccae7d2fddd35db3 122937
com.cronutils:cron-utils:9.2.1 5d3738bc7a2eaa45a94a76c6e87af54a95414637 175236
org.slf4j:slf4j-api:1.7.36 6c62681a2f655b49963a5983b8b0950a6120ae14 41125
org.jspecify:jspecify:1.0.0 7425a601c1c7ec76645a78d22b8c6a627edee507 3819
org.codehaus.mojo:animal-sniffer-annotations:1.24 aa9ba58d30e0aad7f1808fce9c541ea3760678d8 3112
org.hdrhistogram:HdrHistogram:2.1.12 6eb7552156e0d517ae80cc2247be1427c8d90452 173763
org.latencyutils:LatencyUtils:2.0.3 769c0b82cb2421c8256300e907298a9410a2a3d3 29779
`;

/** No java, or Maven Central not reachable: the server cannot be had here (a test skips, saying so). */
export class TimeSkippingServerUnavailable extends Error {
  override name = 'TimeSkippingServerUnavailable';
}

interface Jar {
  coordinates: string;
  url: string;
  file: string;
  sha1: string;
  bytes: number;
}

/**
 * A short-lived server for tests: a client JIT only (C1) and the serial collector start the JVM sooner
 * and use less of a 2-core machine; the SDK gives the server 5 s to answer.
 */
const JVM_OPTIONS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-Xss512k', '-Xmx512m'];

/** The cache: `.data/` of this clone (git-ignored). */
export const timeSkippingServerDir = join(repoRoot, '.data', `temporal-test-server-${TIME_SKIPPING_SERVER_VERSION}`);

/** Where the launcher sends the server's own output. */
export const timeSkippingServerLog = join(timeSkippingServerDir, 'server.log');

function jars(dir: string): Jar[] {
  return CLASSPATH.trim()
    .split('\n')
    .map((line) => {
      const [coordinates, sha1, bytes] = line.trim().split(/\s+/);
      const [group, artifact, version] = coordinates!.split(':');
      const name = `${artifact}-${version}.jar`;
      return {
        coordinates: coordinates!,
        url: `${CENTRAL}/${group!.replaceAll('.', '/')}/${artifact}/${version}/${name}`,
        file: join(dir, `${group}__${name}`),
        sha1: sha1!,
        bytes: Number(bytes),
      };
    });
}

const sha1Of = (data: Uint8Array) => createHash('sha1').update(data).digest('hex');

/** A jar already in the cache, as pinned (hashing the 38 MB takes ~0.1 s; a damaged file is fetched again). */
const present = (jar: Jar) =>
  existsSync(jar.file) && statSync(jar.file).size === jar.bytes && sha1Of(readFileSync(jar.file)) === jar.sha1;

async function download(jar: Jar, log: Log): Promise<void> {
  const get = async (url: string) => {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(120_000) });
      if (!res.ok) throw new TimeSkippingServerUnavailable(`time-skipping server: ${url} answered ${res.status}`);
      return new Uint8Array(await res.arrayBuffer());
    } catch (err) {
      if (err instanceof TimeSkippingServerUnavailable) throw err;
      // Network failures (no route, DNS, TLS, the timeout): unreachable, not a bad artifact.
      const cause = (err as { cause?: unknown }).cause;
      throw new TimeSkippingServerUnavailable(
        `time-skipping server: ${url} could not be fetched: ${(err as Error).message}${cause ? ` (${String(cause)})` : ''}`,
      );
    }
  };
  const [data, published] = await Promise.all([get(jar.url), get(`${jar.url}.sha1`)]);
  // Central's .sha1 holds the hex digest, sometimes followed by the file name.
  const centralSha1 = new TextDecoder().decode(published).trim().split(/\s+/)[0]!.toLowerCase();
  const actual = sha1Of(data);
  if (actual !== jar.sha1 || centralSha1 !== jar.sha1) {
    throw new Error(
      `time-skipping server: ${jar.coordinates} does not verify: downloaded ${actual}, ` +
        `Maven Central's .sha1 ${centralSha1}, pinned ${jar.sha1}`,
    );
  }
  const part = `${jar.file}.part-${process.pid}`;
  writeFileSync(part, data);
  renameSync(part, jar.file);
  log(`time-skipping server: fetched ${jar.coordinates} (${data.length} bytes, sha1 ${actual})`);
}

/** `JAVA_HOME/bin/java`, else `java` on PATH; null when neither is there. */
export function javaBinary(): string | null {
  const home = process.env.JAVA_HOME;
  if (home && existsSync(join(home, 'bin', 'java'))) return join(home, 'bin', 'java');
  return onPath('java');
}

const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * The launcher's path, after fetching whatever of the pinned classpath is missing (~38 MB, once).
 * Throws TimeSkippingServerUnavailable when there is no java or Maven Central cannot be reached, and a
 * plain Error when a jar does not verify (nothing unverified is ever put in place).
 */
export async function ensureTimeSkippingServer(log: Log = () => undefined): Promise<string> {
  const java = javaBinary();
  if (!java)
    throw new TimeSkippingServerUnavailable('time-skipping server: no java (set JAVA_HOME or put java on PATH)');
  const dir = timeSkippingServerDir;
  mkdirSync(dir, { recursive: true });
  const all = jars(dir);
  const missing = all.filter((jar) => !present(jar));
  if (missing.length > 0) {
    log(
      `time-skipping server: fetching ${missing.length} jars of temporal-test-server ${TIME_SKIPPING_SERVER_VERSION}`,
    );
    // A few at a time: the largest two are 10 and 12 MB.
    const queue = [...missing];
    const failures: unknown[] = [];
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        for (let jar = queue.shift(); jar; jar = queue.shift()) {
          await download(jar, log).catch((err: unknown) => failures.push(err));
        }
      }),
    );
    // A jar that did not verify outweighs one that could not be fetched (which a test takes as a skip).
    if (failures.length > 0) throw failures.find((e) => !(e instanceof TimeSkippingServerUnavailable)) ?? failures[0];
  }
  const launcher = join(dir, 'temporal-test-server');
  const script =
    '#!/bin/sh\n' +
    `# Generated by scripts/stack/time-skipping-server.ts: temporal-test-server ${TIME_SKIPPING_SERVER_VERSION}.\n` +
    '# Arguments as the Temporal SDKs pass them: <port> [extra args...]\n' +
    `exec ${shellQuote(java)} ${JVM_OPTIONS.join(' ')} -cp ${shellQuote(all.map((j) => j.file).join(':'))} ` +
    `${MAIN_CLASS} "$@" >>${shellQuote(timeSkippingServerLog)} 2>&1\n`;
  // Rewritten only when it changed (another java, another clone path), aside and renamed in place.
  if (!existsSync(launcher) || readFileSync(launcher, 'utf8') !== script) {
    const part = `${launcher}.part-${process.pid}`;
    try {
      writeFileSync(part, script);
      chmodSync(part, 0o755);
      renameSync(part, launcher);
    } finally {
      rmSync(part, { force: true });
    }
  }
  return launcher;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // `npx tsx scripts/stack/time-skipping-server.ts`: fetch (or check) it and print the launcher's path.
  console.log(await ensureTimeSkippingServer((msg) => console.error(msg)));
}
