import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { AgentThread } from './AgentThread.js';
import { AgentTurn } from './AgentTurn.js';

export const MESSAGE_ROLES = ['user', 'assistant', 'tool'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

// A message of a thread, in `seq` order (per thread, assigned under the thread's row lock). A tool
// message carries one tool call's outcome; an assistant message the tool calls it asked for.
export const AgentMessage = defineEntity({
  name: 'AgentMessage',
  tableName: 'agent_messages',
  uniques: [{ properties: ['thread', 'seq'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    thread: p.manyToOne(AgentThread).ref().deleteRule('cascade'),
    turn: p.manyToOne(AgentTurn).ref().deleteRule('cascade').nullable().index(),
    seq: p.integer(),
    role: p.string().length(20),
    content: p.text().nullable(),
    /** assistant: [{id, name, args}] the model asked for. */
    toolCalls: p.json<{ id: string; name: string; args: unknown }[]>().nullable(),
    /** tool: which call it answers, its status (ok | error | canceled | awaiting_confirmation) and result. */
    toolCallId: p.string().length(100).nullable(),
    toolName: p.string().length(100).nullable(),
    toolStatus: p.string().length(30).nullable(),
    toolResult: p.json<unknown>().nullable(),
    attachmentIds: p.json<string[]>().default('[]'),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type IAgentMessage = InferEntity<typeof AgentMessage>;
