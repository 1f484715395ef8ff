// Operator tasks (docs/operator-tasks.md): multi-step work the Operator plans as an ordered list of
// tool calls from the registry, run by the workflow `operator-task:<taskId>` as the user who
// created it, with pause / resume / cancel, retry of failed actions, and an event row for every
// transition of the task or of an action.
//
// Who writes what: a person's requests (create, pause, resume, cancel, retry) are written here, in
// a transaction that holds the task's row lock and that also signals (or starts) the workflow; the
// workflow's activities write what the run does (started, each action, finished) under the same
// lock. The lock orders every transition, numbers the events (`seq`) and makes the status checks
// exact: an impossible request is 409 `invalid_transition`.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ZodError } from 'zod';
import {
  MAX_TASK_ACTIONS,
  MAX_TASK_TITLE,
  OperatorTask,
  TASK_STATUSES,
  type IOperatorTask,
  type OnFailure,
  type TaskStatus,
} from '../../db/entities/OperatorTask.js';
import {
  OperatorTaskAction,
  type ActionStatus,
  type IOperatorTaskAction,
} from '../../db/entities/OperatorTaskAction.js';
import { OperatorTaskEvent, type IOperatorTaskEvent } from '../../db/entities/OperatorTaskEvent.js';
import { uuidv7 } from '../../lib/ids.js';
import { keyset, type PageRequest } from '../../lib/pagination.js';
import { assertWritable } from '../demo/demo.js';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import { canAccessApp, type Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';
import { requireOwnedApp } from './threads.js';
import { runTool, toolByName as findTool, withDefaultApp, type ToolContext } from '../tools/registry.js';
import { resolveActor } from '../workspaces.js';
import { notifyTaskFinished } from '../notifications/notifications.js';

export { TASK_STATUSES };
export const TASK_OPERATIONS = ['pause', 'resume', 'cancel'] as const;
export type TaskOperation = (typeof TASK_OPERATIONS)[number];

export const MAX_ACTIONS = MAX_TASK_ACTIONS;
export const MAX_TITLE = MAX_TASK_TITLE;
/** Tools a task may not call: a task does not create tasks. */
const NOT_IN_TASKS = new Set(['create_task']);
/** Stored results above this size (JSON characters) are replaced by a note. */
const MAX_RESULT_CHARS = 32_000;

export const TERMINAL: readonly TaskStatus[] = ['completed', 'failed', 'canceled'];

/**
 * The requests a person makes, by the status they start from. Everything else is 409
 * `invalid_transition`. The workflow's own moves (queued → running when it starts; running or
 * paused → completed | failed when the last action is done) are in `beginTaskRun`/`finishTaskRun`.
 */
export const CONTROL: Record<TaskOperation, { from: readonly TaskStatus[]; to: TaskStatus; event: string }> = {
  pause: { from: ['queued', 'running'], to: 'paused', event: 'task_paused' },
  resume: { from: ['paused'], to: 'running', event: 'task_resumed' },
  cancel: { from: ['queued', 'running', 'paused'], to: 'canceled', event: 'task_canceled' },
};

export interface ActionCounts {
  pending: number;
  running: number;
  succeeded: number;
  failed: number;
  canceled: number;
}

export interface TaskWithCounts {
  id: string;
  task: IOperatorTask;
  counts: ActionCounts;
}

const zeroCounts = (): ActionCounts => ({ pending: 0, running: 0, succeeded: 0, failed: 0, canceled: 0 });

async function countsOf(em: EntityManager, ids: string[]): Promise<Map<string, ActionCounts>> {
  const out = new Map(ids.map((id) => [id, zeroCounts()]));
  if (!ids.length) return out;
  const rows: { task_id: string; status: ActionStatus; n: number }[] = await em.execute(
    `select task_id, status, count(*)::int as n from operator_task_actions where task_id in (${ids.map(() => '?').join(', ')}) group by task_id, status`,
    ids,
  );
  for (const r of rows) out.get(r.task_id)![r.status] = r.n;
  return out;
}

async function withCounts(em: EntityManager, tasks: IOperatorTask[]): Promise<TaskWithCounts[]> {
  const counts = await countsOf(
    em,
    tasks.map((t) => t.id),
  );
  return tasks.map((task) => ({ id: task.id, task, counts: counts.get(task.id)! }));
}

// ---- Rows under lock, and events ----

interface TaskRow {
  id: string;
  workspace_id: string;
  user_id: string;
  app_id: string;
  acting_as_owner_id: string | null;
  status: TaskStatus;
  on_failure: OnFailure;
  run: number;
  event_count: number;
}

async function lockTask(tx: EntityManager, taskId: string): Promise<TaskRow | undefined> {
  const [row]: TaskRow[] = await tx.execute(
    'select id, workspace_id, user_id, app_id, acting_as_owner_id, status, on_failure, run, event_count from operator_tasks where id = ? for update',
    [taskId],
  );
  return row;
}

interface NewEvent {
  type: string;
  actionId?: string | null;
  position?: number | null;
  from?: string | null;
  to?: string | null;
  by?: string | null;
  data?: Record<string, unknown> | null;
}

/** Appends events to a task whose row the transaction has locked, numbered after the last one. */
async function addEvents(tx: EntityManager, task: TaskRow, events: NewEvent[]): Promise<void> {
  if (!events.length) return;
  const params: unknown[] = [];
  const values = events.map((e, i) => {
    params.push(
      uuidv7(),
      task.id,
      task.event_count + i + 1,
      e.type,
      e.actionId ?? null,
      e.position ?? null,
      e.from ?? null,
      e.to ?? null,
      e.by ?? null,
      e.data ? JSON.stringify(e.data) : null,
    );
    return '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, now())';
  });
  await tx.execute(
    `insert into operator_task_events (id, task_id, seq, type, action_id, position, from_status, to_status, by, data, created_at) values ${values.join(', ')}`,
    params,
  );
  task.event_count += events.length;
  await tx.execute('update operator_tasks set event_count = ?, updated_at = now() where id = ?', [
    task.event_count,
    task.id,
  ]);
}

async function setTaskStatus(
  tx: EntityManager,
  task: TaskRow,
  to: TaskStatus,
  event: Omit<NewEvent, 'from' | 'to'>,
  extra = '',
): Promise<void> {
  const from = task.status;
  await tx.execute(`update operator_tasks set status = ?${extra} where id = ?`, [to, task.id]);
  task.status = to;
  await addEvents(tx, task, [{ ...event, from, to }]);
}

/** Marks the task's pending (and, with `running`, running) actions canceled, with an event each. */
async function cancelOpenActions(
  tx: EntityManager,
  task: TaskRow,
  statuses: ActionStatus[],
  by: string | null,
): Promise<void> {
  const rows: { id: string; position: number; status: string }[] = await tx.execute(
    `update operator_task_actions a set status = 'canceled', finished_at = now(), updated_at = now()
     from (select id, status from operator_task_actions where task_id = ? and status in (${statuses.map(() => '?').join(', ')})) old
     where a.id = old.id returning a.id, a.position, old.status`,
    [task.id, ...statuses],
  );
  rows.sort((a, b) => a.position - b.position);
  await addEvents(
    tx,
    task,
    rows.map((r) => ({
      type: 'action_canceled',
      actionId: r.id,
      position: r.position,
      from: r.status,
      to: 'canceled',
      by,
    })),
  );
}

// ---- Creation ----

export interface NewTask {
  appId: string;
  title: string;
  actions: { tool: string; args?: unknown }[];
  onFailure?: OnFailure;
  /** Given by a caller that may repeat the request (a retried activity): the same id returns the same task. */
  id?: string;
}

/**
 * Validates the plan (every tool exists, may run in a task, and its arguments parse against its
 * input schema: 400 `invalid_actions` naming each bad action), stores the task and its actions
 * (queued / pending) and starts `operator-task:<id>`.
 */
export async function createTask(em: EntityManager, actor: Actor, jobs: Jobs, input: NewTask): Promise<TaskWithCounts> {
  assertWritable(actor);
  const title = input.title.trim();
  if (!title) throw badRequest('invalid_title', 'title cannot be empty');
  if (title.length > MAX_TITLE) throw badRequest('title_too_long', `title is longer than ${MAX_TITLE} characters`);
  // An action's tool that requires `app_id` runs for the task's product when the plan leaves it out (stored explicitly).
  const actions = input.actions.map((a) => ({ ...a, args: withTaskApp(a.tool, a.args ?? {}, input.appId) }));
  validateActions(actions);
  await requireOwnedApp(em, actor, input.appId);
  if (input.id) {
    const existing = await em.findOne(OperatorTask, { id: input.id, workspace: actor.workspaceId, user: actor.userId });
    if (existing) return (await withCounts(em, [existing]))[0];
  }
  const taskId = input.id ?? uuidv7();
  await em.transactional(async (tx) => {
    await tx.execute(
      `insert into operator_tasks (id, workspace_id, user_id, app_id, acting_as_owner_id, title, status, on_failure, action_count, run, event_count, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, 'queued', ?, ?, 1, 0, now(), now())`,
      [
        taskId,
        actor.workspaceId,
        actor.userId,
        input.appId,
        actor.actingAs ? actor.ownerId : null,
        title,
        input.onFailure ?? 'stop',
        actions.length,
      ],
    );
    const params: unknown[] = [];
    const values = actions.map((a, i) => {
      params.push(uuidv7(), taskId, i, a.tool, JSON.stringify(a.args ?? {}));
      return "(?, ?, ?, ?, ?::jsonb, 'pending', 0, now(), now())";
    });
    await tx.execute(
      `insert into operator_task_actions (id, task_id, position, tool, args, status, attempts, created_at, updated_at) values ${values.join(', ')}`,
      params,
    );
    const task = (await lockTask(tx, taskId))!;
    await addEvents(tx, task, [
      { type: 'task_created', to: 'queued', by: actor.userId, data: { actions: actions.length, run: 1 } },
    ]);
  });
  try {
    await jobs.start('operator-task', { taskId, workspaceId: actor.workspaceId, appId: input.appId, run: 1 });
  } catch (err) {
    await failUnstarted(em, taskId, 1, err);
    throw err;
  }
  return requireTaskWithCounts(em.fork(), actor, taskId);
}

const withTaskApp = (name: string, args: unknown, appId: string): unknown => {
  const tool = findTool(name);
  return tool ? withDefaultApp(tool, args, appId) : args;
};

/** 400 `invalid_actions`, with one detail per bad action (index, tool, what is wrong). */
export function validateActions(actions: { tool: string; args?: unknown }[]): void {
  const problems: { index: number; tool: string; message: string; issues?: unknown }[] = [];
  if (actions.length < 1 || actions.length > MAX_ACTIONS)
    throw badRequest('invalid_actions', `a task has 1 to ${MAX_ACTIONS} actions`);
  actions.forEach((a, index) => {
    const tool = findTool(a.tool);
    if (!tool) return problems.push({ index, tool: a.tool, message: 'no such tool' });
    if (NOT_IN_TASKS.has(tool.name))
      return problems.push({ index, tool: a.tool, message: 'a task cannot run this tool' });
    const parsed = tool.input.safeParse(a.args ?? {});
    if (!parsed.success) {
      problems.push({
        index,
        tool: a.tool,
        message: parsed.error.issues
          .map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message))
          .join('; '),
        issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
      });
    }
  });
  if (problems.length) {
    throw badRequest(
      'invalid_actions',
      `invalid actions: ${problems.map((p) => `#${p.index} ${p.tool}: ${p.message}`).join(' | ')}`,
      problems,
    );
  }
}

