import { z } from 'zod';
import { MESSAGE_KINDS } from '../../db/entities/InboxMessage.js';
import type { ConversationRow, LiveMessages, MessageRow } from '../../domain/inbox/inbox.js';
import type { SyncRow } from '../../domain/inbox/sync.js';
import { keysetPageSchema, keysetQuery, pageQuery } from '../../lib/pagination.js';
import { Timestamp, text } from '../schemas.js';

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export const ConversationsQuery = z
  .object({
    account_id: z.uuid().optional().meta({ description: 'Only this platform account’s conversations' }),
    campaign_id: z.uuid().optional().meta({ description: 'Only conversations matched to this campaign' }),
    lead_id: z.uuid().optional().meta({ description: 'Only this lead’s conversations' }),
    unread: z
      .enum(['true', 'false'])
      .optional()
      .meta({ description: 'Only conversations with (`true`) or without (`false`) unread messages' }),
    q: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .meta({ description: 'Case-insensitive text in the counterpart, the lead’s name or the latest message' }),
    limit: pageQuery.limit,
    cursor: keysetQuery,
  })
  .strict();

export const AiReplyView = z.object({
  body: z.string(),
  subject: z.string().nullable(),
  model: z.string(),
  credits: z.number().int(),
  created_at: Timestamp,
  created_by: z.uuid(),
});

export const ConversationView = z.object({
  id: z.uuid(),
  platform_account_id: z.uuid(),
  account_name: z.string(),
  channel: z.enum(['email', 'network']),
  chat_id: z
    .string()
    .meta({ description: 'The connector’s thread id (what the live routes also accept with `account_id`)' }),
  counterpart: z.string(),
  counterpart_name: z.string().nullable(),
  lead: z
    .object({
      id: z.uuid(),
      contact_id: z.uuid(),
      first_name: z.string().nullable(),
      last_name: z.string().nullable(),
      email: z.string().nullable(),
      company: z.string().nullable(),
    })
    .nullable()
    .meta({ description: 'The lead the counterpart matched; null when unmatched' }),
  campaign_id: z.uuid().nullable(),
  last_message_at: Timestamp,
  last_message_preview: z.string(),
  last_direction: z.enum(['in', 'out']),
  last_inbound_at: Timestamp.nullable(),
  last_outbound_at: Timestamp.nullable(),
  unread_count: z.number().int(),
  read_at: Timestamp.nullable(),
  ai_reply: AiReplyView.nullable(),
  created_at: Timestamp,
});

export function toConversation(c: ConversationRow): z.infer<typeof ConversationView> {
  return {
    id: c.id,
    platform_account_id: c.platform_account_id,
    account_name: c.account_name,
    channel: c.channel === 'email' ? 'email' : 'network',
    chat_id: c.connector_thread_id,
    counterpart: c.counterpart,
    counterpart_name: c.counterpart_name,
    lead:
      c.lead_id && c.contact_id
        ? {
            id: c.lead_id,
            contact_id: c.contact_id,
            first_name: c.first_name,
            last_name: c.last_name,
            email: c.email,
            company: c.company,
          }
        : null,
    campaign_id: c.campaign_id,
    last_message_at: iso(c.last_message_at)!,
    last_message_preview: c.last_message_preview,
    last_direction: c.last_direction === 'out' ? 'out' : 'in',
    last_inbound_at: iso(c.last_inbound_at),
    last_outbound_at: iso(c.last_outbound_at),
    unread_count: c.unread_count,
    read_at: iso(c.read_at),
    ai_reply: c.ai_reply,
    created_at: iso(c.created_at)!,
  };
}

export const ConversationPage = keysetPageSchema(ConversationView);

const Attachment = z.object({ id: z.string(), name: z.string(), size: z.number().int() });

export const MessageView = z.object({
  id: z.uuid(),
  direction: z.enum(['in', 'out']),
  kind: z.enum(MESSAGE_KINDS).meta({ description: 'Inbound: reply (a person), auto_reply, bounce; outbound: sent' }),
  origin: z
    .enum(['campaign', 'inbox', 'network'])
    .nullable()
    .meta({ description: 'Outbound only: a campaign send, a reply written here, or sent elsewhere and synced' }),
  state: z.enum(['queued', 'sent', 'failed']).nullable().meta({
    description: 'Replies written here: queued until the account’s governor grants a slot, then sent (or failed)',
  }),
  sender: z.string(),
  subject: z.string().nullable(),
  body: z.string(),
  sent_at: Timestamp,
  attachments: z.array(Attachment),
  scheduled_action_id: z.uuid().nullable(),
  error_code: z.string().nullable(),
});

