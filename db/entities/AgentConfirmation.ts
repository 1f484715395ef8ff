import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { AgentThread } from './AgentThread.js';
import { AgentTurn } from './AgentTurn.js';

export const CONFIRMATION_STATUSES = ['pending', 'confirmed', 'canceled', 'expired'] as const;
export type ConfirmationStatus = (typeof CONFIRMATION_STATUSES)[number];

// A risky tool call waiting for the user's yes (docs/operator.md, "Confirmations"). The token is
// shown once in the stream and stored as SHA-256; it is bound to the user, the thread and the exact
// arguments (stored here: the tool runs with these, never with arguments sent later). Single use:
// the pending → confirmed | canceled update is conditional.
export const AgentConfirmation = defineEntity({
  name: 'AgentConfirmation',
  tableName: 'agent_confirmations',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    thread: p.manyToOne(AgentThread).ref().deleteRule('cascade').index(),
    turn: p.manyToOne(AgentTurn).ref().deleteRule('cascade').index(),
    userId: p.uuid(),
    tokenHash: p.string().length(64).unique(),
    toolCallId: p.string().length(100),
    toolName: p.string().length(100),
    args: p.json<unknown>(),
    argsHash: p.string().length(64),
    status: p.string().length(20).default('pending'),
    expiresAt: p.datetime(),
    decidedAt: p.datetime().nullable(),
    /** Set once, just before the tool runs: a retried activity never runs a confirmed tool twice. */
    executedAt: p.datetime().nullable(),
    result: p.json<unknown>().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type IAgentConfirmation = InferEntity<typeof AgentConfirmation>;