/** The workflow could not be started: the task fails at once (retry starts it again). */
async function failUnstarted(em: EntityManager, taskId: string, run: number, err: unknown): Promise<void> {
  await em.fork().transactional(async (tx) => {
    const task = await lockTask(tx, taskId);
    if (!task || task.run !== run || task.status !== 'queued') return;
    await setTaskStatus(
      tx,
      task,
      'failed',
      {
        type: 'task_failed',
        data: { code: 'start_failed', message: String((err as Error)?.message ?? err).slice(0, 500) },
      },
      ', finished_at = now()',
    );
  });
}

// ---- Reads ----

/** The caller's task: 404 for an unknown one, another user's, another workspace's, or of a product the member was not given. */
export async function requireTask(em: EntityManager, actor: Actor, taskId: string): Promise<IOperatorTask> {
  const task = await em.findOne(OperatorTask, { id: taskId, workspace: actor.workspaceId, user: actor.userId });
  if (!task || !canAccessApp(actor, task.app.id)) throw notFound('task');
  return task;
}

export async function requireTaskWithCounts(em: EntityManager, actor: Actor, taskId: string): Promise<TaskWithCounts> {
  return (await withCounts(em, [await requireTask(em, actor, taskId)]))[0];
}

/** One page of the caller's tasks, newest first, optionally of one status and/or product. */
export async function listTasks(
  em: EntityManager,
  actor: Actor,
  filter: { status?: TaskStatus; appId?: string },
  page: PageRequest,
): Promise<TaskWithCounts[]> {
  const where: Record<string, unknown> = { workspace: actor.workspaceId, user: actor.userId };
  if (filter.appId) {
    await requireOwnedApp(em, actor, filter.appId);
    where.app = filter.appId;
  } else if (!actor.allApps) where.app = { $in: actor.appIds };
  if (filter.status) where.status = filter.status;
  const k = keyset(page, 'desc');
  return withCounts(em, await em.find(OperatorTask, { ...where, ...k.where }, k.options));
}

