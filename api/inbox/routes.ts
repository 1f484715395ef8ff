// The unified inbox (docs/inbox.md): conversations of every platform account, read state, replies
// through the account's governor, live reads and sends through the connector, attachments, AI drafts.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  conversationMessages,
  deleteAiReply,
  draftAiReply,
  listConversations,
  liveMessages,
  markRead,
  openAttachment,
  queueReply,
  replyLive,
  requireConversation,
  unreadCount,
} from '../../domain/inbox/inbox.js';
import { startOrReportSyncs } from '../../domain/inbox/sync.js';
import { keysetPage } from '../../lib/pagination.js';
import { defineOperation, reply } from '../operation.js';
import { IdParams } from '../schemas.js';
import {
  AccountQuery,
  AiReplyBody,
  AiReplyView,
  AttachmentParams,
  ChatParams,
  ConversationDetail,
  ConversationPage,
  ConversationsQuery,
  ConversationView,
  LiveQuery,
  LiveView,
  MessageView,
  ReplyBody,
  ReplyLiveBody,
  ReplyLiveView,
  SyncList,
  SyncQuery,
  toConversation,
  toLive,
  toMessage,
  toSync,
  UnreadQuery,
  UnreadView,
} from './schemas.js';

const tag = 'inbox';
// Every id a route takes (path or filter) is checked by domain/access.ts: 404 outside the workspace, 403 outside the member's products.
const auth = { 401: ['unauthorized'], 403: ['not_assigned'], 404: ['not_found'] };
const demo = { 403: ['not_assigned', 'demo_read_only'] };
const connectorDown = { 502: ['connector_unavailable'], 503: ['connector_unavailable'] };

export const listConversationsOp = defineOperation({
  method: 'GET',
  path: '/api/inbox/conversations',
  ids: { query: { account_id: 'account', campaign_id: 'campaign', lead_id: 'lead' } },
  summary: 'Conversations of every platform account of the workspace, newest activity first',
  description: 'Filters: account, campaign, lead, unread, text. Cursor pagination (`next_cursor`).',
  tag,
  auth: 'user',
  query: ConversationsQuery,
  responses: { 200: ConversationPage },
  errors: { 400: ['invalid_query', 'invalid_user'], ...auth },
  handler: async ({ em, actor, query }) => {
    const rows = await listConversations(em, actor, {
      accountId: query.account_id,
      campaignId: query.campaign_id,
      leadId: query.lead_id,
      unread: query.unread === undefined ? undefined : query.unread === 'true',
      q: query.q,
      limit: query.limit,
      after: query.cursor,
    });
    return keysetPage(rows, query.limit, (r) => r.last_message_at, toConversation);
  },
});

export const syncConversationsOp = defineOperation({
  method: 'GET',
  path: '/api/inbox/conversations/sync',
  ids: { query: { account_id: 'account' } },
  summary: 'Start (when due) and report the sync of each connected account’s conversations from the connector',
  description: [
    'For each connected account (or `account_id`): starts `inbox-sync:<accountId>` unless one is running or the last finished under a minute ago',
    '(`force=true` starts one anyway when none is running), and reports it. The sync pages through the connector’s chats, stores their messages once each',
    '(matched, counted and signalled like inbound events; history older than the account’s connection is stored without effects) and resumes at its last page after a failure.',
  ].join(' '),
  tag,
  auth: 'user',
  query: SyncQuery,
  responses: { 200: SyncList },
  errors: { 400: ['invalid_query', 'invalid_user'], ...auth, 404: ['not_found'] },
  handler: async ({ em, actor, services, query }) => ({
    items: (
      await startOrReportSyncs(em, services.jobs, actor, { accountId: query.account_id, force: query.force === 'true' })
    ).map(toSync),
  }),
});

export const unreadCountOp = defineOperation({
  method: 'GET',
  path: '/api/inbox/unread-count',
  ids: { query: { account_id: 'account' } },
  summary: 'Conversations with unread messages, and unread messages in all',
  tag,
  auth: 'user',
  query: UnreadQuery,
  responses: { 200: UnreadView },
  errors: { 400: ['invalid_query', 'invalid_user'], ...auth },
  handler: async ({ em, actor, query }) => unreadCount(em, actor, query.account_id),
});

