// The deployed shape the chaos harness runs and breaks: the stack's servers (PostgreSQL, Redis,
// Temporal, in the harness's own data dir and ports) and N API processes + M workers on one task
// queue, each a process of its own whose output goes to a log file.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../lib/config.js';
import { freePort } from '../children.js';
import { ensurePostgres } from '../stack/postgres.js';
import { dataDir, readPid, terminate, type Log, type Service, type Started } from '../stack/processes.js';
import { ensureRedis } from '../stack/redis.js';
import { ensureTemporal } from '../stack/temporal.js';

export interface Member {
  name: string;
  script: 'api/server.ts' | 'workers/worker.ts';
  port: number | null;
  child: ChildProcess;
  starts: number;
  /** Set when the harness itself stops or kills it. */
  expectExit: boolean;
}

type StackService = Exclude<Service, 'mail'>;
const ENSURE: Record<StackService, (log: Log, started: Started[]) => Promise<unknown>> = {
  postgres: ensurePostgres,
  redis: ensureRedis,
  temporal: ensureTemporal,
};

export class Fleet {
  readonly apis: Member[] = [];
  readonly workers: Member[] = [];
  /** What the run was doing, for the record of a process that exits on its own. */
  phase = 'start';
  /** Processes that exited without being told to: a crash the faults must never cause. */
  readonly crashes: string[] = [];

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly log: Log,
  ) {}

  get bases(): string[] {
    return this.apis.map((a) => `http://127.0.0.1:${a.port}`);
  }

  async start(apis: number, workers: number): Promise<void> {
    for (let i = 0; i < workers; i++) this.workers.push(this.spawn(`worker-${i + 1}`, 'workers/worker.ts', null));
    for (let i = 0; i < apis; i++) this.apis.push(this.spawn(`api-${i + 1}`, 'api/server.ts', await freePort()));
    await Promise.all(this.apis.map((a) => this.apiReady(a)));
  }

  /** kill -9, as a crash or an OOM kill would. */
  kill(m: Member): void {
    m.expectExit = true;
    m.child.kill('SIGKILL');
  }

  async restart(m: Member): Promise<void> {
    if (m.child.exitCode === null && m.child.signalCode === null) {
      const gone = new Promise((r) => m.child.once('exit', r));
      m.expectExit = true;
      m.child.kill('SIGKILL');
      await gone;
    }
    this.spawn(m.name, m.script, m.port, m);
    m.starts++;
    if (m.script === 'api/server.ts') await this.apiReady(m);
  }

  alive(m: Member): boolean {
    return m.child.exitCode === null && m.child.signalCode === null;
  }

  /** Stops a stack server the way its own shutdown does (PostgreSQL: fast shutdown; Redis, Temporal: SIGTERM). */
  async stopService(svc: StackService): Promise<void> {
    const pid = readPid(svc);
    if (pid !== null) await terminate(pid, svc, this.log);
  }

  /** Starts it again on the same port and data (PostgreSQL's cluster, Temporal's SQLite file). */
  async startService(svc: StackService): Promise<void> {
    await ENSURE[svc](this.log, []);
  }

  async stopAll(): Promise<void> {
    await Promise.all(
      [...this.apis, ...this.workers].map(async (m) => {
        if (!this.alive(m)) return;
        const gone = new Promise((r) => m.child.once('exit', r));
        m.expectExit = true;
        m.child.kill('SIGTERM');
        const timer = setTimeout(() => m.child.kill('SIGKILL'), 15_000);
        await gone;
        clearTimeout(timer);
      }),
    );
  }

  /** A new process for `into` (a restart), or for a new member. */
  private spawn(name: string, script: Member['script'], port: number | null, into?: Member): Member {
    const out = openSync(join(dataDir, `${name}.log`), 'a');
    try {
      // Workers serve no /metrics here: two on one machine would want the same port.
      const env = {
        ...process.env,
        ...this.env,
        ...(port ? { PORT: String(port) } : {}),
        ...(script === 'workers/worker.ts' ? { WORKER_METRICS_PORT: '0' } : {}),
      };
      const child = spawn(process.execPath, ['--import', 'tsx', script], {
        cwd: repoRoot,
        env,
        stdio: ['ignore', out, out],
      });
      const member: Member = into ?? { name, script, port, child, starts: 1, expectExit: false };
      Object.assign(member, { child, expectExit: false });
      child.once('exit', (code, signal) => {
        if (!member.expectExit && member.child === child)
          this.crashes.push(
            `${name} exited by itself (${signal ?? `code ${code}`}) during "${this.phase}"; see ${join(dataDir, `${name}.log`)}`,
          );
      });
      return member;
    } finally {
      closeSync(out);
    }
  }

  private async apiReady(m: Member): Promise<void> {
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      if (!this.alive(m)) throw new Error(`${m.name} exited during start-up; see ${join(dataDir, `${m.name}.log`)}`);
      try {
        if ((await fetch(`http://127.0.0.1:${m.port}/healthz`, { signal: AbortSignal.timeout(2000) })).ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`${m.name} did not answer /healthz within 120 s`);
  }
}