export async function taskActions(em: EntityManager, actor: Actor, taskId: string): Promise<IOperatorTaskAction[]> {
  const task = await requireTask(em, actor, taskId);
  return em.find(OperatorTaskAction, { task: task.id }, { orderBy: { position: 'asc' } });
}

/** One page of the task's events in the order they happened (`seq`); the cursor is the last event's id. */
export async function taskEvents(
  em: EntityManager,
  actor: Actor,
  taskId: string,
  page: PageRequest,
): Promise<IOperatorTaskEvent[]> {
  const task = await requireTask(em, actor, taskId);
  let after = 0;
  if (page.after) {
    const last = await em.findOne(OperatorTaskEvent, { id: page.after, task: task.id }, { fields: ['seq'] });
    if (!last) throw badRequest('invalid_query', 'cursor: not an event of this task');
    after = last.seq;
  }
  return em.find(
    OperatorTaskEvent,
    { task: task.id, seq: { $gt: after } },
    { orderBy: { seq: 'asc' }, limit: page.limit + 1 },
  );
}

// ---- A person's requests ----

/** pause | resume | cancel: the transition (409 `invalid_transition` when impossible), then the signal to the running workflow. */
export async function controlTask(
  em: EntityManager,
  actor: Actor,
  jobs: Jobs,
  taskId: string,
  op: TaskOperation,
): Promise<TaskWithCounts> {
  assertWritable(actor);
  await requireTask(em, actor, taskId);
  const rule = CONTROL[op];
  await em.fork().transactional(async (tx) => {
    const task = (await lockTask(tx, taskId))!;
    if (!rule.from.includes(task.status))
      throw conflict(
        'invalid_transition',
        `a ${task.status} task cannot be ${op === 'cancel' ? 'canceled' : `${op}d`}`,
      );
    await setTaskStatus(
      tx,
      task,
      rule.to,
      { type: rule.event, by: actor.userId },
      op === 'cancel' ? ', finished_at = now()' : '',
    );
    // Cancel: no pending action will start (the run checks under this lock before each one); an
    // action already running finishes and is recorded.
    if (op === 'cancel') await cancelOpenActions(tx, task, ['pending'], actor.userId);
    // Inside the transaction: if Temporal refuses, nothing is recorded. A run that is not open
    // (none, or closing) needs no signal: the status above is what the next run reads.
    await jobs.signal('operator-task', { taskId }, op);
  });
  return requireTaskWithCounts(em.fork(), actor, taskId);
}

