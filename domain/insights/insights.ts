// Insights (docs/insights.md): recommendations found by the `insights-refresh` workflow in the
// analytics rollups and the current state, one row per (workspace, kind + subject). `apply` performs
// the recommended action through the same domain function as the equivalent API call, once: the row
// is claimed (open|snoozed → applied) in one statement before the action runs, so a second apply —
// concurrent or later — is 409 `already_applied` and performs nothing. A failed action gives the
// claim back. Dismissed insights stay dismissed across refreshes; snoozed ones come back after their time.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { InsightKind, InsightStatus } from '../../db/entities/Insight.js';
import type { Caps } from '../../db/entities/PlatformAccount.js';
import { uuidv7 } from '../../lib/ids.js';
import { keysetSql } from '../../lib/pagination.js';
import type { AccountConnector } from '../../lib/connectors/types.js';
import { updateAgent } from '../agents/agents.js';
import type { Jobs } from '../jobs.js';
import { setStatus } from '../campaigns/campaigns.js';
import { assertWritable } from '../demo/demo.js';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import { canAccessApp, type Actor } from '../identity.js';
import { connectAccount, setLimits } from '../accounts/accounts.js';
import { nearCapFindings, NEAR_CAP_DAYS, raisesOnly, type NearCapAccountRow } from './near-cap.js';

/** A step's reply rate is low below this share of its sends, once it has at least LOW_REPLY_MIN_SENT sends in LOW_REPLY_DAYS. */
export const LOW_REPLY_RATE = 0.02;
export const LOW_REPLY_MIN_SENT = 30;
export const LOW_REPLY_DAYS = 14;
/** An agent's rejections dominate at this share of its reviews, with at least AGENT_MIN_REVIEWED reviews in AGENT_DAYS. */
export const AGENT_REJECTION_SHARE = 0.8;
export const AGENT_MIN_REVIEWED = 10;
export const AGENT_DAYS = 30;

export interface InsightRow {
  id: string;
  workspace_id: string;
  app_id: string | null;
  kind: InsightKind;
  subject_id: string;
  title: string;
  detail: Record<string, unknown>;
  action: { type: string } & Record<string, unknown>;
  status: InsightStatus;
  snoozed_until: Date | null;
  applied_at: Date | null;
  applied_by: string | null;
  result: Record<string, unknown> | null;
  refreshed_at: Date;
  created_at: Date;
  updated_at: Date;
}

/** What a snoozed insight is once its time has passed (between refreshes too). */
export const effectiveStatus = (r: Pick<InsightRow, 'status' | 'snoozed_until'>, now = new Date()): InsightStatus =>
  r.status === 'snoozed' && r.snoozed_until && new Date(r.snoozed_until) <= now ? 'open' : r.status;

// ---- the refresh ----

/** Every condition holding now, as candidate insights (one SQL per kind, all set-based). */
const FOUND = (ws: string) => `
  select s.workspace_id, s.app_id, 'low_reply_rate_step' as kind, s.step_id as subject_id,
         format('Step %s of "%s" gets few replies: %s of %s sends', coalesce(st.position + 1, 0), c.name, s.replied, s.sent) as title,
         jsonb_build_object('campaign_id', c.id, 'step_id', s.step_id, 'sent', s.sent, 'replied', s.replied, 'reply_rate', round(s.replied::numeric / s.sent, 4), 'days', ${LOW_REPLY_DAYS}) as detail,
         jsonb_build_object('type', 'pause_campaign', 'campaign_id', c.id) as action
    from (select workspace_id, app_id, campaign_id, step_id, sum(sent)::int as sent, sum(replied)::int as replied from analytics_days
           where day >= date_trunc('day', now(), 'UTC') - interval '${LOW_REPLY_DAYS} days' and step_id <> '00000000-0000-0000-0000-000000000000' ${ws}
           group by 1, 2, 3, 4 having sum(sent) >= ${LOW_REPLY_MIN_SENT} and sum(replied) < ${LOW_REPLY_RATE} * sum(sent)) s
    join campaigns c on c.id = s.campaign_id and c.status = 'active' left join campaign_steps st on st.id = s.step_id
  union all
  select a.workspace_id, null, 'account_disconnected', a.id, format('Sender account "%s" is disconnected', a.display_name),
         jsonb_build_object('account_id', a.id, 'channel', a.channel, 'reason', a.status_reason, 'disconnected_at', a.disconnected_at),
         jsonb_build_object('type', 'reconnect_account', 'account_id', a.id)
    from platform_accounts a where a.status = 'disconnected' ${ws.replace(/workspace_id/g, 'a.workspace_id')}
  union all
  select g.workspace_id, g.app_id, 'agent_rejections', g.agent_id, format('Most leads of agent "%s" are rejected: %s of %s reviewed', ag.name, g.rejected, g.rejected + g.approved),
         jsonb_build_object('agent_id', g.agent_id, 'approved', g.approved, 'rejected', g.rejected, 'days', ${AGENT_DAYS}),
         jsonb_build_object('type', 'pause_agent', 'agent_id', g.agent_id)
    from (select workspace_id, app_id, agent_id, sum(approved)::int as approved, sum(rejected)::int as rejected from analytics_days
           where day >= date_trunc('day', now(), 'UTC') - interval '${AGENT_DAYS} days' and agent_id <> '00000000-0000-0000-0000-000000000000' ${ws}
           group by 1, 2, 3 having sum(approved + rejected) >= ${AGENT_MIN_REVIEWED} and sum(rejected) >= ${AGENT_REJECTION_SHARE} * sum(approved + rejected)) g
    join discovery_agents ag on ag.id = g.agent_id and ag.status = 'active'
  union all
  select c.workspace_id, c.app_id, 'review_overdue', c.id, format('%s message drafts of "%s" are past their review deadline', d.n, c.name),
         jsonb_build_object('campaign_id', c.id, 'overdue', d.n, 'oldest_deadline_at', d.oldest),
         jsonb_build_object('type', 'open_review_queue', 'campaign_id', c.id)
    from (select campaign_id, count(*)::int as n, min(deadline_at) as oldest from message_drafts
           where status = 'awaiting_review' and deadline_at < now() ${ws} group by 1) d
    join campaigns c on c.id = d.campaign_id`;

