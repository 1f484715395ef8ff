// The unified inbox (docs/inbox.md): conversations of every platform account of the workspace, read
// state, replies (through the account's governor, on the workflow `inbox-reply:<messageId>`), live
// reads and sends straight through the connector, attachments streamed from it, and AI-drafted replies
// that a person sends or deletes.
import { authorize, checkProducts, conversationScopeSql } from '../access.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AccountConnector, AttachmentStream, ChatMessage } from '../../lib/connectors/types.js';
import { ConnectorError } from '../../lib/connectors/types.js';
import { runtimeSettings } from '../../lib/config.js';
import { uuidv7 } from '../../lib/ids.js';
import { keysetSql, type Keyset } from '../../lib/pagination.js';
import { writeReply, type ModelAdapter } from '../../lib/llm/index.js';
import { LlmError } from '../../lib/llm/types.js';
import type { AiReplyDraft } from '../../db/entities/Conversation.js';
import { assertWritable } from '../demo/demo.js';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';
import { debitCredits, HOLD_TTL_MS, withCreditHold } from '../billing/credits.js';
import { entitlementsFor } from '../billing/plans.js';
import { requestSlot, releaseSlot } from '../governor/governor.js';
import { accountRow, storeMessages } from './ingest.js';
import { resolveAnsweredReminders } from '../follow-ups/follow-ups.js';

/** A reply's body: the network's message limit and a generous email one. */
export const REPLY_MAX_CHARS = { email: 20_000, network: 8_000 } as const;
/** Attachments larger than this are refused (413) rather than streamed. */
export const ATTACHMENT_MAX_BYTES = 25 * 1024 * 1024;
/** Messages a conversation read returns (the newest ones, oldest first). */
export const CONVERSATION_MESSAGES = 200;

export interface ConversationRow {
  id: string;
  platform_account_id: string;
  account_name: string;
  channel: string;
  connector_thread_id: string;
  counterpart: string;
  counterpart_name: string | null;
  contact_id: string | null;
  lead_id: string | null;
  campaign_id: string | null;
  last_message_at: Date;
  last_message_preview: string;
  last_direction: string;
  last_inbound_at: Date | null;
  last_outbound_at: Date | null;
  unread_count: number;
  read_at: Date | null;
  ai_reply: AiReplyDraft | null;
  created_at: Date;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  company: string | null;
}

const SELECT_CONVERSATION = `
  select c.id, c.platform_account_id, p.display_name as account_name, c.channel, c.connector_thread_id, c.counterpart, c.counterpart_name,
         c.contact_id, c.lead_id, c.campaign_id, c.last_message_at, c.last_message_preview, c.last_direction, c.last_inbound_at,
         c.last_outbound_at, c.unread_count, c.read_at, c.ai_reply, c.created_at, k.first_name, k.last_name, k.email, k.company
    from conversations c join platform_accounts p on p.id = c.platform_account_id left join contacts k on k.id = c.contact_id`;

export interface ConversationFilter {
  accountId?: string;
  campaignId?: string;
  leadId?: string;
  unread?: boolean;
  /** Matches the counterpart, its name or the latest message (case-insensitive substring). */
  q?: string;
  limit: number;
  after?: Keyset;
}

