import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { App } from './App.js';
import { User } from './User.js';
import { Workspace } from './Workspace.js';

// An Operator conversation, scoped to (authenticated user, product) (docs/operator.md). Deleting it
// deletes its messages, turns (the per-turn cost records), confirmations and attachments by cascade,
// in the one statement that deletes the thread.
export const AgentThread = defineEntity({
  name: 'AgentThread',
  tableName: 'agent_threads',
  indexes: [{ properties: ['user', 'app', 'updatedAt'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
    user: p.manyToOne(User).ref().deleteRule('cascade'),
    app: p.manyToOne(App).ref().deleteRule('cascade').index(),
    /** Null until given: clients show "New thread". */
    title: p.string().length(200).nullable(),
    /** Messages written so far: the next message's `seq`. */
    messageCount: p.integer().default(0),
    lastMessageAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IAgentThread = InferEntity<typeof AgentThread>;