/**
 * Writes the insights found now (one per kind + subject), reopens snoozed ones whose time passed and
 * resolved ones whose condition returned, and resolves open or snoozed ones no longer found.
 * Dismissed and applied ones keep their status (their figures are still brought up to date).
 */
export async function refreshInsights(
  em: EntityManager,
  opts: { workspaceId?: string } = {},
): Promise<{ found: number; resolved: number }> {
  const ws = opts.workspaceId ? `and workspace_id = ?` : '';
  const wsArgs = opts.workspaceId ? [opts.workspaceId] : [];
  const found = await em.execute<
    {
      workspace_id: string;
      app_id: string | null;
      kind: string;
      subject_id: string;
      title: string;
      detail: unknown;
      action: unknown;
    }[]
  >(FOUND(ws), opts.workspaceId ? [opts.workspaceId, opts.workspaceId, opts.workspaceId, opts.workspaceId] : []);
  found.push(...(await nearCapFound(em, opts.workspaceId)));
  const startedAt = new Date();
  await em.transactional(async (tx) => {
    if (found.length) {
      const rows = found.map((f) => ({ ...f, id: uuidv7(), dedupe_key: `${f.kind}:${f.subject_id}` }));
      await tx.execute(
        `insert into insights (id, workspace_id, app_id, kind, subject_id, dedupe_key, title, detail, action, status, refreshed_at, created_at, updated_at)
         select v.id, v.workspace_id, v.app_id, v.kind, v.subject_id, v.dedupe_key, left(v.title, 300), v.detail, v.action, 'open', ?, now(), now()
           from json_to_recordset(?::json) as v(id uuid, workspace_id uuid, app_id uuid, kind text, subject_id uuid, dedupe_key text, title text, detail jsonb, action jsonb)
         on conflict (workspace_id, dedupe_key) do update set
           title = excluded.title, detail = excluded.detail, action = excluded.action, app_id = excluded.app_id, refreshed_at = excluded.refreshed_at, updated_at = now(),
           status = case when insights.status = 'resolved' then 'open'
                         when insights.status = 'snoozed' and insights.snoozed_until <= now() then 'open' else insights.status end,
           snoozed_until = case when insights.status = 'snoozed' and insights.snoozed_until <= now() then null else insights.snoozed_until end`,
        [startedAt, JSON.stringify(rows)],
      );
    }
  });
  const res = await em.execute<{ affectedRows: number }>(
    `update insights set status = 'resolved', snoozed_until = null, updated_at = now() where status in ('open', 'snoozed') and refreshed_at < ? ${ws}`,
    [startedAt, ...wsArgs],
    'run',
  );
  return { found: found.length, resolved: res.affectedRows };
}

/**
 * `account_near_cap`: the caps depend on the plan, the account's own setting and its time zone, so
 * the rule is TypeScript (domain/insights/near-cap.ts) over one read of every connected account's
 * counters of its last NEAR_CAP_DAYS local days.
 */
