// Operator tasks (docs/operator-tasks.md): read tasks, their actions and events; pause, resume,
// cancel and retry them; the outcomes of finished ones. Tasks are created by the Operator's
// `create_task` tool (domain/tools/operator-tasks.ts), which the spec gives no route of its own.
import {
  controlTask,
  listTasks,
  requireTaskWithCounts,
  retryTask,
  taskActions,
  taskEvents,
  taskOutcomes,
} from '../../domain/operator/tasks.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import { defineOperation, reply } from '../operation.js';
import {
  ActionView,
  ControlParams,
  EventPage,
  EventsQuery,
  OutcomesQuery,
  OutcomesView,
  TaskListQuery,
  TaskPage,
  TaskParams,
  TaskView,
  toActionView,
  toEventView,
  toOutcomesView,
  toTaskView,
} from './task-schemas.js';
import { z } from 'zod';

const tag = 'operator';
const DAY = 86_400_000;
/** Windows are clamped to [1970, 9999]: nothing finished outside, and every date stays storable. */
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const clamp = (ms: number) => new Date(Math.min(Math.max(ms, 0), LATEST));

export const listTasksOp = defineOperation({
  method: 'GET',
  path: '/api/operator/tasks',
  ids: { query: { app_id: { kind: 'app', missing: [403, 'app_not_owned'] } } },
  summary: "The caller's Operator tasks in the workspace, newest first, optionally of one status or product",
  tag,
  auth: 'user',
  query: TaskListQuery,
  responses: { 200: TaskPage },
  errors: { 400: ['invalid_query', 'invalid_user'], 403: ['app_not_owned', 'not_assigned'] },
  handler: async ({ em, actor, query }) =>
    page(
      await listTasks(em, actor, { status: query.status, appId: query.app_id }, toPageRequest(query)),
      query.limit,
      toTaskView,
    ),
});

export const getTaskOp = defineOperation({
  method: 'GET',
  path: '/api/operator/tasks/{taskID}',
  ids: { path: { taskID: 'task' } },
  summary: 'One of the caller’s tasks, with its action counts',
  tag,
  auth: 'user',
  params: TaskParams,
  responses: { 200: TaskView },
  errors: { 400: ['invalid_id', 'invalid_user'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => toTaskView(await requireTaskWithCounts(em, actor, params.taskID)),
});

export const taskActionsOp = defineOperation({
  method: 'GET',
  path: '/api/operator/tasks/{taskID}/actions',
  ids: { path: { taskID: 'task' } },
  summary: 'The task’s actions in order (at most 50): tool, arguments, status, attempts, result or error',
  tag,
  auth: 'user',
  params: TaskParams,
  responses: { 200: z.array(ActionView) },
  errors: { 400: ['invalid_id', 'invalid_user'], 404: ['not_found'] },
  handler: async ({ em, actor, params }) => (await taskActions(em, actor, params.taskID)).map(toActionView),
});

export const taskEventsOp = defineOperation({
  method: 'GET',
  path: '/api/operator/tasks/{taskID}/events',
  ids: { path: { taskID: 'task' } },
  summary: 'Every transition of the task and of its actions, in the order they happened',
  tag,
  auth: 'user',
  params: TaskParams,
  query: EventsQuery,
  responses: { 200: EventPage },
  errors: { 400: ['invalid_id', 'invalid_query', 'invalid_user'], 404: ['not_found'] },
  handler: async ({ em, actor, params, query }) =>
    page(await taskEvents(em, actor, params.taskID, toPageRequest(query)), query.limit, toEventView),
});

export const retryTaskOp = defineOperation({
  method: 'POST',
  path: '/api/operator/tasks/{taskID}/retry',
  ids: { path: { taskID: 'task' } },
  summary: 'Run a failed task’s failed actions again, then those it never reached (a new run of its workflow)',
  tag,
  auth: 'user',
  params: TaskParams,
  responses: { 202: TaskView },
  errors: {
    400: ['invalid_id', 'invalid_user'],
    403: ['demo_read_only'],
    404: ['not_found'],
    409: ['invalid_transition', 'task_busy'],
  },
  handler: async ({ em, actor, services, params }) =>
    reply(202, toTaskView(await retryTask(em, actor, services.jobs, params.taskID))),
});

export const controlTaskOp = defineOperation({
  method: 'POST',
  path: '/api/operator/tasks/{taskID}/{operation}',
  operationId: 'controlOperatorTask',
  ids: { path: { taskID: 'task', operation: { value: 'an operation name' } } },
  summary: 'pause (takes effect before the next action), resume, or cancel (no further action starts) a task',
  tag,
  auth: 'user',
  params: ControlParams,
  invalid: { fields: { operation: 'invalid_operation' } },
  responses: { 200: TaskView },
  errors: {
    400: ['invalid_id', 'invalid_operation', 'invalid_user'],
    403: ['demo_read_only'],
    404: ['not_found'],
    409: ['invalid_transition'],
  },
  handler: async ({ em, actor, services, params }) =>
    toTaskView(await controlTask(em, actor, services.jobs, params.taskID, params.operation)),
});

export const outcomesOp = defineOperation({
  method: 'GET',
  path: '/api/operator/outcomes',
  ids: { query: { app_id: { kind: 'app', missing: [403, 'app_not_owned'] } } },
  summary:
    "What the caller's finished tasks achieved in a window: actions succeeded / failed / canceled per task, per tool and in total",
  tag,
  auth: 'user',
  query: OutcomesQuery,
  responses: { 200: OutcomesView },
  errors: { 400: ['invalid_query', 'invalid_user'], 403: ['app_not_owned', 'not_assigned'] },
  handler: async ({ em, actor, query }) => {
    const to = clamp(query.to ? Date.parse(query.to) : Date.now());
    const from = clamp(query.from ? Date.parse(query.from) : to.getTime() - 30 * DAY);
    return toOutcomesView(await taskOutcomes(em, actor, { appId: query.app_id, from, to, limit: query.limit }));
  },
});
