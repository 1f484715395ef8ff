// Child processes of `npm start` and `npm test`: the worker and the API, run with tsx.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { repoRoot } from '../lib/config.js';

export function spawnTsx(script: string, env: NodeJS.ProcessEnv, opts: { quiet?: boolean } = {}): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', opts.quiet ? 'ignore' : 'inherit', 'inherit'],
  });
}

export async function stopChild(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Polls until `check` resolves true, or throws after `timeoutMs`. */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** A TCP port on 127.0.0.1 that was free a moment ago (for child servers that take a fixed port). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/** The environment variable that marks every process a test run started (its value: the run's id). */
export const RUN_MARK = 'OUTREACH_TEST_RUN';

/** Pids of live processes whose environment carries `<mark>=<runId>` (Linux /proc; others: none). */
export function markedProcesses(runId: string, mark = RUN_MARK): number[] {
  const needle = `${mark}=${runId}\0`;
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const e of entries) {
    const pid = Number(e);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (`${readFileSync(`/proc/${pid}/environ`, 'latin1')}\0`.includes(needle)) out.push(pid);
    } catch {
      /* gone, or not ours to read */
    }
  }
  return out;
}

/**
 * Stops every process of the run still alive (a worker a failed test did not stop, an interrupted
 * ava): SIGTERM, then SIGKILL after `graceMs`. Returns the pids it found.
 */
export async function sweepRun(runId: string, graceMs = 5_000, mark = RUN_MARK): Promise<number[]> {
  const found = markedProcesses(runId, mark);
  for (const pid of found) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      /* already gone */
    }
  }
  const deadline = Date.now() + graceMs;
  while (markedProcesses(runId, mark).length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const pid of markedProcesses(runId, mark)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  return found;
}