async function nearCapFound(em: EntityManager, workspaceId?: string) {
  const rows = await em.execute<NearCapAccountRow[]>(
    `select a.id, a.workspace_id, a.display_name, a.channel, a.caps, a.time_zone, a.warmup_started_at, a.warmup_skipped_at,
            s.plan, s.status as plan_status, s.current_period_end, u.usage
       from platform_accounts a
       left join subscriptions s on s.workspace_id = a.workspace_id
       join lateral (select json_agg(json_build_object('action', action, 'day', day::text, 'count', count)) as usage from account_usage
                      where account_id = a.id and day > (now() at time zone a.time_zone)::date - ${NEAR_CAP_DAYS}) u on u.usage is not null
      where a.status = 'connected' ${workspaceId ? 'and a.workspace_id = ?' : ''}`,
    workspaceId ? [workspaceId] : [],
  );
  return nearCapFindings(rows, new Date());
}

// ---- reads ----

/** Insights of products the actor may not see are invisible (as if absent). */
function visibility(actor: Actor): { sql: string; args: unknown[] } {
  if (actor.allApps) return { sql: '', args: [] };
  return { sql: `and (app_id is null or app_id = any(?::uuid[]))`, args: [`{${actor.appIds.join(',')}}`] };
}

const STATUS_SQL: Record<InsightStatus, string> = {
  open: `(status = 'open' or (status = 'snoozed' and snoozed_until <= now()))`,
  snoozed: `(status = 'snoozed' and snoozed_until > now())`,
  dismissed: `status = 'dismissed'`,
  applied: `status = 'applied'`,
  resolved: `status = 'resolved'`,
};

/** Newest first; id cursor (UUIDv7 ids sort by creation). */
export async function listInsights(
  em: EntityManager,
  actor: Actor,
  f: { status: InsightStatus; kind?: InsightKind; appId?: string; limit: number; before?: string },
): Promise<InsightRow[]> {
  const v = visibility(actor);
  const parts = [`workspace_id = ?`, STATUS_SQL[f.status]];
  const args: unknown[] = [actor.workspaceId];
  if (f.kind) (parts.push('kind = ?'), args.push(f.kind));
  if (f.appId) (parts.push('app_id = ?'), args.push(f.appId));
  const k = keysetSql({ limit: f.limit, after: f.before }, 'id', 'desc');
  return em.execute<InsightRow[]>(`select * from insights where ${parts.join(' and ')} ${v.sql}${k.sql}`, [
    ...args,
    ...v.args,
    ...k.params,
  ]);
}

/** Open insights (snoozed ones whose time passed included), in total and by kind: one indexed count. */
export async function countInsights(
  em: EntityManager,
  actor: Actor,
): Promise<{ open: number; by_kind: Record<string, number> }> {
  const v = visibility(actor);
  const rows = await em.execute<{ kind: string; n: number }[]>(
    `select kind, count(*)::int as n from insights where workspace_id = ? and status in ('open', 'snoozed') and ${STATUS_SQL.open} ${v.sql} group by kind`,
    [actor.workspaceId, ...v.args],
  );
  return { open: rows.reduce((n, r) => n + r.n, 0), by_kind: Object.fromEntries(rows.map((r) => [r.kind, r.n])) };
}

async function requireInsight(em: EntityManager, actor: Actor, id: string): Promise<InsightRow> {
  const [row] = await em.execute<InsightRow[]>(`select * from insights where id = ? and workspace_id = ?`, [
    id,
    actor.workspaceId,
  ]);
  if (!row || (row.app_id && !canAccessApp(actor, row.app_id))) throw notFound('insight');
  return row;
}

// ---- status ----

export type StatusChange = { status: 'dismissed' } | { status: 'snoozed'; until: Date } | { status: 'open' };

/**
 * dismissed (never brought back by a refresh), snoozed until a time (back when it passes), or open
 * again. Applied and resolved insights do not change (409 `invalid_transition`).
 */
export async function setInsightStatus(
  em: EntityManager,
  actor: Actor,
  id: string,
  change: StatusChange,
  now = new Date(),
): Promise<InsightRow> {
  assertWritable(actor);
  const row = await requireInsight(em, actor, id);
  if (row.status === 'applied' || row.status === 'resolved') {
    throw new AppError(409, 'invalid_transition', `an ${row.status} insight cannot become ${change.status}`, {
      from: row.status,
      to: change.status,
    });
  }
  if (change.status === 'snoozed' && change.until <= now)
    throw badRequest('invalid_until', 'until must be in the future');
  const [updated] = await em.execute<InsightRow[]>(
    `update insights set status = ?, snoozed_until = ?, updated_at = now() where id = ? and workspace_id = ? and status not in ('applied', 'resolved') returning *`,
    [change.status, change.status === 'snoozed' ? change.until : null, id, actor.workspaceId],
  );
  if (!updated)
    throw new AppError(409, 'invalid_transition', 'the insight changed meanwhile', {
      from: 'applied',
      to: change.status,
    });
  return updated;
}

