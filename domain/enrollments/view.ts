// The per-lead enrollment view (beyond the spec; docs/executor.md "Per-lead enrollment view"): an
// enrollment with its current step, its next unsent action and why that has not happened yet, read
// from stored state only (the rows the workflow's activities write), so a list costs no Temporal
// round trip per row. Served by `GET /api/campaigns/{campaignId}/enrollments`,
// `GET /api/enrollments/{id}` and the Operator tool `get_enrollments`.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { EnrollmentStatus } from '../../db/entities/Enrollment.js';
import { keysetSql, type PageRequest } from '../../lib/pagination.js';
import { requireCampaign } from './enrollments.js';
import { notFound } from '../errors.js';
import { WAITING_REASONS, type WaitingReason } from './executor.js';

export { WAITING_REASONS };
import type { Actor } from '../identity.js';

/** Reasons of the plan, whose wait ends at the action's due time when no `waiting_until` was recorded. */
export const TIMED_REASONS: ReadonlySet<WaitingReason> = new Set<WaitingReason>([
  'waiting_for_window',
  'waiting_step_delay',
  'daily_new_lead_cap',
  'rescheduled',
]);

/** The action states of a send not made yet: the enrollment's next action is its one action in one of them. */
export const UNSENT_ACTION_STATES = ['planned', 'awaiting_approval', 'approved', 'executing'] as const;

const isWaitingReason = (s: string): s is WaitingReason => (WAITING_REASONS as readonly string[]).includes(s);

export interface Waiting {
  reason: WaitingReason | null;
  until: Date | null;
}

/**
 * Why an enrollment's next send has not happened yet, from stored state — the rule both enrollment
 * routes and the Operator tool use:
 * - an ended enrollment (any status but `active` / `paused`): no reason;
 * - the campaign is `paused`: `campaign_paused` (no end known);
 * - the enrollment is `paused`: `paused` (no end known);
 * - else the next unsent action's `waiting_reason`, with `until` = its `waiting_until` (the governor's
 *   retry time, a window's opening) or, for the plan's reasons (`TIMED_REASONS`), its `due_at`;
 *   `awaiting_review` and the others have no known end (null);
 * - no unsent action (between steps, or an action being planned): no reason.
 * A stored reason this code does not know is read as none.
 */
export function enrollmentWaiting(input: {
  enrollmentStatus: string;
  campaignStatus: string;
  nextAction: { waitingReason: string | null; dueAt: Date | string; waitingUntil?: Date | string | null } | null;
}): Waiting {
  const none: Waiting = { reason: null, until: null };
  if (input.enrollmentStatus !== 'active' && input.enrollmentStatus !== 'paused') return none;
  if (input.campaignStatus === 'paused') return { reason: 'campaign_paused', until: null };
  if (input.enrollmentStatus === 'paused') return { reason: 'paused', until: null };
  const a = input.nextAction;
  if (!a?.waitingReason || !isWaitingReason(a.waitingReason)) return none;
  if (a.waitingUntil) return { reason: a.waitingReason, until: new Date(a.waitingUntil) };
  return { reason: a.waitingReason, until: TIMED_REASONS.has(a.waitingReason) ? new Date(a.dueAt) : null };
}

/** One enrollment as the view shows it (snake_case, timestamps ISO 8601): the routes' and the tool's answer. */
export interface EnrollmentViewItem {
  id: string;
  campaign_id: string;
  lead_id: string;
  contact_id: string;
  status: EnrollmentStatus;
  stop_reason: string | null;
  run: number;
  step_version: number;
  current_step: { id: string; position: number; type: string | null } | null;
  replied_at: string | null;
  finished_at: string | null;
  created_at: string;
  next_action: {
    id: string;
    type: string;
    state: (typeof UNSENT_ACTION_STATES)[number];
    due_at: string;
    waiting_reason: string | null;
  } | null;
  waiting: { reason: WaitingReason | null; until: string | null };
}

export interface EnrollmentFilter {
  status?: EnrollmentStatus;
  /** Enrollments whose current step is this one. */
  stepId?: string;
  leadId?: string;
}

