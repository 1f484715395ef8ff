// Operator task activities (workflows/operator-task.ts): begin a run, run one action as the task's
// user, record an action's failure, finish the run. Each is idempotent (see domain/operator/tasks.ts):
// payloads are ids, attempts and outcomes, never rows or tool results.
import { ApplicationFailure } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../domain/errors.js';
import type { Jobs } from '../domain/jobs.js';
import {
  beginTaskRun,
  failTaskAction,
  finishTaskRun,
  runTaskAction,
  type ActionOutcome,
  type TaskPlan,
} from '../domain/operator/tasks.js';
import type { TaskStatus } from '../db/entities/OperatorTask.js';
import { withProviders, type Providers } from '../lib/providers.js';
import type { ActivityDeps } from './deps.js';

const noJobs: Jobs = new Proxy({} as Jobs, {
  get: () => async () => {
    throw new AppError(503, 'jobs_unavailable', 'this worker cannot start jobs');
  },
});

export function createOperatorTaskActivities(deps: ActivityDeps, overrides: Partial<Providers> = {}) {
  const em = () => deps.orm.em.fork() as EntityManager;
  // The process's providers, each made on first use (most tools need none).
  const providers = withProviders(deps.providers, overrides);
  return {
    async beginOperatorTaskRun(input: { taskId: string; run: number }): Promise<TaskPlan> {
      return beginTaskRun(em(), input);
    },
    async runOperatorTaskAction(input: {
      taskId: string;
      run: number;
      actionId: string;
      attempt: number;
    }): Promise<ActionOutcome> {
      try {
        return await runTaskAction(em(), { jobs: deps.jobs ?? noJobs, config: deps.config, providers }, input);
      } catch (err) {
        // A server-side refusal (5xx AppError) keeps its code for the action's record once retries run out.
        if (err instanceof AppError) throw ApplicationFailure.retryable(err.message, err.code);
        throw err;
      }
    },
    async failOperatorTaskAction(input: {
      taskId: string;
      run: number;
      actionId: string;
      attempt: number;
      code: string;
      message: string;
    }): Promise<void> {
      await failTaskAction(em(), input);
    },
    async finishOperatorTaskRun(input: { taskId: string; run: number }): Promise<{ status: TaskStatus | null }> {
      return finishTaskRun(em(), input);
    },
  };
}

export type OperatorTaskActivities = ReturnType<typeof createOperatorTaskActivities>;