// ---- apply ----

export interface ApplyDeps {
  /** Jobs port: pausing an agent syncs its Schedule through it (domain/agents/agents.ts). */
  jobs: Jobs;
  /** For `reconnect_account` (the API's services carry them; the Operator's tools do not). */
  connector?: AccountConnector;
  encryptionKey?: Buffer;
}

/** Performs the insight's action through the domain function the equivalent API call uses. */
async function perform(
  em: EntityManager,
  actor: Actor,
  action: InsightRow['action'],
  deps: ApplyDeps,
): Promise<Record<string, unknown>> {
  switch (action.type) {
    case 'pause_campaign': {
      const r = await setStatus(em, actor, String(action.campaign_id), 'paused');
      return { type: action.type, campaign_id: r.id, campaign_status: r.campaign.status };
    }
    case 'pause_agent': {
      const r = await updateAgent(em, actor, deps.jobs, String(action.agent_id), { status: 'paused' });
      return { type: action.type, agent_id: r.agent.id, agent_status: r.agent.status };
    }
    case 'reconnect_account': {
      if (!deps.connector || !deps.encryptionKey)
        throw conflict('action_unavailable', 'reconnecting an account needs the app: POST /api/insights/{id}/apply');
      const { account, start } = await connectAccount(
        em,
        actor,
        deps.connector,
        deps.encryptionKey,
        String(action.account_id),
        {},
      );
      return {
        type: action.type,
        account_id: account.id,
        account_status: account.status,
        hosted_url: start.url,
        expires_at: start.expiresAt?.toISOString() ?? null,
      };
    }
    case 'raise_account_caps': {
      // Only raises: a type whose cap was set at or above the suggestion since the refresh is left alone.
      const accountId = String(action.account_id);
      const [current] = await em.execute<{ caps: Caps | null }[]>(
        `select caps from platform_accounts where id = ? and workspace_id = ?`,
        [accountId, actor.workspaceId],
      );
      const raise = raisesOnly((action.caps ?? {}) as Caps, current?.caps ?? {});
      const account = await setLimits(em, actor, accountId, { caps: raise });
      return { type: action.type, account_id: account.id, caps: account.caps, raised: Object.keys(raise) };
    }
    case 'add_sender_account':
      // Nothing to change here: the caps are at the plan's bounds, so more volume needs another account (or a bigger plan).
      return {
        type: action.type,
        channel: action.channel,
        path: '/api/platform-accounts',
        plans_path: '/api/billing/catalog',
      };
    case 'open_review_queue':
      // Nothing to change: the action is to look at the queue, which this answer points to.
      return {
        type: action.type,
        campaign_id: action.campaign_id,
        path: `/api/campaigns/${String(action.campaign_id)}/message-review`,
      };
    default:
      throw conflict('action_unavailable', `unknown action ${action.type}`);
  }
}

/**
 * Applies an open (or snoozed) insight once. 409 `already_applied` when it was applied before (the
 * first result is in `details.result`), 409 `not_applicable` when it was dismissed or resolved;
 * errors of the action itself (e.g. 409 `invalid_transition` for a campaign no longer active) are
 * answered as they are and leave the insight as it was.
 */
export async function applyInsight(em: EntityManager, actor: Actor, id: string, deps: ApplyDeps): Promise<InsightRow> {
  assertWritable(actor);
  const row = await requireInsight(em, actor, id);
  const [claimed] = await em.execute<InsightRow[]>(
    `update insights set status = 'applied', applied_at = now(), applied_by = ?, updated_at = now()
      where id = ? and workspace_id = ? and status in ('open', 'snoozed') returning *`,
    [actor.userId, id, actor.workspaceId],
  );
  if (!claimed) {
    const [now] = await em.execute<InsightRow[]>(`select * from insights where id = ?`, [row.id]);
    if (now?.status === 'applied')
      throw new AppError(409, 'already_applied', 'this insight was applied already', {
        applied_at: now.applied_at ? new Date(now.applied_at).toISOString() : null,
        result: now.result,
      });
    throw new AppError(409, 'not_applicable', `a ${now?.status ?? row.status} insight cannot be applied`);
  }
  let result: Record<string, unknown>;
  try {
    result = await perform(em.fork(), actor, claimed.action, deps);
  } catch (err) {
    await em.execute(
      `update insights set status = ?, snoozed_until = ?, applied_at = null, applied_by = null, updated_at = now() where id = ?`,
      [row.status, row.snoozed_until, id],
    );
    throw err;
  }
  const [done] = await em.execute<InsightRow[]>(`update insights set result = ?::jsonb where id = ? returning *`, [
    JSON.stringify(result),
    id,
  ]);
  return done!;
}