/**
 * Runs the failed actions again, then the ones never reached: only a `failed` task (409
 * `invalid_transition` otherwise). Its failed actions go back to pending (their attempt counter
 * goes on), the task to queued, and a new run of `operator-task:<id>` starts (`run` + 1).
 */
export async function retryTask(em: EntityManager, actor: Actor, jobs: Jobs, taskId: string): Promise<TaskWithCounts> {
  assertWritable(actor);
  const t = await requireTask(em, actor, taskId);
  const run = await em.fork().transactional(async (tx) => {
    const task = (await lockTask(tx, taskId))!;
    if (task.status !== 'failed')
      throw conflict('invalid_transition', `only a failed task can be retried; this one is ${task.status}`);
    const reset: { id: string; position: number; attempts: number }[] = await tx.execute(
      `update operator_task_actions set status = 'pending', updated_at = now() where task_id = ? and status = 'failed' returning id, position, attempts`,
      [taskId],
    );
    reset.sort((a, b) => a.position - b.position);
    await tx.execute('update operator_tasks set run = run + 1, finished_at = null where id = ?', [taskId]);
    task.run += 1;
    await setTaskStatus(tx, task, 'queued', {
      type: 'task_retried',
      by: actor.userId,
      data: { run: task.run, actions: reset.length },
    });
    await addEvents(
      tx,
      task,
      reset.map((r) => ({
        type: 'action_retried',
        actionId: r.id,
        position: r.position,
        from: 'failed',
        to: 'pending',
        by: actor.userId,
        data: { next_attempt: r.attempts + 1 },
      })),
    );
    return task.run;
  });
  try {
    await jobs.start('operator-task', { taskId, workspaceId: actor.workspaceId, appId: t.app.id, run });
  } catch (err) {
    await failUnstarted(em, taskId, run, err);
    throw err;
  }
  return requireTaskWithCounts(em.fork(), actor, taskId);
}

