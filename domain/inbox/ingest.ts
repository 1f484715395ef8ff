// Inbound messages into the unified inbox (docs/inbox.md "Inbound processing"). Connector events are
// stored once by `storeConnectorEvent`; the account's processor workflow (`inbox-inbound:<accountId>`)
// claims them in batches and hands their messages to `storeMessages`, which a sync shares. Everything
// is set-based per batch: one upsert of conversations, one match query, one insert of messages
// (idempotent by connector message id), then the effects of the messages that were new.
import type { EntityManager } from '@mikro-orm/postgresql';
import { toInboundEvent } from '../../lib/connectors/inbound.js';
import type { ChatMessage, InboundMailFacts } from '../../lib/connectors/types.js';
import { uuidv7 } from '../../lib/ids.js';
import { mapLimit } from '../../lib/concurrency.js';
import { logger } from '../../lib/logger.js';
import { normaliseEmail, normaliseProfileUrl } from '../../lib/normalise.js';
import type { Jobs } from '../jobs.js';
import { emitEvent, emitEvents } from '../webhooks/events.js';
import { openReplyReminders, resolveAnsweredReminders } from '../follow-ups/follow-ups.js';
import { notifyReplies } from '../notifications/notifications.js';
import type { MessageKind } from '../../db/entities/InboxMessage.js';
import { applyBounces } from './bounces.js';
import { applyOutOfOffice, applyUnsubscribes, resetSoftBounces } from './mail-effects.js';

/** Events one processor activity claims at a time. */
export const INBOUND_BATCH = 200;

export interface AccountRow {
  id: string;
  workspace_id: string;
  channel: string;
  connector: string;
  connector_account_id: string | null;
  address: string | null;
  connected_at: Date | null;
}

export interface IncomingMessage {
  message: ChatMessage;
  /** The other side when known (a sync reads it from the chat); an inbound message's sender otherwise. */
  counterpart?: string | null;
  /** A reaction to a message of the thread (internal `reaction.received`), not a message. */
  reaction?: string;
}

export interface StoreResult {
  stored: number;
  replies: number;
  events: number;
}

/** An enrollment to tell about its lead's reply or bounce, once the transaction that recorded it has committed. */
export interface EnrollmentWake {
  campaignId: string;
  leadId: string;
  signal: 'reply' | 'bounce' | 'campaign_stopped';
}

/**
 * Wakes the enrollments whose replies or bounces a committed transaction recorded (in parallel: each
 * is a round trip to Temporal, and a batch may hold hundreds). Best effort by design: the reply or
 * bounce is already in the database, and the enrollment's gate before its next send reads it there
 * (domain/enrollments/executor.ts `gate`), so a signal lost to a crash or an outage only delays the stop until
 * then — it never lets a follow-up go to someone who replied, or to an address that bounced.
 */
export async function wakeEnrollments(jobs: Jobs, wakes: EnrollmentWake[]): Promise<void> {
  if (!wakes.length) return;
  await mapLimit(wakes, 16, (w) =>
    jobs
      .signal(
        'enrollment',
        { campaignId: w.campaignId, leadId: w.leadId },
        w.signal,
        w.signal === 'reply' ? {} : undefined,
      )
      .catch((err) =>
        logger.warn(
          { err: String(err), campaign: w.campaignId, lead: w.leadId, signal: w.signal },
          'enrollment signal not sent; the gate before the next send will see the record',
        ),
      ),
  );
}

// ---- classification -------------------------------------------------------------------------

const BOUNCE_SENDER = /^(mailer-daemon|postmaster|mail-daemon|bounces?)([+@.-]|$)/i;
const BOUNCE_BODY =
  /(delivery status notification|undeliverable|delivery has failed|could not be delivered|address not found|mailbox unavailable|message not delivered)/i;
