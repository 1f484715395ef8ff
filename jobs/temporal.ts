// The Temporal side of domain/jobs.ts (the one room where the API, the worker and activities reach
// Temporal). It holds no job of its own: each is declared beside its workflow (`defineJob`, found among
// workflows/index.ts's exports) and this adapter starts, signals, describes and queries any of them
// from its declaration. Two special cases stay by hand: enrollments start in eager batches, and the
// inbox processor's wake-ups are coalesced into one signal-with-start.
import { WorkflowExecutionAlreadyStartedError, type SignalDefinition } from '@temporalio/common';
import { ServiceError, WorkflowNotFoundError, type Client, type WorkflowStartOptions } from '@temporalio/client';
import type { JobKind, JobStatus, Jobs, JobStarted } from '../domain/jobs.js';
import { AppError } from '../domain/errors.js';
import { isJobDeclaration, type AnyJob } from '../workflows/job.js';
import { jobSearchAttributes } from '../workflows/search-attributes.js';
import { isTransientTemporal, retryTransient } from './connection.js';
import { nextLaunches, syncAgentSchedule } from './agent-schedules.js';
import * as workflows from '../workflows/index.js';

/** The registered workflow types, by name. */
type Workflows = typeof workflows;
type WorkflowType = {
  [K in keyof Workflows]: Workflows[K] extends (...args: any[]) => Promise<unknown> ? K : never;
}[keyof Workflows];

// Every job kind of the port has its declaration among the registered exports: a kind added to
// `JobTypes` without `defineJob` (or not exported by workflows/index.ts) fails here, naming it.
export type UndeclaredKinds<Exports> = Exclude<
  JobKind,
  Extract<Exports[keyof Exports], { kind: JobKind; repeat: unknown }>['kind']
>;
type Undeclared = UndeclaredKinds<Workflows>;
export const everyJobDeclared: [Undeclared] extends [never] ? true : { undeclared: Undeclared } = true;

/** The declarations by kind (one each: a second of the same kind is a mistake, refused at load). */
export const JOBS: ReadonlyMap<JobKind, AnyJob> = (() => {
  const byKind = new Map<JobKind, AnyJob>();
  for (const value of Object.values(workflows)) {
    if (!isJobDeclaration(value)) continue;
    if (byKind.has(value.kind)) throw new Error(`two job declarations of kind ${value.kind}`);
    byKind.set(value.kind, value);
  }
  return byKind;
})();

function declaration(kind: JobKind): AnyJob {
  const job = JOBS.get(kind);
  if (!job) throw new Error(`no job declaration of kind ${kind}`);
  return job;
}

/** The start options of `job` for `input`: id, arguments, memo and search attributes from its declaration. */
function startOptions(job: AnyJob, input: any, taskQueue: string) {
  const scope = job.scope(input);
  return {
    taskQueue,
    workflowId: job.id(input),
    args: job.args(input),
    memo: job.memo(input),
    typedSearchAttributes: jobSearchAttributes({
      kind: job.kind,
      workspaceId: scope.workspaceId ?? undefined,
      appId: scope.appId ?? undefined,
    }),
    ...(job.repeat === 'never-again' ? { workflowIdReusePolicy: 'REJECT_DUPLICATE' as const } : {}),
    ...(job.repeat === 'join'
      ? { workflowIdConflictPolicy: 'USE_EXISTING' as const, workflowIdReusePolicy: 'ALLOW_DUPLICATE' as const }
      : {}),
  };
}