// ---- Outcomes ----

export interface OutcomeFilter {
  appId?: string;
  from: Date;
  to: Date;
  limit: number;
}

export interface Outcomes {
  from: Date;
  to: Date;
  tasks: { total: number; completed: number; failed: number; canceled: number };
  actions: { succeeded: number; failed: number; canceled: number; not_run: number };
  by_task: {
    task_id: string;
    app_id: string;
    title: string;
    status: TaskStatus;
    finished_at: Date;
    succeeded: number;
    failed: number;
    canceled: number;
    not_run: number;
  }[];
  by_tool: { tool: string; succeeded: number; failed: number; canceled: number }[];
}

/** What the caller's tasks that finished in [from, to) achieved: per task (newest first, up to `limit`), per tool, and in total. */
export async function taskOutcomes(em: EntityManager, actor: Actor, f: OutcomeFilter): Promise<Outcomes> {
  const where = [
    `t.workspace_id = ?`,
    `t.user_id = ?`,
    `t.status in ('completed', 'failed', 'canceled')`,
    `t.finished_at >= ?`,
    `t.finished_at < ?`,
  ];
  const params: unknown[] = [actor.workspaceId, actor.userId, f.from, f.to];
  if (f.appId) {
    await requireOwnedApp(em, actor, f.appId);
    where.push('t.app_id = ?');
    params.push(f.appId);
  } else if (!actor.allApps) {
    if (!actor.appIds.length) where.push('false');
    else {
      where.push(`t.app_id in (${actor.appIds.map(() => '?').join(', ')})`);
      params.push(...actor.appIds);
    }
  }
  const w = where.join(' and ');
  const counts = `count(*) filter (where a.status = 'succeeded')::int as succeeded, count(*) filter (where a.status = 'failed')::int as failed,
    count(*) filter (where a.status = 'canceled')::int as canceled, count(*) filter (where a.status in ('pending', 'running'))::int as not_run`;
  const [byTask, byTool, totals] = (await Promise.all([
    em.execute(
      `select t.id as task_id, t.app_id, t.title, t.status, t.finished_at, ${counts}
       from operator_tasks t join operator_task_actions a on a.task_id = t.id where ${w}
       group by t.id order by t.finished_at desc, t.id desc limit ?`,
      [...params, f.limit],
    ),
    em.execute(
      `select a.tool, ${counts} from operator_tasks t join operator_task_actions a on a.task_id = t.id where ${w} group by a.tool order by a.tool`,
      params,
    ),
    em.execute(`select t.status, count(*)::int as n from operator_tasks t where ${w} group by t.status`, params),
  ])) as unknown as [
    Outcomes['by_task'],
    (Outcomes['by_tool'][number] & { not_run: number })[],
    { status: TaskStatus; n: number }[],
  ];
  const n = (s: TaskStatus) => totals.find((r) => r.status === s)?.n ?? 0;
  const sum = (k: 'succeeded' | 'failed' | 'canceled' | 'not_run') => byTool.reduce((acc, r) => acc + r[k], 0);
  return {
    from: f.from,
    to: f.to,
    tasks: {
      total: n('completed') + n('failed') + n('canceled'),
      completed: n('completed'),
      failed: n('failed'),
      canceled: n('canceled'),
    },
    actions: { succeeded: sum('succeeded'), failed: sum('failed'), canceled: sum('canceled'), not_run: sum('not_run') },
    by_task: byTask.map((r) => ({ ...r, finished_at: new Date(r.finished_at) })),
    by_tool: byTool.map(({ tool, succeeded, failed, canceled }) => ({ tool, succeeded, failed, canceled })),
  };
}

// ---- What the workflow's activities do ----

export interface TaskPlan {
  /** False when this run has nothing to do (a stale run, or the task is already finished or canceled). */
  proceed: boolean;
  /** The task's status when the run began: a run may begin paused. */
  paused: boolean;
  canceled: boolean;
  onFailure: OnFailure;
  /** The actions to run, in order, with the attempt each one is at (ids only: the history stays small). */
  actions: { id: string; position: number; attempt: number }[];
}