/** Newest activity first. */
export async function listConversations(
  em: EntityManager,
  actor: Actor,
  f: ConversationFilter,
): Promise<ConversationRow[]> {
  // The filter's ids were checked like path ids (declared on the route and the tool: domain/access.ts).
  const where = ['c.workspace_id = ?'];
  const params: unknown[] = [actor.workspaceId];
  where.push(conversationScopeSql(actor, params));
  const add = (sql: string, ...v: unknown[]) => {
    where.push(sql);
    params.push(...v);
  };
  if (f.accountId) add('c.platform_account_id = ?', f.accountId);
  if (f.campaignId) add('c.campaign_id = ?', f.campaignId);
  if (f.leadId) add('c.lead_id = ?', f.leadId);
  if (f.unread === true) add('c.unread_count > 0');
  if (f.unread === false) add('c.unread_count = 0');
  if (f.q) {
    const like = `%${f.q.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
    add(
      `(c.counterpart ilike ? or c.counterpart_name ilike ? or c.last_message_preview ilike ? or concat_ws(' ', k.first_name, k.last_name) ilike ?)`,
      like,
      like,
      like,
      like,
    );
  }
  const k = keysetSql(f, ['c.last_message_at', 'c.id'], 'desc');
  return em.execute<ConversationRow[]>(`${SELECT_CONVERSATION} where ${where.join(' and ')}${k.sql}`, [
    ...params,
    ...k.params,
  ]);
}

/** The conversation of the workspace (404 otherwise). Who may touch it was checked before: domain/access.ts. */
export async function requireConversation(em: EntityManager, actor: Actor, id: string): Promise<ConversationRow> {
  const [c] = await em.execute<ConversationRow[]>(`${SELECT_CONVERSATION} where c.id = ? and c.workspace_id = ?`, [
    id,
    actor.workspaceId,
  ]);
  if (!c) throw notFound('conversation');
  return c;
}

export interface MessageRow {
  id: string;
  direction: string;
  kind: string;
  origin: string | null;
  state: string | null;
  sender: string;
  subject: string | null;
  body: string;
  sent_at: Date;
  attachments: { id: string; name: string; size: number }[];
  scheduled_action_id: string | null;
  error_code: string | null;
}

/**
 * The conversation's newest messages, oldest first: what was stored, plus the campaign's sends in the
 * thread that no sync has stored yet (the scheduled actions hold them).
 */
export async function conversationMessages(
  em: EntityManager,
  c: ConversationRow,
  limit = CONVERSATION_MESSAGES,
): Promise<MessageRow[]> {
  const rows = await em.execute<MessageRow[]>(
    `(select id, direction, kind, origin, state, sender, subject, body, sent_at, attachments, scheduled_action_id, error_code
        from inbox_messages where conversation_id = ?)
     union all
     (select a.id, 'out', 'sent', 'campaign', null, coalesce(p.address, ''), a.content->>'subject', coalesce(a.content->>'body', a.content->>'note', ''),
             a.executed_at, '[]'::jsonb, a.id, null
        from scheduled_actions a join platform_accounts p on p.id = a.account_id
       where a.account_id = ? and a.connector_thread_id = ? and a.state = 'executed'
         and not exists (select 1 from inbox_messages m where m.platform_account_id = a.account_id and m.connector_message_id = a.connector_message_id))
     order by sent_at desc, id desc limit ?`,
    [c.id, c.platform_account_id, c.connector_thread_id, limit],
  );
  return rows.reverse();
}

export async function markRead(em: EntityManager, actor: Actor, id: string): Promise<ConversationRow> {
  await requireConversation(em, actor, id);
  await em.execute(`update conversations set unread_count = 0, read_at = now(), updated_at = now() where id = ?`, [id]);
  return requireConversation(em, actor, id);
}

export async function unreadCount(
  em: EntityManager,
  actor: Actor,
  accountId?: string,
): Promise<{ conversations: number; messages: number }> {
  const params: unknown[] = [actor.workspaceId];
  const scope = conversationScopeSql(actor, params);
  if (accountId) params.push(accountId);
  const [r] = await em.execute<{ conversations: string; messages: string | null }[]>(
    `select count(*) as conversations, sum(unread_count) as messages from conversations c where c.workspace_id = ? and ${scope} and c.unread_count > 0 ${accountId ? 'and c.platform_account_id = ?' : ''}`,
    params,
  );
  return { conversations: Number(r.conversations), messages: Number(r.messages ?? 0) };
}

// ---- replies -------------------------------------------------------------------------------------

interface AccountInfo {
  id: string;
  workspace_id: string;
  channel: 'email' | 'network';
  status: string;
  connector_account_id: string | null;
  address: string | null;
}

async function requireAccount(em: EntityManager, actor: Actor, accountId: string): Promise<AccountInfo> {
  const [a] = await em.execute<AccountInfo[]>(
    `select id, workspace_id, channel, status, connector_account_id, address from platform_accounts where id = ? and workspace_id = ?`,
    [accountId, actor.workspaceId],
  );
  if (!a) throw notFound('platform account');
  return a;
}

function requireConnected(a: AccountInfo): asserts a is AccountInfo & { connector_account_id: string } {
  if (a.status !== 'connected' || !a.connector_account_id)
    throw conflict('account_not_connected', `the platform account is ${a.status}; connect it before replying`);
}

function checkBody(channel: 'email' | 'network', body: string) {
  if (!body.trim()) throw badRequest('invalid_body', 'body: the reply is empty');
  if (body.length > REPLY_MAX_CHARS[channel])
    throw badRequest(
      'reply_too_long',
      `a ${channel} reply is at most ${REPLY_MAX_CHARS[channel]} characters (this one has ${body.length})`,
    );
}

const messageRow = async (em: EntityManager, id: string) =>
  (
    await em.execute<MessageRow[]>(
      `select id, direction, kind, origin, state, sender, subject, body, sent_at, attachments, scheduled_action_id, error_code from inbox_messages where id = ?`,
      [id],
    )
  )[0];

/**
 * Queues a reply in the conversation: stored at once (state `queued`, shown in the conversation)
 * and sent by `inbox-reply:<messageId>` when the account's governor grants a slot. Sending clears
 * the conversation's AI draft. A client's Idempotency-Key is the router's (api/idempotency.ts,
 * docs/idempotency.md), as for every operation that creates something: a repeat with the key is
 * answered before this runs.
 */
export async function queueReply(
  em: EntityManager,
  jobs: Jobs,
  actor: Actor,
  conversationId: string,
  input: { body: string; subject?: string | null },
): Promise<MessageRow> {
  assertWritable(actor);
  const c = await requireConversation(em, actor, conversationId);
  const account = await requireAccount(em, actor, c.platform_account_id);
  requireConnected(account);
  checkBody(account.channel, input.body);
  if (!c.counterpart) throw conflict('no_recipient', 'this conversation has no known counterpart to reply to');
  const id = uuidv7();
  await em.transactional(async (tx) => {
    await tx.execute(
      `insert into inbox_messages (id, workspace_id, conversation_id, platform_account_id, connector_message_id, direction, kind, origin, state, sender, subject, body, sent_at, attachments, lead_id, historical, created_by, created_at)
       values (?, ?, ?, ?, null, 'out', 'sent', 'inbox', 'queued', ?, ?, ?, now(), '[]', ?, false, ?, now())`,
      [
        id,
        actor.workspaceId,
        c.id,
        account.id,
        account.address ?? '',
        account.channel === 'email' ? (input.subject ?? null) : null,
        input.body,
        c.lead_id,
        actor.userId,
      ],
    );
    await tx.execute(`update conversations set ai_reply = null, updated_at = now() where id = ?`, [c.id]);
  });
  await jobs.start('inbox-reply', { messageId: id, workspaceId: actor.workspaceId });
  return messageRow(em, id);
}

export type ReplySlot =
  | { state: 'granted'; grantedAt: string }
  | { state: 'wait'; retryAt: string | null; reason: string }
  | { state: 'done' };

const replyAction = (channel: string) => (channel === 'email' ? 'email' : 'message') as 'email' | 'message';

/** The reply's slot from its account's governor (a reply counts as one message or email action). */
export async function replySlot(em: EntityManager, messageId: string, now = new Date()): Promise<ReplySlot> {
  const [m] = await em.execute<{ state: string; platform_account_id: string; channel: string }[]>(
    `select m.state, m.platform_account_id, p.channel from inbox_messages m join platform_accounts p on p.id = m.platform_account_id where m.id = ?`,
    [messageId],
  );
  if (!m || m.state !== 'queued') return { state: 'done' };
  const answer = await requestSlot(em, m.platform_account_id, replyAction(m.channel), { now });
  if (answer.granted) return { state: 'granted', grantedAt: answer.grantedAt.toISOString() };
  return { state: 'wait', retryAt: answer.retryAt?.toISOString() ?? null, reason: answer.reason };
}

/**
 * Sends the queued reply once (the message id is the connector's idempotency key, so a retried
 * activity never sends twice) and records it: state `sent`, the connector's ids, the conversation's
 * last outbound time, its reply reminders resolved. A refusal that retrying cannot fix marks it
 * `failed` and gives the slot back.
 */
export async function sendReply(
  em: EntityManager,
  connector: AccountConnector,
  messageId: string,
  grantedAt: string,
): Promise<{ state: string; errorCode?: string }> {
  const [m] = await em.execute<
    {
      state: string;
      body: string;
      subject: string | null;
      conversation_id: string;
      platform_account_id: string;
      channel: string;
      connector_account_id: string | null;
      counterpart: string;
      connector_thread_id: string;
    }[]
  >(
    `select m.state, m.body, m.subject, m.conversation_id, m.platform_account_id, p.channel, p.connector_account_id, c.counterpart, c.connector_thread_id
       from inbox_messages m join platform_accounts p on p.id = m.platform_account_id join conversations c on c.id = m.conversation_id where m.id = ?`,
    [messageId],
  );
  if (!m || m.state !== 'queued') return { state: m?.state ?? 'gone' };
  const fail = async (code: string) => {
    await em.transactional(async (tx) => {
      const r = await tx.execute(
        `update inbox_messages set state = 'failed', error_code = ? where id = ? and state = 'queued' returning id`,
        [code, messageId],
      );
      if (r.length)
        await releaseSlot(tx as EntityManager, m.platform_account_id, replyAction(m.channel), new Date(grantedAt));
    });
    return { state: 'failed', errorCode: code };
  };
  if (!m.connector_account_id) return fail('account_not_connected');
  let sent: { messageId: string; threadId: string; sentAt: Date; sentCopyError?: string | null };
  try {
    sent =
      m.channel === 'email'
        ? await connector.sendEmail(m.connector_account_id, {
            idempotencyKey: messageId,
            to: m.counterpart,
            subject: m.subject ?? '',
            body: m.body,
            threadId: m.connector_thread_id,
            references: await replyChain(em, messageId),
          })
        : await connector.sendMessage(m.connector_account_id, {
            idempotencyKey: messageId,
            recipient: m.counterpart,
            body: m.body,
            threadId: m.connector_thread_id,
          });
  } catch (err) {
    if (err instanceof ConnectorError && !err.retryable) return fail(`connector_${err.code}`);
    throw err;
  }
  await em.transactional(async (tx) => {
    const r = await tx.execute(
      `update inbox_messages set state = 'sent', connector_message_id = ?, sent_at = ?, error_code = ? where id = ? and state = 'queued' returning id`,
      // Sent, but its copy is missing from the mailbox's Sent folder (docs/email.md): said on the message.
      [sent.messageId, sent.sentAt, sent.sentCopyError ? 'sent_copy_failed' : null, messageId],
    );
    if (!r.length) return;
    await tx.execute(
      `update conversations set last_outbound_at = greatest(last_outbound_at, ?), last_message_at = greatest(last_message_at, ?), last_direction = 'out', last_message_preview = ?, updated_at = now() where id = ?`,
      [sent.sentAt, sent.sentAt, m.body.replace(/\s+/g, ' ').trim().slice(0, 300), m.conversation_id],
    );
    await resolveAnsweredReminders(tx as EntityManager, [m.conversation_id]);
  });
  return { state: 'sent' };
}

/**
 * What an email reply from the inbox answers (docs/inbox.md "Replies"): the latest inbound message of
 * the conversation stored before the reply was written (not a mail system's report), last — so it is
 * the reply's `In-Reply-To` — after the thread's earlier messages (the thread's root, the campaign's
 * sends, both sides' messages up to it), oldest first, each once; the composer bounds the chain. Empty
 * when nobody has written in the conversation yet: the reply then follows the thread alone.
 */
async function replyChain(em: EntityManager, replyId: string): Promise<string[]> {
  // Times compared on our clock (when each was stored or sent), so a sender's skewed Date header
  // cannot drop a message from the chain; the order is the messages' own dates.
  const rows = await em.execute<{ id: string }[]>(
    `with r as (select m.created_at, m.conversation_id, m.platform_account_id, c.connector_thread_id
                  from inbox_messages m join conversations c on c.id = m.conversation_id where m.id = ?),
          q as (select i.id as row_id, i.connector_message_id, i.created_at from inbox_messages i, r
                 where i.conversation_id = r.conversation_id and i.direction = 'in' and i.kind <> 'bounce'
                   and i.connector_message_id is not null and i.created_at <= r.created_at
                 order by i.created_at desc, i.sent_at desc, i.id desc limit 1)
     select id from (
       select r.connector_thread_id as id, 0 as part, null::timestamptz as at from r, q
       union all
       select a.connector_message_id, 1, a.executed_at from scheduled_actions a, r, q
        where a.account_id = r.platform_account_id and a.connector_thread_id = r.connector_thread_id and a.state = 'executed'
          and a.connector_message_id is not null and a.executed_at <= q.created_at
       union all
       select i.connector_message_id, 1, i.sent_at from inbox_messages i, r, q
        where i.conversation_id = r.conversation_id and i.connector_message_id is not null and i.id <> q.row_id
          and i.created_at <= q.created_at
       union all
       select q.connector_message_id, 2, null from q) x
     order by part, at, id`,
    [replyId],
  );
  return rows.map((x) => x.id);
}

// ---- live reads and sends straight through the connector -------------------------------------

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A chat by our conversation id, or by the connector's thread id on a named account of the workspace. */
async function resolveChat(
  em: EntityManager,
  actor: Actor,
  chatId: string,
  accountId: string | undefined,
): Promise<{ account: AccountInfo; threadId: string; conversation: ConversationRow | null }> {
  if (UUID.test(chatId)) {
    const [c] = await em.execute<ConversationRow[]>(`${SELECT_CONVERSATION} where c.id = ? and c.workspace_id = ?`, [
      chatId,
      actor.workspaceId,
    ]);
    if (c) {
      await authorize(em, actor, 'conversation', c.id);
      return {
        account: await requireAccount(em, actor, c.platform_account_id),
        threadId: c.connector_thread_id,
        conversation: c,
      };
    }
    // A conversation id that is not the workspace's (a chat id is only looked up with its account).
    if (!accountId) throw notFound('conversation');
  }
  if (!accountId)
    throw badRequest(
      'account_required',
      'account_id: required when the chat is not a stored conversation (give the platform account the chat is on)',
    );
  const account = await requireAccount(em, actor, accountId);
  const [c] = await em.execute<ConversationRow[]>(
    `${SELECT_CONVERSATION} where c.platform_account_id = ? and c.connector_thread_id = ?`,
    [account.id, chatId],
  );
  // A stored chat is the conversation's products'; one not stored yet belongs to none (every product only).
  if (c) await authorize(em, actor, 'conversation', c.id);
  else checkProducts(actor, 'conversation', []);
  return { account, threadId: chatId, conversation: c ?? null };
}

export interface LiveMessages {
  source: 'live' | 'stored';
  /** Why the stored messages answer (the connector's error or the deadline), when they do. */
  fallback_reason: string | null;
  conversation_id: string | null;
  messages: {
    id: string | null;
    connector_message_id: string | null;
    direction: string;
    sender: string;
    body: string;
    sent_at: Date;
    attachments: { id: string; name: string; size: number }[];
  }[];
}

/**
 * The chat's latest messages read from the connector now (pages until the end or the deadline,
 * keeping the newest `limit`); stored messages answer instead, flagged, when the connector fails or
 * is slower than INBOX_LIVE_TIMEOUT_MS (lib/config.ts).
 */
export async function liveMessages(
  em: EntityManager,
  connector: AccountConnector,
  actor: Actor,
  chatId: string,
  opts: { accountId?: string; limit: number },
): Promise<LiveMessages> {
  const { account, threadId, conversation } = await resolveChat(em, actor, chatId, opts.accountId);
  const stored = async (reason: string): Promise<LiveMessages> => {
    const rows = conversation ? await conversationMessages(em, conversation, opts.limit) : [];
    return {
      source: 'stored',
      fallback_reason: reason,
      conversation_id: conversation?.id ?? null,
      messages: rows.map((r) => ({
        id: r.id,
        connector_message_id: null,
        direction: r.direction,
        sender: r.sender,
        body: r.body,
        sent_at: r.sent_at,
        attachments: r.attachments,
      })),
    };
  };
  if (!account.connector_account_id || account.status !== 'connected') return stored('account_not_connected');
  const signal = AbortSignal.timeout(runtimeSettings.inboxLiveTimeoutMs());
  try {
    let cursor: string | null = null;
    let kept: ChatMessage[] = [];
    do {
      const page = await connector.messages(account.connector_account_id, threadId, cursor, signal);
      kept = [...kept, ...page.items].slice(-opts.limit);
      cursor = page.cursor;
    } while (cursor && !signal.aborted);
    kept.sort((a, b) => a.sentAt.getTime() - b.sentAt.getTime());
    const ids = kept.map((m) => m.messageId);
    const known = new Map(
      ids.length
        ? (
            await em.execute<{ id: string; connector_message_id: string }[]>(
              `select id, connector_message_id from inbox_messages where platform_account_id = ? and connector_message_id in (?)`,
              [account.id, ids],
            )
          ).map((r) => [r.connector_message_id, r.id])
        : [],
    );
    return {
      source: 'live',
      fallback_reason: null,
      conversation_id: conversation?.id ?? null,
      messages: kept.map((m) => ({
        id: known.get(m.messageId) ?? null,
        connector_message_id: m.messageId,
        direction:
          m.direction === 'out' ||
          (account.address && m.from.trim().toLowerCase() === account.address.trim().toLowerCase())
            ? 'out'
            : 'in',
        sender: m.from,
        body: m.body,
        sent_at: m.sentAt,
        attachments: m.attachments,
      })),
    };
  } catch (err) {
    if (err instanceof ConnectorError)
      return stored(err.code === 'invalid_request' ? 'chat_not_found' : `connector_${err.code}`);
    if (signal.aborted) return stored('timeout');
    throw err;
  }
}

/**
 * Sends at once through the connector, for a chat that may not be stored yet (so no queue): the
 * governor is still asked (a refusal is 409 `account_limit_reached` with the time to retry), and the
 * sent message is stored in its conversation, created when needed.
 */
export async function replyLive(
  em: EntityManager,
  connector: AccountConnector,
  actor: Actor,
  chatId: string,
  input: { accountId?: string; body: string; subject?: string | null; recipient?: string | null },
): Promise<{ conversation_id: string; message_id: string; connector_message_id: string; sent_at: Date }> {
  assertWritable(actor);
  const { account, threadId, conversation } = await resolveChat(em, actor, chatId, input.accountId);
  requireConnected(account);
  checkBody(account.channel, input.body);
  const recipient = input.recipient?.trim() || conversation?.counterpart || null;
  if (!recipient)
    throw badRequest(
      'recipient_required',
      'recipient: required for a chat that is not stored yet (the email address or profile the chat is with)',
    );
  const action = replyAction(account.channel);
  const slot = await requestSlot(em, account.id, action);
  if (!slot.granted) {
    throw new AppError(409, 'account_limit_reached', `the account's governor refused a send now (${slot.reason})`, {
      reason: slot.reason,
      retry_at: slot.retryAt?.toISOString() ?? null,
    });
  }
  const key = uuidv7();
  let sent;
  try {
    sent =
      account.channel === 'email'
        ? await connector.sendEmail(account.connector_account_id, {
            idempotencyKey: key,
            to: recipient,
            subject: input.subject ?? '',
            body: input.body,
            threadId,
          })
        : await connector.sendMessage(account.connector_account_id, {
            idempotencyKey: key,
            recipient,
            body: input.body,
            threadId,
          });
  } catch (err) {
    await releaseSlot(em, account.id, action, slot.grantedAt);
    if (err instanceof ConnectorError) {
      throw new AppError(
        err.retryable ? 503 : 502,
        'connector_unavailable',
        `the connector refused the send (${err.code})`,
        { retryable: err.retryable },
      );
    }
    throw err;
  }
  const full = await accountRow(em, account.id);
  await em.transactional(async (tx) => {
    await storeMessages(tx as EntityManager, undefined, full!, [
      {
        message: {
          messageId: sent.messageId,
          threadId: sent.threadId,
          direction: 'out',
          from: account.address ?? '',
          body: input.body,
          sentAt: sent.sentAt,
          attachments: [],
        },
        counterpart: recipient,
      },
    ]);
    await tx.execute(
      `update inbox_messages set origin = 'inbox', created_by = ?, subject = ? where platform_account_id = ? and connector_message_id = ?`,
      [actor.userId, account.channel === 'email' ? (input.subject ?? null) : null, account.id, sent.messageId],
    );
  });
  const [m] = await em.execute<{ id: string; conversation_id: string }[]>(
    `select id, conversation_id from inbox_messages where platform_account_id = ? and connector_message_id = ?`,
    [account.id, sent.messageId],
  );
  return {
    conversation_id: m.conversation_id,
    message_id: m.id,
    connector_message_id: sent.messageId,
    sent_at: sent.sentAt,
  };
}

