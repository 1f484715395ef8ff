// The Operator's own work for the Operator: plan a multi-step task (change: confirming it confirms
// every action in it), read tasks, and remember facts for later turns.
import { z } from 'zod';
import { MAX_TASK_ACTIONS, MAX_TASK_TITLE, ON_FAILURE, TASK_STATUSES } from '../../db/entities/OperatorTask.js';
import { operatorTaskWorkflowIds } from '../../lib/workflow-ids.js';
import { MAX_KEY, MAX_VALUE, listFacts, rememberFacts } from '../operator/memory.js';
import { createTask, listTasks, requireTaskWithCounts, taskActions, type TaskWithCounts } from '../operator/tasks.js';
import { defineTool } from './registry.js';

const taskView = (t: TaskWithCounts) => ({
  id: t.id,
  app_id: t.task.app.id,
  title: t.task.title,
  status: t.task.status,
  workflow_id: operatorTaskWorkflowIds.task(t.id),
  action_counts: t.counts,
  created_at: t.task.createdAt.toISOString(),
  finished_at: t.task.finishedAt?.toISOString() ?? null,
});

export const operatorTaskTools = [
  defineTool({
    name: 'create_task',
    ids: { app_id: { kind: 'app', missing: [403, 'app_not_owned'] } },
    domain: 'operator',
    description:
      'Plan multi-step work as a task: an ordered list of tool calls ({tool, args}) that runs in the background as you, one after the other, and can be paused, resumed, canceled and retried. Every tool and its arguments are checked first. on_failure: stop (default) or continue after a failed action.',
    input: z
      .object({
        app_id: z.uuid(),
        title: z.string().trim().min(1).max(MAX_TASK_TITLE),
        actions: z
          .array(
            z.object({ tool: z.string().min(1).max(100), args: z.record(z.string(), z.unknown()).optional() }).strict(),
          )
          .min(1)
          .max(MAX_TASK_ACTIONS),
        on_failure: z.enum(ON_FAILURE).optional(),
      })
      .strict(),
    risk: 'change',
    run: async ({ em, actor, jobs }, input) =>
      taskView(
        await createTask(em, actor, jobs, {
          appId: input.app_id,
          title: input.title,
          actions: input.actions,
          onFailure: input.on_failure,
        }),
      ),
  }),
  defineTool({
    name: 'list_tasks',
    ids: { app_id: { kind: 'app', missing: [403, 'app_not_owned'] } },
    domain: 'operator',
    description:
      'List your Operator tasks (newest first, up to 50), optionally of one product or status, with how many actions succeeded, failed or are left.',
    input: z.object({ app_id: z.uuid().optional(), status: z.enum(TASK_STATUSES).optional() }).strict(),
    risk: 'read',
    run: async ({ em, actor }, input) =>
      (await listTasks(em, actor, { appId: input.app_id, status: input.status }, { limit: 50 }))
        .slice(0, 50)
        .map(taskView),
  }),
  defineTool({
    name: 'get_task',
    ids: { task_id: 'task' },
    domain: 'operator',
    description: 'One of your Operator tasks with its actions: each tool call, its status, attempts, result or error.',
    input: z.object({ task_id: z.uuid() }).strict(),
    risk: 'read',
    run: async ({ em, actor }, input) => ({
      ...taskView(await requireTaskWithCounts(em, actor, input.task_id)),
      actions: (await taskActions(em, actor, input.task_id)).map((a) => ({
        position: a.position,
        tool: a.tool,
        args: a.args,
        status: a.status,
        attempts: a.attempts,
        result: a.result ?? null,
        error: a.errorCode ? { code: a.errorCode, message: a.errorMessage ?? '' } : null,
      })),
    }),
  }),
  defineTool({
    name: 'remember',
    ids: { app_id: { kind: 'app', missing: [403, 'app_not_owned'] } },
    domain: 'operator',
    description:
      'Remember a fact for later conversations (key → value), about one product (app_id) or about all of them (no app_id). The same key replaces the earlier value.',
    input: z
      .object({
        app_id: z.uuid().nullable().optional(),
        key: z.string().trim().min(1).max(MAX_KEY),
        value: z.string().trim().min(1).max(MAX_VALUE),
      })
      .strict(),
    risk: 'change',
    run: async ({ em, actor }, input) => {
      const [f] = await rememberFacts(em, actor, [{ appId: input.app_id ?? null, key: input.key, value: input.value }]);
      return { id: f.id, app_id: f.app?.id ?? null, key: f.key, value: f.value };
    },
  }),
  defineTool({
    name: 'list_memory',
    ids: { app_id: { kind: 'app', missing: [403, 'app_not_owned'] } },
    domain: 'operator',
    description:
      'The facts you asked the Operator to remember (newest first, up to 100): of one product and those for all products, or all of them.',
    input: z.object({ app_id: z.uuid().optional() }).strict(),
    risk: 'read',
    run: async ({ em, actor }, input) =>
      (await listFacts(em, actor, { limit: 100 }, input.app_id))
        .slice(0, 100)
        .map((f) => ({ id: f.id, app_id: f.app?.id ?? null, key: f.key, value: f.value })),
  }),
];