/** Starts a run: queued → running (event `task_started`), and the actions it has to run. */
export async function beginTaskRun(em: EntityManager, input: { taskId: string; run: number }): Promise<TaskPlan> {
  return em.transactional(async (tx) => {
    const task = await lockTask(tx, input.taskId);
    const none: TaskPlan = {
      proceed: false,
      paused: false,
      canceled: task?.status === 'canceled',
      onFailure: task?.on_failure ?? 'stop',
      actions: [],
    };
    if (!task || task.run !== input.run || TERMINAL.includes(task.status)) return none;
    if (task.status === 'queued')
      await setTaskStatus(
        tx,
        task,
        'running',
        { type: 'task_started', data: { run: task.run } },
        ', started_at = coalesce(started_at, now())',
      );
    const rows: { id: string; position: number; status: ActionStatus; attempts: number }[] = await tx.execute(
      `select id, position, status, attempts from operator_task_actions where task_id = ? and status in ('pending', 'running') order by position`,
      [task.id],
    );
    return {
      proceed: true,
      paused: task.status === 'paused',
      canceled: false,
      onFailure: task.on_failure,
      // A `running` action is one whose activity died with the previous run: that attempt again.
      actions: rows.map((r) => ({
        id: r.id,
        position: r.position,
        attempt: r.status === 'running' ? Math.max(1, r.attempts) : r.attempts + 1,
      })),
    };
  });
}

export type ActionOutcome = 'succeeded' | 'failed' | 'canceled' | 'stale';

/** What the task's tools run with besides the task's user: the tool context's process-wide part. */
export type ToolServices = Pick<ToolContext, 'jobs' | 'config' | 'providers'>;

/** A tool's refusal (bad input, a domain rule): the action fails and the task goes on as told. Anything else is retried. */
const actionError = (err: unknown): { code: string; message: string } | undefined => {
  if (err instanceof AppError && err.status < 500) return { code: err.code, message: err.message };
  if (err instanceof ZodError)
    return {
      code: 'invalid_args',
      message: err.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; '),
    };
  return undefined;
};

const storedResult = (result: unknown): unknown => {
  const json = JSON.stringify(result ?? null);
  return json.length > MAX_RESULT_CHARS ? { truncated: true, size: json.length } : JSON.parse(json);
};

/**
 * Runs attempt `attempt` of one action as the task's user. Idempotent per attempt: an attempt that
 * already finished returns its outcome without running again; an attempt that was running when its
 * activity died runs again. Under the task's lock it first checks the task is not canceled (then
 * the action is canceled instead of run), then records `running`; the tool runs as a REST request
 * would (its own transactions); the outcome is recorded with its event.
 */
