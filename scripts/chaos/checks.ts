// The chaos harness's verdict, read after the run from the database, the sandbox network's record of
// sends (sandbox_messages, one row per accepted send, keyed by the action id), the receiver's log and
// the record of the prospects' replies the mail server accepted (scripts/chaos/mail.ts).
import type pg from 'pg';
import type { Fleet } from './fleet.js';
import {
  byWorker,
  describeHolders,
  expected,
  holderPid,
  leases,
  storedCounts,
  type Mailbox,
  type Reply,
} from './mail.js';
import type { Received } from './work.js';

export interface Check {
  name: string;
  lost: number;
  doubled: number;
  detail: string;
}

/** Sends: every executed action sent once, nothing sent that no action recorded, nothing sent twice. */
export async function checkSends(db: pg.Pool, campaignId: string, sendSteps: number): Promise<Check> {
  const q = async (sql: string) => Number((await db.query<{ n: string }>(sql, [campaignId])).rows[0].n);
  const executed = await q(`select count(*) n from scheduled_actions where campaign_id = $1 and state = 'executed'`);
  const unsent = await q(
    `select count(*) n from scheduled_actions a where a.campaign_id = $1 and a.state = 'executed'
       and not exists (select 1 from sandbox_messages m where m.direction = 'out' and m.idempotency_key = a.id::text)`,
  );
  const unrecorded = await q(
    `select count(*) n from sandbox_messages m join platform_accounts p on p.connector_account_id = m.connector_account_id
      where m.direction = 'out' and p.id in (select jsonb_array_elements_text(account_ids)::uuid from campaigns where id = $1)
        and not exists (select 1 from scheduled_actions a where a.id::text = m.idempotency_key and a.state = 'executed')`,
  );
  const sentTwice = await q(
    `select count(*) n from (select m.idempotency_key from sandbox_messages m join scheduled_actions a on a.id::text = m.idempotency_key
      where a.campaign_id = $1 and m.direction = 'out' group by 1 having count(*) > 1) x`,
  );
  const stepTwice = await q(
    `select count(*) n from (select enrollment_id, step_id from scheduled_actions where campaign_id = $1 and state = 'executed'
      group by 1, 2 having count(*) > 1) x`,
  );
  // A completed enrollment went through every step: each of its send steps executed exactly once.
  const shortCompleted = await q(
    `select count(*) n from enrollments e where e.campaign_id = $1 and e.status = 'completed'
       and (select count(*) from scheduled_actions a where a.enrollment_id = e.id and a.state = 'executed') <> ${sendSteps}`,
  );
  return {
    name: 'campaign sends',
    lost: unsent + unrecorded + shortCompleted,
    doubled: sentTwice + stepTwice,
    detail: `${executed} executed; ${unsent} recorded but not sent, ${unrecorded} sent but not recorded, ${shortCompleted} completed short`,
  };
}

