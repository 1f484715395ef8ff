// Operator tasks on the real dev server: the `operator-task:<id>` workflow runs real registry tools
// as the task's user (lead lists, whose side effect is visible), pause → resume → complete, cancel
// (later actions never run), retry of a failed action (idempotent per attempt), outcomes, every
// documented code, 404 for another workspace's and another user's tasks, the Operator tools, and
// the replay tests.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { DEMO_USER_ID, seedDemo } from '../../domain/demo/seed.js';
import { AppError } from '../../domain/errors.js';
import type { Actor } from '../../domain/identity.js';
import { createTask, finishTaskRun, runTaskAction } from '../../domain/operator/tasks.js';
import { findTool } from '../../domain/tools/index.js';
import { needsConfirmation, runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { operatorTaskWorkflowIds } from '../../lib/workflow-ids.js';
import { AppId, JobKind, WorkspaceId } from '../../workflows/search-attributes.js';
import type { OperatorTaskProgress } from '../../workflows/operator-task.js';
import { api, call, closeApi, createTestApp, createUser, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { addTeamMember } from '../helpers/db.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
test.after.always(closeApi);

interface Setup {
  u: TestUser;
  appId: string;
  actor: Actor;
}

async function setup(name = 'Task Owner'): Promise<Setup> {
  const u = await createOwner(name);
  const app = await createTestApp(u, 'Task product');
  return { u, appId: app.id, actor: await resolveActor(await em(), { userId: u.id, kind: 'session' }, undefined) };
}

const createList = (s: Setup, name: string) => ({ tool: 'create_lead_list', args: { app_id: s.appId, name } });

async function newTask(
  s: Setup,
  actions: { tool: string; args?: unknown }[],
  opts: { title?: string; onFailure?: 'stop' | 'continue'; actor?: Actor } = {},
) {
  const { services } = await api();
  return createTask(await em(), opts.actor ?? s.actor, services.jobs, {
    appId: s.appId,
    title: opts.title ?? 'Build the lists',
    actions,
    onFailure: opts.onFailure,
  });
}

const tok = (s: Setup | TestUser) => ({ token: 'u' in s ? s.u.accessToken : s.accessToken });
const getTask = (s: Setup, id: string) => call('GET', `/api/operator/tasks/${id}`, tok(s));
const getActions = (s: Setup, id: string) => call('GET', `/api/operator/tasks/${id}/actions`, tok(s));
const allEvents = async (s: Setup, id: string) =>
  (await call('GET', `/api/operator/tasks/${id}/events?limit=200`, tok(s))).body.items as {
    seq: number;
    type: string;
    position: number | null;
    by: string | null;
    from_status: string | null;
    to_status: string | null;
    data: Record<string, unknown> | null;
  }[];
const handleOf = async (taskId: string) =>
  (await api()).services.temporal.workflow.getHandle(operatorTaskWorkflowIds.task(taskId));
const listNames = async (s: Setup) =>
  ((await call('GET', `/api/apps/${s.appId}/lists?limit=200`, tok(s))).body.items as { name: string }[])
    .map((l) => l.name)
    .sort();

async function until<T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/**
 * Holds the product's list-name lock (domain/lists/lists.ts takes it before creating a list), so that a
 * create_lead_list action stays in flight until `release()`.
 */
async function holdListNames(appId: string): Promise<{ release(): Promise<void> }> {
  const { services } = await api();
  const c = new pg.Client({ connectionString: services.config.databaseUrl });
  await c.connect();
  await c.query('begin');
  await c.query('select pg_advisory_xact_lock(hashtext($1))', [`list-name:${appId}`]);
  let done = false;
  return {
    async release() {
      if (done) return;
      done = true;
      await c.query('commit');
      await c.end();
    },
  };
}

test.serial(
  'a task runs its actions in order as its user; events in order; progress query; search attributes; replays',
  async (t) => {
    const s = await setup();
    const task = await newTask(s, [createList(s, 'Alpha'), { tool: 'list_lead_lists', args: { app_id: s.appId } }]);
    t.like(task, { counts: { pending: 2, running: 0, succeeded: 0, failed: 0, canceled: 0 } });
    const handle = await handleOf(task.id);
    const result = (await handle.result()) as OperatorTaskProgress;
    t.like(result, {
      taskId: task.id,
      run: 1,
      state: 'completed',
      total: 2,
      succeeded: 2,
      failed: 0,
      remaining: 0,
      paused: false,
      canceled: false,
    });
    t.deepEqual(await handle.query<OperatorTaskProgress>('progress'), result);

    const r = await getTask(s, task.id);
    t.is(r.status, 200, r.text);
    t.like(r.body, {
      id: task.id,
      app_id: s.appId,
      title: 'Build the lists',
      status: 'completed',
      on_failure: 'stop',
      workflow_id: `operator-task:${task.id}`,
      run: 1,
      action_count: 2,
      action_counts: { pending: 0, running: 0, succeeded: 2, failed: 0, canceled: 0 },
      acting_as: null,
    });
    t.truthy(r.body.started_at);
    t.truthy(r.body.finished_at);
    const actions = (await getActions(s, task.id)).body;
    t.deepEqual(
      actions.map((a: { position: number; tool: string; status: string; attempts: number }) => [
        a.position,
        a.tool,
        a.status,
        a.attempts,
      ]),
      [
        [0, 'create_lead_list', 'succeeded', 1],
        [1, 'list_lead_lists', 'succeeded', 1],
      ],
    );
    t.like(actions[0].result, { name: 'Alpha', app_id: s.appId, lead_count: 0 });
    t.deepEqual(actions[0].args, { app_id: s.appId, name: 'Alpha' });
    t.deepEqual(
      actions[1].result.map((l: { name: string }) => l.name),
      ['Alpha'],
      'the second action sees what the first one did',
    );
    t.deepEqual(await listNames(s), ['Alpha']);

    const events = await allEvents(s, task.id);
    t.deepEqual(
      events.map((e) => [e.seq, e.type, e.position, e.from_status, e.to_status]),
      [
        [1, 'task_created', null, null, 'queued'],
        [2, 'task_started', null, 'queued', 'running'],
        [3, 'action_started', 0, 'pending', 'running'],
        [4, 'action_succeeded', 0, 'running', 'succeeded'],
        [5, 'action_started', 1, 'pending', 'running'],
        [6, 'action_succeeded', 1, 'running', 'succeeded'],
        [7, 'task_completed', null, 'running', 'completed'],
      ],
    );
    t.is(events[0].by, s.u.id);
    t.is(events[1].by, null, 'the workflow did it');

    const d = await handle.describe();
    t.is(d.typedSearchAttributes.get(JobKind), 'operator-task');
    t.is(d.typedSearchAttributes.get(WorkspaceId), s.actor.workspaceId);
    t.is(d.typedSearchAttributes.get(AppId), s.appId);
    t.deepEqual(d.memo, { task_id: task.id, run: 1 });

    const { services } = await api();
    t.true((await replayLive(services.temporal, handle.workflowId)) > 0);
    await replayFixture(services.temporal, 'operatorTask', handle.workflowId);
  },
);

test.serial('pause takes effect between actions; resume continues; the task completes; replays', async (t) => {
  const s = await setup();
  const hold = await holdListNames(s.appId);
  try {
    const task = await newTask(s, [createList(s, 'One'), createList(s, 'Two'), createList(s, 'Three')]);
    await until(
      'the first action to run',
      () => getActions(s, task.id),
      (r) => r.body[0]?.status === 'running',
    );
    const paused = await call('POST', `/api/operator/tasks/${task.id}/pause`, tok(s));
    t.is(paused.status, 200, paused.text);
    t.like(paused.body, { status: 'paused', action_counts: { running: 1, pending: 2 } });
    const again = await call('POST', `/api/operator/tasks/${task.id}/pause`, tok(s));
    t.is(again.status, 409);
    t.is(again.body.error.code, 'invalid_transition');
    t.is((await call('POST', `/api/operator/tasks/${task.id}/retry`, tok(s))).body.error.code, 'invalid_transition');
    await hold.release();

    // The action in flight finishes; the next one does not start while paused.
    await until(
      'the first action to finish',
      () => getActions(s, task.id),
      (r) => r.body[0]?.status === 'succeeded',
    );
    const handle = await handleOf(task.id);
    const progress = await until(
      'the workflow to wait',
      () => handle.query<OperatorTaskProgress>('progress'),
      (p) => p.state === 'paused',
    );
    t.like(progress, { paused: true, currentPosition: 1, succeeded: 1, remaining: 2 });
    // The query answered from the state after the workflow's latest task: it waits for a signal, and its
    // history (every command it gave) holds the first action's activity and no other.
    const scheduled = ((await handle.fetchHistory()).events ?? []).filter(
      (ev) => ev.activityTaskScheduledEventAttributes?.activityType?.name === 'runOperatorTaskAction',
    );
    t.is(scheduled.length, 1, 'no second action was scheduled while paused');
    t.deepEqual(
      (await getActions(s, task.id)).body.map((a: { status: string }) => a.status),
      ['succeeded', 'pending', 'pending'],
    );
    t.is((await getTask(s, task.id)).body.status, 'paused');
    t.deepEqual(await listNames(s), ['One']);

    const resumed = await call('POST', `/api/operator/tasks/${task.id}/resume`, tok(s));
    t.is(resumed.status, 200, resumed.text);
    t.is(resumed.body.status, 'running');
    t.is((await call('POST', `/api/operator/tasks/${task.id}/resume`, tok(s))).body.error.code, 'invalid_transition');
    t.like(await handle.result(), { state: 'completed', succeeded: 3 });
    t.like((await getTask(s, task.id)).body, { status: 'completed', action_counts: { succeeded: 3 } });
    t.deepEqual(await listNames(s), ['One', 'Three', 'Two']);
    const types = (await allEvents(s, task.id)).map((e) => e.type);
    t.deepEqual(types, [
      'task_created',
      'task_started',
      'action_started',
      'task_paused',
      'action_succeeded',
      'task_resumed',
      'action_started',
      'action_succeeded',
      'action_started',
      'action_succeeded',
      'task_completed',
    ]);
    const { services } = await api();
    t.true((await replayLive(services.temporal, handle.workflowId)) > 0);
    await replayFixture(services.temporal, 'operatorTask-paused', handle.workflowId);
  } finally {
    await hold.release();
  }
});

test.serial(
  'cancel: the action in flight finishes, the later ones never run (no side effect); every request after it is 409; replays',
  async (t) => {
    const s = await setup();
    const hold = await holdListNames(s.appId);
    try {
      const task = await newTask(s, [createList(s, 'Kept'), createList(s, 'Never 1'), createList(s, 'Never 2')]);
      await until(
        'the first action to run',
        () => getActions(s, task.id),
        (r) => r.body[0]?.status === 'running',
      );
      const canceled = await call('POST', `/api/operator/tasks/${task.id}/cancel`, tok(s));
      t.is(canceled.status, 200, canceled.text);
      t.like(canceled.body, { status: 'canceled', action_counts: { running: 1, pending: 0, canceled: 2 } });
      t.truthy(canceled.body.finished_at);
      for (const op of ['cancel', 'pause', 'resume', 'retry']) {
        const r = await call('POST', `/api/operator/tasks/${task.id}/${op}`, tok(s));
        t.is(r.status, 409, op);
        t.is(r.body.error.code, 'invalid_transition', op);
      }
      await hold.release();
      const handle = await handleOf(task.id);
      t.like(await handle.result(), { state: 'canceled', canceled: true, succeeded: 1 });
      const actions = (await getActions(s, task.id)).body;
      t.deepEqual(
        actions.map((a: { status: string; attempts: number }) => [a.status, a.attempts]),
        [
          ['succeeded', 1],
          ['canceled', 0],
          ['canceled', 0],
        ],
      );
      t.deepEqual(await listNames(s), ['Kept'], 'the canceled actions had no effect');
      t.is((await getTask(s, task.id)).body.status, 'canceled');
      const events = await allEvents(s, task.id);
      t.deepEqual(
        events.map((e) => [e.type, e.position, e.by === s.u.id]),
        [
          ['task_created', null, true],
          ['task_started', null, false],
          ['action_started', 0, false],
          ['task_canceled', null, true],
          ['action_canceled', 1, true],
          ['action_canceled', 2, true],
          ['action_succeeded', 0, false],
        ],
      );
      const { services } = await api();
      t.true((await replayLive(services.temporal, handle.workflowId)) > 0);
      await replayFixture(services.temporal, 'operatorTask-canceled', handle.workflowId);
    } finally {
      await hold.release();
    }
  },
);

test.serial(
  'retry: a failed action runs again (a new run), then the ones it never reached; idempotent per attempt; replays',
  async (t) => {
    const s = await setup();
    const taken = await call('POST', `/api/apps/${s.appId}/lists`, { ...tok(s), body: { name: 'Taken' } });
    t.is(taken.status, 201, taken.text);
    const task = await newTask(s, [createList(s, 'Fresh'), createList(s, 'Taken'), createList(s, 'After')]);
    const first = await handleOf(task.id);
    t.like(await first.result(), { state: 'failed', succeeded: 1, failed: 1 });
    const { services } = await api();
    await replayFixture(services.temporal, 'operatorTask-failed', first.workflowId);
    let r = await getTask(s, task.id);
    t.like(r.body, { status: 'failed', run: 1, action_counts: { succeeded: 1, failed: 1, pending: 1 } });
    let actions = (await getActions(s, task.id)).body;
    t.like(actions[1], { status: 'failed', attempts: 1, error: { code: 'list_name_taken' }, result: null });
    t.like(actions[2], { status: 'pending', attempts: 0 }, 'stop: the rest waits');
    for (const op of ['pause', 'resume', 'cancel'])
      t.is(
        (await call('POST', `/api/operator/tasks/${task.id}/${op}`, tok(s))).body.error.code,
        'invalid_transition',
        op,
      );

    // What made it fail is fixed; the retry runs it again, then the one it never reached.
    t.is((await call('PUT', `/api/lists/${taken.body.id}`, { ...tok(s), body: { name: 'Renamed' } })).status, 200);
    const retried = await call('POST', `/api/operator/tasks/${task.id}/retry`, tok(s));
    t.is(retried.status, 202, retried.text);
    // The answer is read after the start, so the worker may have picked the run up already.
    t.true(['queued', 'running'].includes(retried.body.status), retried.text);
    t.like(retried.body, { run: 2, finished_at: null, action_counts: { failed: 0 } });
    t.is(
      (await call('POST', `/api/operator/tasks/${task.id}/retry`, tok(s))).body.error.code,
      'invalid_transition',
      'only a failed task',
    );
    const second = await handleOf(task.id);
    t.like(await second.result(), { run: 2, state: 'completed', total: 2, succeeded: 2 });
    r = await getTask(s, task.id);
    t.like(r.body, { status: 'completed', run: 2, action_counts: { succeeded: 3 } });
    actions = (await getActions(s, task.id)).body;
    t.deepEqual(
      actions.map((a: { status: string; attempts: number; error: unknown }) => [a.status, a.attempts, a.error]),
      [
        ['succeeded', 1, null],
        ['succeeded', 2, null],
        ['succeeded', 1, null],
      ],
    );
    t.deepEqual(await listNames(s), ['After', 'Fresh', 'Renamed', 'Taken'], 'Fresh created once');
    const types = (await allEvents(s, task.id)).map((e) => `${e.type}${e.position === null ? '' : `#${e.position}`}`);
    t.deepEqual(types, [
      'task_created',
      'task_started',
      'action_started#0',
      'action_succeeded#0',
      'action_started#1',
      'action_failed#1',
      'task_failed',
      'task_retried',
      'action_retried#1',
      'task_started',
      'action_started#1',
      'action_succeeded#1',
      'action_started#2',
      'action_succeeded#2',
      'task_completed',
    ]);

    // The activity of an attempt that already finished does nothing (a retried activity).
    const before = (await allEvents(s, task.id)).length;
    t.is(
      await runTaskAction(
        await em(),
        { jobs: services.jobs, config: services.config, providers: services },
        { taskId: task.id, run: 2, actionId: actions[1].id, attempt: 2 },
      ),
      'succeeded',
    );
    t.is(
      await runTaskAction(
        await em(),
        { jobs: services.jobs, config: services.config, providers: services },
        { taskId: task.id, run: 1, actionId: actions[2].id, attempt: 1 },
      ),
      'stale',
      'an older run',
    );
    t.deepEqual(await finishTaskRun(await em(), { taskId: task.id, run: 2 }), { status: 'completed' });
    t.is((await allEvents(s, task.id)).length, before);
    t.deepEqual(await listNames(s), ['After', 'Fresh', 'Renamed', 'Taken']);

    t.true((await replayLive(services.temporal, second.workflowId)) > 0);
    await replayFixture(services.temporal, 'operatorTask-retried', second.workflowId);
  },
);

test.serial(
  'retry: 409 task_busy while the previous run stays open past 5 s; the task is failed again (start_failed) and a later retry runs',
  async (t) => {
    const s = await setup();
    t.is((await call('POST', `/api/apps/${s.appId}/lists`, { ...tok(s), body: { name: 'Taken' } })).status, 201);
    const task = await newTask(s, [createList(s, 'Taken')]);
    t.like(await (await handleOf(task.id)).result(), { state: 'failed', failed: 1 });
    // A previous run that does not close: a run of the task's workflow id on a task queue no worker
    // polls, with the finished run's number in its memo.
    const { services } = await api();
    const previous = await services.temporal.workflow.start('operatorTask', {
      taskQueue: `nobody-${randomUUID()}`,
      workflowId: operatorTaskWorkflowIds.task(task.id),
      args: [{ taskId: task.id, run: 1 }],
      memo: { task_id: task.id, run: 1 },
    });
    t.teardown(() => previous.terminate('test over').catch(() => {}));
    const began = Date.now();
    const busy = await call('POST', `/api/operator/tasks/${task.id}/retry`, tok(s));
    t.is(busy.status, 409, busy.text);
    t.is(busy.body.error.code, 'task_busy');
    t.true(Date.now() - began >= 4_500, 'it waited for the previous run to close');
    // The run it could not start is recorded as failed, so the task can be retried again.
    t.like((await getTask(s, task.id)).body, { status: 'failed', run: 2 });
    const last = (await allEvents(s, task.id)).at(-1)!;
    t.like(last, { type: 'task_failed', data: { code: 'start_failed' } });
    t.deepEqual(await listNames(s), ['Taken']);

    await previous.terminate('closed');
    t.is(
      (
        await call('PUT', `/api/lists/${(await call('GET', `/api/apps/${s.appId}/lists`, tok(s))).body.items[0].id}`, {
          ...tok(s),
          body: { name: 'Renamed' },
        })
      ).status,
      200,
    );
    const retried = await call('POST', `/api/operator/tasks/${task.id}/retry`, tok(s));
    t.is(retried.status, 202, retried.text);
    t.true(['queued', 'running'].includes(retried.body.status), retried.text);
    t.is(retried.body.run, 3);
    t.like(await (await handleOf(task.id)).result(), { run: 3, state: 'completed', succeeded: 1 });
    t.deepEqual(await listNames(s), ['Renamed', 'Taken']);
  },
);

test('on_failure continue: the other actions still run and the task ends failed', async (t) => {
  const s = await setup();
  await call('POST', `/api/apps/${s.appId}/lists`, { ...tok(s), body: { name: 'Dup' } });
  const task = await newTask(s, [createList(s, 'Dup'), createList(s, 'Other')], { onFailure: 'continue' });
  t.like(await (await handleOf(task.id)).result(), { state: 'failed', succeeded: 1, failed: 1 });
  t.like((await getTask(s, task.id)).body, {
    status: 'failed',
    on_failure: 'continue',
    action_counts: { failed: 1, succeeded: 1, pending: 0 },
  });
  t.deepEqual(await listNames(s), ['Dup', 'Other']);
});

test('pause right after creation, then cancel: at most the action already started runs', async (t) => {
  const s = await setup();
  const hold = await holdListNames(s.appId);
  try {
    const task = await newTask(s, [createList(s, 'P1'), createList(s, 'P2')]);
    const p = await call('POST', `/api/operator/tasks/${task.id}/pause`, tok(s));
    t.is(p.status, 200, p.text);
    t.is(p.body.status, 'paused');
    await hold.release();
    const handle = await handleOf(task.id);
    // At most the action that was already scheduled when the pause arrived runs.
    const progress = await until(
      'the workflow to wait',
      () => handle.query<OperatorTaskProgress>('progress'),
      (x) => x.state === 'paused',
    );
    t.true(progress.succeeded <= 1);
    const c = await call('POST', `/api/operator/tasks/${task.id}/cancel`, tok(s));
    t.is(c.status, 200, c.text);
    t.like(await handle.result(), { state: 'canceled' });
    const statuses = (await getActions(s, task.id)).body.map((a: { status: string }) => a.status);
    t.is(statuses[1], 'canceled');
    t.deepEqual(await listNames(s), statuses[0] === 'succeeded' ? ['P1'] : []);
  } finally {
    await hold.release();
  }
});

test('createTask checks the plan: 400 invalid_actions naming each bad action, invalid_title, 403 app_not_owned, demo_read_only', async (t) => {
  const s = await setup();
  const { services } = await api();
  const bad = (await t.throwsAsync(
    newTask(s, [
      createList(s, 'ok'),
      { tool: 'no_such_tool', args: {} },
      { tool: 'create_lead_list', args: { app_id: 'nope', name: '' } },
      { tool: 'create_task', args: { app_id: s.appId, title: 'x', actions: [] } },
      { tool: 'list_lead_lists', args: { extra: 1 } },
    ]),
  )) as AppError;
  t.true(bad instanceof AppError);
  t.like(bad, { status: 400, code: 'invalid_actions' });
  t.deepEqual(
    (bad.details as { index: number; tool: string }[]).map((d) => [d.index, d.tool]),
    [
      [1, 'no_such_tool'],
      [2, 'create_lead_list'],
      [3, 'create_task'],
      [4, 'list_lead_lists'],
    ],
  );
  t.like(await t.throwsAsync(newTask(s, [])), { status: 400, code: 'invalid_actions' });
  t.like(
    await t.throwsAsync(
      newTask(
        s,
        Array.from({ length: 51 }, (_, i) => createList(s, `L${i}`)),
      ),
    ),
    { status: 400, code: 'invalid_actions' },
  );
  t.like(await t.throwsAsync(newTask(s, [createList(s, 'x')], { title: '   ' })), {
    status: 400,
    code: 'invalid_title',
  });
  t.like(await t.throwsAsync(newTask(s, [createList(s, 'x')], { title: 'x'.repeat(201) })), {
    status: 400,
    code: 'title_too_long',
  });
  const other = await setup();
  t.like(
    await t.throwsAsync(
      createTask(await em(), s.actor, services.jobs, { appId: other.appId, title: 't', actions: [createList(s, 'x')] }),
    ),
    { status: 403, code: 'app_not_owned' },
  );
  t.like(await t.throwsAsync(newTask(s, [createList(s, 'x')], { actor: { ...s.actor, isDemo: true } })), {
    status: 403,
    code: 'demo_read_only',
  });
  t.is((await call('GET', '/api/operator/tasks', tok(s))).body.items.length, 0, 'nothing stored');

  // The same id twice is the same task (a repeated request).
  const id = randomUUID();
  const a = await createTask(await em(), s.actor, services.jobs, {
    id,
    appId: s.appId,
    title: 'once',
    actions: [{ tool: 'list_lead_lists', args: {} }],
  });
  const b = await createTask(await em(), s.actor, services.jobs, {
    id,
    appId: s.appId,
    title: 'once',
    actions: [{ tool: 'list_lead_lists', args: {} }],
  });
  t.is(a.id, id);
  t.is(b.id, id);
  t.is((await call('GET', '/api/operator/tasks', tok(s))).body.items.length, 1);
});

test('routes: list pages and filters; 400 invalid_id, invalid_operation, invalid_query; events paginate in order', async (t) => {
  const s = await setup();
  const t1 = await newTask(s, [{ tool: 'list_lead_lists', args: { app_id: s.appId } }], { title: 'first' });
  const t2 = await newTask(s, [{ tool: 'list_lead_lists', args: {} }], { title: 'second' });
  await (await handleOf(t1.id)).result();
  await (await handleOf(t2.id)).result();
  const app2 = await createTestApp(s.u, 'Second product');
  const t3 = await newTask({ ...s, appId: app2.id }, [{ tool: 'list_lead_lists', args: {} }], { title: 'third' });
  await (await handleOf(t3.id)).result();

  const p1 = await call('GET', '/api/operator/tasks?limit=2', tok(s));
  t.is(p1.status, 200, p1.text);
  t.deepEqual(
    p1.body.items.map((x: { title: string }) => x.title),
    ['third', 'second'],
  );
  t.truthy(p1.body.next_cursor);
  const p2 = await call('GET', `/api/operator/tasks?limit=2&cursor=${p1.body.next_cursor}`, tok(s));
  t.deepEqual(
    p2.body.items.map((x: { title: string }) => x.title),
    ['first'],
  );
  t.is(p2.body.next_cursor, null);
  t.deepEqual(
    (await call('GET', `/api/operator/tasks?app_id=${s.appId}`, tok(s))).body.items.map(
      (x: { title: string }) => x.title,
    ),
    ['second', 'first'],
  );
  t.deepEqual((await call('GET', '/api/operator/tasks?status=completed', tok(s))).body.items.length, 3);
  t.deepEqual((await call('GET', '/api/operator/tasks?status=failed', tok(s))).body.items.length, 0);

  const other = await setup();
  for (const [path, code, status] of [
    ['/api/operator/tasks?status=done', 'invalid_query', 400],
    ['/api/operator/tasks?app_id=nope', 'invalid_query', 400],
    ['/api/operator/tasks?limt=2', 'invalid_query', 400],
    [`/api/operator/tasks?app_id=${other.appId}`, 'app_not_owned', 403],
    ['/api/operator/tasks/nope', 'invalid_id', 400],
    ['/api/operator/tasks/nope/actions', 'invalid_id', 400],
    ['/api/operator/tasks/nope/events', 'invalid_id', 400],
    [`/api/operator/tasks/${t1.id}/events?cursor=bad`, 'invalid_query', 400],
    [`/api/operator/tasks/${randomUUID()}`, 'not_found', 404],
  ] as [string, string, number][]) {
    const r = await call('GET', path, tok(s));
    t.is(r.status, status, path);
    t.is(r.body.error.code, code, path);
  }
  for (const [path, code] of [
    [`/api/operator/tasks/${t1.id}/explode`, 'invalid_operation'],
    [`/api/operator/tasks/${t1.id}/PAUSE`, 'invalid_operation'],
    ['/api/operator/tasks/nope/pause', 'invalid_id'],
    ['/api/operator/tasks/nope/retry', 'invalid_id'],
  ]) {
    const r = await call('POST', path, tok(s));
    t.is(r.status, 400, path);
    t.is(r.body.error.code, code, path);
  }
  t.is(
    (await call('POST', `/api/operator/tasks/${t1.id}/pause`, tok(s))).body.error.code,
    'invalid_transition',
    'a completed task',
  );
  t.is(
    (await call('POST', `/api/operator/tasks/${t1.id}/retry`, tok(s))).body.error.code,
    'invalid_transition',
    'a completed task',
  );

  const e1 = await call('GET', `/api/operator/tasks/${t1.id}/events?limit=3`, tok(s));
  t.is(e1.status, 200, e1.text);
  t.deepEqual(
    e1.body.items.map((e: { seq: number }) => e.seq),
    [1, 2, 3],
  );
  const e2 = await call('GET', `/api/operator/tasks/${t1.id}/events?limit=3&cursor=${e1.body.next_cursor}`, tok(s));
  t.deepEqual(
    e2.body.items.map((e: { seq: number }) => e.seq),
    [4, 5],
  );
  t.is(e2.body.next_cursor, null);
});

test('ownership: another workspace’s and another user’s tasks are 404 on every route; Demo writes are 403 demo_read_only', async (t) => {
  const s = await setup();
  const task = await newTask(s, [{ tool: 'list_lead_lists', args: {} }]);
  await (await handleOf(task.id)).result();
  const routes: [string, string][] = [
    ['GET', `/api/operator/tasks/${task.id}`],
    ['GET', `/api/operator/tasks/${task.id}/actions`],
    ['GET', `/api/operator/tasks/${task.id}/events`],
    ['POST', `/api/operator/tasks/${task.id}/retry`],
    ['POST', `/api/operator/tasks/${task.id}/pause`],
    ['POST', `/api/operator/tasks/${task.id}/resume`],
    ['POST', `/api/operator/tasks/${task.id}/cancel`],
  ];
  const stranger = await createUser();
  // A team member of the same workspace (all products), acting as the owner: still another user.
  const member = await createUser();
  await addTeamMember(s.u.id, member.id);
  const asMember = { token: member.accessToken, headers: { 'x-acting-as': s.u.id } };
  for (const [method, path] of routes) {
    for (const [who, opts] of [
      ['stranger', { token: stranger.accessToken }],
      ['member', asMember],
    ] as [string, { token: string }][]) {
      const r = await call(method, path, opts);
      t.is(r.status, 404, `${who} ${method} ${path}`);
      t.is(r.body.error.code, 'not_found');
    }
  }
  t.is((await call('GET', '/api/operator/tasks', asMember)).body.items.length, 0);
  t.is((await call('GET', '/api/operator/tasks', { token: stranger.accessToken })).body.items.length, 0);

  // The member's own task in the owner's workspace: theirs (acting as the owner), not the owner's.
  const memberActor = await resolveActor(await em(), { userId: member.id, kind: 'session' }, s.u.id);
  const mine = await newTask(s, [{ tool: 'list_lead_lists', args: {} }], { actor: memberActor, title: 'member task' });
  t.like(await (await handleOf(mine.id)).result(), { state: 'completed' });
  const seen = await call('GET', `/api/operator/tasks/${mine.id}`, asMember);
  t.is(seen.status, 200, seen.text);
  t.like(seen.body, { status: 'completed', acting_as: s.u.id });
  t.is((await call('GET', `/api/operator/tasks/${mine.id}`, tok(s))).status, 404);
  t.is(
    (await call('GET', `/api/operator/tasks/${mine.id}`, { token: member.accessToken })).status,
    404,
    'in the member’s own workspace',
  );
  // A member without access to the product no longer sees it.
  const limited = await createUser();
  const otherApp = await createTestApp(s.u, 'Other');
  await addTeamMember(s.u.id, limited.id, { appIds: [otherApp.id] });
  const limitedActor = await resolveActor(await em(), { userId: limited.id, kind: 'session' }, s.u.id);
  t.like(await t.throwsAsync(newTask(s, [{ tool: 'list_lead_lists', args: {} }], { actor: limitedActor })), {
    status: 403,
    code: 'not_assigned',
  });

  await seedDemo(await em());
  const demoUser = await createUser();
  await call('POST', '/api/me/workspaces/demo/join', { token: demoUser.accessToken });
  const demo = { token: demoUser.accessToken, headers: { 'x-acting-as': DEMO_USER_ID } };
  for (const op of ['retry', 'pause', 'resume', 'cancel']) {
    const r = await call('POST', `/api/operator/tasks/${randomUUID()}/${op}`, demo);
    t.is(r.status, 403, op);
    t.is(r.body.error.code, 'demo_read_only');
  }
  t.is((await call('GET', '/api/operator/tasks', demo)).status, 200);
  t.is((await call('GET', `/api/operator/tasks/${randomUUID()}`, demo)).status, 404);
});

test('outcomes: counts per task, per tool and in total for finished tasks in the window, by product', async (t) => {
  const s = await setup();
  await call('POST', `/api/apps/${s.appId}/lists`, { ...tok(s), body: { name: 'Exists' } });
  const ok = await newTask(s, [createList(s, 'N1'), { tool: 'list_lead_lists', args: {} }], { title: 'ok' });
  await (await handleOf(ok.id)).result();
  const bad = await newTask(s, [createList(s, 'N2'), createList(s, 'Exists'), createList(s, 'N3')], { title: 'bad' });
  await (await handleOf(bad.id)).result();
  const app2 = await createTestApp(s.u, 'Elsewhere');
  const elsewhere = await newTask({ ...s, appId: app2.id }, [{ tool: 'list_lead_lists', args: {} }], {
    title: 'elsewhere',
  });
  await (await handleOf(elsewhere.id)).result();

  const r = await call('GET', '/api/operator/outcomes', tok(s));
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.tasks, { total: 3, completed: 2, failed: 1, canceled: 0 });
  t.deepEqual(r.body.actions, { succeeded: 4, failed: 1, canceled: 0, not_run: 1 });
  t.deepEqual(r.body.by_tool, [
    { tool: 'create_lead_list', succeeded: 2, failed: 1, canceled: 0 },
    { tool: 'list_lead_lists', succeeded: 2, failed: 0, canceled: 0 },
  ]);
  t.deepEqual(
    r.body.by_task.map((x: { title: string; status: string; succeeded: number; failed: number; not_run: number }) => [
      x.title,
      x.status,
      x.succeeded,
      x.failed,
      x.not_run,
    ]),
    [
      ['elsewhere', 'completed', 1, 0, 0],
      ['bad', 'failed', 1, 1, 1],
      ['ok', 'completed', 2, 0, 0],
    ],
  );
  const one = await call('GET', `/api/operator/outcomes?app_id=${app2.id}&limit=1`, tok(s));
  t.deepEqual(one.body.tasks, { total: 1, completed: 1, failed: 0, canceled: 0 });
  t.is(one.body.by_task.length, 1);
  const limited = await call('GET', '/api/operator/outcomes?limit=1', tok(s));
  t.is(limited.body.by_task.length, 1);
  t.is(limited.body.tasks.total, 3, 'totals count the whole window');
  const past = await call('GET', '/api/operator/outcomes?from=2020-01-01T00:00:00Z&to=2020-02-01T00:00:00Z', tok(s));
  t.is(past.status, 200, past.text);
  t.like(past.body, {
    from: '2020-01-01T00:00:00.000Z',
    to: '2020-02-01T00:00:00.000Z',
    tasks: { total: 0 },
    by_task: [],
    by_tool: [],
  });
  const reversed = await call(
    'GET',
    '/api/operator/outcomes?from=2030-01-01T00:00:00Z&to=2020-01-01T00:00:00Z',
    tok(s),
  );
  t.is(reversed.body.tasks.total, 0);
  const other = await setup();
  t.is((await call('GET', `/api/operator/outcomes?app_id=${other.appId}`, tok(s))).body.error.code, 'app_not_owned');
  t.is((await call('GET', '/api/operator/outcomes?from=yesterday', tok(s))).body.error.code, 'invalid_query');
  t.is(
    (await call('GET', '/api/operator/outcomes', tok(other))).body.tasks.total,
    0,
    'another user’s outcomes are their own',
  );
});

test('Operator tools: create_task (change), list_tasks and get_task (read) run as the caller', async (t) => {
  const { services } = await api();
  const s = await setup();
  t.is(findTool('create_task')?.risk, 'change');
  t.true(needsConfirmation(findTool('create_task')!));
  t.is(findTool('list_tasks')?.risk, 'read');
  t.is(findTool('get_task')?.risk, 'read');
  const ctx = { em: await em(), actor: s.actor, jobs: services.jobs, config: services.config, providers: services };
  const created = (await runTool(findTool('create_task')!, ctx, {
    app_id: s.appId,
    title: 'From a thread',
    actions: [{ tool: 'create_lead_list', args: { app_id: s.appId, name: 'By tool' } }],
  })) as { id: string; status: string; workflow_id: string };
  t.is(created.workflow_id, `operator-task:${created.id}`);
  await (await handleOf(created.id)).result();
  const listed = (await runTool(findTool('list_tasks')!, { ...ctx, em: await em() }, { status: 'completed' })) as {
    id: string;
  }[];
  t.deepEqual(
    listed.map((x) => x.id),
    [created.id],
  );
  const got = (await runTool(findTool('get_task')!, { ...ctx, em: await em() }, { task_id: created.id })) as {
    status: string;
    actions: { status: string; result: { name: string } }[];
  };
  t.is(got.status, 'completed');
  t.is(got.actions[0].result.name, 'By tool');
  const bad = await t.throwsAsync(
    runTool(
      findTool('create_task')!,
      { ...ctx, em: await em() },
      { app_id: s.appId, title: 'x', actions: [{ tool: 'nope' }] },
    ),
  );
  t.like(bad, { status: 400, code: 'invalid_actions' });
  const other = await setup();
  const otherCtx = {
    em: await em(),
    actor: other.actor,
    jobs: services.jobs,
    config: services.config,
    providers: services,
  };
  t.like(await t.throwsAsync(runTool(findTool('get_task')!, otherCtx, { task_id: created.id })), {
    status: 404,
    code: 'not_found',
  });
  t.is(((await runTool(findTool('list_tasks')!, otherCtx, {})) as unknown[]).length, 0);
});
