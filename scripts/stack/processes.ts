// What the local stack's services share (scripts/stack.ts): where .data lives, pid files, detached processes, probes.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import { homedir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export type Log = (msg: string) => void;
export type Service = 'postgres' | 'redis' | 'temporal' | 'mail';
export interface Started {
  svc: Service;
  pid: number;
}
export interface RunAs {
  uid: number;
  gid: number;
}

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** STACK_DATA_DIR: a second stack beside the usual one (the chaos harness: its own servers, ports and pid files). */
export const dataDir = process.env.STACK_DATA_DIR ? resolve(process.env.STACK_DATA_DIR) : join(repoRoot, '.data');
/** Per-user cache outside the clone, so every clone and CI run on a machine reuses one build. */
export const cacheDir = join(homedir(), '.cache', 'outreach-api');

/** Postgres' SIGTERM is a "smart" shutdown that waits for every client to leave; SIGINT is its fast, still clean, one. */
const STOP_SIGNAL: Record<Service, NodeJS.Signals> = {
  postgres: 'SIGINT',
  redis: 'SIGTERM',
  temporal: 'SIGTERM',
  mail: 'SIGTERM',
};
/** A word of each server's command line, to tell it from an unrelated process that reused its pid. */
const CMDLINE_MARK: Record<Service, string> = {
  postgres: 'postgres',
  redis: 'redis',
  temporal: 'temporal',
  mail: 'greenmail',
};

/**
 * Called before starting `svc` because nothing answered on its port: if this clone's pid file still
 * names a live server, that one runs on another port (an override changed), and a second one would
 * share its data dir and pid file.
 */
export function assertNoOtherInstance(svc: Service, port: number): void {
  const pid = readPid(svc);
  if (pid === null || !isRunning(pid, svc)) return;
  throw new Error(
    `${svc}: this clone's ${svc} already runs as pid ${pid}, but not on port ${port}; ` +
      'stop it first (npx tsx scripts/stack-down.ts) or use the port it was started on',
  );
}

export function record(started: Started[], svc: Service, pid: number): void {
  started.push({ svc, pid });
  writeFileSync(pidFile(svc), `${pid}\n`);
}

const pidFile = (svc: Service) => join(dataDir, `${svc}.pid`);

export function readPid(svc: Service): number | null {
  try {
    const pid = Number(readFileSync(pidFile(svc), 'utf8').trim());
    return pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Removes the pid file unless it now names a server started later by someone else. */
export function clearPid(svc: Service, pid: number): void {
  if (readPid(svc) === pid) rmSync(pidFile(svc), { force: true });
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function isRunning(pid: number, svc: Service): boolean {
  if (!isAlive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(CMDLINE_MARK[svc]); // '' for a zombie
  } catch {
    return !existsSync('/proc'); // no procfs (macOS): trust the pid
  }
}

/** The service's own shutdown signal, then SIGKILL if it is still there after 10 s. */
export async function terminate(pid: number, svc: Service, log: Log): Promise<void> {
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
export async function spawnDetached(cmd: string, args: string[], logFile: string, runAs?: RunAs): Promise<number> {
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
export async function run(
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
    if (code !== 0)
      throw new Error(`${cmd} ${args.join(' ')} exited with ${code}; ${logFile} ends with:\n${tail(logFile)}`);
  } finally {
    closeSync(out);
  }
}

/** Waits for `probe`, failing early with the log's tail if the server process dies. */
export async function waitReady(
  svc: Service,
  pid: number,
  logFile: string,
  timeoutMs: number,
  probe: () => Promise<boolean>,
): Promise<void> {
  // Gone on two polls in a row: a launcher that re-executes itself (the JVM's does) shows an empty
  // cmdline for an instant, which once read as "exited during start-up" with an empty log.
  let exited = false;
  let missing = 0;
  const ready = await waitUntil(async () => {
    missing = isRunning(pid, svc) ? 0 : missing + 1;
    exited = missing >= 2 || !isAlive(pid);
    return exited || (await probe());
  }, timeoutMs);
  if (ready && !exited) return;
  const why = exited ? 'exited during start-up' : `did not answer within ${timeoutMs / 1000} s`;
  throw new Error(`${svc}: the server (pid ${pid}) ${why}; ${logFile} ends with:\n${tail(logFile)}`);
}

export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(250);
  }
}

export function tcpOpen(port: number): Promise<boolean> {
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

export async function httpAnswers(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2000) })).status < 500;
  } catch {
    return false;
  }
}

export function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, name))) return join(dir, name);
  }
  return null;
}

export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

export function envPort(name: string, fallback: number): number {
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

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);
export const errorMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));
