import { z } from 'zod';
import { ACTION_STATUSES, type IOperatorTaskAction } from '../../db/entities/OperatorTaskAction.js';
import type { IOperatorTaskEvent } from '../../db/entities/OperatorTaskEvent.js';
import { ON_FAILURE } from '../../db/entities/OperatorTask.js';
import { TASK_OPERATIONS, TASK_STATUSES, type Outcomes, type TaskWithCounts } from '../../domain/operator/tasks.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { operatorTaskWorkflowIds } from '../../lib/workflow-ids.js';
import { Timestamp, iso } from '../schemas.js';

export const TaskParams = z.object({ taskID: z.uuid() });
export const ControlParams = z.object({
  taskID: z.uuid(),
  operation: z
    .enum(TASK_OPERATIONS)
    .meta({ description: 'pause | resume | cancel (anything else: 400 invalid_operation)' }),
});

export const TaskListQuery = z.object({
  ...pageQuery,
  status: z.enum(TASK_STATUSES).optional(),
  app_id: z.uuid().optional().meta({
    description:
      "One product's tasks (403 app_not_owned for another workspace's product, not_assigned for one the member was not given)",
  }),
});
export const EventsQuery = z.object(pageQuery);

const Count = z.number().int().nonnegative();
const ActionCounts = z.object({ pending: Count, running: Count, succeeded: Count, failed: Count, canceled: Count });

export const TaskView = z.object({
  id: z.uuid(),
  app_id: z.uuid(),
  title: z.string(),
  status: z.enum(TASK_STATUSES),
  on_failure: z.enum(ON_FAILURE).meta({
    description:
      'stop: the task fails at the first failed action (the rest stay pending); continue: the other actions still run',
  }),
  workflow_id: z.string().meta({ description: 'operator-task:<id> (one Temporal run per run of the task)' }),
  run: z.number().int().positive().meta({ description: 'Runs started: 1, then one more per retry' }),
  action_count: Count,
  action_counts: ActionCounts,
  acting_as: z
    .uuid()
    .nullable()
    .meta({ description: 'The owner the user acted for when creating it (X-Acting-As); null in their own workspace' }),
  created_at: Timestamp,
  updated_at: Timestamp,
  started_at: Timestamp.nullable(),
  finished_at: Timestamp.nullable(),
});
export const TaskPage = pageSchema(TaskView);

export const toTaskView = (t: TaskWithCounts): z.infer<typeof TaskView> => ({
  id: t.id,
  app_id: t.task.app.id,
  title: t.task.title,
  status: t.task.status as z.infer<typeof TaskView>['status'],
  on_failure: t.task.onFailure as z.infer<typeof TaskView>['on_failure'],
  workflow_id: operatorTaskWorkflowIds.task(t.id),
  run: t.task.run,
  action_count: t.task.actionCount,
  action_counts: t.counts,
  acting_as: t.task.actingAsOwnerId ?? null,
  created_at: t.task.createdAt.toISOString(),
  updated_at: t.task.updatedAt.toISOString(),
  started_at: iso(t.task.startedAt),
  finished_at: iso(t.task.finishedAt),
});

export const ActionView = z.object({
  id: z.uuid(),
  task_id: z.uuid(),
  position: Count.meta({ description: '0-based order in the task' }),
  tool: z.string(),
  args: z.unknown(),
  status: z.enum(ACTION_STATUSES),
  attempts: Count.meta({ description: 'Times it was started (a retry adds one)' }),
  result: z.unknown().meta({ description: "The tool's result (succeeded), else null" }),
  error: z
    .object({ code: z.string(), message: z.string() })
    .nullable()
    .meta({ description: 'Why the last attempt failed' }),
  started_at: Timestamp.nullable(),
  finished_at: Timestamp.nullable(),
  updated_at: Timestamp,
});

export const toActionView = (a: IOperatorTaskAction): z.infer<typeof ActionView> => ({
  id: a.id,
  task_id: a.task.id,
  position: a.position,
  tool: a.tool,
  args: a.args ?? {},
  status: a.status as z.infer<typeof ActionView>['status'],
  attempts: a.attempts,
  result: a.result ?? null,
  error: a.errorCode ? { code: a.errorCode, message: a.errorMessage ?? '' } : null,
  started_at: iso(a.startedAt),
  finished_at: iso(a.finishedAt),
  updated_at: a.updatedAt.toISOString(),
});

export const EventView = z.object({
  id: z.uuid(),
  task_id: z.uuid(),
  seq: z.number().int().positive().meta({ description: 'Order of the event within the task' }),
  type: z.string().meta({
    description:
      'task_created, task_started, task_paused, task_resumed, task_canceled, task_completed, task_failed, task_retried, action_started, action_succeeded, action_failed, action_canceled, action_retried',
  }),
  action_id: z.uuid().nullable(),
  position: Count.nullable(),
  from_status: z.string().nullable(),
  to_status: z.string().nullable(),
  by: z.uuid().nullable().meta({ description: 'The person who asked for it; null when the workflow did it' }),
  data: z.record(z.string(), z.unknown()).nullable(),
  created_at: Timestamp,
});
export const EventPage = pageSchema(EventView);

export const toEventView = (e: IOperatorTaskEvent): z.infer<typeof EventView> => ({
  id: e.id,
  task_id: e.task.id,
  seq: e.seq,
  type: e.type,
  action_id: e.actionId ?? null,
  position: e.position ?? null,
  from_status: e.fromStatus ?? null,
  to_status: e.toStatus ?? null,
  by: e.by ?? null,
  data: (e.data as Record<string, unknown> | null) ?? null,
  created_at: e.createdAt.toISOString(),
});

export const OutcomesQuery = z.object({
  app_id: z.uuid().optional(),
  from: z.iso
    .datetime()
    .optional()
    .meta({ description: 'Start of the window (finished at or after); default: 30 days before `to`' }),
  to: z.iso.datetime().optional().meta({
    description: 'End of the window (finished before); default: now. A window that ends before it starts is empty',
  }),
  limit: pageQuery.limit.meta({
    description: 'Tasks listed in by_task (newest first); the totals count every task of the window',
  }),
});

const OutcomeCounts = z.object({ succeeded: Count, failed: Count, canceled: Count });
export const OutcomesView = z.object({
  from: Timestamp,
  to: Timestamp,
  tasks: z.object({ total: Count, completed: Count, failed: Count, canceled: Count }),
  actions: OutcomeCounts.extend({
    not_run: Count.meta({ description: 'Left pending by a task that stopped at a failure' }),
  }),
  by_task: z.array(
    OutcomeCounts.extend({
      task_id: z.uuid(),
      app_id: z.uuid(),
      title: z.string(),
      status: z.enum(['completed', 'failed', 'canceled']),
      finished_at: Timestamp,
      not_run: Count,
    }),
  ),
  by_tool: z.array(OutcomeCounts.extend({ tool: z.string() })),
});

export const toOutcomesView = (o: Outcomes): z.infer<typeof OutcomesView> => ({
  from: o.from.toISOString(),
  to: o.to.toISOString(),
  tasks: o.tasks,
  actions: o.actions,
  by_task: o.by_task.map((t) => ({
    ...t,
    status: t.status as 'completed' | 'failed' | 'canceled',
    finished_at: t.finished_at.toISOString(),
  })),
  by_tool: o.by_tool,
});
