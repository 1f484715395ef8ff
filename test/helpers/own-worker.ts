// A worker of the test's own, on a task queue of its own, configured by variables as a deployment
// would be (a provider's base URL pointed at its stand-in): end-to-end tests of a provider run their
// jobs there. Stopped at the end of the test, and whatever still runs on its queue is terminated.
import type { ExecutionContext } from 'ava';
import type { Client } from '@temporalio/client';
import type { ChildProcess } from 'node:child_process';
import { spawnTsx, stopChild } from '../../scripts/children.js';

export function startOwnWorker(
  t: Pick<ExecutionContext, 'teardown'>,
  temporal: Client,
  taskQueue: string,
  env: NodeJS.ProcessEnv,
): ChildProcess {
  const worker = spawnTsx(
    'workers/worker.ts',
    {
      TEMPORAL_TASK_QUEUE: taskQueue,
      TEMPORAL_SCHEDULES: 'off',
      WEBHOOK_DISPATCHER: 'off',
      MAILBOX_SESSIONS: 'off',
      ...env,
    },
    { quiet: true },
  );
  t.teardown(() => stopChild(worker));
  // Teardowns run last-registered first: the queue is emptied before the worker stops.
  t.teardown(async () => {
    const running = temporal.workflow.list({ query: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'` });
    for await (const wf of running)
      await temporal.workflow
        .getHandle(wf.workflowId, wf.runId)
        .terminate('test over')
        .catch(() => undefined);
  });
  return worker;
}