export const getConversationOp = defineOperation({
  method: 'GET',
  path: '/api/inbox/conversations/{id}',
  ids: { path: { id: 'conversation' } },
  summary: 'One conversation with its newest 200 messages (oldest first), campaign sends included',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: ConversationDetail },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 404: ['not_found'] },
  handler: async ({ em, actor, params }) => {
    const c = await requireConversation(em, actor, params.id);
    return { ...toConversation(c), messages: (await conversationMessages(em, c)).map(toMessage) };
  },
});

export const readConversationOp = defineOperation({
  method: 'POST',
  path: '/api/inbox/conversations/{id}/read',
  ids: { path: { id: 'conversation' } },
  summary: 'Mark the conversation read for the workspace (idempotent)',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 200: ConversationView },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, 404: ['not_found'] },
  handler: async ({ em, actor, params }) => toConversation(await markRead(em, actor, params.id)),
});

export const replyOp = defineOperation({
  method: 'POST',
  path: '/api/inbox/conversations/{id}/reply',
  ids: { path: { id: 'conversation' } },
  summary: 'Reply in the conversation through its account: queued, then sent when the account’s governor grants a slot',
  description:
    'Answers 202 with the stored message (`state: queued`); `inbox-reply:<messageId>` asks the governor (as one email or message action: caps, warm-up, working hours, gap) and sends once; the conversation then shows `sent` (or `failed` with `error_code`). Sending resolves the conversation’s reply reminder and clears its AI draft. Retry safely with `Idempotency-Key` (the same rule as every operation that creates something).',
  tag,
  auth: 'user',
  params: IdParams,
  body: ReplyBody,
  responses: { 202: MessageView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'reply_too_long', 'invalid_user'],
    ...auth,
    ...demo,
    404: ['not_found'],
    409: ['account_not_connected', 'no_recipient'],
  },
  handler: async ({ em, actor, services, params, body }) =>
    reply(202, toMessage(await queueReply(em, services.jobs, actor, params.id, body))),
});

export const draftAiReplyOp = defineOperation({
  method: 'POST',
  path: '/api/inbox/conversations/{id}/ai-reply',
  ids: { path: { id: 'conversation' }, body: { request_id: { value: 'an idempotency key chosen by the client' } } },
  summary:
    'Draft a reply with the model (credits debited); a person sends it with `reply` or deletes it — it is never sent by itself',
  description:
    'Replaces any previous draft. Costs the plan’s draft price (`draft_credits`); repeating `request_id` does not charge twice.',
  tag,
  auth: 'user',
  params: IdParams,
  body: AiReplyBody,
  responses: { 201: AiReplyView },
  errors: {
    400: ['invalid_id', 'invalid_body', 'invalid_user'],
    ...auth,
    402: ['insufficient_credits'],
    ...demo,
    404: ['not_found'],
    409: ['nothing_to_answer'],
    502: ['model_unavailable'],
    503: ['model_unavailable'],
  },
  handler: async ({ em, actor, services, params, body }) =>
    reply(
      201,
      await draftAiReply(em, services.llm, actor, params.id, {
        instructions: body.instructions,
        requestId: body.request_id ?? randomUUID(),
      }),
    ),
});

export const deleteAiReplyOp = defineOperation({
  method: 'DELETE',
  path: '/api/inbox/conversations/{id}/ai-reply',
  ids: { path: { id: 'conversation' } },
  summary: 'Delete the conversation’s AI-drafted reply',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 204: null },
  errors: { 400: ['invalid_id', 'invalid_user'], ...auth, ...demo, 404: ['not_found', 'no_ai_reply'] },
  handler: async ({ em, actor, params }) => {
    await deleteAiReply(em, actor, params.id);
    return reply(204, null);
  },
});