const AUTO_REPLY_BODY =
  /(out of (the )?office|automatic reply|auto-?reply|autoreply|i am (currently )?(away|out|on (annual )?leave|on vacation|travell?ing)|i'?m (currently )?(away|out of|on (annual )?leave|on vacation)|on parental leave|limited access to (my )?e-?mail|will (be back|return) on|abwesenheitsnotiz|réponse automatique)/i;

/**
 * The rule (docs/inbox.md "Auto-replies and bounces"): a bounce comes from a mail system (the sender
 * or a delivery-failure text); an auto-reply is an out-of-office style answer recognised by its
 * first 500 characters; everything else a person wrote. Only `reply` counts as the lead replying.
 */
export function classifyInbound(from: string, body: string): Exclude<MessageKind, 'sent'> {
  const head = body.slice(0, 500);
  if (BOUNCE_SENDER.test(from.trim()) || (BOUNCE_BODY.test(head) && /(mail|deliver)/i.test(from + head)))
    return 'bounce';
  if (AUTO_REPLY_BODY.test(head)) return 'auto_reply';
  return 'reply';
}

const sameIdentity = (a: string | null, b: string | null) =>
  !!a && !!b && a.trim().toLowerCase() === b.trim().toLowerCase();
const preview = (body: string) => body.replace(/\s+/g, ' ').trim().slice(0, 300);

// ---- the batch processor ----------------------------------------------------------------------

export async function accountRow(em: EntityManager, accountId: string): Promise<AccountRow | null> {
  const [a] = await em.execute<AccountRow[]>(
    `select id, workspace_id, channel, connector, connector_account_id, address, connected_at from platform_accounts where id = ?`,
    [accountId],
  );
  return a ?? null;
}

/**
 * One batch of the account's stored, unhandled message and reaction events (claimed with SKIP LOCKED,
 * so a second processor never takes the same rows), processed and marked handled in one transaction.
 * `more` says the batch was full.
 */
export async function processInboundBatch(
  em: EntityManager,
  jobs: Jobs,
  accountId: string,
  limit = INBOUND_BATCH,
): Promise<{ processed: number; more: boolean } & StoreResult> {
  const wakes: EnrollmentWake[] = [];
  const result = await em.transactional(async (tx) => {
    const t = tx as EntityManager;
    const rows = await t.execute<{ event_id: string; connector: string; payload: unknown }[]>(
      `select event_id, connector, payload from connector_events
        where platform_account_id = ? and type in ('message.received', 'reaction.received') and handled_at is null
        order by received_at, id limit ? for update skip locked`,
      [accountId, limit],
    );
    if (!rows.length) return { processed: 0, more: false, stored: 0, replies: 0, events: 0 };
    const account = await accountRow(t, accountId);
    let result: StoreResult = { stored: 0, replies: 0, events: 0 };
    if (account) {
      const items: IncomingMessage[] = [];
      for (const r of rows) {
        const e = toInboundEvent(r.connector, r.payload);
        if (e.type === 'message.received') items.push({ message: e.message });
        else if (e.type === 'reaction.received') {
          const message = {
            messageId: `reaction:${e.eventId}`,
            threadId: e.threadId,
            direction: 'in' as const,
            from: e.from,
            body: '',
            sentAt: e.reactedAt,
            attachments: [],
          };
          items.push({ message, reaction: e.reaction });
        }
      }
      result = await storeMessages(t, wakes, account, items);
    }
    await t.execute(`update connector_events set handled_at = now() where event_id in (?)`, [
      rows.map((r) => r.event_id),
    ]);
    return { processed: rows.length, more: rows.length === limit, ...result };
  });
  await wakeEnrollments(jobs, wakes);
  return result;
}

export interface ConversationRow {
  id: string;
  connector_thread_id: string;
  counterpart: string;
  lead_id: string | null;
  contact_id: string | null;
  campaign_id: string | null;
}

interface MatchRow {
  conversation_id: string;
  lead_id: string;
  contact_id: string;
  campaign_id: string | null;
  full_name: string | null;
}

/**
 * Stores messages of one account (from events or a sync) in their conversations, matches new
 * conversations to leads, and applies what new messages mean: unread counts, replies recorded on the
 * lead's enrollment and signalled to its workflow, `message.received` (human replies of matched
 * leads), follow-up reminders, bounces of campaign emails (recorded; the gate stops the enrollment),
 * reactions. Must run inside a transaction. Messages sent before `historicalBefore` (a sync of old
 * history) are stored without effects.
 */
export async function storeMessages(
  em: EntityManager,
  wakes: EnrollmentWake[] | undefined,
  account: AccountRow,
  items: IncomingMessage[],
  opts: { historicalBefore?: Date | null } = {},
): Promise<StoreResult> {
  const reactions = items.filter((i) => i.reaction !== undefined);
  const seen = new Set<string>();
  const messages = items
    .filter((i) => i.reaction === undefined && !seen.has(i.message.messageId) && seen.add(i.message.messageId))
    .sort((a, b) => a.message.sentAt.getTime() - b.message.sentAt.getTime());
  if (!messages.length && !reactions.length) return { stored: 0, replies: 0, events: 0 };

  // 1. Conversations: one per thread, created on first sight (locked in thread order: no deadlock with a sync).
  const threads = new Map<string, { counterpart: string; at: Date }>();
  for (const i of [...messages, ...reactions]) {
    const m = i.message;
    const own = m.direction === 'out' || sameIdentity(m.from, account.address);
    const counterpart = i.counterpart ?? (own ? '' : m.from);
    const t = threads.get(m.threadId);
    if (!t) threads.set(m.threadId, { counterpart, at: m.sentAt });
    else if (!t.counterpart && counterpart) t.counterpart = counterpart;
  }
  const threadRows = [...threads.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([thread_id, t]) => ({ id: uuidv7(), thread_id, counterpart: t.counterpart, at: t.at.toISOString() }));
  const convs = await em.execute<ConversationRow[]>(
    `insert into conversations (id, workspace_id, platform_account_id, channel, connector_thread_id, counterpart, last_message_at, last_message_preview, last_direction, unread_count, created_at, updated_at)
     select v.id, ?, ?, ?, v.thread_id, v.counterpart, v.at, '', 'in', 0, now(), now() from json_to_recordset(?::json) as v(id uuid, thread_id text, counterpart text, at timestamptz)
     on conflict (platform_account_id, connector_thread_id) do update set counterpart = case when conversations.counterpart = '' then excluded.counterpart else conversations.counterpart end
     returning id, connector_thread_id, counterpart, lead_id, contact_id, campaign_id`,
    [account.workspace_id, account.id, account.channel, JSON.stringify(threadRows)],
  );
  const byThread = new Map(convs.map((c) => [c.connector_thread_id, c]));

  // 2. Match conversations without a lead: the account's campaign send in the thread, else the
  //    contact by the counterpart's identity on this network (the lead this account wrote to first,
  //    then one in a campaign, then the newest).
  const unmatched = convs.filter((c) => !c.lead_id && c.counterpart);
  if (unmatched.length) {
    const probe = unmatched.map((c) => ({
      conversation_id: c.id,
      thread_id: c.connector_thread_id,
      raw: c.counterpart.trim(),
      email: account.channel === 'email' ? normaliseEmail(c.counterpart) : null,
      profile: account.channel === 'email' ? null : normaliseProfileUrl(c.counterpart),
    }));
    const matches = await em.execute<MatchRow[]>(
      `select v.conversation_id, m.lead_id, m.contact_id, m.campaign_id, m.full_name
         from json_to_recordset(?::json) as v(conversation_id uuid, thread_id text, raw text, email text, profile text)
         cross join lateral (
           (select a.lead_id, l.contact_id, a.campaign_id, coalesce(c.full_name, nullif(trim(concat_ws(' ', c.first_name, c.last_name)), '')) as full_name
              from scheduled_actions a join leads l on l.id = a.lead_id join contacts c on c.id = l.contact_id
             where a.account_id = ? and a.connector_thread_id = v.thread_id and a.state = 'executed'
             order by a.executed_at desc limit 1)
           union all
           (select l.id, c.id, (select e.campaign_id from enrollments e where e.lead_id = l.id order by e.created_at desc limit 1),
                   coalesce(c.full_name, nullif(trim(concat_ws(' ', c.first_name, c.last_name)), ''))
              from contacts c join leads l on l.contact_id = c.id
             where c.workspace_id = ? and (c.email_normalised = v.email or c.profile_url_normalised = v.profile or c.network_provider_id = v.raw)
             order by exists (select 1 from scheduled_actions a where a.lead_id = l.id and a.account_id = ?) desc,
                      exists (select 1 from enrollments e where e.lead_id = l.id) desc, l.created_at desc
             limit 1)
           -- The branches are read in order and the first row ends it: the identity lookup runs only without a send in the thread.
           limit 1) m`,
      [JSON.stringify(probe), account.id, account.workspace_id, account.id],
    );
    if (matches.length) {
      await em.execute(
        `update conversations c set lead_id = v.lead_id, contact_id = v.contact_id, campaign_id = v.campaign_id, counterpart_name = coalesce(c.counterpart_name, v.full_name), updated_at = now()
           from json_to_recordset(?::json) as v(conversation_id uuid, lead_id uuid, contact_id uuid, campaign_id uuid, full_name text) where c.id = v.conversation_id`,
        [JSON.stringify(matches)],
      );
      for (const m of matches) {
        const c = convs.find((x) => x.id === m.conversation_id)!;
        Object.assign(c, { lead_id: m.lead_id, contact_id: m.contact_id, campaign_id: m.campaign_id });
      }
    }
  }

  // 3. Messages, once each: our own sends are `sent` (a campaign's when a scheduled action holds the id).
  const ownIds = messages
    .filter((i) => i.message.direction === 'out' || sameIdentity(i.message.from, account.address))
    .map((i) => i.message.messageId);
  const actionByMessage = new Map<string, string>();
  if (ownIds.length) {
    const acts = await em.execute<{ id: string; connector_message_id: string }[]>(
      `select id, connector_message_id from scheduled_actions where account_id = ? and connector_message_id in (?)`,
      [account.id, ownIds],
    );
    for (const a of acts) actionByMessage.set(a.connector_message_id, a.id);
  }
  const ownSet = new Set(ownIds);
  const rows = messages.map((i) => {
    const m = i.message;
    const c = byThread.get(m.threadId)!;
    const own = ownSet.has(m.messageId);
    // The mail connector classified it from its headers and structure (lib/connectors/mailbox/classify.ts); other networks by the words.
    const mail = own ? null : (m.mail ?? null);
    return {
      id: uuidv7(),
      conversation_id: c.id,
      message_id: m.messageId,
      direction: own ? 'out' : 'in',
      kind: own ? 'sent' : mail ? MAIL_KIND[mail.kind] : classifyInbound(m.from, m.body),
      origin: own ? (actionByMessage.has(m.messageId) ? 'campaign' : 'network') : null,
      sender: m.from.slice(0, 2048),
      subject: m.mail?.subject?.slice(0, 400) ?? null,
      body: m.body,
      sent_at: m.sentAt.toISOString(),
      attachments: JSON.stringify(m.attachments),
      lead_id: c.lead_id,
      action_id: actionByMessage.get(m.messageId) ?? null,
      historical: !!opts.historicalBefore && m.sentAt < opts.historicalBefore,
      mail,
    };
  });
  const inserted = rows.length
    ? await em.execute<{ id: string }[]>(
        `insert into inbox_messages (id, workspace_id, conversation_id, platform_account_id, connector_message_id, direction, kind, origin, sender, subject, body, sent_at, attachments, lead_id, scheduled_action_id, historical, created_at)
         select v.id, ?, v.conversation_id, ?, v.message_id, v.direction, v.kind, v.origin, v.sender, v.subject, v.body, v.sent_at, v.attachments::jsonb, v.lead_id, v.action_id, v.historical, now()
           from json_to_recordset(?::json) as v(id uuid, conversation_id uuid, message_id text, direction text, kind text, origin text, sender text, subject text, body text, sent_at timestamptz, attachments text, lead_id uuid, action_id uuid, historical boolean)
         on conflict (platform_account_id, connector_message_id) do nothing returning id`,
        [account.workspace_id, account.id, JSON.stringify(rows.map(({ mail: _, ...r }) => r))],
      )
    : [];
  const newIds = new Set(inserted.map((r) => r.id));
  const fresh = rows.filter((r) => newIds.has(r.id));

  // 4. Conversations: latest message, unread count (inbound, not historical), last in/out times.
  if (fresh.length) {
    const agg = new Map<
      string,
      { at: string; preview: string; dir: string; unread: number; last_in: string | null; last_out: string | null }
    >();
    for (const r of fresh) {
      const a = agg.get(r.conversation_id) ?? {
        at: r.sent_at,
        preview: '',
        dir: r.direction,
        unread: 0,
        last_in: null,
        last_out: null,
      };
      if (r.sent_at >= a.at) Object.assign(a, { at: r.sent_at, preview: preview(r.body), dir: r.direction });
      if (r.direction === 'in') {
        // A mail system's report and a request to unsubscribe wait for nobody's answer.
        if (!r.historical && r.kind !== 'bounce' && r.mail?.kind !== 'unsubscribe') a.unread++;
        a.last_in = !a.last_in || r.sent_at > a.last_in ? r.sent_at : a.last_in;
      } else a.last_out = !a.last_out || r.sent_at > a.last_out ? r.sent_at : a.last_out;
      agg.set(r.conversation_id, a);
    }
    const upd = [...agg.entries()].map(([id, a]) => ({ id, ...a }));
    await em.execute(
      `update conversations c set
          last_message_preview = case when v.at >= c.last_message_at or c.last_message_preview = '' then v.preview else c.last_message_preview end,
          last_direction = case when v.at >= c.last_message_at or c.last_message_preview = '' then v.dir else c.last_direction end,
          last_message_at = greatest(c.last_message_at, v.at),
          unread_count = c.unread_count + v.unread,
          last_inbound_at = greatest(c.last_inbound_at, v.last_in),
          last_outbound_at = greatest(c.last_outbound_at, v.last_out),
          updated_at = now()
         from json_to_recordset(?::json) as v(id uuid, at timestamptz, preview text, dir text, unread int, last_in timestamptz, last_out timestamptz) where c.id = v.id`,
      [JSON.stringify(upd)],
    );
  }

  // 5. What new messages mean.
  const live = fresh.filter((r) => !r.historical);
  const replies = live.filter((r) => r.kind === 'reply' && r.lead_id);
  const answered = [...new Set(live.filter((r) => r.direction === 'out').map((r) => r.conversation_id))];
  let events = 0;
  if (replies.length) events += await applyReplies(em, wakes, account, replies, convs);
  const bounces = account.channel === 'email' ? live.filter((r) => r.kind === 'bounce' && r.lead_id) : [];
  if (bounces.length) await applyBounces(em, wakes, account, bounces, convs);
  if (account.channel === 'email') {
    // What the mail connector's facts add (docs/email.md): a reply ends a run of soft bounces, an
    // out-of-office names a return date, a mail to the unsubscribe address unsubscribes its sender.
    const contactOf = (r: FreshRow) => convs.find((c) => c.id === r.conversation_id)?.contact_id ?? null;
    if (replies.length) await resetSoftBounces(em, replies.map(contactOf));
    const away = live
      .filter((r) => r.kind === 'auto_reply' && r.mail?.returnDate)
      .map((r) => ({ contactId: contactOf(r), returnDate: r.mail!.returnDate! }));
    if (away.length) await applyOutOfOffice(em, away);
    const leaving = live
      .filter((r) => r.mail?.kind === 'unsubscribe')
      .map((r) => ({ contactId: contactOf(r), sender: r.sender }));
    if (leaving.length) await applyUnsubscribes(em, wakes, account.workspace_id, leaving);
  }
  if (answered.length) await resolveAnsweredReminders(em, answered);
  if (reactions.length) events += await applyReactions(em, account, reactions, byThread);
  return { stored: fresh.length, replies: replies.length, events };
}

export type FreshRow = {
  id: string;
  conversation_id: string;
  lead_id: string | null;
  sender: string;
  body: string;
  sent_at: string;
  mail: InboundMailFacts | null;
};

/** The inbox kind of a mail the connector classified: an unsubscribe mail is an automatic message, not a reply. */
const MAIL_KIND: Record<InboundMailFacts['kind'], Exclude<MessageKind, 'sent'>> = {
  reply: 'reply',
  auto_reply: 'auto_reply',
  bounce: 'bounce',
  unsubscribe: 'auto_reply',
};

/**
 * Human replies of matched leads: recorded on the lead's latest send from this account (and its
 * enrollment), signalled to that enrollment's workflow after commit (`signals`; the gate before its
 * next send reads the recorded reply in any case), a follow-up reminder per conversation, and one `message.received` each, whose
 * `is_first_reply` is the lead's reply state before that message.
 */
async function applyReplies(
  em: EntityManager,
  wakes: EnrollmentWake[] | undefined,
  account: AccountRow,
  replies: FreshRow[],
  convs: ConversationRow[],
): Promise<number> {
  const leadIds = [...new Set(replies.map((r) => r.lead_id!))];
  const ids = replies.map((r) => r.id);
  const info = await em.execute<
    {
      lead_id: string;
      first_name: string | null;
      last_name: string | null;
      full_name: string | null;
      replied_before: boolean;
    }[]
  >(
    `select l.id as lead_id, c.first_name, c.last_name, c.full_name,
            (exists (select 1 from inbox_messages m where m.lead_id = l.id and m.kind = 'reply' and m.id not in (?))
             or exists (select 1 from enrollments e where e.lead_id = l.id and e.replied_at is not null)) as replied_before
       from leads l join contacts c on c.id = l.contact_id where l.id in (?)`,
    [ids, leadIds],
  );
  const lead = new Map(info.map((i) => [i.lead_id, i]));
  const sends = await em.execute<
    { id: string; lead_id: string; enrollment_id: string; campaign_id: string; running: boolean }[]
  >(
    `select distinct on (a.lead_id) a.id, a.lead_id, a.enrollment_id, a.campaign_id, e.status in ('active', 'paused') as running
       from scheduled_actions a left join enrollments e on e.id = a.enrollment_id
      where a.account_id = ? and a.lead_id in (?) and a.state = 'executed' order by a.lead_id, a.executed_at desc`,
    [account.id, leadIds],
  );
  const send = new Map(sends.map((s) => [s.lead_id, s]));
  const firstAt = new Map<string, string>();
  for (const r of replies) if (!firstAt.has(r.lead_id!)) firstAt.set(r.lead_id!, r.sent_at);
  if (sends.length) {
    const marks = sends.map((s) => ({ action_id: s.id, enrollment_id: s.enrollment_id, at: firstAt.get(s.lead_id)! }));
    await em.execute(
      `with v as (select * from json_to_recordset(?::json) as v(action_id uuid, enrollment_id uuid, at timestamptz)),
            a as (update scheduled_actions a set replied_at = coalesce(a.replied_at, v.at), updated_at = now() from v where a.id = v.action_id returning a.id)
       update enrollments e set replied_at = coalesce(e.replied_at, v.at), updated_at = now() from v where e.id = v.enrollment_id`,
      [JSON.stringify(marks)],
    );
  }
  // Signalled by the caller once this commits (wakeEnrollments): no Temporal round trip holds these locks.
  // Only enrollments still running have a workflow to tell (a reply after the last step is common).
  wakes?.push(
    ...sends
      .filter((s) => s.running)
      .map((s) => ({ campaignId: s.campaign_id, leadId: s.lead_id, signal: 'reply' as const })),
  );

  const conv = new Map(convs.map((c) => [c.id, c]));
  await openReplyReminders(
    em,
    account.workspace_id,
    replies.map((r) => ({
      leadId: r.lead_id!,
      conversationId: r.conversation_id,
      repliedAt: new Date(r.sent_at),
      summary: preview(r.body),
    })),
  );
  const replied = new Set<string>();
  const events: Record<string, unknown>[] = [];
  for (const r of replies) {
    const l = lead.get(r.lead_id!);
    const c = conv.get(r.conversation_id)!;
    const first = !l?.replied_before && !replied.has(r.lead_id!);
    replied.add(r.lead_id!);
    const name = l?.full_name || [l?.first_name, l?.last_name].filter(Boolean).join(' ') || null;
    events.push({
      conversation_id: r.conversation_id,
      lead_id: r.lead_id,
      campaign_id: send.get(r.lead_id!)?.campaign_id ?? c.campaign_id ?? null,
      sender_name: name ?? r.sender,
      sender_provider_id: r.sender,
      message: r.body,
      is_first_reply: first,
      first_name: l?.first_name ?? null,
      last_name: l?.last_name ?? null,
    });
  }
  await emitEvents(em, account.workspace_id, 'message.received', events);
  await notifyReplies(em, account.workspace_id, replies);
  return replies.length;
}

/** Reactions of matched leads: the internal `reaction.received` (subscriptions cannot ask for it). */
async function applyReactions(
  em: EntityManager,
  account: AccountRow,
  reactions: IncomingMessage[],
  byThread: Map<string, ConversationRow>,
): Promise<number> {
  let n = 0;
  for (const r of reactions) {
    const c = byThread.get(r.message.threadId);
    if (!c?.lead_id) continue;
    const [l] = await em.execute<{ first_name: string | null; last_name: string | null }[]>(
      `select c.first_name, c.last_name from leads l join contacts c on c.id = l.contact_id where l.id = ?`,
      [c.lead_id],
    );
    await emitEvent(em, account.workspace_id, 'reaction.received', {
      lead_id: c.lead_id,
      campaign_id: c.campaign_id,
      conversation_id: c.id,
      first_name: l?.first_name ?? null,
      last_name: l?.last_name ?? null,
      reaction: r.reaction,
    });
    n++;
  }
  return n;
}
