// Follow-ups (docs/follow-ups.md): reminders that a lead is waiting for someone, and notes per lead.
// Two kinds: `reply_waiting` (a lead replied and nobody answered within FOLLOW_UP_AFTER_HOURS; it
// opens with the reply and resolves itself when an answer is sent in that conversation) and
// `meeting_outcome` (a meeting ended without an outcome; brought up to date whenever follow-ups are
// read, so it needs no sweeper). open → completed | dismissed.
import { leadScopeSql } from '../access.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { runtimeSettings } from '../../lib/config.js';
import { uuidv7 } from '../../lib/ids.js';
import { keysetSql, type Keyset } from '../../lib/pagination.js';
import { requireLead } from '../contacts/contacts.js';
import { conflict, notFound } from '../errors.js';
import type { Actor } from '../identity.js';

export const NOTE_MAX_CHARS = 5000;

/** Opens a `reply_waiting` reminder per conversation (one open at a time; a later reply keeps the first due time). */
export async function openReplyReminders(
  em: EntityManager,
  workspaceId: string,
  replies: { leadId: string; conversationId: string; repliedAt: Date; summary: string }[],
): Promise<void> {
  if (!replies.length) return;
  const rows = replies.map((r) => ({
    id: uuidv7(),
    lead_id: r.leadId,
    conversation_id: r.conversationId,
    due_at: new Date(r.repliedAt.getTime() + runtimeSettings.followUpAfterHours() * 3_600_000).toISOString(),
    summary: r.summary.slice(0, 300),
  }));
  await em.execute(
    `insert into follow_up_reminders (id, workspace_id, lead_id, kind, conversation_id, state, due_at, summary, created_at)
     select v.id, ?, v.lead_id, 'reply_waiting', v.conversation_id, 'open', v.due_at, v.summary, now()
       from json_to_recordset(?::json) as v(id uuid, lead_id uuid, conversation_id uuid, due_at timestamptz, summary text)
     on conflict (conversation_id) where kind = 'reply_waiting' and state = 'open' do nothing`,
    [workspaceId, JSON.stringify(rows)],
  );
}

/** An answer was sent in these conversations: their open reply reminders are done. */
export async function resolveAnsweredReminders(em: EntityManager, conversationIds: string[]): Promise<void> {
  if (!conversationIds.length) return;
  await em.execute(
    `update follow_up_reminders set state = 'completed', resolved_at = now() where conversation_id in (?) and kind = 'reply_waiting' and state = 'open'`,
    [conversationIds],
  );
}

/** Meetings that ended without an outcome get their reminder; those with one (or canceled) resolve theirs. */
export async function refreshMeetingReminders(em: EntityManager, workspaceId: string, now = new Date()): Promise<void> {
  await em.execute(
    `insert into follow_up_reminders (id, workspace_id, lead_id, kind, meeting_id, state, due_at, summary, created_at)
     select gen_random_uuid(), m.workspace_id, m.lead_id, 'meeting_outcome', m.id, 'open', m.ends_at, left(m.title, 300), now()
       from meetings m where m.workspace_id = ? and m.status = 'scheduled' and m.outcome is null and m.ends_at <= ?
     on conflict (meeting_id) where kind = 'meeting_outcome' do nothing`,
    [workspaceId, now],
  );
  await em.execute(
    `update follow_up_reminders r set state = 'completed', resolved_at = now() from meetings m
      where r.meeting_id = m.id and r.workspace_id = ? and r.kind = 'meeting_outcome' and r.state = 'open' and (m.outcome is not null or m.status = 'canceled')`,
    [workspaceId],
  );
}

export interface ReminderRow {
  id: string;
  kind: string;
  state: string;
  lead_id: string;
  conversation_id: string | null;
  meeting_id: string | null;
  summary: string;
  due_at: Date;
  created_at: Date;
  resolved_at: Date | null;
  first_name: string | null;
  last_name: string | null;
  full_name: string | null;
  email: string | null;
  company: string | null;
}

export interface FollowUpFilter {
  state: 'open' | 'completed' | 'dismissed';
  kind?: 'reply_waiting' | 'meeting_outcome';
  /** Only reminders already due (what `pending-count` counts). */
  dueOnly: boolean;
  leadId?: string;
  limit: number;
  after?: Keyset;
}

/** Reminders by due time (soonest first), with the lead's name. */
export async function listFollowUps(
  em: EntityManager,
  actor: Actor,
  f: FollowUpFilter,
  now = new Date(),
): Promise<ReminderRow[]> {
  await refreshMeetingReminders(em, actor.workspaceId, now);
  const where = ['r.workspace_id = ?', 'r.state = ?'];
  const params: unknown[] = [actor.workspaceId, f.state];
  where.push(leadScopeSql(actor, 'r.lead_id', params));
  if (f.kind) where.push('r.kind = ?') && params.push(f.kind);
  if (f.dueOnly) where.push('r.due_at <= ?') && params.push(now);
  if (f.leadId) where.push('r.lead_id = ?') && params.push(f.leadId);
  const k = keysetSql(f, ['r.due_at', 'r.id']);
  return em.execute<ReminderRow[]>(
    `select r.id, r.kind, r.state, r.lead_id, r.conversation_id, r.meeting_id, r.summary, r.due_at, r.created_at, r.resolved_at,
            c.first_name, c.last_name, c.full_name, c.email, c.company
       from follow_up_reminders r join leads l on l.id = r.lead_id join contacts c on c.id = l.contact_id
      where ${where.join(' and ')}${k.sql}`,
    [...params, ...k.params],
  );
}

