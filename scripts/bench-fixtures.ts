// What the benchmarks share: the stack and environment they run in, the processes they measure, and
// the data they set up through the domain (not the HTTP API) or directly in SQL. Safe to import
// first: what reads the configuration is imported inside the functions, after `benchStack` has set
// the environment (config is read once).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Connection } from '@temporalio/client';
import { reloadConfig, repoRoot } from '../lib/config.js';
import { uuidv7 } from '../lib/ids.js';
import { stopChild, waitFor } from './children.js';
import { stackWithSchema, type Isolation } from './stack-env.js';

/**
 * The stack with the bench's own database and Redis database (`iso`), and the environment of every
 * process of the run, set on this one: its own task queue (`bench-<name>-<pid>`), no schedules, no
 * outbox dispatcher unless `dispatcher` (the bench measures deliveries), warn logs, then `env`.
 * `build`: `npm run build` first (skipped with --no-build), for benches that run `dist/` as
 * production does.
 */
export async function benchStack(
  name: string,
  iso: Isolation,
  opts: { build?: boolean; dispatcher?: boolean; mail?: boolean; env?: Record<string, string> } = {},
) {
  const log = (msg: string) => console.error(`[bench:${name}] ${msg}`);
  if (opts.build && !process.argv.includes('--no-build')) {
    log('npm run build');
    const b = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], {
      cwd: repoRoot,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (b.status !== 0) process.exit(b.status ?? 1);
  }
  const { stack, env } = await stackWithSchema(log, iso, { mail: opts.mail });
  const taskQueue = `bench-${name}-${process.pid}`;
  const benchEnv: NodeJS.ProcessEnv = {
    ...env,
    TEMPORAL_TASK_QUEUE: taskQueue,
    TEMPORAL_SCHEDULES: 'off',
    ...(opts.dispatcher ? {} : { WEBHOOK_DISPATCHER: 'off' }),
    LOG_LEVEL: 'warn',
    ...opts.env,
  };
  Object.assign(process.env, benchEnv);
  // The stack's migrations read the configuration before this environment was set.
  reloadConfig();
  return { stack, env: benchEnv, taskQueue, log };
}

/** The API in this process, on a free loopback port. */
export async function startApi() {
  const { createServices } = await import('../api/services-factory.js');
  const { createApp } = await import('../api/app.js');
  const services = await createServices();
  const server = createApp(services).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = async () => {
    server.close();
    await services.close();
  };
  return { services, base, close };
}

/**
 * A built entry point (`dist/workers/worker.js`, `dist/api/server.js`) in a process of its own, as the
 * image runs it: NODE_ENV production, the image's NODE_OPTIONS unless BENCH_NODE_FLAGS says otherwise.
 * Production refuses generated secrets, so unless `env` carries them the child gets fresh ones (it
 * needs them only to load its configuration).
 */