export const liveMessagesOp = defineOperation({
  method: 'GET',
  path: '/api/inbox/conversations/{chatId}/messages/live',
  ids: {
    path: {
      chatId: {
        value:
          'a conversation id (the inbox checks it as one: access.ts authorize) or, with account_id, the connector’s chat id',
      },
    },
    query: { account_id: 'account' },
  },
  summary: 'The chat’s latest messages read from the connector now; stored messages (flagged) when it fails or is slow',
  description: `\`chatId\` is a conversation id, or the connector's chat id with \`account_id\`. Bounded to a few seconds (INBOX_LIVE_TIMEOUT_MS, 5 s); then \`source: stored\` with \`fallback_reason\` (timeout, connector_<code>, chat_not_found, account_not_connected).`,
  tag,
  auth: 'user',
  params: ChatParams,
  query: LiveQuery,
  responses: { 200: LiveView },
  errors: { 400: ['invalid_query', 'account_required', 'invalid_user'], ...auth, 404: ['not_found'] },
  handler: async ({ em, actor, services, params, query }) =>
    toLive(
      await liveMessages(em, services.connector, actor, params.chatId, {
        accountId: query.account_id,
        limit: query.limit,
      }),
    ),
});

export const replyLiveOp = defineOperation({
  method: 'POST',
  path: '/api/inbox/conversations/{chatId}/reply-live',
  ids: {
    path: {
      chatId: {
        value:
          'a conversation id (the inbox checks it as one: access.ts authorize) or, with account_id, the connector’s chat id',
      },
    },
    body: { account_id: 'account' },
  },
  summary:
    'Send at once through the connector, also in a chat not stored yet; the message is stored in its conversation',
  description:
    'Not queued: the account’s governor is asked once and a refusal is 409 `account_limit_reached` (with `retry_at`). `chatId` is a conversation id, or the connector’s chat id with `account_id` and (for a new chat) `recipient`.',
  tag,
  auth: 'user',
  params: ChatParams,
  body: ReplyLiveBody,
  responses: { 201: ReplyLiveView },
  errors: {
    400: ['invalid_body', 'reply_too_long', 'account_required', 'recipient_required', 'invalid_user'],
    ...auth,
    ...demo,
    404: ['not_found'],
    409: ['account_not_connected', 'account_limit_reached'],
    ...connectorDown,
  },
  handler: async ({ em, actor, services, params, body }) => {
    const r = await replyLive(em, services.connector, actor, params.chatId, {
      accountId: body.account_id,
      body: body.body,
      subject: body.subject,
      recipient: body.recipient,
    });
    return reply(201, { ...r, sent_at: r.sent_at.toISOString() });
  },
});

export const attachmentOp = defineOperation({
  method: 'GET',
  path: '/api/inbox/conversations/{chatId}/messages/{messageId}/attachments/{attachmentId}',
  ids: {
    path: {
      chatId: {
        value:
          'a conversation id (the inbox checks it as one: access.ts authorize) or, with account_id, the connector’s chat id',
      },
      messageId: {
        value:
          'a message of the conversation (ours, or the connector’s with account_id): the inbox reads it inside the conversation; another’s is 404',
      },
      attachmentId: { value: 'an attachment of that message, read inside it' },
    },
    query: { account_id: 'account' },
  },
  summary: 'A message’s attachment, streamed from the connector with its content type (at most 25 MiB)',
  description:
    '`messageId` is our message id or the connector’s. The body is streamed, never held whole; `Content-Disposition: attachment`.',
  tag,
  auth: 'user',
  params: AttachmentParams,
  query: AccountQuery,
  responses: { 200: null },
  produces: 'application/octet-stream',
  errors: {
    400: ['invalid_query', 'account_required', 'invalid_user'],
    ...auth,
    404: ['not_found'],
    409: ['account_not_connected'],
    413: ['attachment_too_large'],
    ...connectorDown,
  },
  handler: async ({ ctx, em, actor, services, params, query }) => {
    const a = await openAttachment(
      em,
      services.connector,
      actor,
      params.chatId,
      params.messageId,
      params.attachmentId,
      query.account_id,
    );
    const name = a.name.replace(/[^\w.\- ]+/g, '_').slice(0, 200) || 'attachment';
    // The connector's type is passed on, but never as something a browser would render as our page.
    const type = /^(text\/html|application\/xhtml|image\/svg)/i.test(a.contentType)
      ? 'application/octet-stream'
      : a.contentType;
    ctx.status = 200;
    ctx.set({
      'Content-Type': type,
      'Content-Disposition': `attachment; filename="${name}"; filename*=UTF-8''${encodeURIComponent(a.name.slice(0, 200))}`,
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'private, no-store',
    });
    ctx.body = Readable.from(a.body);
    if (a.size !== null) ctx.length = a.size;
  },
});