/**
 * An attachment of a message of the chat, streamed from the connector. The message is ours (by id or
 * connector id) and lists the attachment when stored; 413 `attachment_too_large` past the cap.
 */
export async function openAttachment(
  em: EntityManager,
  connector: AccountConnector,
  actor: Actor,
  chatId: string,
  messageId: string,
  attachmentId: string,
  accountId?: string,
): Promise<AttachmentStream> {
  const { account, conversation } = await resolveChat(em, actor, chatId, accountId);
  let connectorMessageId = messageId;
  if (conversation) {
    const [m] = await em.execute<
      { connector_message_id: string | null; attachments: { id: string; size: number }[] }[]
    >(
      `select connector_message_id, attachments from inbox_messages where conversation_id = ? and (connector_message_id = ? ${UUID.test(messageId) ? 'or id = ?' : ''})`,
      UUID.test(messageId) ? [conversation.id, messageId, messageId] : [conversation.id, messageId],
    );
    if (m) {
      if (!m.attachments.some((a) => a.id === attachmentId)) throw notFound('attachment');
      const declared = m.attachments.find((a) => a.id === attachmentId)!.size;
      if (declared > ATTACHMENT_MAX_BYTES)
        throw new AppError(
          413,
          'attachment_too_large',
          `the attachment is ${declared} bytes; at most ${ATTACHMENT_MAX_BYTES} are served`,
        );
      connectorMessageId = m.connector_message_id ?? messageId;
    } else if (UUID.test(messageId)) throw notFound('message');
  }
  if (!account.connector_account_id)
    throw conflict('account_not_connected', 'the platform account is not attached to the connector');
  try {
    return await connector.attachment(account.connector_account_id, connectorMessageId, attachmentId, {
      maxBytes: ATTACHMENT_MAX_BYTES,
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    if (err instanceof ConnectorError) {
      if (err.code === 'invalid_request') throw notFound('attachment');
      if (err.code === 'bad_response' && /larger than/.test(err.message))
        throw new AppError(413, 'attachment_too_large', `the attachment is larger than ${ATTACHMENT_MAX_BYTES} bytes`);
      throw new AppError(
        err.retryable ? 503 : 502,
        'connector_unavailable',
        `the connector could not serve the attachment (${err.code})`,
        { retryable: err.retryable },
      );
    }
    throw err;
  }
}

// ---- AI-drafted replies ----------------------------------------------------------------------

/**
 * Drafts a reply with the model from the conversation's last messages and the lead, debits the plan's
 * draft price (idempotent by `requestId`; the price is held before the model is asked: 402
 * `insufficient_credits` without a model call), and keeps it on the conversation until a person
 * sends or deletes it. Never sends.
 */
export async function draftAiReply(
  em: EntityManager,
  llm: ModelAdapter,
  actor: Actor,
  conversationId: string,
  input: { instructions?: string | null; requestId: string },
): Promise<AiReplyDraft> {
  assertWritable(actor);
  const c = await requireConversation(em, actor, conversationId);
  const messages = await conversationMessages(em, c, 20);
  if (!messages.some((m) => m.direction === 'in'))
    throw conflict('nothing_to_answer', 'the conversation has no received message to answer');
  const price = (await entitlementsFor(em, actor.workspaceId)).entitlements.draftCredits;
  const key = `ai-reply:${conversationId}:${input.requestId}`;
  const reason = 'AI-drafted inbox reply';
  return withCreditHold(em, actor.workspaceId, price, { key, reason, ttlMs: HOLD_TTL_MS }, async () => {
    const [sender] = await em.execute<{ display_name: string }[]>(
      `select display_name from platform_accounts where id = ?`,
      [c.platform_account_id],
    );
    let written;
    try {
      written = await writeReply(llm, {
        channel: c.channel === 'email' ? 'email' : 'message',
        maxLength: REPLY_MAX_CHARS[c.channel === 'email' ? 'email' : 'network'],
        sender_name: sender?.display_name ?? null,
        lead: { first_name: c.first_name, last_name: c.last_name, company: c.company, name: c.counterpart_name },
        history: messages.map((m) => ({
          direction: m.direction as 'in' | 'out',
          body: m.body.slice(0, 4000),
          sent_at: new Date(m.sent_at).toISOString(),
        })),
        instructions: input.instructions ?? null,
      });
    } catch (err) {
      if (err instanceof LlmError)
        throw new AppError(
          err.retryable ? 503 : 502,
          'model_unavailable',
          `the model could not draft the reply (${err.code})`,
          { retryable: err.retryable },
        );
      throw err;
    }
    const draft: AiReplyDraft = {
      body: written.value.body,
      subject: c.channel === 'email' ? written.value.subject : null,
      model: llm.model,
      credits: price,
      created_at: new Date().toISOString(),
      created_by: actor.userId,
    };
    await em.transactional(async (tx) => {
      if (price > 0) await debitCredits(tx as EntityManager, actor.workspaceId, price, { key, reason });
      await tx.execute(`update conversations set ai_reply = ?::jsonb, updated_at = now() where id = ?`, [
        JSON.stringify(draft),
        conversationId,
      ]);
    });
    return draft;
  });
}

/** Deletes the conversation's AI draft; 404 `no_ai_reply` when there is none. */
export async function deleteAiReply(em: EntityManager, actor: Actor, conversationId: string): Promise<void> {
  assertWritable(actor);
  await requireConversation(em, actor, conversationId);
  const r = await em.execute(
    `update conversations set ai_reply = null, updated_at = now() where id = ? and ai_reply is not null returning id`,
    [conversationId],
  );
  if (!r.length) throw new AppError(404, 'no_ai_reply', 'the conversation has no AI-drafted reply');
}
