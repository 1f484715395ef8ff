// The test mail server (scripts/test.ts, bench:mail): GreenMail standalone from Maven Central, a real
// SMTP + IMAP server on loopback (plain ports and implicit-TLS ones with a self-signed certificate),
// fetched once into the per-user cache and run with the JDK (installed with apt-get when missing).
// bench:mailboxes runs one of its own beside it, on other ports, and restarts it (startMailServerAt).
// Mailboxes are made by the tests through its API port (test/helpers/mail-server.ts); mail to an
// unknown address is delivered to a mailbox created on the spot (login and password: the address).
// Not part of `npm start`: the service sends through the sandbox network unless a mailbox is connected.
import { createWriteStream, existsSync, mkdirSync, renameSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  assertNoOtherInstance,
  cacheDir,
  dataDir,
  envPort,
  isAlive,
  isRunning,
  onPath,
  record,
  run,
  spawnDetached,
  tcpOpen,
  terminate,
  waitReady,
  waitUntil,
  type Log,
  type Started,
} from './processes.js';

export const GREENMAIL_VERSION = '2.1.13';

export interface MailServer {
  host: string;
  smtpPort: number;
  imapPort: number;
  smtpsPort: number;
  imapsPort: number;
  /** GreenMail's HTTP API (mailbox creation, purge). */
  apiUrl: string;
}

/** The ports, from MAIL_*_PORT_EMBEDDED (defaults 3025 SMTP, 3143 IMAP, 3465 SMTPS, 3993 IMAPS, 3080 API). */
export function mailServerAddress(): MailServer {
  const api = envPort('MAIL_API_PORT_EMBEDDED', 3080);
  return {
    host: '127.0.0.1',
    smtpPort: envPort('MAIL_SMTP_PORT_EMBEDDED', 3025),
    imapPort: envPort('MAIL_IMAP_PORT_EMBEDDED', 3143),
    smtpsPort: envPort('MAIL_SMTPS_PORT_EMBEDDED', 3465),
    imapsPort: envPort('MAIL_IMAPS_PORT_EMBEDDED', 3993),
    apiUrl: `http://127.0.0.1:${api}`,
  };
}

async function apiAnswers(apiUrl: string): Promise<boolean> {
  try {
    return (await fetch(`${apiUrl}/api/configuration`, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

/**
 * Whether an IMAP LOGIN of an unknown user is accepted on `port` (a GreenMail with auth disabled that
 * has applied its configuration: it opens its ports first, and refuses such logins until then).
 */
function imapLoginAccepted(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let text = '';
    let sent = false;
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(3000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (!sent && text.includes('\r\n')) {
        sent = true;
        socket.write(`a1 LOGIN "probe-${process.pid}@probe.test" "probe"\r\n`);
      } else if (sent && /^a1 (OK|NO|BAD)/m.test(text)) done(/^a1 OK/m.test(text));
    });
  });
}

export async function ensureMailServer(log: Log, started: Started[]): Promise<MailServer> {
  const m = mailServerAddress();
  if ((await apiAnswers(m.apiUrl)) && (await tcpOpen(m.smtpPort)) && (await tcpOpen(m.imapPort))) {
    log(`mail: reusing GreenMail on 127.0.0.1:${m.smtpPort}/${m.imapPort}`);
    return m;
  }
  assertNoOtherInstance('mail', m.smtpPort);
  await launch(log, m, {}, join(dataDir, 'mail.log'), (pid) => record(started, 'mail', pid));
  return m;
}

/** How a GreenMail of one's own runs (startMailServerAt): the stack's runs with none of these. */
export interface MailServerOptions {
  /** The JVM's heap (-Xmx), in MB (default 256). */
  heapMb?: number;
  /**
   * `-Dgreenmail.auth.disabled`: any password is accepted and an unknown login gets its mailbox on the
   * spot, so clients log in again after a restart (which loses every user) without re-creating them.
   * GreenMail applies it only after its ports are open (GreenMail.start(): the services, then
   * doConfigure), refusing logins meanwhile: ready here means such a login was accepted.
   */
  authDisabled?: boolean;
  /** Where its output goes (default `.data/mail-<smtp port>.log`). */
  logFile?: string;
}

/**
 * A GreenMail of the caller's own on the ports of `m` (e.g. a benchmark that restarts it without
 * disturbing the stack's): not the stack's pid file, never reused; resolves with its pid once it
 * answers. The caller stops it (`stopMailServer`), a failure included.
 */
export async function startMailServerAt(log: Log, m: MailServer, opts: MailServerOptions = {}): Promise<number> {
  const taken = async () => (await tcpOpen(m.smtpPort)) || (await tcpOpen(m.imapPort));
  // A server just stopped may hold its ports a moment longer.
  if (await taken()) await waitUntil(async () => !(await taken()), 10_000);
  if (await taken()) throw new Error(`mail: 127.0.0.1:${m.smtpPort}/${m.imapPort} is already taken`);
  mkdirSync(dataDir, { recursive: true });
  let started = 0;
  try {
    await launch(log, m, opts, opts.logFile ?? join(dataDir, `mail-${m.smtpPort}.log`), (pid) => {
      started = pid;
    });
  } catch (err) {
    // Started but not answering: not left behind.
    if (started) await terminate(started, 'mail', log);
    throw err;
  }
  return started;
}

/**
 * Stops a GreenMail that startMailServerAt started: SIGTERM, SIGKILL after 10 s; resolves once the
 * process is gone (its ports free), not merely once its command line no longer reads as GreenMail
 * (the JVM's shows empty for an instant).
 */
export async function stopMailServer(pid: number, log: Log): Promise<void> {
  await terminate(pid, 'mail', log);
  if (await waitUntil(() => !isAlive(pid), 10_000)) return;
  log(`mail: pid ${pid} still there after SIGTERM; killing it`);
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone meanwhile
  }
  await waitUntil(() => !isAlive(pid), 5_000);
}