/** Enrollments: every one finished (none left active, none failed), per status. */
export async function enrollmentStates(db: pg.Pool, campaignId: string): Promise<Record<string, number>> {
  const { rows } = await db.query<{ status: string; n: string }>(
    'select status, count(*) n from enrollments where campaign_id = $1 group by 1',
    [campaignId],
  );
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

/**
 * Webhooks: every event for the subscription's workspace reached the receiver (lost otherwise), and
 * no attempt (X-Service-Delivery id) arrived twice. An event received again under a new attempt id
 * is the at-least-once the spec allows after a crash between a request and its record: counted apart.
 */
export async function checkWebhooks(db: pg.Pool, workspaceId: string, received: Received): Promise<Check> {
  const { rows } = await db.query<{ body: string }>(
    `select body from webhook_events where workspace_id = $1 and name = 'action.executed'`,
    [workspaceId],
  );
  let lost = 0;
  let again = 0;
  for (const r of rows) {
    const n = received.bodies.get(r.body) ?? 0;
    if (n === 0) lost++;
    if (n > 1) again++;
  }
  const doubled = [...received.attempts.values()].filter((n) => n > 1).length;
  // Of this event's bodies only: the receiver also hears `message.received` (checkReplyEvents).
  const requests = rows.reduce((a, r) => a + (received.bodies.get(r.body) ?? 0), 0);
  return {
    name: 'webhook events',
    lost,
    doubled,
    detail: `${rows.length} events, ${requests} requests; ${again} events sent again as a new attempt after a crash`,
  };
}

/** An import: every row of the file is one lead of its list, once. */
export async function checkImport(db: pg.Pool, importId: string, listId: string, rows: number): Promise<Check> {
  const { rows: imp } = await db.query<{ status: string; created: number }>(
    'select status, created from list_imports where id = $1',
    [importId],
  );
  const { rows: leads } = await db.query<{ n: string; contacts: string }>(
    'select count(*) n, count(distinct contact_id) contacts from leads where list_id = $1',
    [listId],
  );
  const n = Number(leads[0].n);
  const distinct = Number(leads[0].contacts);
  return {
    name: `import (${rows.toLocaleString('en')} rows)`,
    lost: Math.max(0, rows - distinct),
    doubled: n - distinct + Math.max(0, distinct - rows),
    detail: `${imp[0]?.status}: ${imp[0]?.created} created, ${n} leads`,
  };
}

/** Operator turns: every turn a stream named reached a final state, once. */
export async function checkTurns(db: pg.Pool, turnIds: string[]): Promise<Check> {
  const { rows } = await db.query<{ status: string; n: string }>(
    'select status, count(*) n from agent_turns where id = any($1::uuid[]) group by 1',
    [turnIds],
  );
  const by = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  const found = rows.reduce((a, r) => a + Number(r.n), 0);
  return {
    name: 'Operator turns',
    lost: turnIds.length - (by.completed ?? 0),
    doubled: new Set(turnIds).size === turnIds.length ? 0 : turnIds.length - new Set(turnIds).size,
    detail: `${turnIds.length} started, ${found} stored: ${JSON.stringify(by)}`,
  };
}

/**
 * Replies: every one the mail server accepted (and still held when it was restarted) stored once, in
 * its own mailbox (inbox_messages by Message-ID); none stored twice or in another mailbox.
 */
export async function checkReplies(db: pg.Pool, replies: Reply[]): Promise<Check> {
  const stored = await storedCounts(db, replies);
  const want = replies.filter(expected);
  const lost = want.filter((r) => !stored.get(r.messageId)?.own).length;
  const doubled = [...stored.values()].filter((c) => c.own + c.elsewhere > 1 || c.elsewhere > 0).length;
  const refused = replies.filter((r) => r.error !== undefined);
  const refusedStored = refused.filter((r) => stored.has(r.messageId)).length;
  const gone = replies.filter((r) => r.lostWithServer).length;
  const probes = replies.filter((r) => r.probe && r.accepted).length;
  return {
    name: 'mailbox replies',
    lost,
    doubled,
    detail:
      `${want.length} accepted (${probes} probes) on ${new Set(replies.map((r) => r.accountId)).size} mailboxes, ` +
      `${want.length - lost} stored; ${refused.length} refused by the server while down` +
      (refusedStored ? ` (${refusedStored} of them stored all the same)` : '') +
      (gone ? `; ${gone} gone with the restarted server unread` : ''),
  };
}

/**
 * `message.received`: one event in the outbox (webhook_events) per expected reply (found by the
 * reply's marker in the event's body), none for a reply twice, and the receiver got each.
 */
export async function checkReplyEvents(
  db: pg.Pool,
  workspaceId: string,
  replies: Reply[],
  received: Received,
): Promise<Check> {
  const { rows } = await db.query<{ body: string }>(
    `select body from webhook_events where workspace_id = $1 and name = 'message.received'`,
    [workspaceId],
  );
  const events = new Map<string, string[]>();
  for (const r of rows) {
    const marker = /chaos-reply-\d+-\d+-end/.exec(r.body)?.[0];
    if (marker) events.set(marker, [...(events.get(marker) ?? []), r.body]);
  }
  const want = replies.filter(expected);
  const none = want.filter((r) => !events.has(r.marker)).length;
  const unreceived = [...events.values()].flat().filter((b) => !received.bodies.get(b)).length;
  const twice = [...events.values()].filter((bodies) => bodies.length > 1).length;
  const requests = [...events.values()].flat().reduce((a, b) => a + (received.bodies.get(b) ?? 0), 0);
  return {
    name: 'message.received events',
    lost: none + unreceived,
    doubled: twice,
    detail: `${rows.length} events for ${want.length} replies, ${requests} requests; ${none} replies without an event, ${unreceived} events not received`,
  };
}

/**
 * Mailbox leases at the end: every mailbox connected and held by a live lease of a live worker
 * (lost otherwise); none held by a lease of a process that is gone (doubled: a second claimant in
 * effect). Two live holders of one mailbox cannot be: the lease's primary key is the mailbox.
 */
export async function checkLeases(db: pg.Pool, mailboxes: Mailbox[], fleet: Fleet): Promise<Check> {
  const rows = await leases(db, mailboxes);
  const live = new Set(fleet.workers.filter((w) => fleet.alive(w)).map((w) => w.child.pid as number));
  const { rows: states } = await db.query<{ status: string; n: number }>(
    `select status, count(*)::int n from platform_accounts where id = any($1::uuid[]) group by 1`,
    [mailboxes.map((b) => b.id)],
  );
  const held = new Set(rows.filter((r) => r.live && live.has(holderPid(r.holder))).map((r) => r.account_id));
  const stale = rows.filter((r) => r.live && !live.has(holderPid(r.holder))).length;
  return {
    name: 'mailbox leases',
    lost: mailboxes.length - held.size,
    doubled: stale,
    detail: `${mailboxes.length} mailboxes (${states.map((s) => `${s.n} ${s.status}`).join(', ')}): ${describeHolders(byWorker(rows, fleet))}; ${stale} held by a process that is gone`,
  };
}
