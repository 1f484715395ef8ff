import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Conversation } from './Conversation.js';

/** Inbound: `reply` (a person), `auto_reply` (out of office and the like), `bounce`; outbound: `sent`. */
export const MESSAGE_KINDS = ['reply', 'auto_reply', 'bounce', 'sent'] as const;
export type MessageKind = (typeof MESSAGE_KINDS)[number];

// One message of a conversation (docs/inbox.md), stored once per connector message id. Outbound rows
// say where they came from (`origin`); replies written in the inbox have a `state` until sent.
export const InboxMessage = defineEntity({
  name: 'InboxMessage',
  tableName: 'inbox_messages',
  uniques: [{ properties: ['platformAccountId', 'connectorMessageId'] }],
  indexes: [
    { name: 'inbox_messages_conversation_sent_index', properties: ['conversation', 'sentAt', 'id'] },
    { name: 'inbox_messages_lead_kind_index', properties: ['leadId', 'kind'] },
    // A workspace's first reply (onboarding progress, domain/onboarding/onboarding.ts): replies only.
    {
      name: 'inbox_messages_first_reply_index',
      expression: `create index "inbox_messages_first_reply_index" on "inbox_messages" ("workspace_id", "sent_at") where "kind" = 'reply' and "lead_id" is not null and not "historical"`,
    },
  ],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspaceId: p.uuid(),
    conversation: p.manyToOne(Conversation).ref().deleteRule('cascade'),
    platformAccountId: p.uuid(),
    /** Null only for an inbox reply not yet sent. */
    connectorMessageId: p.string().length(200).nullable(),
    direction: p.string().length(3),
    kind: p.string().length(20),
    /** Outbound only: `campaign` (a scheduled action), `inbox` (a reply written here), `network` (sent elsewhere, synced). */
    origin: p.string().length(20).nullable(),
    /** Inbox replies: queued → sent | failed. Null for everything else. */
    state: p.string().length(20).nullable(),
    sender: p.string().length(2048),
    senderName: p.string().length(400).nullable(),
    subject: p.string().length(400).nullable(),
    body: p.text(),
    sentAt: p.datetime(),
    attachments: p.json<{ id: string; name: string; size: number }[]>().default('[]'),
    leadId: p.uuid().nullable(),
    scheduledActionId: p.uuid().nullable(),
    /** Stored from a sync of history older than the account's connection: no reply effects. */
    historical: p.boolean().default(false),
    errorCode: p.string().length(60).nullable(),
    createdBy: p.uuid().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type IInboxMessage = InferEntity<typeof InboxMessage>;
