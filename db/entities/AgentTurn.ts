import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { AgentThread } from './AgentThread.js';
import { Workspace } from './Workspace.js';

export const TURN_STATUSES = ['running', 'awaiting_confirmation', 'completed', 'failed'] as const;
export type TurnStatus = (typeof TURN_STATUSES)[number];

// One Operator turn (the workflow `operator-turn:<threadId>:<turnId>`) and its cost record: tokens,
// model cost and the credits debited (ledger key `operator-turn:<turnId>`).
export const AgentTurn = defineEntity({
  name: 'AgentTurn',
  tableName: 'agent_turns',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    thread: p.manyToOne(AgentThread).ref().deleteRule('cascade').index(),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
    userId: p.uuid(),
    appId: p.uuid(),
    status: p.string().length(30).default('running'),
    modelCalls: p.integer().default(0),
    inputTokens: p.integer().default(0),
    outputTokens: p.integer().default(0),
    costMicros: p.bigint('number').default(0),
    credits: p.integer().default(0),
    errorCode: p.string().length(60).nullable(),
    errorMessage: p.string().length(500).nullable(),
    startedAt: p.datetime().onCreate(() => new Date()),
    finishedAt: p.datetime().nullable(),
  }),
});
export type IAgentTurn = InferEntity<typeof AgentTurn>;