export const toMessage = (m: MessageRow): z.infer<typeof MessageView> => ({
  id: m.id,
  direction: m.direction === 'out' ? 'out' : 'in',
  kind: m.kind as (typeof MESSAGE_KINDS)[number],
  origin: m.origin as 'campaign' | 'inbox' | 'network' | null,
  state: m.state as 'queued' | 'sent' | 'failed' | null,
  sender: m.sender,
  subject: m.subject,
  body: m.body,
  sent_at: iso(m.sent_at)!,
  attachments: m.attachments,
  scheduled_action_id: m.scheduled_action_id,
  error_code: m.error_code,
});

export const ConversationDetail = ConversationView.extend({
  messages: z.array(MessageView).meta({ description: 'The newest 200 messages, oldest first' }),
});

export const SyncQuery = z
  .object({
    account_id: z
      .uuid()
      .optional()
      .meta({ description: 'Only this account (default: every connected account of the workspace)' }),
    force: z
      .enum(['true', 'false'])
      .optional()
      .meta({ description: '`true` starts a new sync even when the last one finished moments ago' }),
  })
  .strict();

export const SyncView = z.object({
  account_id: z.uuid(),
  state: z.enum(['running', 'completed', 'failed']),
  started: z.boolean().meta({ description: 'This request started it' }),
  run: z.number().int(),
  workflow_id: z.string(),
  pages: z.number().int(),
  chats_seen: z.number().int(),
  messages_stored: z.number().int(),
  error_message: z.string().nullable(),
  started_at: Timestamp,
  finished_at: Timestamp.nullable(),
});
export const SyncList = z.object({ items: z.array(SyncView) });

export const toSync = (s: SyncRow & { started: boolean }): z.infer<typeof SyncView> => ({
  account_id: s.account_id,
  state: s.state as 'running' | 'completed' | 'failed',
  started: s.started,
  run: s.run,
  workflow_id: `inbox-sync:${s.account_id}`,
  pages: s.pages,
  chats_seen: s.chats_seen,
  messages_stored: s.messages_stored,
  error_message: s.error_message,
  started_at: iso(s.started_at)!,
  finished_at: iso(s.finished_at),
});

export const ReplyBody = z
  .object({
    body: text({ max: 20_000, min: 1 }).meta({
      description: 'The reply (email at most 20,000 characters, network message 8,000)',
    }),
    subject: text({ max: 400, trim: true })
      .nullable()
      .optional()
      .meta({ description: 'Email only; ignored on the network' }),
  })
  .strict();

export const ChatParams = z.object({
  chatId: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .meta({ description: 'A conversation id, or the connector’s chat (thread) id with `account_id`' }),
});
export const AttachmentParams = ChatParams.extend({
  messageId: z.string().trim().min(1).max(200),
  attachmentId: z.string().trim().min(1).max(200),
});

export const LiveQuery = z
  .object({
    account_id: z.uuid().optional().meta({ description: 'Required when chatId is not a stored conversation' }),
    limit: z
      .string()
      .regex(/^[0-9]{1,3}$/)
      .transform(Number)
      .pipe(z.number().int().min(1).max(200))
      .default(50)
      .meta({ jsonSchema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } }),
  })
  .strict();
export const AccountQuery = z
  .object({
    account_id: z.uuid().optional().meta({ description: 'Required when chatId is not a stored conversation' }),
  })
  .strict();

export const LiveView = z.object({
  source: z.enum(['live', 'stored']),
  fallback_reason: z.string().nullable(),
  conversation_id: z.uuid().nullable(),
  messages: z.array(
    z.object({
      id: z.uuid().nullable(),
      connector_message_id: z.string().nullable(),
      direction: z.enum(['in', 'out']),
      sender: z.string(),
      body: z.string(),
      sent_at: Timestamp,
      attachments: z.array(Attachment),
    }),
  ),
});
export const toLive = (l: LiveMessages): z.infer<typeof LiveView> => ({
  ...l,
  messages: l.messages.map((m) => ({
    ...m,
    direction: m.direction === 'out' ? 'out' : 'in',
    sent_at: iso(m.sent_at)!,
  })),
});

export const ReplyLiveBody = ReplyBody.extend({
  account_id: z
    .uuid()
    .optional()
    .meta({ description: 'The platform account of the chat; required when chatId is not a stored conversation' }),
  recipient: text({ max: 2048, min: 1, trim: true })
    .optional()
    .meta({ description: 'Who the chat is with (email or profile); required for a chat not stored yet' }),
}).strict();
export const ReplyLiveView = z.object({
  conversation_id: z.uuid(),
  message_id: z.uuid(),
  connector_message_id: z.string(),
  sent_at: Timestamp,
});

export const AiReplyBody = z
  .object({
    instructions: text({ max: 1000, min: 1, trim: true })
      .optional()
      .meta({ description: 'What the reply should do, in your words' }),
    request_id: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .optional()
      .meta({ description: 'Repeat it to retry without paying twice' }),
  })
  .strict();

export const UnreadQuery = z.object({ account_id: z.uuid().optional() }).strict();
export const UnreadView = z.object({ conversations: z.number().int(), messages: z.number().int() });
