import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { App } from './App.js';
import { User } from './User.js';
import { Workspace } from './Workspace.js';

export const TASK_STATUSES = ['queued', 'running', 'paused', 'completed', 'failed', 'canceled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const ON_FAILURE = ['stop', 'continue'] as const;
export type OnFailure = (typeof ON_FAILURE)[number];
/** Actions per task, and the longest title (characters, trimmed). */
export const MAX_TASK_ACTIONS = 50;
export const MAX_TASK_TITLE = 200;

// A multi-step piece of Operator work (docs/operator-tasks.md): an ordered list of tool calls
// (operator_task_actions) run by the workflow `operator-task:<id>` as the user who created it,
// in the workspace they acted in. Belongs to (workspace, user, product): another user's task,
// even in the same workspace, is not found. `run` counts the workflow runs started (1, then one
// per retry); `event_count` numbers its events (assigned under this row's lock).
export const OperatorTask = defineEntity({
  name: 'OperatorTask',
  tableName: 'operator_tasks',
  indexes: [{ properties: ['workspace', 'user', 'status'] }, { properties: ['workspace', 'user', 'finishedAt'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    user: p.manyToOne(User).ref().deleteRule('cascade').index(),
    app: p.manyToOne(App).ref().deleteRule('cascade').index(),
    /** The owner the user acted for (X-Acting-As) when creating it; null in their own workspace. */
    actingAsOwnerId: p.uuid().nullable(),
    title: p.string().length(200),
    status: p.string().length(20).default('queued'),
    onFailure: p.string().length(10).default('stop'),
    actionCount: p.integer(),
    run: p.integer().default(1),
    eventCount: p.integer().default(0),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
  }),
});
export type IOperatorTask = InferEntity<typeof OperatorTask>;
