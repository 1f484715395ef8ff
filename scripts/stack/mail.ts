// The test mail server (scripts/test.ts, bench:mail): GreenMail standalone from Maven Central, a real
// SMTP + IMAP server on loopback (plain ports and implicit-TLS ones with a self-signed certificate),
// fetched once into the per-user cache and run with the JDK (installed with apt-get when missing).
// Mailboxes are made by the tests through its API port (test/helpers/mail-server.ts); mail to an
// unknown address is delivered to a mailbox created on the spot (login and password: the address).
// Not part of `npm start`: the service sends through the sandbox network unless a mailbox is connected.
import { createWriteStream, existsSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  assertNoOtherInstance,
  cacheDir,
  dataDir,
  envPort,
  isRunning,
  onPath,
  record,
  run,
  spawnDetached,
  tcpOpen,
  waitReady,
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

export async function ensureMailServer(log: Log, started: Started[]): Promise<MailServer> {
  const m = mailServerAddress();
  if ((await apiAnswers(m.apiUrl)) && (await tcpOpen(m.smtpPort)) && (await tcpOpen(m.imapPort))) {
    log(`mail: reusing GreenMail on 127.0.0.1:${m.smtpPort}/${m.imapPort}`);
    return m;
  }
  assertNoOtherInstance('mail', m.smtpPort);
  const java = await javaBinary(log);
  const jar = await greenmailJar(log);
  mkdirSync(dataDir, { recursive: true });
  const logFile = join(dataDir, 'mail.log');
  const setup = (proto: string, port: number) => [
    `-Dgreenmail.${proto}.hostname=127.0.0.1`,
    `-Dgreenmail.${proto}.port=${port}`,
  ];
  const args = [
    '-Xmx256m',
    ...setup('smtp', m.smtpPort),
    ...setup('imap', m.imapPort),
    ...setup('smtps', m.smtpsPort),
    ...setup('imaps', m.imapsPort),
    `-Dgreenmail.api.hostname=127.0.0.1`,
    `-Dgreenmail.api.port=${new URL(m.apiUrl).port}`,
    '-Dgreenmail.verbose=false',
    '-jar',
    jar,
  ];
  log(
    `mail: starting GreenMail ${GREENMAIL_VERSION} on 127.0.0.1 (SMTP ${m.smtpPort}, IMAP ${m.imapPort}; log ${logFile})`,
  );
  // One more start when the JVM exits during start-up (seen once in CI, with an empty log).
  for (let attempt = 1; ; attempt++) {
    const pid = await spawnDetached(java, args, logFile);
    record(started, 'mail', pid);
    try {
      await waitReady(
        'mail',
        pid,
        logFile,
        60_000,
        async () => (await apiAnswers(m.apiUrl)) && (await tcpOpen(m.smtpPort)) && (await tcpOpen(m.imapPort)),
      );
      return m;
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
