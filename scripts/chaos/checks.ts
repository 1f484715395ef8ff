// The chaos harness's verdict, read after the run from the database, the sandbox network's record of
// sends (sandbox_messages, one row per accepted send, keyed by the action id) and the receiver's log.
import type pg from 'pg';
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
  const requests = [...received.bodies.values()].reduce((a, b) => a + b, 0);
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
