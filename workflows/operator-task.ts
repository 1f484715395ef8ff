// An Operator task (`operator-task:<taskId>`, docs/operator-tasks.md): runs the task's actions in
// order, one activity per action, as the task's user. Pause / resume / cancel are signals: a pause
// takes effect between actions (the one running finishes), the workflow then waits for resume or
// cancel; a cancel stops before the next action (the activity checks the task's status under its
// lock too, so no action starts once the cancel is committed). Each run of the workflow is one
// `run` of the task: creation starts run 1, each retry a new run that picks up the failed and
// not-yet-run actions. The history holds ids and counts only (at most 50 actions per task).
import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  defineQuery,
  defineSignal,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import { defineJob } from './job.js';
import { operatorTaskWorkflowIds } from '../lib/workflow-ids.js';
import type { OperatorTaskActivities } from '../activities/operator-task.js';

const { beginOperatorTaskRun, finishOperatorTaskRun, failOperatorTaskAction } = proxyActivities<OperatorTaskActivities>(
  {
    startToCloseTimeout: '1 minute',
    retry: { maximumAttempts: 20, initialInterval: '1 second', maximumInterval: '30 seconds' },
  },
);
// A tool's refusal is recorded by the activity itself; what is retried here is infrastructure
// (database, Temporal, a provider's 5xx), a few times before the action is recorded as failed.
const { runOperatorTaskAction } = proxyActivities<OperatorTaskActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 3, initialInterval: '2 seconds' },
});

export const pauseTaskSignal = defineSignal('pause');
export const resumeTaskSignal = defineSignal('resume');
export const cancelTaskSignal = defineSignal('cancel');

export type TaskRunState = 'starting' | 'running' | 'paused' | 'canceling' | 'completed' | 'failed' | 'canceled';

export interface OperatorTaskProgress {
  taskId: string;
  run: number;
  state: TaskRunState;
  paused: boolean;
  canceled: boolean;
  /** The action running now (or next, while paused). */
  currentActionId: string | null;
  currentPosition: number | null;
  /** Actions this run has to run, and how they went so far. */
  total: number;
  succeeded: number;
  failed: number;
  remaining: number;
}

export const operatorTaskProgressQuery = defineQuery<OperatorTaskProgress>('progress');

export interface OperatorTaskInput {
  taskId: string;
  run: number;
}

export async function operatorTask(input: OperatorTaskInput): Promise<OperatorTaskProgress> {
  let paused = false;
  let canceled = false;
  let signaled = false;
  let state: TaskRunState = 'starting';
  let current: { id: string; position: number } | null = null;
  let total = 0;
  let succeeded = 0;
  let failed = 0;
  let done = 0;
  const progress = (): OperatorTaskProgress => ({
    taskId: input.taskId,
    run: input.run,
    state,
    paused,
    canceled,
    currentActionId: current?.id ?? null,
    currentPosition: current?.position ?? null,
    total,
    succeeded,
    failed,
    remaining: total - done,
  });
  setHandler(pauseTaskSignal, () => {
    paused = true;
    signaled = true;
  });
  setHandler(resumeTaskSignal, () => {
    paused = false;
    signaled = true;
  });
  setHandler(cancelTaskSignal, () => {
    canceled = true;
    signaled = true;
  });
  setHandler(operatorTaskProgressQuery, progress);

  const plan = await beginOperatorTaskRun(input);
  // The status read when the run began counts unless a signal (always newer) has arrived since.
  if (!signaled) {
    paused = plan.paused;
    canceled = plan.canceled;
  }
  total = plan.actions.length;
  if (plan.proceed) {
    for (const action of plan.actions) {
      current = action;
      if (paused && !canceled) {
        state = 'paused';
        await condition(() => !paused || canceled);
      }
      if (canceled) break;
      state = 'running';
      let outcome: string;
      try {
        outcome = await runOperatorTaskAction({
          taskId: input.taskId,
          run: input.run,
          actionId: action.id,
          attempt: action.attempt,
        });
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        const cause = err.cause instanceof ApplicationFailure ? err.cause : undefined;
        await failOperatorTaskAction({
          taskId: input.taskId,
          run: input.run,
          actionId: action.id,
          attempt: action.attempt,
          code: cause?.type ?? 'internal',
          message: cause?.message ?? err.message,
        });
        outcome = 'failed';
      }
      done++;
      if (outcome === 'succeeded') succeeded++;
      if (outcome === 'failed') failed++;
      if (outcome === 'canceled') canceled = true;
      if (outcome === 'stale' || canceled || (outcome === 'failed' && plan.onFailure === 'stop')) break;
    }
  }
  current = null;
  if (canceled) state = 'canceling';
  const end = await finishOperatorTaskRun(input);
  state = (
    end.status === 'completed' || end.status === 'failed' || end.status === 'canceled' ? end.status : 'failed'
  ) as TaskRunState;
  return progress();
}

export const operatorTaskJob = defineJob('operator-task', {
  workflow: operatorTask,
  id: (k) => operatorTaskWorkflowIds.task(k.taskId),
  args: (s) => [{ taskId: s.taskId, run: s.run }],
  scope: (s) => ({ workspaceId: s.workspaceId, appId: s.appId }),
  memo: (s) => ({ task_id: s.taskId, run: s.run }),
  repeat: {
    afterPrevious: 'run',
    busy: { code: 'task_busy', message: 'the previous run of this task is still closing; retry shortly' },
  },
  signals: { pause: pauseTaskSignal, resume: resumeTaskSignal, cancel: cancelTaskSignal },
});
