import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { OperatorTask } from './OperatorTask.js';

// One transition of a task or of one of its actions, numbered per task (`seq`, assigned under the
// task's row lock, so the order is the order they were committed in). `by` is the person who asked
// for it (pause, resume, cancel, retry, creation); null when the workflow did it.
export const OperatorTaskEvent = defineEntity({
  name: 'OperatorTaskEvent',
  tableName: 'operator_task_events',
  uniques: [{ properties: ['task', 'seq'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    task: p.manyToOne(OperatorTask).ref().deleteRule('cascade'),
    seq: p.integer(),
    type: p.string().length(40),
    /** The action concerned (action events), with its position. No FK: rows go with the task. */
    actionId: p.uuid().nullable(),
    position: p.integer().nullable(),
    fromStatus: p.string().length(20).nullable(),
    toStatus: p.string().length(20).nullable(),
    by: p.uuid().nullable(),
    data: p.json<Record<string, unknown>>().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type IOperatorTaskEvent = InferEntity<typeof OperatorTaskEvent>;