/** Open reminders already due, by kind. */
export async function pendingCount(
  em: EntityManager,
  actor: Actor,
  now = new Date(),
): Promise<{ total: number; reply_waiting: number; meeting_outcome: number }> {
  await refreshMeetingReminders(em, actor.workspaceId, now);
  const params: unknown[] = [actor.workspaceId, now];
  const scope = leadScopeSql(actor, 'r.lead_id', params);
  const rows = await em.execute<{ kind: string; n: string }[]>(
    `select r.kind, count(*) as n from follow_up_reminders r join leads l on l.id = r.lead_id
      where r.workspace_id = ? and r.state = 'open' and r.due_at <= ? and ${scope} group by r.kind`,
    params,
  );
  const by = Object.fromEntries(rows.map((r) => [r.kind, Number(r.n)]));
  const reply = by.reply_waiting ?? 0;
  const meeting = by.meeting_outcome ?? 0;
  return { total: reply + meeting, reply_waiting: reply, meeting_outcome: meeting };
}

/** Marks one open reminder done by the user; 409 `already_resolved` when it is not open. */
export async function completeReminder(em: EntityManager, actor: Actor, id: string): Promise<ReminderRow> {
  const [r] = await em.execute<{ state: string; lead_id: string }[]>(
    `select state, lead_id from follow_up_reminders where id = ? and workspace_id = ?`,
    [id, actor.workspaceId],
  );
  if (!r) throw notFound('follow-up');
  const done = await em.execute(
    `update follow_up_reminders set state = 'completed', resolved_at = now(), resolved_by = ? where id = ? and state = 'open' returning id`,
    [actor.userId, id],
  );
  if (!done.length) throw conflict('already_resolved', `this follow-up is already ${r.state}`);
  return reminder(em, id);
}

export async function reminder(em: EntityManager, id: string): Promise<ReminderRow> {
  const [row] = await em.execute<ReminderRow[]>(
    `select r.id, r.kind, r.state, r.lead_id, r.conversation_id, r.meeting_id, r.summary, r.due_at, r.created_at, r.resolved_at,
            c.first_name, c.last_name, c.full_name, c.email, c.company
       from follow_up_reminders r join leads l on l.id = r.lead_id join contacts c on c.id = l.contact_id where r.id = ?`,
    [id],
  );
  if (!row) throw notFound('follow-up');
  return row;
}

/** Dismisses every open reminder of the lead (idempotent: a second call dismisses nothing). */
export async function dismissLead(
  em: EntityManager,
  actor: Actor,
  leadId: string,
): Promise<{ lead_id: string; dismissed: number }> {
  await requireLead(em, actor, leadId);
  await refreshMeetingReminders(em, actor.workspaceId);
  const r = await em.execute(
    `update follow_up_reminders set state = 'dismissed', resolved_at = now(), resolved_by = ? where lead_id = ? and workspace_id = ? and state = 'open' returning id`,
    [actor.userId, leadId, actor.workspaceId],
  );
  return { lead_id: leadId, dismissed: r.length };
}

export interface NoteRow {
  id: string;
  lead_id: string;
  author_id: string;
  author_name: string | null;
  body: string;
  created_at: Date;
}

export async function listNotes(
  em: EntityManager,
  actor: Actor,
  leadId: string,
  p: { limit: number; after?: Keyset },
): Promise<NoteRow[]> {
  await requireLead(em, actor, leadId);
  const k = keysetSql(p, ['n.created_at', 'n.id'], 'desc');
  return em.execute<NoteRow[]>(
    `select n.id, n.lead_id, n.author_id, u.name as author_name, n.body, n.created_at from lead_notes n left join users u on u.id = n.author_id
      where n.lead_id = ? and n.workspace_id = ?${k.sql}`,
    [leadId, actor.workspaceId, ...k.params],
  );
}

export async function addNote(em: EntityManager, actor: Actor, leadId: string, body: string): Promise<NoteRow> {
  await requireLead(em, actor, leadId);
  const id = uuidv7();
  // A millisecond time (not now()'s microseconds): keyset cursors carry milliseconds.
  await em.execute(
    `insert into lead_notes (id, workspace_id, lead_id, author_id, body, created_at) values (?, ?, ?, ?, ?, ?)`,
    [id, actor.workspaceId, leadId, actor.userId, body, new Date()],
  );
  const [n] = await em.execute<NoteRow[]>(
    `select n.id, n.lead_id, n.author_id, u.name as author_name, n.body, n.created_at from lead_notes n left join users u on u.id = n.author_id where n.id = ?`,
    [id],
  );
  return n;
}

export interface NextEvent {
  meeting: {
    id: string;
    lead_id: string;
    title: string;
    starts_at: Date;
    ends_at: Date;
    first_name: string | null;
    last_name: string | null;
  } | null;
  follow_up: ReminderRow | null;
}

/** The next meeting still to come (a meeting in progress counts) and the soonest open follow-up. */
export async function nextEvent(em: EntityManager, actor: Actor, now = new Date()): Promise<NextEvent> {
  await refreshMeetingReminders(em, actor.workspaceId, now);
  const params: unknown[] = [actor.workspaceId, now];
  const scope = leadScopeSql(actor, 'm.lead_id', params);
  const [meeting] = await em.execute<NonNullable<NextEvent['meeting']>[]>(
    `select m.id, m.lead_id, m.title, m.starts_at, m.ends_at, c.first_name, c.last_name from meetings m join contacts c on c.id = m.contact_id
      where m.workspace_id = ? and m.status = 'scheduled' and m.ends_at > ? and ${scope} order by m.starts_at, m.id limit 1`,
    params,
  );
  const [followUp] = await listFollowUps(em, actor, { state: 'open', dueOnly: false, limit: 1 }, now);
  return { meeting: meeting ?? null, follow_up: followUp ?? null };
}
