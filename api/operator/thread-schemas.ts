import { z } from 'zod';
import type { IAgentMessage } from '../../db/entities/AgentMessage.js';
import type { IAgentThread } from '../../db/entities/AgentThread.js';
import { MAX_TITLE } from '../../domain/operator/threads.js';
import { Timestamp, iso } from '../schemas.js';

// The rules are the domain's (distinct codes); the document states them as pattern and length.
const Title = z.string().meta({
  description: `Trimmed; empty after trimming → 400 invalid_title; longer than ${MAX_TITLE} characters → 400 title_too_long`,
  pattern: '\\S',
  maxLength: MAX_TITLE,
});

export const ThreadParams = z.object({ threadId: z.uuid() });
export const AppQuery = z.object({ app_id: z.uuid() });
export const CreateThreadBody = z.object({ app_id: z.uuid(), title: Title.optional() }).strict();
export const RenameThreadBody = z.object({ title: Title }).strict();

export const ThreadView = z.object({
  id: z.uuid(),
  app_id: z.uuid(),
  title: z.string().nullable().meta({ description: 'null until set (clients show “New thread”)' }),
  message_count: z.number().int().nonnegative(),
  last_message_at: Timestamp.nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toThreadView = (t: IAgentThread): z.infer<typeof ThreadView> => ({
  id: t.id,
  app_id: t.app.id,
  title: t.title ?? null,
  message_count: t.messageCount,
  last_message_at: iso(t.lastMessageAt),
  created_at: t.createdAt.toISOString(),
  updated_at: t.updatedAt.toISOString(),
});

export const MessageView = z.object({
  id: z.uuid(),
  thread_id: z.uuid(),
  turn_id: z.uuid().nullable(),
  seq: z.number().int().positive(),
  role: z.enum(['user', 'assistant', 'tool']),
  content: z.string().nullable(),
  tool_calls: z.array(z.object({ id: z.string(), name: z.string(), args: z.unknown() })).nullable(),
  tool_call_id: z.string().nullable(),
  tool_name: z.string().nullable(),
  tool_status: z
    .string()
    .nullable()
    .meta({ description: 'tool messages: ok, error, awaiting_confirmation, canceled, expired' }),
  tool_result: z.unknown(),
  attachment_ids: z.array(z.uuid()),
  created_at: Timestamp,
});

export const toMessageView = (m: IAgentMessage): z.infer<typeof MessageView> => ({
  id: m.id,
  thread_id: m.thread.id,
  turn_id: m.turn?.id ?? null,
  seq: m.seq,
  role: m.role as z.infer<typeof MessageView>['role'],
  content: m.content ?? null,
  tool_calls: m.toolCalls ?? null,
  tool_call_id: m.toolCallId ?? null,
  tool_name: m.toolName ?? null,
  tool_status: m.toolStatus ?? null,
  tool_result: m.toolResult ?? null,
  attachment_ids: m.attachmentIds,
  created_at: m.createdAt.toISOString(),
});
