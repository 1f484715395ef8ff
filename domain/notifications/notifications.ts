// Notifications (docs/notifications.md): what one person should know about in one workspace.
//
// Creation. `notify` / `notifyMany` are called by the domain code of the change they report, inside
// its transaction (a rolled-back change leaves no notification behind). They write one row per
// recipient: the workspace's members the notification concerns (everyone, the named users, or the
// members who can access its product), minus those whose preference for its topic is `none`; a
// recipient whose preference is `email` gets the row too, marked for the `notification-emails`
// schedule to mail. Two statements whatever the number of recipients or items: read the recipients
// with their preference, insert the rows. A `key` makes a repeat of the same fact a no-op per person.
//
// Read state is per person (each has their own row): reading, or reading all, never marks anything
// read for another member. Unread count and read-all use the partial index on unread rows only.
import type { EntityManager } from '@mikro-orm/postgresql';
import { uuidv7, uuidv7Floor } from '../../lib/ids.js';
import { keysetSql, type PageRequest } from '../../lib/pagination.js';
import { notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import { mayOpen, productsOf, type SharedKind } from '../access.js';

/**
 * What a person can choose how to hear about (PUT /api/operator/notification-preferences), with the
 * preference column that holds the choice.
 */
export const NOTIFICATION_TOPICS = {
  account_disconnected: 'account_disconnected',
  reply_received: 'reply_received',
  import_finished: 'import_finished',
  confirmation_pending: 'confirmation_pending',
  review_overdue: 'review_overdue',
  task_finished: 'task_finished',
} as const;
export type NotificationTopic = keyof typeof NOTIFICATION_TOPICS;

/**
 * Every notification kind: the topic whose preference governs it, and what it names (`names`: a
 * resource kind of domain/access.ts, its id at `data[field]`). Its audience is the members who may
 * open that resource, by the one access rule (`mayOpen`): for a product's resource, members given one
 * of its products (a reply about a P1 lead reaches no member given only P2); for a workspace-level one
 * (a sender account), every member. A notification addressed to people (`userIds`) reaches only
 * those of them in that audience. docs/notifications.md has the same table.
 */
export const NOTIFICATION_KINDS = {
  'account.disconnected': { topic: 'account_disconnected', names: 'account', field: 'platform_account_id' },
  // A lead's sequence failed for good: a sending problem, heard about like a disconnected sender.
  'enrollment.failed': { topic: 'account_disconnected', names: 'enrollment', field: 'enrollment_id' },
  'reply.received': { topic: 'reply_received', names: 'conversation', field: 'conversation_id' },
  // A person asked for no more email (domain/suppressions/unsubscribe.ts): heard about like a reply, their answer.
  'contact.unsubscribed': { topic: 'reply_received', names: 'contact', field: 'contact_id' },
  'list_import.completed': { topic: 'import_finished', names: 'list_import', field: 'list_import_id' },
  'list_import.failed': { topic: 'import_finished', names: 'list_import', field: 'list_import_id' },
  'company_import.ready_for_review': { topic: 'import_finished', names: 'cdm_import', field: 'company_import_id' },
  'company_import.completed': { topic: 'import_finished', names: 'cdm_import', field: 'company_import_id' },
  'operator.confirmation_pending': { topic: 'confirmation_pending', names: 'app', field: 'app_id' },
  draft_review_overdue: { topic: 'review_overdue', names: 'campaign', field: 'campaign_id' },
  'operator_task.completed': { topic: 'task_finished', names: 'app', field: 'app_id' },
  'operator_task.failed': { topic: 'task_finished', names: 'app', field: 'app_id' },
  // An A/B test's rule chose its winner (domain/campaigns/variants.ts): a piece of work that finished.
  'campaign.variant_winner': { topic: 'task_finished', names: 'campaign', field: 'campaign_id' },
} as const satisfies Record<string, { topic: NotificationTopic; names: SharedKind; field: string }>;
export type NotificationKind = keyof typeof NOTIFICATION_KINDS;

export interface NotificationContent {
  kind: NotificationKind;
  title: string;
  body: string;
  /** Holds the id of what the kind names (`NOTIFICATION_KINDS[kind].field`). */
  data: Record<string, unknown>;
  /** Per recipient: a second notification with the same key is not written (e.g. `confirmation:<id>`). */
  key?: string;
}

export interface Audience {
  /** Only these users (still members of the workspace who may open what it names); default: every such member. */
  userIds?: string[];
}

interface Member {
  user_id: string;
  all_apps: boolean;
  app_ids: string[];
  channel: 'in_app' | 'email';
}

function declarationOf(kind: string) {
  const decl = (NOTIFICATION_KINDS as Record<string, (typeof NOTIFICATION_KINDS)[NotificationKind]>)[kind];
  if (!decl)
    throw new Error(
      `notification kind "${kind}" is not declared (domain/notifications/notifications.ts NOTIFICATION_KINDS)`,
    );
  return decl;
}

/** The workspace's members with their products and their channel for the topic (those who chose `none` are left out). */
async function members(
  em: EntityManager,
  workspaceId: string,
  topic: NotificationTopic,
  audience: Audience,
): Promise<Member[]> {
  const column = NOTIFICATION_TOPICS[topic];
  const users = audience.userIds ? JSON.stringify(audience.userIds) : null;
  return em.execute<Member[]>(
    `select tm.user_id, tm.all_apps, coalesce(array(select jsonb_array_elements_text(tm.app_ids)), '{}') as app_ids, coalesce(p.${column}, 'in_app') as channel
       from team_members tm
       left join operator_notification_preferences p on p.user_id = tm.user_id
      where tm.workspace_id = ?
        and (?::jsonb is null or tm.user_id in (select value::uuid from jsonb_array_elements_text(?::jsonb)))
        and coalesce(p.${column}, 'in_app') <> 'none'`,
    [workspaceId, users, users],
  );
}

/**
 * Notifications of one topic for one workspace, each to the members of its audience (those who may
 * open what it names): one query for the members, one per named kind for the products, one insert.
 * Returns the number of rows written.
 */
export async function notifyMany(
  em: EntityManager,
  workspaceId: string,
  items: NotificationContent[],
  audience: Audience = {},
): Promise<number> {
  if (!items.length) return 0;
  const topic = declarationOf(items[0].kind).topic;
  if (items.some((i) => declarationOf(i.kind).topic !== topic))
    throw new Error('notifyMany: every item must have the same topic');
  const to = await members(em, workspaceId, topic, audience);
  if (!to.length) return 0;
  // What each item names, and that thing's products.
  const subject = (n: NotificationContent) => {
    const { names, field } = declarationOf(n.kind);
    const id = n.data[field];
    return { names, id: typeof id === 'string' ? id.toLowerCase() : '' };
  };
  const products = new Map<string, Map<string, readonly string[] | null>>();
  for (const names of new Set(items.map((n) => subject(n).names)))
    products.set(
      names,
      await productsOf(
        em,
        workspaceId,
        names,
        items.flatMap((n) => (subject(n).names === names ? [subject(n).id] : [])),
      ),
    );
  const rows = items.flatMap((n) => {
    const s = subject(n);
    // Not naming a resource it declares (a bug) or naming one not found: members with every product only.
    const found = products.get(s.names);
    const apps = found?.has(s.id) ? found.get(s.id)! : [];
    return to
      .filter((m) => apps === null || mayOpen({ allApps: m.all_apps, appIds: m.app_ids }, apps))
      .map((r) => ({
        id: uuidv7(),
        user_id: r.user_id,
        kind: n.kind,
        title: n.title.slice(0, 200),
        body: n.body,
        data: n.data,
        dedupe_key: n.key?.slice(0, 200) ?? null,
        email_state: r.channel === 'email' ? 'pending' : null,
      }));
  });
  if (!rows.length) return 0;
  const inserted = await em.execute<{ id: string }[]>(
    `insert into notifications (id, workspace_id, user_id, kind, title, body, data, dedupe_key, email_state, created_at)
     select v.id, ?, v.user_id, v.kind, v.title, v.body, coalesce(v.data, '{}'::jsonb), v.dedupe_key, v.email_state, now()
       from json_to_recordset(?::json) as v(id uuid, user_id uuid, kind text, title text, body text, data jsonb, dedupe_key text, email_state text)
     on conflict (user_id, dedupe_key) do nothing
     returning id`,
    [workspaceId, JSON.stringify(rows)],
  );
  return inserted.length;
}

/** One notification (see `notifyMany`). */
export function notify(em: EntityManager, workspaceId: string, n: NotificationContent & Audience): Promise<number> {
  const { userIds, ...content } = n;
  return notifyMany(em, workspaceId, [content], { userIds });
}

// ---- Domain events --------------------------------------------------------------------------

const preview = (s: string, max = 280) => {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
};

/**
 * Replies of a batch of inbound messages (domain/inbox/ingest.ts): one notification per
 * conversation (its newest reply of the batch) to the members who may open the conversation, named
 * after the lead. Three
 * statements for the whole batch (names, recipients, insert); keyed by the message, so a batch
 * processed again notifies nobody twice.
 */
export async function notifyReplies(
  em: EntityManager,
  workspaceId: string,
  replies: {
    id: string;
    conversation_id: string;
    lead_id: string | null;
    sender: string;
    body: string;
    sent_at: string;
  }[],
): Promise<number> {
  const newest = new Map<string, (typeof replies)[number]>();
  for (const r of replies) {
    const cur = newest.get(r.conversation_id);
    if (!cur || r.sent_at >= cur.sent_at) newest.set(r.conversation_id, r);
  }
  if (!newest.size) return 0;
  const leadIds = [...new Set([...newest.values()].flatMap((r) => (r.lead_id ? [r.lead_id] : [])))];
  const names = leadIds.length
    ? await em.execute<{ id: string; name: string | null }[]>(
        `select l.id, coalesce(nullif(c.full_name, ''), nullif(concat_ws(' ', c.first_name, c.last_name), '')) as name
           from leads l join contacts c on c.id = l.contact_id
          where l.id in (select value::uuid from jsonb_array_elements_text(?::jsonb))`,
        [JSON.stringify(leadIds)],
      )
    : [];
  const nameOf = new Map(names.map((n) => [n.id, n.name]));
  const count = new Map<string, number>();
  for (const r of replies) count.set(r.conversation_id, (count.get(r.conversation_id) ?? 0) + 1);
  const items = [...newest.values()].map((r) => {
    const who = (r.lead_id && nameOf.get(r.lead_id)) || r.sender;
    return {
      kind: 'reply.received' as const,
      title: `${who} replied`,
      body: preview(r.body),
      data: {
        conversation_id: r.conversation_id,
        lead_id: r.lead_id,
        message_id: r.id,
        replies: count.get(r.conversation_id) ?? 1,
      },
      key: `reply:${r.id}`,
    };
  });
  return notifyMany(em, workspaceId, items);
}

/**
 * A list import reached `completed` or `failed` (domain/lists/imports.ts `endRun`, in its
 * transaction): the person who started it, if they can still access its product.
 */
export async function notifyListImportFinished(em: EntityManager, importId: string): Promise<number> {
  const [imp] = await em.execute<
    {
      workspace_id: string;
      app_id: string;
      user_id: string;
      status: string;
      filename: string;
      list_id: string | null;
      list_name: string | null;
      created: number;
      updated: number;
      invalid: number;
      leads_added: number;
      error_message: string | null;
    }[]
  >(
    `select i.workspace_id, i.app_id, i.user_id, i.status, i.filename, i.list_id, coalesce(l.name, i.list_name) as list_name,
            i.created, i.updated, i.invalid, i.leads_added, i.error_message
       from list_imports i left join lead_lists l on l.id = i.list_id where i.id = ?`,
    [importId],
  );
  if (!imp || (imp.status !== 'completed' && imp.status !== 'failed')) return 0;
  const into = imp.list_name ? ` into "${imp.list_name}"` : '';
  const done = imp.status === 'completed';
  return notify(em, imp.workspace_id, {
    kind: done ? 'list_import.completed' : 'list_import.failed',
    title: done ? `Import of ${imp.filename} finished` : `Import of ${imp.filename} failed`,
    body: done
      ? `${imp.leads_added} leads added${into} (${imp.created} new contacts, ${imp.updated} updated, ${imp.invalid} invalid rows).`
      : `The import${into} stopped: ${imp.error_message ?? 'unknown error'}. Rows of the chunks committed before stay imported.`,
    data: {
      list_import_id: importId,
      list_id: imp.list_id,
      app_id: imp.app_id,
      status: imp.status,
      leads_added: imp.leads_added,
    },
    key: `list_import:${importId}:${imp.status}`,
    userIds: [imp.user_id],
  });
}

/**
 * A company decision-maker import finished searching (ready for review) or finished adding the
 * approved people (completed) (domain/cdm-imports/search-run.ts and confirm-run.ts, in the transaction of the transition): the
 * person who started it.
 */
export async function notifyCompanyImport(
  em: EntityManager,
  jobId: string,
  state: 'ready_for_review' | 'completed',
): Promise<number> {
  const [job] = await em.execute<
    {
      workspace_id: string;
      app_id: string;
      created_by_id: string | null;
      list_id: string | null;
      company_count: number;
      run: number;
      found: number;
      added: number;
    }[]
  >(
    `select j.workspace_id, j.app_id, j.created_by_id, j.list_id, j.company_count, j.run,
            (select count(*)::int from cdm_import_members m where m.job_id = j.id) as found,
            (select count(*)::int from cdm_import_members m where m.job_id = j.id and m.status = 'added') as added
       from cdm_imports j where j.id = ?`,
    [jobId],
  );
  if (!job?.created_by_id) return 0;
  const ready = state === 'ready_for_review';
  return notify(em, job.workspace_id, {
    kind: ready ? 'company_import.ready_for_review' : 'company_import.completed',
    title: ready ? 'Company import ready for review' : 'Company import finished',
    body: ready
      ? `The search of ${job.company_count} companies is done: ${job.found} people found. Review them, then confirm to add the approved ones to the list.`
      : `${job.added} approved people are in the list.`,
    data: { company_import_id: jobId, list_id: job.list_id, app_id: job.app_id, state },
    key: `company_import:${jobId}:${state}:${job.run}`,
    userIds: [job.created_by_id],
  });
}

/** A risky Operator tool call waits for its user's confirmation (domain/operator/turns.ts): that user. */
export async function notifyConfirmationPending(em: EntityManager, confirmationId: string): Promise<number> {
  const [c] = await em.execute<
    {
      workspace_id: string;
      app_id: string;
      user_id: string;
      thread_id: string;
      tool_name: string;
      expires_at: Date;
      title: string | null;
    }[]
  >(
    `select t.workspace_id, t.app_id, c.user_id, c.thread_id, c.tool_name, c.expires_at, t.title
       from agent_confirmations c join agent_threads t on t.id = c.thread_id
      where c.id = ? and c.status = 'pending'`,
    [confirmationId],
  );
  if (!c) return 0;
  return notify(em, c.workspace_id, {
    kind: 'operator.confirmation_pending',
    title: `The Operator waits for your confirmation: ${c.tool_name}`,
    body: `In ${c.title ? `"${c.title}"` : 'a thread'}, the Operator wants to run ${c.tool_name} and needs your yes before ${new Date(c.expires_at).toISOString()}.`,
    data: {
      confirmation_id: confirmationId,
      thread_id: c.thread_id,
      app_id: c.app_id,
      tool_name: c.tool_name,
      expires_at: new Date(c.expires_at).toISOString(),
    },
    key: `confirmation:${confirmationId}`,
    userIds: [c.user_id],
  });
}

/** An Operator task completed or failed (domain/operator/tasks.ts `finishTaskRun`): its user. */
export async function notifyTaskFinished(em: EntityManager, taskId: string): Promise<number> {
  const [task] = await em.execute<
    { workspace_id: string; app_id: string; user_id: string; title: string; status: string; run: number }[]
  >(`select workspace_id, app_id, user_id, title, status, run from operator_tasks where id = ?`, [taskId]);
  if (!task || (task.status !== 'completed' && task.status !== 'failed')) return 0;
  const done = task.status === 'completed';
  return notify(em, task.workspace_id, {
    kind: done ? 'operator_task.completed' : 'operator_task.failed',
    title: done ? `Task finished: ${task.title}` : `Task failed: ${task.title}`,
    body: done
      ? `The Operator finished "${task.title}".`
      : `"${task.title}" stopped with a failed action; you can retry it.`,
    data: { task_id: taskId, app_id: task.app_id, status: task.status, run: task.run },
    key: `operator_task:${taskId}:${task.run}`,
    userIds: [task.user_id],
  });
}

// ---- The person's list ----------------------------------------------------------------------

export interface NotificationRow {
  id: string;
  kind: string;
  title: string;
  body: string;
  data: Record<string, unknown>;
  created_at: Date;
  read_at: Date | null;
}

const COLUMNS = 'id, kind, title, body, data, created_at, read_at';

/** The caller's notifications in the workspace they act in, newest first; `unread` only those not read. */
export function listNotifications(
  em: EntityManager,
  actor: Actor,
  page: PageRequest & { unread?: boolean },
): Promise<NotificationRow[]> {
  const params: unknown[] = [actor.userId, actor.workspaceId];
  let sql = `select ${COLUMNS} from notifications where user_id = ? and workspace_id = ?`;
  if (page.unread) sql += ' and read_at is null';
  const k = keysetSql(page, 'id', 'desc');
  return em.execute<NotificationRow[]>(sql + k.sql, [...params, ...k.params]);
}

/** How many of the caller's notifications in this workspace are unread (an index-only count of unread rows). */
export async function unreadCount(em: EntityManager, actor: Actor): Promise<number> {
  const [r] = await em.execute<{ n: number }[]>(
    `select count(*)::int as n from notifications where user_id = ? and workspace_id = ? and read_at is null`,
    [actor.userId, actor.workspaceId],
  );
  return r.n;
}

/**
 * Marks one of the caller's notifications read (idempotent: the first read's time stays). 404 for
 * an unknown id, another member's or another workspace's.
 */
export async function markRead(em: EntityManager, actor: Actor, id: string): Promise<NotificationRow> {
  const [row] = await em.execute<NotificationRow[]>(
    `update notifications set read_at = now() where id = ? and user_id = ? and workspace_id = ? and read_at is null returning ${COLUMNS}`,
    [id, actor.userId, actor.workspaceId],
  );
  if (row) return row;
  const [already] = await em.execute<NotificationRow[]>(
    `select ${COLUMNS} from notifications where id = ? and user_id = ? and workspace_id = ?`,
    [id, actor.userId, actor.workspaceId],
  );
  if (!already) throw notFound('notification');
  return already;
}

/**
 * Marks the caller's unread notifications in this workspace read — all of them, or those up to
 * `upToId` (the newest one the person has seen: later arrivals stay unread). Returns how many it
 * marked (0 on a repeat).
 */
export async function markAllRead(em: EntityManager, actor: Actor, upToId?: string): Promise<number> {
  const params: unknown[] = [actor.userId, actor.workspaceId];
  let sql = `update notifications set read_at = now() where user_id = ? and workspace_id = ? and read_at is null`;
  if (upToId) {
    sql += ' and id <= ?';
    params.push(upToId);
  }
  const res = await em.getConnection().execute<{ affectedRows: number }>(sql, params, 'run');
  return res.affectedRows;
}

/** Marks the given notifications of the caller read (the Operator's tool); unknown ids are ignored. */
export async function markSomeRead(em: EntityManager, actor: Actor, ids: string[]): Promise<number> {
  if (!ids.length) return 0;
  const res = await em.getConnection().execute<{ affectedRows: number }>(
    `update notifications set read_at = now()
      where user_id = ? and workspace_id = ? and read_at is null and id in (select value::uuid from jsonb_array_elements_text(?::jsonb))`,
    [actor.userId, actor.workspaceId, JSON.stringify(ids)],
    'run',
  );
  return res.affectedRows;
}

// ---- Email delivery -------------------------------------------------------------------------

/** Tries before a notification email is given up (`failed`). */
export const EMAIL_MAX_ATTEMPTS = 5;

export interface NotificationMailer {
  send(msg: { to: string; subject: string; text: string }): Promise<void>;
}

/**
 * Mails up to `limit` pending notification emails (recipients whose channel is `email`), oldest
 * first, claimed with SKIP LOCKED so that two runs never take the same rows. Each row is marked in
 * the transaction that claimed it, after its send: a crash before the commit sends those again
 * (at least once). A send that fails is tried again by the next run, `EMAIL_MAX_ATTEMPTS` times.
 */
export async function sendNotificationEmails(
  em: EntityManager,
  mailer: NotificationMailer,
  opts: { limit: number; baseUrl: string },
): Promise<{ sent: number; failed: number }> {
  return em.fork().transactional(async (tx) => {
    const rows = await tx.execute<{ id: string; email: string; title: string; body: string; attempts: number }[]>(
      `select n.id, u.email, n.title, n.body, n.email_attempts as attempts
         from notifications n join users u on u.id = n.user_id
        where n.email_state = 'pending' order by n.id limit ? for update of n skip locked`,
      [opts.limit],
    );
    let sent = 0;
    let failed = 0;
    const outcomes: { id: string; state: string; attempts: number }[] = [];
    for (const r of rows) {
      try {
        await mailer.send({
          to: r.email,
          subject: r.title,
          text: `${r.body}\n\nSee your notifications: ${opts.baseUrl.replace(/\/+$/, '')}/notifications\nChoose how you hear about this: PUT /api/operator/notification-preferences`,
        });
        outcomes.push({ id: r.id, state: 'sent', attempts: r.attempts + 1 });
        sent++;
      } catch {
        const attempts = r.attempts + 1;
        outcomes.push({ id: r.id, state: attempts >= EMAIL_MAX_ATTEMPTS ? 'failed' : 'pending', attempts });
        failed++;
      }
    }
    if (outcomes.length) {
      await tx.execute(
        `update notifications n set email_state = v.state, email_attempts = v.attempts, emailed_at = case when v.state = 'sent' then now() else n.emailed_at end
           from json_to_recordset(?::json) as v(id uuid, state text, attempts int) where n.id = v.id`,
        [JSON.stringify(outcomes)],
      );
    }
    return { sent, failed };
  });
}

// ---- Retention ------------------------------------------------------------------------------

/** A read notification is deleted this many days after it was written (docs/notifications.md, "Retention"). */
export const READ_RETENTION_DAYS = 90;
/** Any notification, read or not, is deleted this many days after it was written. */
export const MAX_RETENTION_DAYS = 365;

/** `read`: read and past READ_RETENTION_DAYS; `expired`: past MAX_RETENTION_DAYS, read or not. */
export type RetentionRule = 'read' | 'expired';

const FIRST_ID = '00000000-0000-0000-0000-000000000000';

/**
 * Deletes up to `limit` notifications past retention under `rule`, in id order after `after`. Ids are
 * UUIDv7, so "written before" is an id range: `expired` walks the primary key, `read` the partial
 * index of read rows (notifications_read_index), so neither touches rows it keeps. Returns the count
 * and the last id deleted, where the next batch starts: a batch never re-walks the index entries of
 * rows an earlier one deleted (they stay until vacuum). Unread counts are counts of the remaining
 * rows, so they need no adjustment.
 */
export async function purgeNotificationBatch(
  em: EntityManager,
  rule: RetentionRule,
  opts: { now: Date; after: string | null; limit: number },
): Promise<{ deleted: number; last: string | null }> {
  const days = rule === 'read' ? READ_RETENTION_DAYS : MAX_RETENTION_DAYS;
  const boundary = uuidv7Floor(opts.now.getTime() - days * 86_400_000);
  const [r] = await em.execute<{ deleted: number; last: string | null }[]>(
    `with gone as (
       delete from notifications where id in (
         select id from notifications where id > ? and id < ? ${rule === 'read' ? 'and read_at is not null' : ''} order by id limit ?)
       returning id)
     select count(*)::int as deleted, max(id::text) as last from gone`,
    [opts.after ?? FIRST_ID, boundary, opts.limit],
  );
  return r;
}