export async function runTaskAction(
  em: EntityManager,
  services: ToolServices,
  input: { taskId: string; run: number; actionId: string; attempt: number },
): Promise<ActionOutcome> {
  const claim = await em.fork().transactional(async (tx) => {
    const task = await lockTask(tx, input.taskId);
    if (!task || task.run !== input.run) return { outcome: 'stale' as const };
    const [action]: {
      id: string;
      position: number;
      tool: string;
      args: unknown;
      status: ActionStatus;
      attempts: number;
    }[] = await tx.execute(
      'select id, position, tool, args, status, attempts from operator_task_actions where id = ? and task_id = ? for update',
      [input.actionId, task.id],
    );
    if (!action) return { outcome: 'stale' as const };
    if (action.status === 'canceled') return { outcome: 'canceled' as const };
    // This attempt already finished (a retried activity): its outcome, without running it again.
    if (action.status === 'succeeded' || action.status === 'failed')
      return { outcome: action.attempts >= input.attempt ? action.status : ('stale' as const) };
    if (action.status === 'running' ? action.attempts !== input.attempt : action.attempts >= input.attempt)
      return { outcome: 'stale' as const };
    if (task.status === 'canceled') {
      await cancelOpenActions(tx, task, ['pending', 'running'], null);
      return { outcome: 'canceled' as const };
    }
    if (action.status === 'pending') {
      await tx.execute(
        `update operator_task_actions set status = 'running', attempts = ?, started_at = now(), finished_at = null, result = null, error_code = null, error_message = null, updated_at = now() where id = ?`,
        [input.attempt, action.id],
      );
      await addEvents(tx, task, [
        {
          type: 'action_started',
          actionId: action.id,
          position: action.position,
          from: 'pending',
          to: 'running',
          data: { attempt: input.attempt, tool: action.tool },
        },
      ]);
    }
    return { outcome: 'run' as const, task, action };
  });
  if (claim.outcome !== 'run') return claim.outcome;
  const { task, action } = claim;

  let result: unknown;
  try {
    const work = em.fork();
    const actor = await resolveActor(
      work,
      { userId: task.user_id, kind: 'session' },
      task.acting_as_owner_id ?? undefined,
    );
    if (actor.workspaceId !== task.workspace_id || !canAccessApp(actor, task.app_id))
      throw new AppError(403, 'not_assigned', 'the task’s user no longer has access to this product');
    const tool = findTool(action.tool);
    if (!tool) throw new AppError(400, 'unknown_tool', `no tool named ${action.tool}`);
    result = storedResult(
      await runTool(
        tool,
        {
          em: work,
          actor,
          jobs: services.jobs,
          config: services.config,
          providers: services.providers,
          appId: task.app_id,
        },
        action.args,
      ),
    );
  } catch (err) {
    const failure = actionError(err);
    if (!failure) throw err; // infrastructure: the activity is retried (then failTaskAction records it)
    await failTaskAction(em, { ...input, ...failure });
    return 'failed';
  }
  await em.fork().transactional(async (tx) => {
    const locked = (await lockTask(tx, input.taskId))!;
    const [done]: { id: string }[] = await tx.execute(
      `update operator_task_actions set status = 'succeeded', result = ?::jsonb, finished_at = now(), updated_at = now() where id = ? and status = 'running' and attempts = ? returning id`,
      [JSON.stringify(result), action.id, input.attempt],
    );
    if (done)
      await addEvents(tx, locked, [
        {
          type: 'action_succeeded',
          actionId: action.id,
          position: action.position,
          from: 'running',
          to: 'succeeded',
          data: { attempt: input.attempt },
        },
      ]);
  });
  return 'succeeded';
}

/** Records attempt `attempt` of an action as failed (once). */
export async function failTaskAction(
  em: EntityManager,
  input: { taskId: string; run: number; actionId: string; attempt: number; code: string; message: string },
): Promise<void> {
  await em.fork().transactional(async (tx) => {
    const task = await lockTask(tx, input.taskId);
    if (!task || task.run !== input.run) return;
    const [done]: { id: string; position: number }[] = await tx.execute(
      `update operator_task_actions set status = 'failed', error_code = ?, error_message = ?, finished_at = now(), updated_at = now()
       where id = ? and task_id = ? and status = 'running' and attempts = ? returning id, position`,
      [input.code.slice(0, 60), input.message.slice(0, 1000), input.actionId, task.id, input.attempt],
    );
    if (done) {
      await addEvents(tx, task, [
        {
          type: 'action_failed',
          actionId: done.id,
          position: done.position,
          from: 'running',
          to: 'failed',
          data: { attempt: input.attempt, code: input.code.slice(0, 60), message: input.message.slice(0, 500) },
        },
      ]);
    }
  });
}

/**
 * Ends a run: a canceled task gets its remaining actions canceled; otherwise the task is `failed`
 * when an action failed (or some were left unrun), else `completed`. Idempotent.
 */
export async function finishTaskRun(
  em: EntityManager,
  input: { taskId: string; run: number },
): Promise<{ status: TaskStatus | null }> {
  return em.fork().transactional(async (tx) => {
    const task = await lockTask(tx, input.taskId);
    if (!task) return { status: null };
    if (task.run !== input.run) return { status: task.status };
    if (task.status === 'canceled') {
      await cancelOpenActions(tx, task, ['pending', 'running'], null);
      return { status: task.status };
    }
    if (TERMINAL.includes(task.status)) return { status: task.status };
    const counts = (await countsOf(tx, [task.id])).get(task.id)!;
    const failed = counts.failed > 0 || counts.pending + counts.running > 0;
    await setTaskStatus(
      tx,
      task,
      failed ? 'failed' : 'completed',
      { type: failed ? 'task_failed' : 'task_completed', data: { run: task.run, ...counts } },
      ', finished_at = now(), started_at = coalesce(started_at, now())',
    );
    await notifyTaskFinished(tx, task.id);
    return { status: task.status };
  });
}