export function spawnBuilt(script: string, env: NodeJS.ProcessEnv): ChildProcess {
  const nodeFlags = (process.env.BENCH_NODE_FLAGS ?? '--max-semi-space-size=32').split(' ').filter(Boolean);
  return spawn(process.execPath, [...nodeFlags, join(repoRoot, script)], {
    cwd: repoRoot,
    env: {
      ...process.env,
      JWT_SECRET: randomBytes(32).toString('base64url'),
      ENCRYPTION_KEY: randomBytes(32).toString('base64url'),
      ...env,
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/**
 * The built worker in a process of its own (as production runs it), the API in this one, and a
 * Temporal connection; `close` stops all three. (Wait for `workerPolling` before starting work.)
 */
export async function startApiAndBuiltWorker(env: NodeJS.ProcessEnv) {
  const worker = spawnBuilt('dist/workers/worker.js', env);
  const api = await startApi();
  const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
  const close = async () => {
    await api.close();
    await connection.close();
    await stopChild(worker);
  };
  return { ...api, worker, connection, close };
}

/** A process's resident memory now (`VmRSS`) or at its peak (`VmHWM`), in MB. */
export function memoryMb(pid: number, key: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Resolves once a worker polls `taskQueue`: the bench's own worker is up. */
export async function workerPolling(
  connection: Pick<Connection, 'workflowService'>,
  taskQueue: string,
  timeoutMs?: number,
): Promise<void> {
  await waitFor(
    'the bench worker to poll',
    async () => {
      const r = await connection.workflowService.describeTaskQueue({
        namespace: 'default',
        taskQueue: { name: taskQueue },
        taskQueueType: 1,
      });
      return (r.pollers?.length ?? 0) > 0;
    },
    timeoutMs,
  );
}

/** An ORM whose connection counts the SQL statements it executes (`statements()`, BEGIN/COMMIT aside). */
export async function countingOrm(databaseUrl: string) {
  const { openOrm } = await import('../db/orm.js');
  const orm = await openOrm(databaseUrl);
  const conn = orm.em.getConnection();
  let count = 0;
  const execute = conn.execute.bind(conn);
  conn.execute = ((...args: Parameters<typeof conn.execute>) => {
    count++;
    return execute(...args);
  }) as typeof conn.execute;
  return { orm, statements: () => count };
}

/** A fresh account on the pro plan with one product, acting as its owner. */
export async function benchOwner(em: EntityManager) {
  const { createAccount } = await import('../domain/auth/auth.js');
  const { createApp } = await import('../domain/apps/apps.js');
  const { setPlan } = await import('../domain/billing/plans.js');
  const { ownActor } = await import('../domain/workspaces.js');
  const user = createAccount(em, { email: `bench-${randomUUID()}@example.test`, name: 'Bench', passwordHash: 'x' });
  await em.flush();
  const actor = await ownActor(em, { userId: user.id, kind: 'session' });
  await setPlan(em, actor.workspaceId, 'pro');
  const app = await createApp(em, actor, { name: 'Bench product' });
  return { actor, app };
}

/** `benchOwner` with a personal access token (`token`), for benches that call the HTTP API. */
export async function benchApiOwner(em: EntityManager) {
  const { createToken } = await import('../domain/auth/api-tokens.js');
  const { loadConfig } = await import('../lib/config.js');
  const owner = await benchOwner(em);
  const { secret } = await createToken(em, loadConfig(), owner.actor.userId, 'bench');
  return { ...owner, token: secret };
}

/** Deletes the run's user: its workspace and all the bench wrote in it go with it, so runs do not pile up. */
export async function dropBenchOwner(
  em: EntityManager,
  userId: string | undefined,
  log: (msg: string) => void,
): Promise<void> {
  if (userId)
    await em.execute('delete from users where id = ?', [userId]).catch((err) => log(`cleanup: ${String(err)}`));
}

/**
 * `count` contacts, each a lead of the list: person i is `p<i>[.<tag>]@company.example` and, with
 * `profiles`, `https://pronet.example/in/bench-[<tag>-]<i>` (a tag keeps runs in one workspace apart).
 */
export async function seedLeads(
  em: EntityManager,
  s: { workspaceId: string; listId: string; count: number; tag?: string; profiles?: boolean },
): Promise<void> {
  await em.execute(
    `insert into contacts (id, workspace_id, email, email_normalised, profile_url, profile_url_normalised, first_name, last_name, company, created_at, updated_at)
     select gen_random_uuid(), ?, x.email, x.email, 'https://' || x.url, x.url, 'First' || i, 'Last' || i, 'Company ' || (i % 997), now(), now()
       from generate_series(1, ?) as i,
         lateral (select 'p' || i || ? || '@company.example' as email, case when ? then 'pronet.example/in/bench-' || ? || i end as url) x`,
    [s.workspaceId, s.count, s.tag ? `.${s.tag}` : '', !!s.profiles, s.tag ? `${s.tag}-` : ''],
  );
  await em.execute(
    `insert into leads (id, workspace_id, list_id, contact_id, source, created_at, updated_at)
     select gen_random_uuid(), ?, ?, c.id, 'import', now(), now() from contacts c where c.workspace_id = ?`,
    [s.workspaceId, s.listId, s.workspaceId],
  );
}

export interface BenchCampaign {
  workspaceId: string;
  appId: string;
  name: string;
  messageMode?: 'template' | 'ai';
  sendingWindows?: Record<string, { start: string; end: string }[]>;
  accountIds?: string[];
  reviewPolicy?: { mode: string };
  /** One first step (position 0), pinned as step version 1. */
  step?: { type: string; config: Record<string, unknown>; messageMode: 'ai' | null };
}

/** An active campaign in UTC (round robin, stop on reply, no review), written directly; returns its id and its step's. */
export async function seedCampaign(
  em: EntityManager,
  c: BenchCampaign,
): Promise<{ campaignId: string; stepId: string | null }> {
  const campaignId = uuidv7();
  await em.execute(
    `insert into campaigns (id, workspace_id, app_id, name, status, time_zone, sending_windows, account_ids, rotation, daily_new_lead_cap, stop_on_reply, country_rule,
       review_required, message_mode, exclusive_leads, step_version, review_policy, created_at, updated_at)
     values (?, ?, ?, ?, 'active', 'UTC', ?::jsonb, ?::jsonb, 'round_robin', null, true, null, false, ?, false, 1, ?::jsonb, now(), now())`,
    [
      campaignId,
      c.workspaceId,
      c.appId,
      c.name,
      JSON.stringify(c.sendingWindows ?? {}),
      JSON.stringify(c.accountIds ?? []),
      c.messageMode ?? 'template',
      c.reviewPolicy ? JSON.stringify(c.reviewPolicy) : null,
    ],
  );
  if (!c.step) return { campaignId, stepId: null };
  const stepId = uuidv7();
  const step = {
    id: stepId,
    position: 0,
    type: c.step.type,
    config: c.step.config,
    messageMode: c.step.messageMode,
    hasAttachment: false,
  };
  await em.execute(
    `insert into campaign_steps (id, campaign_id, position, type, config, message_mode, created_at, updated_at) values (?, ?, 0, ?, ?::jsonb, ?, now(), now())`,
    [stepId, campaignId, step.type, JSON.stringify(step.config), step.messageMode],
  );
  await em.execute(
    `insert into campaign_step_versions (campaign_id, version, steps, created_at) values (?, 1, ?::jsonb, now())`,
    [campaignId, JSON.stringify([step])],
  );
  return { campaignId, stepId };
}

/** Every lead of the list enrolled (active, step version 1, run 1), with no enrollment workflow. */
export async function seedEnrollments(
  em: EntityManager,
  s: { workspaceId: string; campaignId: string; listId: string },
): Promise<void> {
  await em.execute(
    `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, run, enrolled_at, created_at, updated_at)
     select gen_random_uuid(), ?, ?, l.id, l.contact_id, 'active', 1, 1, now(), now(), now() from leads l where l.list_id = ?`,
    [s.workspaceId, s.campaignId, s.listId],
  );
}

/** A process's CPU time so far (user + system, its threads included), in ms; `children` adds its waited-for children's. NaN once gone. */
export function cpuMs(pid: number, children = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14–17 of proc(5) (utime, stime, cutime, cstime) are 11–14 here; clock ticks of 10 ms.
    const ticks = Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0);
    return ticks * 10;
  } catch {
    return NaN;
  }
}

/**
 * CPU used by each process of a run between `start()` and `stop()`, sampled every `everyMs` so a
 * process that exits between samples loses at most one interval (PostgreSQL backends come and go).
 * `groups` names each group's processes, re-listed at every sample (new PostgreSQL backends count from
 * zero). Returns ms per group.
 */
export function cpuMeter(groups: Record<string, () => number[]>, everyMs = 500) {
  const first = new Map<string, Map<number, number>>();
  const last = new Map<string, Map<number, number>>();
  const sample = (initial: boolean) => {
    for (const [name, pids] of Object.entries(groups)) {
      const f = first.get(name) ?? new Map<number, number>();
      const l = last.get(name) ?? new Map<number, number>();
      first.set(name, f);
      last.set(name, l);
      for (const pid of pids()) {
        const ms = cpuMs(pid);
        if (Number.isNaN(ms)) continue;
        if (!f.has(pid)) f.set(pid, initial ? ms : 0);
        l.set(pid, ms);
      }
    }
  };
  sample(true);
  const timer = setInterval(() => sample(false), everyMs);
  return {
    stop(): Record<string, number> {
      clearInterval(timer);
      sample(false);
      const out: Record<string, number> = {};
      for (const [name, f] of first) {
        let sum = 0;
        for (const [pid, ms] of last.get(name)!) sum += ms - (f.get(pid) ?? 0);
        out[name] = sum;
      }
      return out;
    },
  };
}

/**
 * The local stack's PostgreSQL processes that a run on `database` loads: the backends connected to it
 * and the server's own helpers (WAL writer, checkpointer, …; shared with any other database's load).
 * Empty when the server is not this clone's (DATABASE_URL override) or there is no /proc.
 */
export function postgresPids(postmaster: number | null, database: string): number[] {
  if (!postmaster) return [];
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return [];
  }
  for (const e of entries) {
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== postmaster) continue;
      const cmd = readFileSync(`/proc/${e}/cmdline`, 'utf8');
      // A backend reads `postgres: <user> <database> <host>(<port>) <state>`; helpers name no host.
      if (!/\(\d+\)/.test(cmd) || cmd.includes(` ${database} `)) out.push(Number(e));
    } catch {
      // exited meanwhile
    }
  }
  return [postmaster, ...out];
}
