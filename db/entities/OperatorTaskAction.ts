import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { OperatorTask } from './OperatorTask.js';

export const ACTION_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'canceled'] as const;
export type ActionStatus = (typeof ACTION_STATUSES)[number];

// One step of a task: a tool of the registry with its arguments (stored as given; parsed again by
// the tool when it runs). `attempts` counts the times it was started; the activity that runs
// attempt n does nothing when that attempt already finished (a retried activity).
export const OperatorTaskAction = defineEntity({
  name: 'OperatorTaskAction',
  tableName: 'operator_task_actions',
  uniques: [{ properties: ['task', 'position'] }],
  indexes: [{ properties: ['tool', 'status'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    task: p.manyToOne(OperatorTask).ref().deleteRule('cascade'),
    /** 0-based order in the task. */
    position: p.integer(),
    tool: p.string().length(100),
    args: p.json<unknown>(),
    status: p.string().length(20).default('pending'),
    attempts: p.integer().default(0),
    result: p.json<unknown>().nullable(),
    errorCode: p.string().length(60).nullable(),
    errorMessage: p.string().length(1000).nullable(),
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IOperatorTaskAction = InferEntity<typeof OperatorTaskAction>;
