import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';
import { PlatformAccount } from './PlatformAccount.js';

/** A drafted reply waiting for a person (POST …/ai-reply); never sent by itself. */
export interface AiReplyDraft {
  body: string;
  subject: string | null;
  model: string;
  credits: number;
  created_at: string;
  created_by: string;
}

// A thread with one counterpart on one platform account (docs/inbox.md): one row per (account,
// connector thread). Matched to a lead when the counterpart is one; unread state is the workspace's.
export const Conversation = defineEntity({
  name: 'Conversation',
  tableName: 'conversations',
  uniques: [{ properties: ['platformAccount', 'connectorThreadId'] }],
  indexes: [
    { name: 'conversations_workspace_last_index', properties: ['workspace', 'lastMessageAt', 'id'] },
    { properties: ['leadId'] },
  ],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    platformAccount: p.manyToOne(PlatformAccount).ref().deleteRule('cascade'),
    channel: p.string().length(20),
    connectorThreadId: p.string().length(200),
    /** The other side as the network names it: an email address, a profile URL or a provider id. */
    counterpart: p.string().length(2048),
    counterpartName: p.string().length(400).nullable(),
    contactId: p.uuid().nullable(),
    leadId: p.uuid().nullable(),
    campaignId: p.uuid().nullable(),
    lastMessageAt: p.datetime(),
    lastMessagePreview: p.string().length(300).default(''),
    lastDirection: p.string().length(3).default('in'),
    lastInboundAt: p.datetime().nullable(),
    lastOutboundAt: p.datetime().nullable(),
    unreadCount: p.integer().default(0),
    readAt: p.datetime().nullable(),
    aiReply: p.json<AiReplyDraft>().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IConversation = InferEntity<typeof Conversation>;