interface Row {
  id: string;
  campaign_id: string;
  lead_id: string;
  contact_id: string;
  status: string;
  stop_reason: string | null;
  run: number;
  step_version: number;
  current_position: number | null;
  current_step_id: string | null;
  current_step_type: string | null;
  current_step_position: number | null;
  replied_at: Date | null;
  finished_at: Date | null;
  created_at: Date;
  campaign_status: string;
  action_id: string | null;
  action_type: string | null;
  action_state: string | null;
  action_due_at: Date | null;
  action_waiting_reason: string | null;
  action_waiting_until: Date | null;
}

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/** The step is looked up in the enrollment's own version (the one its `current_step_id` belongs to). */
const SELECT = `
  select e.id, e.campaign_id, e.lead_id, e.contact_id, e.status, e.stop_reason, e.run, e.step_version, e.current_position, e.current_step_id,
         s.type as current_step_type, s.position as current_step_position, e.replied_at, e.finished_at, e.created_at, c.status as campaign_status,
         a.id as action_id, a.type as action_type, a.state as action_state, a.due_at as action_due_at, a.waiting_reason as action_waiting_reason, a.waiting_until as action_waiting_until
    from enrollments e
    join campaigns c on c.id = e.campaign_id
    left join lateral (
      select x->>'type' as type, (x->>'position')::int as position
        from campaign_step_versions v cross join lateral jsonb_array_elements(v.steps) x
       where e.current_step_id is not null and v.campaign_id = e.campaign_id and v.version = e.step_version and x->>'id' = e.current_step_id::text
       limit 1) s on true
    left join lateral (
      select a.id, a.type, a.state, a.due_at, a.waiting_reason, a.waiting_until
        from scheduled_actions a
       where a.enrollment_id = e.id and a.state in (${UNSENT_ACTION_STATES.map((x) => `'${x}'`).join(', ')})
       order by a.created_at desc, a.id desc
       limit 1) a on true`;

function toItem(r: Row): EnrollmentViewItem {
  const nextAction = r.action_id
    ? { waitingReason: r.action_waiting_reason, dueAt: r.action_due_at!, waitingUntil: r.action_waiting_until }
    : null;
  const waiting = enrollmentWaiting({ enrollmentStatus: r.status, campaignStatus: r.campaign_status, nextAction });
  return {
    id: r.id,
    campaign_id: r.campaign_id,
    lead_id: r.lead_id,
    contact_id: r.contact_id,
    status: r.status as EnrollmentStatus,
    stop_reason: r.stop_reason,
    run: r.run,
    step_version: r.step_version,
    current_step: r.current_step_id
      ? {
          id: r.current_step_id,
          position: r.current_position ?? r.current_step_position ?? 0,
          type: r.current_step_type,
        }
      : null,
    replied_at: iso(r.replied_at),
    finished_at: iso(r.finished_at),
    created_at: iso(r.created_at)!,
    next_action: r.action_id
      ? {
          id: r.action_id,
          type: r.action_type!,
          state: r.action_state as (typeof UNSENT_ACTION_STATES)[number],
          due_at: iso(r.action_due_at)!,
          waiting_reason: r.action_waiting_reason,
        }
      : null,
    waiting: { reason: waiting.reason, until: iso(waiting.until) },
  };
}

/**
 * A campaign's enrollments by id (UUIDv7: enrollment order), `limit + 1` of them after `page.after`
 * (for `page()` of lib/pagination.ts). Another workspace's campaign is 404, a product the member was
 * not given 403 `not_assigned` (requireCampaign).
 */
export async function listEnrollmentViews(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  filter: EnrollmentFilter,
  page: PageRequest,
): Promise<EnrollmentViewItem[]> {
  const campaign = await requireCampaign(em, actor, campaignId);
  const where = ['e.campaign_id = ?', 'e.workspace_id = ?'];
  const args: unknown[] = [campaign.id, actor.workspaceId];
  const and = (clause: string, value: unknown) => {
    where.push(clause);
    args.push(value);
  };
  if (filter.status) and('e.status = ?', filter.status);
  if (filter.stepId) and('e.current_step_id = ?', filter.stepId);
  if (filter.leadId) and('e.lead_id = ?', filter.leadId);
  const k = keysetSql(page, 'e.id');
  const rows = await em.execute<Row[]>(`${SELECT} where ${where.join(' and ')}${k.sql}`, [...args, ...k.params]);
  return rows.map(toItem);
}

/** One enrollment: 404 when it is not of the actor's workspace; its campaign's product checked as the campaign routes do (403 `not_assigned`). */
export async function getEnrollmentView(em: EntityManager, actor: Actor, id: string): Promise<EnrollmentViewItem> {
  const [owner] = await em.execute<{ campaign_id: string }[]>(
    `select campaign_id from enrollments where id = ? and workspace_id = ?`,
    [id, actor.workspaceId],
  );
  if (!owner) throw notFound('enrollment');
  await requireCampaign(em, actor, owner.campaign_id);
  const [row] = await em.execute<Row[]>(`${SELECT} where e.id = ?`, [id]);
  if (!row) throw notFound('enrollment');
  return toItem(row);
}