/** Starts a workflow; true when this call started it, false when its id was taken (a repeated start is fine). */
export async function startOnce<K extends WorkflowType>(
  client: Client,
  type: K,
  options: WorkflowStartOptions<Workflows[K]>,
): Promise<boolean> {
  try {
    await client.workflow.start<Workflows[K]>(type, options);
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

/**
 * Starts one run of a job whose runs share a workflow id; `memo[runKey]` tells the runs apart. A run
 * is open: this one (a repeated start: join it), or the previous one, which has recorded its outcome
 * and is closing (wait for it, briefly, then start ours).
 */
async function startAfterPrevious<K extends WorkflowType>(
  client: Client,
  type: K,
  options: WorkflowStartOptions<Workflows[K]> & { workflowId: string; memo: Record<string, unknown> },
  runKey: string,
  busy: { code: string; message: string },
): Promise<void> {
  for (let i = 0; ; i++) {
    if (await startOnce(client, type, options)) return;
    const running = await client.workflow
      .getHandle(options.workflowId)
      .describe()
      .catch(() => null);
    if (running?.memo?.[runKey] === options.memo[runKey]) return;
    if (i >= 50) throw new AppError(409, busy.code, busy.message);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Signals the workflow's open run; false when there is none (finished, or not started yet). */
async function signalOpen(
  client: Client,
  workflowId: string,
  signal: SignalDefinition<any[]> | string,
  arg?: unknown,
): Promise<boolean> {
  try {
    await client.workflow.getHandle(workflowId).signal(signal, ...(arg === undefined ? [] : [arg]));
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/**
 * Temporal's errors as the callers answer them, at the one door every port call goes through: a busy
 * or unreachable server is 503 with Retry-After (what clients and load balancers retry on; an activity
 * retries it too, being ≥ 500), a missing or taken workflow id 404 or 409. Anything else passes as is.
 */
function asAppError(err: unknown): unknown {
  if (err instanceof ServiceError && isTransientTemporal(err))
    return new AppError(503, 'unavailable', 'the job service is busy; retry shortly', undefined, {
      'Retry-After': '2',
    });
  if (err instanceof WorkflowNotFoundError) return new AppError(404, 'not_found', 'job not found');
  if (err instanceof WorkflowExecutionAlreadyStartedError)
    return new AppError(409, 'already_started', 'job already started');
  return err;
}

/** The port with every call's Temporal errors translated (`asAppError`). */
function translated(port: Jobs): Jobs {
  const wrapped: Record<string, unknown> = {};
  for (const [name, call] of Object.entries(port) as [string, (...args: unknown[]) => Promise<unknown>][])
    wrapped[name] = (...args: unknown[]) =>
      call(...args).catch((err: unknown) => {
        throw asAppError(err);
      });
  return wrapped as unknown as Jobs;
}

const STATUS_OF: Record<string, JobStatus> = {
  RUNNING: 'running',
  CONTINUED_AS_NEW: 'running',
  COMPLETED: 'completed',
  FAILED: 'failed',
  TIMED_OUT: 'failed',
  CANCELLED: 'canceled',
  TERMINATED: 'terminated',
};

/**
 * `eagerClient`: a client over the worker's own NativeConnection (inside a worker only). Enrollment
 * starts then ask for eager start: the first workflow task comes back in the start response to this
 * worker, with no task-queue round trip (the bulk enrollment starts thousands from an activity).
 */
export function temporalJobs(
  client: Client,
  taskQueue: string,
  opts: {
    eagerClient?: Client;
    /** How long inbound events of one account wait to share the signal that wakes its processor (INBOX_KICK_COALESCE_MS). */
    kickCoalesceMs?: number;
  } = {},
): Jobs {
  const starter = opts.eagerClient ?? client;
  const kickCoalesceMs = opts.kickCoalesceMs ?? 50;
  const kicks = new Map<string, Promise<void>>();

  async function start(job: AnyJob, input: unknown): Promise<JobStarted> {
    const options = startOptions(job, input, taskQueue);
    const type = job.workflow.name as WorkflowType;
    const { repeat } = job;
    if (repeat === 'join') {
      const handle = await client.workflow.start(type, options as WorkflowStartOptions<any>);
      return { started: true, workflowId: options.workflowId, runId: handle.firstExecutionRunId };
    }
    if (typeof repeat === 'object') {
      await startAfterPrevious(client, type, options as never, repeat.afterPrevious, repeat.busy);
      return { started: true, workflowId: options.workflowId, runId: null };
    }
    const once = () => startOnce(client, type, options as never);
    const started = job.retryTransient ? await retryTransient(once) : await once();
    return { started, workflowId: options.workflowId, runId: null };
  }

  return translated({
    start: (kind, input) => start(declaration(kind), input),
    signal(kind, key, signal, arg) {
      const job = declaration(kind);
      const definition = job.signals?.[signal];
      if (!definition) throw new Error(`job ${kind} declares no signal ${signal}`);
      return signalOpen(client, job.id(key), definition, arg);
    },
    async describe(kind, key) {
      const d = await client.workflow
        .getHandle(declaration(kind).id(key))
        .describe()
        .catch((err: unknown) => {
          if (err instanceof WorkflowNotFoundError) return null;
          throw err;
        });
      return {
        exists: !!d,
        status: d ? (STATUS_OF[d.status.name] ?? 'unknown') : 'unknown',
        memo: (d?.memo ?? {}) as Record<string, unknown>,
      };
    },
    async query(kind, key, query) {
      const job = declaration(kind);
      const definition = job.queries?.[query];
      if (!definition) throw new Error(`job ${kind} declares no query ${query}`);
      // No open run, or no worker to answer right now: nothing to tell.
      return client.workflow
        .getHandle(job.id(key))
        .query(definition)
        .catch(() => null) as never;
    },
    async startEnrollments(starts) {
      const job = declaration('enrollment');
      const failed: string[] = [];
      for (let i = 0; i < starts.length; i += 50) {
        await Promise.all(
          starts.slice(i, i + 50).map(async (s) => {
            try {
              await starter.workflow.start('enrollment', {
                ...(startOptions(job, s, taskQueue) as WorkflowStartOptions<Workflows['enrollment']>),
                requestEagerStart: !!opts.eagerClient,
              });
            } catch (err) {
              if (err instanceof WorkflowExecutionAlreadyStartedError) return;
              failed.push(s.enrollmentId); // the others go on; the caller sees which failed
            }
          }),
        );
      }
      return { failed };
    },
    kickInboundProcessor(s) {
      // Kicks of one account within kickCoalesceMs share one signal, sent after all of them (each
      // caller's event is stored before it asks): a burst costs a few signals, and the promise
      // every caller gets settles once a signal covering its event went out (or was not needed).
      const pending = kicks.get(s.accountId);
      if (pending) return pending;
      const kick = new Promise<void>((resolve) => setTimeout(resolve, kickCoalesceMs)).then(async () => {
        kicks.delete(s.accountId);
        // A processor draining the account finds the events without a signal (docs/inbox.md); when
        // the answer is unknown, signal.
        if (s.draining && (await s.draining().catch(() => false))) return;
        const job = declaration('inbox-inbound');
        const { workflowIdConflictPolicy: _c, workflowIdReusePolicy: _r, ...options } = startOptions(job, s, taskQueue);
        await client.workflow.signalWithStart<Workflows['inboxInbound'], []>('inboxInbound', {
          ...(options as WorkflowStartOptions<Workflows['inboxInbound']>),
          signal: job.signals!.events as SignalDefinition<[]>,
        });
      });
      kicks.set(s.accountId, kick);
      return kick;
    },
    async syncAgentSchedule(agentId, agent) {
      // Repeated while Temporal answers with a transient status (each step is idempotent); what still
      // fails is the caller's to log: a later read or scheduled run converges (docs/discovery.md).
      await retryTransient(() => syncAgentSchedule(client, taskQueue, agentId, agent));
    },
    agentNextLaunches: (agent, repair) => nextLaunches(client, agent, repair),
  });
}
