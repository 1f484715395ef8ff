// Horizontal scale (docs/deploy.md): two worker processes polling one task queue share its work —
// workflow tasks and activities both reach each of them. Work is started in rounds until both have
// run some (bounded), so the test asserts the spread, not how the server happened to split it.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { spawnTsx, stopChild, waitFor } from '../../scripts/children.js';
import { api, closeApi } from '../helpers/api.js';
test.after.always(closeApi);

test('two workers on one task queue: each runs workflow tasks and activities of the same stream of work', async (t) => {
  const { services } = await api();
  const client = services.temporal;
  const taskQueue = `two-workers-${randomUUID()}`;
  const env = {
    TEMPORAL_TASK_QUEUE: taskQueue,
    TEMPORAL_SCHEDULES: 'off',
    WEBHOOK_DISPATCHER: 'off',
    MAILBOX_SESSIONS: 'off',
  };
  const workers = [
    spawnTsx('workers/worker.ts', env, { quiet: true }),
    spawnTsx('workers/worker.ts', env, { quiet: true }),
  ];
  t.teardown(() => Promise.all(workers.map((w) => stopChild(w))));
  for (const taskQueueType of [1, 2]) {
    await waitFor(
      `both workers to poll (${taskQueueType === 1 ? 'workflow' : 'activity'} tasks)`,
      async () => {
        const d = await client.connection.workflowService.describeTaskQueue({
          namespace: 'default',
          taskQueue: { name: taskQueue },
          taskQueueType,
        });
        return new Set((d.pollers ?? []).map((p) => p.identity)).size >= 2;
      },
      120_000,
    );
  }

  // Which worker (identity `<pid>@<host>`) started each workflow task and each activity.
  const workflowTasks = new Map<string, number>();
  const activities = new Map<string, number>();
  const bump = (m: Map<string, number>, id: string | null | undefined) => id && m.set(id, (m.get(id) ?? 0) + 1);
  let started = 0;
  for (let round = 0; round < 10 && (workflowTasks.size < 2 || activities.size < 2); round++) {
    const handles = await Promise.all(
      Array.from({ length: 20 }, () =>
        client.workflow.start('purgeExpiredAuth', { taskQueue, workflowId: `two-workers-${randomUUID()}` }),
      ),
    );
    started += handles.length;
    for (const h of handles) {
      await h.result();
      for (const e of (await h.fetchHistory()).events ?? []) {
        bump(workflowTasks, e.workflowTaskStartedEventAttributes?.identity);
        bump(activities, e.activityTaskStartedEventAttributes?.identity);
      }
    }
  }
  const pids = workers.map((w) => String(w.pid)).sort();
  // The distinct pids that ran something, sorted (a Set compares by insertion order).
  const pidsOf = (m: Map<string, number>) =>
    [...new Set([...m.keys()].map((identity) => identity.split('@')[0]))].sort();
  t.log(
    `${started} workflows: workflow tasks ${JSON.stringify(Object.fromEntries(workflowTasks))}, activities ${JSON.stringify(Object.fromEntries(activities))}`,
  );
  t.deepEqual(pidsOf(workflowTasks), pids, 'both workers ran workflow tasks, and only they did');
  t.deepEqual(pidsOf(activities), pids, 'both workers ran activities, and only they did');
});
