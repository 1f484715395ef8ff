// Campaign-level reads and batch changes of scheduled actions, campaign stats and in-flight impact
// (docs/executor.md "Scheduled actions, in bulk", docs/campaigns.md "Stats and impact"). Everything
// is set-based SQL on `scheduled_actions` and `enrollments` (indexed by campaign), never workflow
// histories. Single-action approve is reused for batches so the rules stay in one place.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ICampaign } from '../../db/entities/Campaign.js';
import { ScheduledAction, type IScheduledAction } from '../../db/entities/ScheduledAction.js';
import { requireCampaign } from '../campaigns/campaigns.js';
import { assertWritable } from '../demo/demo.js';
import { PlatformAccount, type ActionType } from '../../db/entities/PlatformAccount.js';
import { AppError, badRequest, conflict } from '../errors.js';
import { nextWindowOpening } from '../enrollments/executor.js';
import { sendingZone } from '../campaigns/sending-windows.js';
import { engagementCols, ratio } from '../campaigns/variants.js';
import { effectiveCaps, usage } from '../governor/governor.js';
import { addDays, localDate, zonedTime } from '../governor/time.js';
import { entitlementsFor } from '../billing/plans.js';
import { canAccessApp, type Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';
import { mapLimit } from '../../lib/concurrency.js';
import { logger } from '../../lib/logger.js';
import { keysetBy } from '../../lib/pagination.js';

/** States of an action that has not been sent and may still be (the "pending" set). */
export const PENDING_STATES = ['planned', 'awaiting_approval', 'approved'] as const;
const pendingSql = `('planned', 'awaiting_approval', 'approved')`;

export interface ActionFilter {
  state?: string;
  stepId?: string;
  dueFrom?: Date;
  dueTo?: Date;
  limit: number;
  cursor?: string;
}

function encodeCursor(a: IScheduledAction): string {
  return Buffer.from(`${a.dueAt.toISOString()}|${a.id}`).toString('base64url');
}

function decodeCursor(cursor: string): { dueAt: Date; id: string } {
  const [due, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const dueAt = new Date(due ?? '');
  if (!id || Number.isNaN(dueAt.getTime()) || !/^[0-9a-f-]{36}$/i.test(id))
    throw badRequest('invalid_cursor', 'the cursor is not one this list returned');
  return { dueAt, id };
}

/** The campaign's actions by due time (then id), filtered; keyset pagination on (due_at, id). */
export async function listCampaignActions(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  f: ActionFilter,
): Promise<{ items: IScheduledAction[]; nextCursor: string | null }> {
  const campaign = await requireCampaign(em, actor, campaignId);
  const where: Record<string, unknown> = { campaign: campaign.id };
  if (f.state) where.state = f.state;
  if (f.stepId) where.stepId = f.stepId;
  const due: Record<string, Date> = {};
  if (f.dueFrom) due.$gte = f.dueFrom;
  if (f.dueTo) due.$lt = f.dueTo;
  if (Object.keys(due).length) where.dueAt = due;
  const c = f.cursor ? decodeCursor(f.cursor) : undefined;
  const k = keysetBy('dueAt', { limit: f.limit, after: c && { at: c.dueAt, id: c.id } });
  const rows = await em.find(ScheduledAction, { ...where, ...k.where } as never, k.options);
  const items = rows.slice(0, f.limit);
  return { items, nextCursor: rows.length > f.limit ? encodeCursor(items[items.length - 1]!) : null };
}

export type BatchOutcome = 'approved' | 'not_found' | 'invalid_state';

/**
 * Approves each id with the single-action rule (`approveAction`): `approved`, `not_found` (not an
 * action of this campaign), or `invalid_state` (not planned or awaiting approval). Results in the
 * order given; a repeated id is answered once per occurrence.
 */
export async function batchApprove(
  em: EntityManager,
  jobs: Jobs,
  actor: Actor,
  campaignId: string,
  ids: string[],
): Promise<{ id: string; result: BatchOutcome; state: string | null }[]> {
  assertWritable(actor);
  const campaign = await requireCampaign(em, actor, campaignId);
  const unique = `{${[...new Set(ids)].join(',')}}`;
  // The single-action rule (approveAction) for all of them in one statement: planned or awaiting
  // approval, and not a failed AI draft; then every approved one's workflow is told, in parallel.
  const approved = await em.execute<{ id: string; lead_id: string }[]>(
    `update scheduled_actions set state = 'approved', approved_at = now(), approved_by = ?, waiting_reason = null, updated_at = now()
      where campaign_id = ? and id = any(?::uuid[]) and state in ('planned', 'awaiting_approval') and content->>'draft_failed' is null
      returning id, lead_id`,
    [actor.userId, campaign.id, unique],
  );
  await mapLimit(approved, 16, (a) =>
    jobs.signal('enrollment', { campaignId: campaign.id, leadId: a.lead_id }, 'approve', { actionId: a.id }),
  );
  const rows = await em.execute<{ id: string; state: string }[]>(
    `select id, state from scheduled_actions where campaign_id = ? and id = any(?::uuid[])`,
    [campaign.id, unique],
  );
  const ok = new Set(approved.map((a) => a.id));
  const state = new Map(rows.map((r) => [r.id, r.state]));
  return ids.map((id) => ({
    id,
    result: ok.has(id) ? 'approved' : state.has(id) ? 'invalid_state' : 'not_found',
    state: state.get(id) ?? null,
  }));
}

/** What pausing or editing the campaign now would affect: enrollments per status, actions per state, and pending actions due in the next 24 h. */
export async function inFlightImpact(em: EntityManager, actor: Actor, campaignId: string) {
  const campaign = await requireCampaign(em, actor, campaignId);
  const enr = await em.execute<{ status: string; n: number }[]>(
    `select status, count(*)::int as n from enrollments where campaign_id = ? group by status`,
    [campaign.id],
  );
  const act = await em.execute<{ state: string; n: number }[]>(
    `select state, count(*)::int as n from scheduled_actions where campaign_id = ? group by state`,
    [campaign.id],
  );
  const [soon] = await em.execute<{ n: number; approval: number }[]>(
    `select count(*)::int as n, count(*) filter (where state = 'awaiting_approval')::int as approval
       from scheduled_actions where campaign_id = ? and state in ${pendingSql} and due_at < now() + interval '24 hours'`,
    [campaign.id],
  );
  const perStep = await em.execute<{ step_id: string; step_position: number; n: number }[]>(
    `select step_id, min(step_position)::int as step_position, count(*)::int as n from scheduled_actions
      where campaign_id = ? and state in ${pendingSql} group by step_id order by 2`,
    [campaign.id],
  );
  const enrollments = Object.fromEntries(enr.map((r) => [r.status, r.n]));
  return {
    campaign_id: campaign.id,
    campaign_status: campaign.status,
    enrollments_by_status: enrollments,
    running_enrollments: (enrollments.active ?? 0) + (enrollments.paused ?? 0),
    actions_by_state: Object.fromEntries(act.map((r) => [r.state, r.n])),
    pending_actions_by_step: perStep.map((r) => ({ step_id: r.step_id, step_position: r.step_position, pending: r.n })),
    due_next_24h: soon?.n ?? 0,
    awaiting_approval_next_24h: soon?.approval ?? 0,
  };
}

interface Counts {
  sent: number;
  accepted: number;
  opened: number;
  opened_machine: number;
  clicked: number;
  clicked_machine: number;
  replied: number;
  failed: number;
  bounced: number;
}

/** The counts of the sends of `a` (an alias of scheduled_actions). */
const countCols = (a = 'scheduled_actions') => `count(*) filter (where ${a}.state = 'executed')::int as sent,
  count(*) filter (where ${a}.accepted_at is not null)::int as accepted,
  ${engagementCols(a)},
  count(*) filter (where ${a}.state = 'failed')::int as failed,
  count(*) filter (where (${a}.state = 'failed' and ${a}.error_code ilike '%bounce%') or ${a}.bounced_at is not null)::int as bounced`;

/**
 * Per campaign and per step: enrolled (enrollments, or enrollments that reached the step), sent
 * (executed), accepted, opened, replied, reply rate (replied / sent), failed and bounced (a send the
 * connector refused as a bounce, or an executed one whose bounce came back to the inbox); and by local day in
 * the campaign's time zone (sent by executed day, replies by reply day).
 */
export async function campaignStats(em: EntityManager, actor: Actor, campaignId: string) {
  const campaign = await requireCampaign(em, actor, campaignId);
  const [enr] = await em.execute<{ enrolled: number; replied: number; failed: number }[]>(
    `select count(*)::int as enrolled, count(*) filter (where replied_at is not null)::int as replied, count(*) filter (where status = 'failed')::int as failed from enrollments where campaign_id = ?`,
    [campaign.id],
  );
  const [tot] = await em.execute<Counts[]>(`select ${countCols()} from scheduled_actions where campaign_id = ?`, [
    campaign.id,
  ]);
  const steps = await em.execute<
    (Counts & { step_id: string; step_position: number; type: string; enrolled: number })[]
  >(
    `select step_id, min(step_position)::int as step_position, min(type) as type, count(distinct enrollment_id)::int as enrolled, ${countCols()}
       from scheduled_actions where campaign_id = ? group by step_id order by 2, 1`,
    [campaign.id],
  );
  const days = await em.execute<{ day: string; sent: number; replied: number; accepted: number; failed: number }[]>(
    `with ev as (
       select to_char(executed_at at time zone ?, 'YYYY-MM-DD') as day, 1 as sent, 0 as replied, 0 as accepted, 0 as failed from scheduled_actions where campaign_id = ? and state = 'executed' and executed_at is not null
       union all select to_char(replied_at at time zone ?, 'YYYY-MM-DD'), 0, 1, 0, 0 from scheduled_actions where campaign_id = ? and replied_at is not null
       union all select to_char(accepted_at at time zone ?, 'YYYY-MM-DD'), 0, 0, 1, 0 from scheduled_actions where campaign_id = ? and accepted_at is not null
       union all select to_char(updated_at at time zone ?, 'YYYY-MM-DD'), 0, 0, 0, 1 from scheduled_actions where campaign_id = ? and state = 'failed')
     select day, sum(sent)::int as sent, sum(replied)::int as replied, sum(accepted)::int as accepted, sum(failed)::int as failed from ev group by day order by day`,
    [
      campaign.timeZone,
      campaign.id,
      campaign.timeZone,
      campaign.id,
      campaign.timeZone,
      campaign.id,
      campaign.timeZone,
      campaign.id,
    ],
  );
  const t = tot ?? {
    sent: 0,
    accepted: 0,
    opened: 0,
    opened_machine: 0,
    clicked: 0,
    clicked_machine: 0,
    replied: 0,
    failed: 0,
    bounced: 0,
  };
  const byVariant = await em.execute<
    (Counts & { step_id: string; variant_id: string; name: string | null; is_winner: boolean })[]
  >(
    `select a.step_id, a.variant_id, (select v->>'name' from campaign_steps s, jsonb_array_elements(s.variants) v where s.id = a.step_id and v->>'id' = a.variant_id::text) as name,
            exists (select 1 from step_winners w where w.step_id = a.step_id and w.variant_id = a.variant_id) as is_winner, ${countCols('a')}
       from scheduled_actions a where a.campaign_id = ? and a.variant_id is not null group by a.step_id, a.variant_id order by 1, 2`,
    [campaign.id],
  );
  return {
    campaign_id: campaign.id,
    time_zone: campaign.timeZone,
    totals: {
      enrolled: enr?.enrolled ?? 0,
      replied_enrollments: enr?.replied ?? 0,
      enrollment_failed: enr?.failed ?? 0,
      ...t,
      reply_rate: ratio(t.replied, t.sent),
    },
    steps: steps.map((s) => ({
      step_id: s.step_id,
      step_position: s.step_position,
      type: s.type,
      enrolled: s.enrolled,
      sent: s.sent,
      accepted: s.accepted,
      opened: s.opened,
      opened_machine: s.opened_machine,
      clicked: s.clicked,
      clicked_machine: s.clicked_machine,
      replied: s.replied,
      failed: s.failed,
      bounced: s.bounced,
      reply_rate: ratio(s.replied, s.sent),
      ...(byVariant.some((v) => v.step_id === s.step_id)
        ? {
            variants: byVariant
              .filter((v) => v.step_id === s.step_id)
              .map(({ step_id: _, ...v }) => ({ ...v, reply_rate: ratio(v.replied, v.sent) })),
          }
        : {}),
    })),
    by_day: days,
  };
}

/**
 * Replies attributed to the send step that preceded them: reply routing records `replied_at` on the
 * latest executed action of the conversation, so each reply belongs to that action's step. Per step:
 * the count and the latest replies (up to `sample`).
 */
export async function stepReplies(em: EntityManager, actor: Actor, campaignId: string, sample = 20) {
  const campaign = await requireCampaign(em, actor, campaignId);
  const rows = await em.execute<
    { step_id: string; step_position: number; type: string; replies: number; sent: number }[]
  >(
    `select step_id, min(step_position)::int as step_position, min(type) as type, count(*) filter (where replied_at is not null)::int as replies,
            count(*) filter (where state = 'executed')::int as sent
       from scheduled_actions where campaign_id = ? group by step_id having count(*) filter (where replied_at is not null) > 0 order by 2, 1`,
    [campaign.id],
  );
  const latest = await em.execute<
    {
      step_id: string;
      id: string;
      lead_id: string;
      enrollment_id: string;
      replied_at: Date;
      executed_at: Date | null;
    }[]
  >(
    `select step_id, id, lead_id, enrollment_id, replied_at, executed_at from (
       select *, row_number() over (partition by step_id order by replied_at desc, id) as rn from scheduled_actions where campaign_id = ? and replied_at is not null) x
      where rn <= ? order by replied_at desc`,
    [campaign.id, sample],
  );
  return {
    campaign_id: campaign.id,
    total_replies: rows.reduce((n, r) => n + r.replies, 0),
    items: rows.map((r) => ({
      step_id: r.step_id,
      step_position: r.step_position,
      type: r.type,
      replies: r.replies,
      reply_rate: ratio(r.replies, r.sent),
      latest: latest
        .filter((l) => l.step_id === r.step_id)
        .map((l) => ({
          action_id: l.id,
          lead_id: l.lead_id,
          enrollment_id: l.enrollment_id,
          replied_at: new Date(l.replied_at).toISOString(),
          executed_at: l.executed_at ? new Date(l.executed_at).toISOString() : null,
        })),
    })),
  };
}

/** SQL (on `c.country`) that is true when the campaign's country rule refuses the contact; null when there is no rule. */
function blockedSql(campaign: ICampaign): { sql: string; args: unknown[] } | null {
  const rule = campaign.countryRule;
  const countries = [...new Set((rule?.countries ?? []).map((x) => x.trim().toUpperCase()))];
  if (!rule || !countries.length) return null;
  const list = `{${countries.join(',')}}`;
  return rule.mode === 'block'
    ? { sql: `upper(trim(c.country)) = any(?::text[])`, args: [list] }
    : {
        sql: `(c.country is null or trim(c.country) = '' or not (upper(trim(c.country)) = any(?::text[])))`,
        args: [list],
      };
}

/** Pending actions of the campaign whose lead's contact country the campaign's country rule now refuses: counts and a sample. */
export async function countryRestrictionImpact(em: EntityManager, actor: Actor, campaignId: string, sample = 20) {
  const campaign = await requireCampaign(em, actor, campaignId);
  const b = blockedSql(campaign);
  const base = { campaign_id: campaign.id, country_rule: campaign.countryRule ?? null };
  if (!b) return { ...base, actions: 0, enrollments: 0, by_country: [], sample: [] };
  const from = `from scheduled_actions a join enrollments e on e.id = a.enrollment_id join contacts c on c.id = e.contact_id
                where a.campaign_id = ? and a.state in ${pendingSql} and ${b.sql}`;
  const [tot] = await em.execute<{ actions: number; enrollments: number }[]>(
    `select count(*)::int as actions, count(distinct a.enrollment_id)::int as enrollments ${from}`,
    [campaign.id, ...b.args],
  );
  const byCountry = await em.execute<{ country: string | null; actions: number }[]>(
    `select upper(trim(c.country)) as country, count(*)::int as actions ${from} group by 1 order by 2 desc, 1`,
    [campaign.id, ...b.args],
  );
  const rows = await em.execute<
    { id: string; lead_id: string; enrollment_id: string; state: string; due_at: Date; country: string | null }[]
  >(
    `select a.id, a.lead_id, a.enrollment_id, a.state, a.due_at, upper(trim(c.country)) as country ${from} order by a.due_at, a.id limit ?`,
    [campaign.id, ...b.args, sample],
  );
  return {
    ...base,
    actions: tot?.actions ?? 0,
    enrollments: tot?.enrollments ?? 0,
    by_country: byCountry.map((r) => ({ country: r.country ?? null, actions: r.actions })),
    sample: rows.map((r) => ({
      action_id: r.id,
      lead_id: r.lead_id,
      enrollment_id: r.enrollment_id,
      state: r.state,
      due_at: new Date(r.due_at).toISOString(),
      country: r.country ?? null,
    })),
  };
}

/**
 * Cancels those actions (`error_code = blocked_country`) and stops their enrollments (`stopped`,
 * `stop_reason = blocked_country`) in one transaction, then sends each workflow `unenroll` (the
 * workflow keeps the status the route wrote).
 */
export async function cancelCountryRestricted(em: EntityManager, jobs: Jobs, actor: Actor, campaignId: string) {
  assertWritable(actor);
  const campaign = await requireCampaign(em, actor, campaignId);
  const b = blockedSql(campaign);
  if (!b) return { campaign_id: campaign.id, canceled_actions: 0, stopped_enrollments: 0, signaled: 0 };
  const { actions, stopped } = await em.transactional(async (tx) => {
    const canceled = await tx.execute<{ enrollment_id: string }[]>(
      `update scheduled_actions a set state = 'canceled', error_code = 'blocked_country', waiting_reason = null, updated_at = now()
         from enrollments e join contacts c on c.id = e.contact_id
        where e.id = a.enrollment_id and a.campaign_id = ? and a.state in ${pendingSql} and ${b.sql}
        returning a.enrollment_id`,
      [campaign.id, ...b.args],
    );
    const ids = [...new Set(canceled.map((r) => r.enrollment_id))];
    const stoppedRows = ids.length
      ? await tx.execute<{ lead_id: string }[]>(
          `update enrollments set status = 'stopped', stop_reason = 'blocked_country', finished_at = coalesce(finished_at, now()), current_position = null, current_step_id = null, updated_at = now()
            where id = any(?::uuid[]) and status in ('active', 'paused') returning lead_id`,
          [`{${ids.join(',')}}`],
        )
      : [];
    return { actions: canceled.length, stopped: stoppedRows };
  });
  let signaled = 0;
  for (let i = 0; i < stopped.length; i += 50) {
    const sent = await Promise.all(
      stopped
        .slice(i, i + 50)
        .map((r) => jobs.signal('enrollment', { campaignId: campaign.id, leadId: r.lead_id }, 'unenroll')),
    );
    signaled += sent.filter(Boolean).length;
  }
  return { campaign_id: campaign.id, canceled_actions: actions, stopped_enrollments: stopped.length, signaled };
}

// ---------------------------------------------------------------------------------------------
// Re-planning: overdue actions (after a pause) and planned actions (after a settings change).

interface ReplanRow {
  id: string;
  lead_id: string;
  /** The contact's zone and country: recipient-local windows read them (sendingZone). */
  k_time_zone: string | null;
  k_country: string | null;
  account_id: string | null;
  type: string;
  due_at: Date;
  not_before: Date | null;
}

/** The least spacing between two re-planned actions of one account (its `min_gap_seconds` when larger). */
export const REPLAN_MIN_SPACING_SECONDS = 60;

/**
 * Gives each action (in the order given) the first time at or after `from(row)` (and now) that is
 * inside the campaign's sending windows (its time zone, or the recipient's: sendingZone) and on a local day (the account's time zone,
 * as the governor counts) where the account's planned actions of that type — across campaigns, plus
 * the slots already granted today — stay under its daily cap (warm-up applied); one account's actions
 * are at least `max(min_gap_seconds, 60 s)` apart. Writes the new due times (`waiting_reason =
 * rescheduled`) for actions still pending; an action for which no window ever opens keeps its time.
 */
async function replan(
  em: EntityManager,
  campaign: ICampaign,
  rows: ReplanRow[],
  from: (r: ReplanRow) => Date,
  now: Date,
) {
  const accountIds = [...new Set(rows.map((r) => r.account_id).filter((x): x is string => !!x))];
  const accounts = new Map((await em.find(PlatformAccount, { id: { $in: accountIds } })).map((a) => [a.id, a]));
  const planCaps = (await entitlementsFor(em, campaign.workspace.id)).entitlements.senderCaps;
  const load = new Map<string, number>();
  const key = (acc: string, type: string, day: string) => `${acc}|${type}|${day}`;
  if (accountIds.length) {
    const existing = await em.execute<{ account_id: string; type: string; day: string; n: number }[]>(
      `select a.account_id, a.type, to_char(a.due_at at time zone p.time_zone, 'YYYY-MM-DD') as day, count(*)::int as n
         from scheduled_actions a join platform_accounts p on p.id = a.account_id
        where a.account_id = any(?::uuid[]) and a.state in ${pendingSql} and a.due_at >= ? and not (a.id = any(?::uuid[]))
        group by 1, 2, 3`,
      [`{${accountIds.join(',')}}`, new Date(now.getTime() - 86_400_000), `{${rows.map((r) => r.id).join(',')}}`],
    );
    for (const e of existing) load.set(key(e.account_id, e.type, e.day), e.n);
    for (const acc of accounts.values()) {
      const today = localDate(now, acc.timeZone);
      for (const u of await usage(em, acc, now))
        load.set(key(acc.id, u.action, today), (load.get(key(acc.id, u.action, today)) ?? 0) + u.today);
    }
  }
  const cursor = new Map<string, number>();
  const moves: { id: string; leadId: string; from: Date; to: Date }[] = [];
  let unplaceable = 0;
  for (const r of rows) {
    const acc = r.account_id ? accounts.get(r.account_id) : undefined;
    let t = new Date(Math.max(from(r).getTime(), now.getTime(), acc ? (cursor.get(acc.id) ?? 0) : 0));
    let placed: Date | null = null;
    for (let i = 0; i < 400; i++) {
      const due = nextWindowOpening(
        campaign.sendingWindows,
        sendingZone(campaign.windowTimeZone, campaign.timeZone, r.k_time_zone, r.k_country),
        t,
      );
      if (!due) break;
      if (!acc) {
        placed = due;
        break;
      }
      const day = localDate(due, acc.timeZone);
      const cap = effectiveCaps(acc, planCaps, due)[r.type as ActionType]?.daily ?? Infinity;
      const k = key(acc.id, r.type, day);
      if ((load.get(k) ?? 0) < cap) {
        load.set(k, (load.get(k) ?? 0) + 1);
        cursor.set(acc.id, due.getTime() + Math.max(acc.minGapSeconds ?? 0, REPLAN_MIN_SPACING_SECONDS) * 1000);
        placed = due;
        break;
      }
      t = zonedTime(addDays(day, 1), 0, acc.timeZone);
    }
    if (!placed) unplaceable++;
    else if (placed.getTime() !== new Date(r.due_at).getTime())
      moves.push({ id: r.id, leadId: r.lead_id, from: new Date(r.due_at), to: placed });
  }
  const written = moves.length
    ? await em.execute<{ id: string }[]>(
        `update scheduled_actions a set due_at = v.due, waiting_reason = 'rescheduled', updated_at = now()
           from (select unnest(?::uuid[]) as id, unnest(?::timestamptz[]) as due) v
          where a.id = v.id and a.state in ${pendingSql} returning a.id`,
        [`{${moves.map((m) => m.id).join(',')}}`, `{${moves.map((m) => m.to.toISOString()).join(',')}}`],
      )
    : [];
  const ok = new Set(written.map((w) => w.id));
  return { moves: moves.filter((m) => ok.has(m.id)), unplaceable };
}

export interface ReplanResult {
  campaign_id: string;
  considered: number;
  rescheduled: number;
  no_window: number;
  first_due_at: string | null;
  last_due_at: string | null;
  items: { id: string; previous_due_at: string; due_at: string }[];
}

const replanView = (campaignId: string, considered: number, r: Awaited<ReturnType<typeof replan>>): ReplanResult => {
  const times = r.moves.map((m) => m.to.getTime()).sort((a, b) => a - b);
  return {
    campaign_id: campaignId,
    considered,
    rescheduled: r.moves.length,
    no_window: r.unplaceable,
    first_due_at: times.length ? new Date(times[0]!).toISOString() : null,
    last_due_at: times.length ? new Date(times[times.length - 1]!).toISOString() : null,
    items: r.moves
      .slice(0, 200)
      .map((m) => ({ id: m.id, previous_due_at: m.from.toISOString(), due_at: m.to.toISOString() })),
  };
};

async function lockedCampaign(em: EntityManager, actor: Actor, campaignId: string): Promise<ICampaign> {
  const campaign = await requireCampaign(em, actor, campaignId);
  if (!['active', 'paused'].includes(campaign.status))
    throw conflict('invalid_transition', `actions of a ${campaign.status} campaign cannot be re-planned`);
  await em.execute(`select pg_advisory_xact_lock(hashtext(?))`, [`campaign-replan:${campaign.id}`]);
  return campaign;
}

/**
 * Actions whose due time passed while the campaign or their enrollment was paused (pending, due
 * before now, of a running enrollment) move into the next sending windows, earliest first, spread
 * under each sender account's daily caps. Their workflows follow without a signal: the slot request
 * honours the row's later due time (reason `rescheduled`).
 */
export async function rescheduleOverdue(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  now = new Date(),
): Promise<ReplanResult> {
  assertWritable(actor);
  return em.transactional(async (tx) => {
    const campaign = await lockedCampaign(tx, actor, campaignId);
    const rows = await tx.execute<ReplanRow[]>(
      `select a.id, a.lead_id, a.account_id, a.type, a.due_at, a.not_before, k.time_zone as k_time_zone, k.country as k_country
         from scheduled_actions a join enrollments e on e.id = a.enrollment_id join contacts k on k.id = e.contact_id
        where a.campaign_id = ? and a.state in ${pendingSql} and a.due_at < ? and e.status in ('active', 'paused')
        order by a.due_at, a.id limit 10000`,
      [campaign.id, now],
    );
    return replanView(campaign.id, rows.length, await replan(tx, campaign, rows, () => now, now));
  });
}

/**
 * After a settings change (windows, time zone, accounts' caps): every pending action not yet due is
 * re-planned into the campaign's current windows and under the caps, from the earliest time its step
 * allows (`not_before`: the delay after the previous step), so wider windows bring actions earlier
 * and narrower ones push them later. A row without `not_before` (planned before it was kept, or a
 * first send under the daily new-lead cap) is never moved earlier. The workflows of actions moved
 * earlier are signalled `rescheduled` after commit (their timers would otherwise wake at the old
 * time); a later time needs no signal: the slot request honours the row's due time.
 */
export async function reschedulePlanned(
  em: EntityManager,
  jobs: Jobs,
  actor: Actor,
  campaignId: string,
  now = new Date(),
): Promise<ReplanResult> {
  assertWritable(actor);
  const { view, earlier } = await em.transactional(async (tx) => {
    const campaign = await lockedCampaign(tx, actor, campaignId);
    const rows = await tx.execute<ReplanRow[]>(
      `select a.id, a.lead_id, a.account_id, a.type, a.due_at, a.not_before, k.time_zone as k_time_zone, k.country as k_country
         from scheduled_actions a join enrollments e on e.id = a.enrollment_id join contacts k on k.id = e.contact_id
        where a.campaign_id = ? and a.state in ${pendingSql} and a.due_at >= ? and e.status in ('active', 'paused')
        order by coalesce(a.not_before, a.due_at), a.id limit 10000`,
      [campaign.id, now],
    );
    const r = await replan(tx, campaign, rows, (row) => new Date(row.not_before ?? row.due_at), now);
    return { view: replanView(campaign.id, rows.length, r), earlier: r.moves.filter((m) => m.to < m.from) };
  });
  // Best effort: a workflow that misses it still sends, at the old time (the row's due time has passed).
  await mapLimit(earlier, 16, (m) =>
    jobs
      .signal('enrollment', { campaignId: campaignId, leadId: m.leadId }, 'rescheduled', {
        actionId: m.id,
        dueAt: m.to.toISOString(),
      })
      .catch((err) => logger.warn({ err: String(err), action: m.id }, 'rescheduled signal not sent')),
  );
  return view;
}

export interface ContactActionRow {
  id: string;
  campaign_id: string;
  campaign_name: string;
  app_id: string;
  enrollment_id: string;
  lead_id: string;
  step_id: string;
  step_position: number;
  type: string;
  state: string;
  due_at: Date;
  executed_at: Date | null;
  accepted_at: Date | null;
  replied_at: Date | null;
  waiting_reason: string | null;
  error_code: string | null;
}

/** The contact's scheduled actions across the workspace's campaigns (products the actor may see), by due time. */
export async function contactActions(
  em: EntityManager,
  actor: Actor,
  contactId: string,
  limit = 500,
): Promise<ContactActionRow[]> {
  const rows = await em.execute<ContactActionRow[]>(
    `select a.id, a.campaign_id, c.name as campaign_name, c.app_id, a.enrollment_id, a.lead_id, a.step_id, a.step_position, a.type, a.state, a.due_at,
            a.executed_at, a.accepted_at, a.replied_at, a.waiting_reason, a.error_code
       from enrollments e join scheduled_actions a on a.enrollment_id = e.id join campaigns c on c.id = a.campaign_id
      where e.workspace_id = ? and e.contact_id = ? order by a.due_at, a.id limit ?`,
    [actor.workspaceId, contactId, limit],
  );
  const date = (d: Date | string | null) => (d === null ? null : new Date(d));
  return rows
    .filter((r) => canAccessApp(actor, r.app_id))
    .map((r) => ({
      ...r,
      due_at: date(r.due_at)!,
      executed_at: date(r.executed_at),
      accepted_at: date(r.accepted_at),
      replied_at: date(r.replied_at),
    }));
}