/** Starts GreenMail on the ports of `m` and waits until it answers; `onPid` hears of each process started. */
async function launch(
  log: Log,
  m: MailServer,
  opts: Omit<MailServerOptions, 'logFile'>,
  logFile: string,
  onPid: (pid: number) => void,
): Promise<void> {
  const java = await javaBinary(log);
  const jar = await greenmailJar(log);
  mkdirSync(dataDir, { recursive: true });
  const setup = (proto: string, port: number) => [
    `-Dgreenmail.${proto}.hostname=127.0.0.1`,
    `-Dgreenmail.${proto}.port=${port}`,
  ];
  const args = [
    `-Xmx${opts.heapMb ?? 256}m`,
    ...setup('smtp', m.smtpPort),
    ...setup('imap', m.imapPort),
    ...setup('smtps', m.smtpsPort),
    ...setup('imaps', m.imapsPort),
    `-Dgreenmail.api.hostname=127.0.0.1`,
    `-Dgreenmail.api.port=${new URL(m.apiUrl).port}`,
    ...(opts.authDisabled ? ['-Dgreenmail.auth.disabled'] : []),
    '-jar',
    jar,
  ];
  log(
    `mail: starting GreenMail ${GREENMAIL_VERSION} on 127.0.0.1 (SMTP ${m.smtpPort}, IMAP ${m.imapPort}; log ${logFile})`,
  );
  // One more start when the JVM exits during start-up (seen once in CI, with an empty log).
  for (let attempt = 1; ; attempt++) {
    const pid = await spawnDetached(java, args, logFile);
    onPid(pid);
    try {
      await waitReady(
        'mail',
        pid,
        logFile,
        60_000,
        async () =>
          (await apiAnswers(m.apiUrl)) &&
          (await tcpOpen(m.smtpPort)) &&
          (opts.authDisabled ? await imapLoginAccepted(m.imapPort) : await tcpOpen(m.imapPort)),
      );
      return;
    } catch (err) {
      if (attempt >= 2 || isRunning(pid, 'mail')) throw err;
      log(`mail: ${(err as Error).message.split('\n')[0]}; starting it once more`);
    }
  }
}

async function greenmailJar(log: Log): Promise<string> {
  const file = join(cacheDir, `greenmail-standalone-${GREENMAIL_VERSION}.jar`);
  if (existsSync(file)) return file;
  mkdirSync(cacheDir, { recursive: true });
  const url = `https://repo1.maven.org/maven2/com/icegreen/greenmail-standalone/${GREENMAIL_VERSION}/greenmail-standalone-${GREENMAIL_VERSION}.jar`;
  log(`mail: downloading ${url}`);
  const res = await fetch(url, { signal: AbortSignal.timeout(120_000) });
  if (!res.ok || !res.body) throw new Error(`mail: ${url} answered ${res.status}`);
  await pipeline(Readable.fromWeb(res.body as never), createWriteStream(`${file}.tmp`));
  renameSync(`${file}.tmp`, file);
  return file;
}

async function javaBinary(log: Log): Promise<string> {
  const found = onPath('java');
  if (found) return found;
  if (process.getuid?.() === 0 && existsSync('/etc/debian_version')) {
    const logFile = join(dataDir, 'apt.log');
    log(`mail: java is missing; installing default-jre-headless with apt-get (log ${logFile})`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    await run('apt-get', ['update'], logFile, { env });
    await run('apt-get', ['install', '-y', 'default-jre-headless'], logFile, { env });
    const installed = onPath('java');
    if (installed) return installed;
  }
  throw new Error('mail: java is not on PATH; install a JRE (apt-get install default-jre-headless)');
}
