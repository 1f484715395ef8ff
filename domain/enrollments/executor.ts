// The campaign executor's database side (docs/executor.md): everything the `enrollment` workflow's
// activities do. The workflow keeps ids and times only; rows live here.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { SendingWindows } from '../../db/entities/Campaign.js';
import type { VersionedStep } from '../../db/entities/CampaignStepVersion.js';
import type { AccountConnector } from '../../lib/connectors/types.js';
import { ProviderError } from '../../lib/provider-http.js';
import { renderTemplate, type TemplateValues } from '../../lib/templates.js';
import { releaseSlot, requestSlot } from '../governor/governor.js';
import { addDays, isoWeekday, localDate, localParts, parseClock, zonedTime } from '../governor/time.js';
import { emitEvent } from '../webhooks/events.js';
import { nextWindowOpening, sendingZone } from '../campaigns/sending-windows.js';
import { chooseVariant } from '../campaigns/variants.js';
import { actionFacts, sendVerdict, type ActionFacts, type SendVerdict } from './send-rule.js';
import { notify } from '../notifications/notifications.js';
import { countSend } from '../../lib/metrics.js';
import { refusalEffect } from '../accounts/refusals.js';

export { nextWindowOpening };

/**
 * An error that running the activity again cannot fix (missing data, a broken snapshot): the
 * activity layer makes it non-retryable, and the workflow ends the enrollment `failed` with `code`.
 */
export class PermanentError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'PermanentError';
  }
}

export const SEND_STEP_TYPES = ['email', 'invitation', 'message'] as const;
export const isSendStep = (type: string) => (SEND_STEP_TYPES as readonly string[]).includes(type);
/** Review waits this long for a person's decision; then the action is canceled and the enrollment stops (`review_expired`). */
export const REVIEW_DEADLINE_MS = 7 * 86_400_000;

/** Why the next action of an enrollment is not done yet (the `state` query, `waiting_reason`), at run time. */
export const WAITING_REASONS = [
  'waiting_for_window',
  'waiting_step_delay',
  'awaiting_review',
  /** The review deadline passed under the policy's `hold`: waiting for a person, without a deadline. */
  'review_held',
  'paused',
  'campaign_paused',
  'daily_new_lead_cap',
  'no_sender_account',
  'not_connected',
  /** The connector answered the account "rate limited": the account is throttled until the time it named (docs/governor.md). */
  'throttled',
  'cap_weekly',
  'cap_daily',
  'warmup',
  'outside_hours',
  'gap',
  /** The contact's out-of-office reply named a return date: held until the day after it (docs/email.md). */
  'out_of_office',
  /** Re-planned by `reschedule-overdue` / `reschedule-planned`: the slot request honours a later due time; an earlier one is signalled. */
  'rescheduled',
] as const;
export type WaitingReason = (typeof WAITING_REASONS)[number];

// ---------------------------------------------------------------------------------------------
// Sending windows (domain/campaigns/sending-windows.ts) and waits, in the campaign's time zone.

/** The end of a wait step from `from`: minutes, hours (fractions kept for rows written before minutes) or business days (Mon–Fri, same local time) in the zone. */
export function waitEnd(config: Record<string, unknown>, timeZone: string, from: Date): Date {
  const amount = Math.max(0, Number(config.amount ?? 0));
  if (config.unit === 'business_days') {
    const { date, minutes } = localParts(from, timeZone);
    let d = date;
    let left = Math.ceil(amount);
    while (left > 0) {
      d = addDays(d, 1);
      if (isoWeekday(d) <= 5) left--;
    }
    // Landing on a weekend start (amount 0 on a Saturday) moves to Monday.
    while (isoWeekday(d) > 5) d = addDays(d, 1);
    return d === date ? from : zonedTime(d, minutes, timeZone);
  }
  return new Date(from.getTime() + amount * (config.unit === 'minutes' ? 60_000 : 3_600_000));
}

// ---------------------------------------------------------------------------------------------
// Steps and versions.

interface EnrollmentCtx {
  id: string;
  workspace_id: string;
  campaign_id: string;
  lead_id: string;
  contact_id: string;
  status: string;
  step_version: number;
  account_id: string | null;
  run: number;
  replied_at: Date | null;
  c_status: string;
  c_version: number;
  time_zone: string;
  sending_windows: SendingWindows;
  account_ids: string[];
  rotation: string;
  daily_new_lead_cap: number | null;
  stop_on_reply: boolean;
  review_required: boolean;
  message_mode: string;
  window_time_zone: string;
  k_time_zone: string | null;
  k_country: string | null;
}

async function enrollmentCtx(em: EntityManager, enrollmentId: string): Promise<EnrollmentCtx> {
  const [row] = await em.execute<EnrollmentCtx[]>(
    `select e.id, e.workspace_id, e.campaign_id, e.lead_id, e.contact_id, e.status, e.step_version, e.account_id, e.run, e.replied_at,
            c.status as c_status, c.step_version as c_version, c.time_zone, c.sending_windows, c.account_ids, c.rotation, c.daily_new_lead_cap,
            c.stop_on_reply, c.review_required, c.message_mode, c.window_time_zone, k.time_zone as k_time_zone, k.country as k_country
       from enrollments e join campaigns c on c.id = e.campaign_id join contacts k on k.id = e.contact_id where e.id = ?`,
    [enrollmentId],
  );
  if (!row) throw new PermanentError('enrollment_missing', `enrollment ${enrollmentId} not found`);
  return row;
}

async function versionSteps(em: EntityManager, campaignId: string, version: number): Promise<VersionedStep[]> {
  const [row] = await em.execute<{ steps: VersionedStep[] }[]>(
    `select steps from campaign_step_versions where campaign_id = ? and version = ?`,
    [campaignId, version],
  );
  return [...(row?.steps ?? [])].sort((a, b) => a.position - b.position);
}

/** What the workflow needs of a step (config only for waits and conditions: sends read theirs when planned). */
export interface StepRef {
  id: string;
  type: string;
  index: number;
  config?: Record<string, unknown>;
}

export interface NextStepInput {
  enrollmentId: string;
  /** The version the enrollment runs now. */
  version: number;
  /** The step just finished (null at the start) and its index in `version`. */
  lastStepId: string | null;
  lastIndex: number;
  /** Start here instead (a re-enrollment from a given step); only with lastStepId null. */
  startAtStepId?: string | null;
}

/**
 * The next step at a step boundary, moving to the campaign's current version by the rule: steps not
 * yet reached come from the new version, done ones stay done, the current one has finished as
 * planned. So the next step is the one after the finished step's id in the new version; when the new
 * version dropped that step, the first one of the new version past the old index. Mirrors progress
 * on the enrollment row. `step: null` at the end of the sequence.
 */
export async function nextStep(
  em: EntityManager,
  input: NextStepInput,
  read?: PlanRead,
): Promise<{ version: number; step: StepRef | null }> {
  const ctx = await enrollmentCtx(em, input.enrollmentId);
  const version = Math.max(input.version, ctx.c_version);
  const steps = await versionSteps(em, ctx.campaign_id, version);
  if (read) Object.assign(read, { ctx, version, steps });
  let index: number;
  if (input.lastStepId === null) {
    index = input.startAtStepId
      ? Math.max(
          0,
          steps.findIndex((s) => s.id === input.startAtStepId),
        )
      : 0;
  } else {
    const at = steps.findIndex((s) => s.id === input.lastStepId);
    index = at >= 0 ? at + 1 : input.lastIndex + 1;
  }
  const s = steps[index] ?? null;
  await em.execute(
    `update enrollments set step_version = ?, current_position = ?, current_step_id = ?, updated_at = now() where id = ? and status in ('active', 'paused')`,
    [version, s ? index : null, s?.id ?? null, input.enrollmentId],
  );
  if (!s) return { version, step: null };
  return { version, step: { id: s.id, type: s.type, index, ...(isSendStep(s.type) ? {} : { config: s.config }) } };
}

// ---------------------------------------------------------------------------------------------
// Planning a send.

export interface PlanInput {
  enrollmentId: string;
  /** Minted by the workflow (deterministic), so a retried planning activity writes one row. */
  actionId: string;
  stepId: string;
  version: number;
  index: number;
  /** Not before this time (the end of preceding waits), ISO. */
  notBefore: string | null;
}

export interface PlanResult {
  actionId: string;
  dueAt: string;
  reason: WaitingReason;
  review: boolean;
  /** No sending window ever opens: the action is failed (`no_sending_window`). */
  failed?: string;
  /** The step is AI-written (`ai` / `ai_review`): the workflow asks for its draft next (absent from older results). */
  ai?: boolean;
  /**
   * Due when planned: the workflow goes on without a timer. (Its clock is the workflow task's start,
   * a few milliseconds behind `dueAt` when the plan ran as a local activity inside that task.)
   */
  dueNow?: boolean;
}

const channelOf = (type: string) => (type === 'email' ? 'email' : 'network');

/** The enrollment and its version's steps as `nextStep` read them, just before (a fused plan reads them once). */
export interface PlanRead {
  ctx?: EnrollmentCtx;
  version?: number;
  steps?: VersionedStep[];
}

/** What planning needs from the process beside the database. */
export interface PlanOptions {
  /** Read by the step boundary just before, in the same activity (`nextStepAndPlan`). */
  read?: PlanRead;
  /** The recipient's signed unsubscribe URL, for `{{unsubscribe_url}}` (absent: the variable has no value). */
  unsubscribeUrl?: (workspaceId: string, contactId: string) => string;
}

/** Writes the planned scheduled action: due time in the windows, rendered content, sender by rotation. */
export async function planAction(
  em: EntityManager,
  input: PlanInput,
  now = new Date(),
  opts: PlanOptions = {},
): Promise<PlanResult> {
  return em.transactional(async (tx) => {
    const [existing] = await tx.execute<{ due_at: Date; waiting_reason: string | null; state: string }[]>(
      `select due_at, waiting_reason, state from scheduled_actions where id = ?`,
      [input.actionId],
    );
    const read = opts.read?.ctx && opts.read.steps && opts.read.version === input.version ? opts.read : null;
    const ctx = read?.ctx ?? (await enrollmentCtx(tx as EntityManager, input.enrollmentId));
    const step = (read?.steps ?? (await versionSteps(tx as EntityManager, ctx.campaign_id, input.version))).find(
      (s) => s.id === input.stepId,
    );
    if (!step)
      throw new PermanentError('step_missing', `step ${input.stepId} not in version ${input.version} of the campaign`);
    // Review applies when the campaign requires it, or the step's message mode (else the campaign's) is AI-written with review.
    const mode = step.messageMode ?? ctx.message_mode;
    const review = ctx.review_required || mode === 'ai_review';
    const ai = mode === 'ai' || mode === 'ai_review';
    if (existing) {
      const dueAt = new Date(existing.due_at);
      return {
        actionId: input.actionId,
        dueAt: dueAt.toISOString(),
        reason: (existing.waiting_reason ?? 'waiting_for_window') as WaitingReason,
        review,
        ai,
        dueNow: dueAt <= now,
        ...(existing.state === 'failed' ? { failed: 'no_sending_window' } : {}),
      };
    }
    const from = input.notBefore && new Date(input.notBefore) > now ? new Date(input.notBefore) : now;
    let reason: WaitingReason =
      input.notBefore && new Date(input.notBefore) > now ? 'waiting_step_delay' : 'waiting_for_window';
    // The windows in the campaign's zone, or the recipient's (domain/campaigns/sending-windows.ts `sendingZone`).
    const zone = sendingZone(ctx.window_time_zone, ctx.time_zone, ctx.k_time_zone, ctx.k_country);
    let due = nextWindowOpening(ctx.sending_windows, zone, from);

    // The daily new-lead cap applies to an enrollment's first send: later local days when today's is full.
    const [{ n: previous }] = await tx.execute<{ n: number }[]>(
      `select count(*)::int as n from scheduled_actions where enrollment_id = ? and state <> 'canceled'`,
      [input.enrollmentId],
    );
    if (due && ctx.daily_new_lead_cap !== null && previous === 0) {
      await tx.execute(`select pg_advisory_xact_lock(hashtext(?))`, [`campaign-new-leads:${ctx.campaign_id}`]);
      for (let i = 0; i < 60 && due; i++) {
        const day = localDate(due, ctx.time_zone);
        const start = zonedTime(day, 0, ctx.time_zone);
        const end = zonedTime(addDays(day, 1), 0, ctx.time_zone);
        const [{ n }] = await tx.execute<{ n: number }[]>(
          `select count(*)::int as n from scheduled_actions a where a.campaign_id = ? and a.due_at >= ? and a.due_at < ? and a.state not in ('canceled')
             and not exists (select 1 from scheduled_actions p where p.enrollment_id = a.enrollment_id and p.created_at < a.created_at and p.state <> 'canceled')`,
          [ctx.campaign_id, start, end],
        );
        if (n < ctx.daily_new_lead_cap) break;
        reason = 'daily_new_lead_cap';
        due = nextWindowOpening(ctx.sending_windows, zone, end);
      }
    }

    const accountId = await pickAccount(tx as EntityManager, ctx, step.type);
    // An A/B step sends one of its variants (the winner once chosen), recorded on the action.
    const variant = await chooseVariant(tx as EntityManager, ctx, step);
    const content = await renderContent(
      tx as EntityManager,
      ctx,
      variant ? { ...step, config: variant.config } : step,
      accountId,
      opts,
    );
    const failed = due ? undefined : 'no_sending_window';
    // What a re-plan may move the action back to (reschedulePlanned). Not kept for a first send under
    // the daily new-lead cap: the re-plan does not count new leads, so it must not pull one earlier.
    const notBefore = ctx.daily_new_lead_cap !== null && previous === 0 ? null : from;
    await tx.execute(
      `insert into scheduled_actions (id, workspace_id, campaign_id, enrollment_id, lead_id, step_id, step_position, step_version, type, state, due_at, not_before, account_id, content,
         waiting_reason, error_code, attempts, variant_id, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, 0, ?, ?, ?) on conflict (id) do nothing`,
      [
        input.actionId,
        ctx.workspace_id,
        ctx.campaign_id,
        ctx.id,
        ctx.lead_id,
        step.id,
        input.index,
        input.version,
        step.type,
        failed ? 'failed' : 'planned',
        due ?? from,
        notBefore,
        accountId,
        JSON.stringify(content),
        failed ? null : reason,
        failed ?? null,
        variant?.id ?? null,
        now,
        now,
      ],
    );
    return {
      actionId: input.actionId,
      dueAt: (due ?? from).toISOString(),
      reason,
      review,
      ai,
      dueNow: !!due && due <= now,
      ...(failed ? { failed } : {}),
    };
  });
}

/**
 * The sender: a lead's later sends on a channel keep the account of its earlier ones (one
 * conversation); the first one on a channel follows the rotation — sticky keeps `enrollments.account_id`,
 * round_robin takes the next account in turn, least_used the one with the fewest slots granted today. Only connected accounts of the step's channel.
 */
async function pickAccount(em: EntityManager, ctx: EnrollmentCtx, type: string): Promise<string | null> {
  const channel = channelOf(type);
  const [prior] = await em.execute<{ account_id: string }[]>(
    `select a.account_id from scheduled_actions a join platform_accounts p on p.id = a.account_id
      where a.enrollment_id = ? and p.channel = ? and a.state = 'executed' order by a.executed_at desc limit 1`,
    [ctx.id, channel],
  );
  if (prior) return prior.account_id;
  if (!ctx.account_ids.length) return null;
  const candidates = await em.execute<{ id: string; today: number }[]>(
    `select p.id,
            ${ctx.rotation === 'least_used' ? `coalesce((select sum(u.count)::int from account_usage u where u.account_id = p.id and u.day = (now() at time zone p.time_zone)::date), 0)` : '0'} as today
       from platform_accounts p where p.id = any(?::uuid[]) and p.channel = ? and p.status = 'connected' and p.workspace_id = ?`,
    [`{${ctx.account_ids.join(',')}}`, channel, ctx.workspace_id],
  );
  if (!candidates.length) return null;
  const order = ctx.account_ids;
  candidates.sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
  if (ctx.rotation === 'sticky') {
    const kept = candidates.find((c) => c.id === ctx.account_id);
    if (kept) return kept.id;
    await em.execute(`update enrollments set account_id = ? where id = ?`, [candidates[0].id, ctx.id]);
    return candidates[0].id;
  }
  if (ctx.rotation === 'least_used') return candidates.sort((a, b) => a.today - b.today)[0].id;
  // round_robin: the campaign's turn counter on the channel gives concurrent plans consecutive
  // accounts (exact rotation, O(1)); its row lock lasts the rest of the plan (a render, an insert).
  const [{ turn }] = await em.execute<{ turn: string }[]>(
    `insert into campaign_rotations (campaign_id, channel, turn) values (?, ?, 1)
     on conflict (campaign_id, channel) do update set turn = campaign_rotations.turn + 1 returning turn`,
    [ctx.campaign_id, channel],
  );
  return candidates[(Number(turn) - 1) % candidates.length].id;
}

async function renderContent(
  em: EntityManager,
  ctx: EnrollmentCtx,
  step: VersionedStep,
  accountId: string | null,
  opts: PlanOptions = {},
): Promise<Record<string, unknown>> {
  const [c] = await em.execute<Record<string, string | null>[]>(
    `select first_name, last_name, full_name, company, title, country, email, profile_url, network_provider_id from contacts where id = ?`,
    [ctx.contact_id],
  );
  const [acc] = accountId
    ? await em.execute<{ display_name: string }[]>(`select display_name from platform_accounts where id = ?`, [
        accountId,
      ])
    : [];
  const values: TemplateValues = {
    first_name: c?.first_name,
    last_name: c?.last_name,
    full_name: c?.full_name ?? ([c?.first_name, c?.last_name].filter(Boolean).join(' ') || null),
    company: c?.company,
    title: c?.title,
    country: c?.country,
    email: c?.email,
    sender_name: acc?.display_name,
    unsubscribe_url: opts.unsubscribeUrl?.(ctx.workspace_id, ctx.contact_id),
  };
  const out: Record<string, unknown> = {};
  const missing = new Set<string>();
  for (const field of ['subject', 'body', 'note'] as const) {
    const tpl = step.config[field];
    if (typeof tpl !== 'string') continue;
    const r = renderTemplate(tpl, values);
    out[field] = r.text;
    r.missing.forEach((m) => missing.add(m));
  }
  out.recipient = step.type === 'email' ? (c?.email ?? null) : (c?.profile_url ?? c?.network_provider_id ?? null);
  if (missing.size) out.missing_variables = [...missing];
  return out;
}

// ---------------------------------------------------------------------------------------------
// Gates before a send.

/**
 * The campaign gate: the action's state (a person may have skipped or approved it) and the send-time
 * rule's verdict now (domain/enrollments/send-rule.ts). Inbound processing signals replies and bounces after its
 * commit; this is what stops the sequence when such a signal was lost.
 */
export async function gate(
  em: EntityManager,
  actionId: string,
): Promise<{
  campaignStatus: string;
  actionState: string;
  stopOnReply: boolean;
  enrollmentStatus: string;
  unsubscribed: boolean;
  replied: boolean;
  bounced: boolean;
  verdict: SendVerdict;
  /** The governor's grant recorded on the action (absent from results recorded before `enrollment-fused-steps`). */
  slotGrantedAt: Date | null;
}> {
  const f = await actionFacts(em, actionId);
  if (!f) throw new PermanentError('action_missing', `scheduled action ${actionId} not found`);
  return gateOf(f);
}

function gateOf(f: ActionFacts) {
  return {
    slotGrantedAt: f.slotGrantedAt,
    campaignStatus: f.campaignStatus,
    actionState: f.actionState,
    stopOnReply: f.stopOnReply,
    enrollmentStatus: f.enrollmentStatus,
    unsubscribed: f.unsubscribed,
    replied: f.replied,
    bounced: f.bounced,
    // The send-time rule's answer (workflows since `send-rule` act on this alone; the fields above are
    // what histories from before it read).
    verdict: sendVerdict(f),
  };
}

/** Records why the action waits and, when known, until when (`waiting_until`: the governor's retry time, the window's opening). */
export async function setWaitingReason(
  em: EntityManager,
  actionId: string,
  reason: WaitingReason | null,
  until: Date | null = null,
): Promise<void> {
  await em.execute(
    `update scheduled_actions set waiting_reason = ?, waiting_until = ?, updated_at = now()
      where id = ? and state in ('planned', 'awaiting_approval', 'approved') and (waiting_reason is distinct from ? or waiting_until is distinct from ?)`,
    [reason, until, actionId, reason, until],
  );
}

/** Puts the action up for review; returns its state (already `approved` or `skipped` when a person decided first). */
export async function requestReview(em: EntityManager, actionId: string): Promise<string> {
  const [r] = await em.execute<{ state: string }[]>(
    `update scheduled_actions set state = case when state = 'planned' then 'awaiting_approval' else state end,
       waiting_reason = case when state = 'planned' then 'awaiting_review' else waiting_reason end, updated_at = now()
     where id = ? returning state`,
    [actionId],
  );
  // The review queue shows when a draft's review ends: now + the policy's hours (docs/message-review.md).
  await em.execute(
    `update message_drafts d set deadline_at = now() + coalesce((c.review_policy->>'deadlineHours')::int, 168) * interval '1 hour', updated_at = now()
       from campaigns c where c.id = d.campaign_id and d.action_id = ? and d.deadline_at is null`,
    [actionId],
  );
  return r.state;
}

/** The review deadline passed: the action is canceled (`review_expired`), or skipped when `skip` (a draft's policy); its draft expires. */
export async function expireReview(em: EntityManager, actionId: string, skip = false): Promise<string> {
  return em.transactional(async (tx) => {
    const [r] = await tx.execute<{ state: string }[]>(
      `update scheduled_actions set state = case when state = 'awaiting_approval' then ? else state end,
         error_code = case when state = 'awaiting_approval' then 'review_expired' else error_code end, waiting_reason = case when state = 'awaiting_approval' then null else waiting_reason end,
         updated_at = now() where id = ? returning state`,
      [skip ? 'skipped' : 'canceled', actionId],
    );
    await tx.execute(
      `update message_drafts set status = 'expired', updated_at = now() where action_id = ? and status in ('awaiting_review', 'failed')`,
      [actionId],
    );
    return r.state;
  });
}

export type SlotResult =
  | { granted: true; grantedAt: string }
  | { granted: false; reason: WaitingReason; retryAt: string | null }
  | { granted: false; gone: string }
  /** The send-time rule stopped the enrollment (absent from results recorded before `send-rule`). */
  | { granted: false; stop: { status: string; reason: string } };

/**
 * At execution time: the campaign's window again (a paused or delayed action may have slipped out of
 * it), then the sender account's governor. A refusal's reason is recorded on the action.
 */
export async function acquireSlot(
  em: EntityManager,
  actionId: string,
  now = new Date(),
  facts?: ActionFacts,
): Promise<SlotResult> {
  // One read: the action, the facts of the send-time rule and the window (`facts`: the gate's, read at `now` just before).
  const a = facts ?? (await actionFacts(em, actionId, { now }));
  if (!a) throw new PermanentError('action_missing', `scheduled action ${actionId} not found`);
  // Local activities run again after a lost workflow task: a slot already granted (and maybe a send
  // already claimed, `executing`) is the answer again, never a second slot.
  if (a.slotGrantedAt && ['planned', 'approved', 'awaiting_approval', 'executing'].includes(a.actionState))
    return { granted: true, grantedAt: a.slotGrantedAt.toISOString() };
  if (!['planned', 'approved', 'awaiting_approval'].includes(a.actionState))
    return { granted: false, gone: a.actionState };
  // The send-time rule after every wait: a stop ends the enrollment; a pause holds it (the workflow
  // waits for the resume). The window and the account are the governor's to answer, with a retry time.
  const verdict = sendVerdict(a);
  if ('stop' in verdict) return { granted: false, stop: verdict.stop };
  if ('hold' in verdict && (verdict.hold === 'campaign_paused' || verdict.hold === 'paused')) {
    await setWaitingReason(em, actionId, verdict.hold);
    return { granted: false, reason: verdict.hold, retryAt: null };
  }
  if ('hold' in verdict && verdict.hold === 'out_of_office') {
    await setWaitingReason(em, actionId, 'out_of_office', a.outOfOfficeUntil);
    return { granted: false, reason: 'out_of_office', retryAt: a.outOfOfficeUntil?.toISOString() ?? null };
  }
  // The row's due time is the truth: an action re-planned later (reschedule routes) waits for it here,
  // so a workflow whose timer was set for the old time follows the new one without a signal.
  const due = a.dueAt;
  if (due.getTime() > now.getTime() + 1000) {
    await setWaitingReason(em, actionId, 'rescheduled', due);
    return { granted: false, reason: 'rescheduled', retryAt: due.toISOString() };
  }
  const open = a.windowOpensAt;
  if (!open || open > now) {
    await setWaitingReason(em, actionId, 'waiting_for_window', open);
    return { granted: false, reason: 'waiting_for_window', retryAt: open?.toISOString() ?? null };
  }
  if (!a.accountId) {
    await setWaitingReason(em, actionId, 'no_sender_account');
    return { granted: false, reason: 'no_sender_account', retryAt: null };
  }
  const answer = await requestSlot(em, a.accountId, a.actionType as 'email' | 'invitation' | 'message', { now });
  if (answer.granted) {
    await em.execute(`update scheduled_actions set slot_granted_at = ?, updated_at = now() where id = ?`, [
      answer.grantedAt,
      actionId,
    ]);
    return { granted: true, grantedAt: answer.grantedAt.toISOString() };
  }
  // A disconnected account names no time: ask again in a few minutes, so a reconnection is picked
  // up soon (the workflow's own default would be an hour).
  const retryAt =
    answer.retryAt ?? (answer.reason === 'not_connected' ? new Date(now.getTime() + NOT_CONNECTED_RECHECK_MS) : null);
  await setWaitingReason(em, actionId, answer.reason, retryAt);
  return { granted: false, reason: answer.reason, retryAt: retryAt?.toISOString() ?? null };
}

/** How soon a send refused for a disconnected sender account asks again. */
export const NOT_CONNECTED_RECHECK_MS = 5 * 60_000;

/**
 * After an activity of the action was halted between attempts (a stop committed while it was being
 * retried): the slot the action was granted goes back unless its send was claimed, since the step is
 * asked again from the start if it runs at all.
 */
export async function giveBackUnusedGrant(em: EntityManager, actionId: string): Promise<void> {
  const [a] = await em.execute<{ slot_granted_at: Date | null }[]>(
    `select slot_granted_at from scheduled_actions where id = ? and state not in ('executing', 'executed')`,
    [actionId],
  );
  if (a?.slot_granted_at) await giveBackSlot(em, actionId, new Date(a.slot_granted_at).toISOString());
}

/** Gives a granted slot back when the action was not sent after all (stopped between grant and send). */
export async function giveBackSlot(em: EntityManager, actionId: string, grantedAt: string): Promise<void> {
  const [a] = await em.execute<{ account_id: string | null; type: string }[]>(
    `update scheduled_actions set slot_granted_at = null where id = ? and slot_granted_at is not null returning account_id, type`,
    [actionId],
  );
  // Only the call that cleared the grant releases it: a re-run gives nothing back twice.
  if (a?.account_id) await releaseSlot(em, a.account_id, a.type as 'email', new Date(grantedAt));
}

// ---------------------------------------------------------------------------------------------
// The send.

export interface SendOptions {
  /** Test hook (EXECUTOR_TEST_PAUSE_AFTER_SEND_MS): a pause between the connector's answer and recording it. */
  pauseAfterSendMs?: number;
  /** The recipient's signed one-click unsubscribe URL (domain/suppressions/unsubscribe.ts); absent: no List-Unsubscribe URL. */
  unsubscribeUrl?: (workspaceId: string, contactId: string) => string;
  /** The action's signed open-pixel and click-redirect URLs (domain/tracking/token.ts); used when the campaign tracks. */
  trackingUrls?: (actionId: string) => { open: string; click: (index: number) => string };
}

/**
 * What an email carries beside its content (docs/email.md "What we send"): the earlier emails of the
 * same enrollment to the same address from the same account, oldest first, so a follow-up goes in
 * their thread ("Re: " + the first subject, In-Reply-To / References); the recipient's unsubscribe
 * URL; the workspace's footer.
 */
async function emailContext(
  em: EntityManager,
  actionId: string,
  recipient: string,
  opts: SendOptions,
): Promise<{
  threadId: string | null;
  references: string[];
  threadSubject: string | null;
  unsubscribeUrl: string | null;
  footer: string | null;
  tracking?: { openUrl: string | null; clickUrl: ((index: number) => string) | null };
}> {
  const rows = await em.execute<
    {
      message_id: string | null;
      thread_id: string | null;
      subject: string | null;
      workspace_id: string;
      contact_id: string;
      footer: string | null;
      own: boolean;
      opens: boolean;
      clicks: boolean;
    }[]
  >(
    `select p.connector_message_id as message_id, p.connector_thread_id as thread_id, p.content->>'subject' as subject, a.workspace_id, e.contact_id, w.email_footer as footer, p.id = a.id as own,
            c.track_opens as opens, c.track_clicks as clicks
       from scheduled_actions a join enrollments e on e.id = a.enrollment_id join workspaces w on w.id = a.workspace_id join campaigns c on c.id = a.campaign_id
       join scheduled_actions p on p.id = a.id or (p.enrollment_id = a.enrollment_id and p.account_id = a.account_id and p.type = 'email' and p.state = 'executed'
                                                   and p.connector_message_id is not null and lower(p.content->>'recipient') = lower(?))
      where a.id = ? order by p.id = a.id, p.executed_at, p.id`,
    [recipient, actionId],
  );
  const earlier = rows.filter((r) => !r.own && r.message_id);
  const self = rows.find((r) => r.own)!;
  return {
    threadId: earlier[0]?.thread_id ?? null,
    references: earlier.map((r) => r.message_id!),
    threadSubject: earlier[0]?.subject ?? null,
    unsubscribeUrl: opts.unsubscribeUrl ? opts.unsubscribeUrl(self.workspace_id, self.contact_id) : null,
    footer: self.footer,
    tracking: trackingOf(self, actionId, opts),
  };
}

/** The campaign's opt-in tracking (off by default) as URLs for this action (docs/tracking.md). */
function trackingOf(c: { opens: boolean; clicks: boolean }, actionId: string, opts: SendOptions) {
  if (!opts.trackingUrls || !(c.opens || c.clicks)) return undefined;
  const urls = opts.trackingUrls(actionId);
  return { openUrl: c.opens ? urls.open : null, clickUrl: c.clicks ? urls.click : null };
}

export type SendOutcome =
  | {
      outcome: 'executed' | 'failed' | 'skipped' | 'canceled';
      errorCode?: string;
      /** Set when the send-time rule ended the enrollment. */ status?: string;
      stopReason?: string;
    }
  /** The send-time rule held the send (a pause, a disconnected account, a closed window): ask for a slot again. */
  | { outcome: 'held'; reason: WaitingReason };

type Claim = SendOutcome | ({ outcome: 'claimed' } & Awaited<ReturnType<typeof actionFacts>> & {});

/**
 * The claim: the one point where a send becomes irreversible, so the send-time rule's final answer.
 * Under the locks `actionFacts` takes, the action moves to `executing` (with `claimed_at`) only when
 * the rule says send; a stop ends the enrollment and cancels its unsent actions here, a hold records
 * why on the action. An action already `executing` is a retry of a claimed send: it goes on.
 */
export async function claimSend(em: EntityManager, actionId: string): Promise<Claim> {
  // Counted once committed: a stop or a hold decided here (a retry of a final action decides nothing).
  let decided: { channel: string; outcome: 'canceled' | 'held' } | undefined;
  const claim = await em.transactional(async (tx): Promise<Claim> => {
    const f = await actionFacts(tx as EntityManager, actionId, { lock: true });
    if (!f) throw new PermanentError('action_missing', `scheduled action ${actionId} not found`);
    if (['executed', 'failed', 'skipped', 'canceled'].includes(f.actionState))
      return { outcome: f.actionState as 'executed', ...(f.errorCode ? { errorCode: f.errorCode } : {}) };
    if (f.actionState !== 'executing') {
      const v = sendVerdict(f);
      if ('stop' in v) {
        await tx.execute(
          `update enrollments set status = ?, stop_reason = ?, finished_at = coalesce(finished_at, now()), current_position = null, current_step_id = null, updated_at = now()
            where id = ? and status in ('active', 'paused')`,
          [v.stop.status, v.stop.reason, f.enrollmentId],
        );
        await tx.execute(
          `update scheduled_actions set state = 'canceled', error_code = coalesce(error_code, ?), waiting_reason = null, updated_at = now() where enrollment_id = ? and state in ('planned', 'awaiting_approval', 'approved')`,
          [v.stop.reason, f.enrollmentId],
        );
        decided = { channel: f.actionType, outcome: 'canceled' };
        return { outcome: 'canceled', errorCode: v.stop.reason, status: v.stop.status, stopReason: v.stop.reason };
      }
      if ('hold' in v) {
        await tx.execute(
          `update scheduled_actions set waiting_reason = ?, waiting_until = null, updated_at = now() where id = ?`,
          [v.hold, actionId],
        );
        decided = { channel: f.actionType, outcome: 'held' };
        return { outcome: 'held', reason: v.hold };
      }
    }
    await tx.execute(
      `update scheduled_actions set state = 'executing', attempts = attempts + 1, claimed_at = coalesce(claimed_at, clock_timestamp()), waiting_reason = null, updated_at = now() where id = ?`,
      [actionId],
    );
    return { outcome: 'claimed', ...f };
  });
  if (decided) countSend(decided.channel, decided.outcome);
  return claim;
}

/**
 * Puts a claimed action back (its state before the claim, waiting `not_connected`, its slot given
 * back) when its account is no longer connected: the connector refused the send because of that.
 * False when the account is still connected (the refusal is the send's own) or the action moved on.
 */
async function unclaimDisconnected(
  em: EntityManager,
  actionId: string,
  before: string,
  connectorAccountId: string,
  grantedAt: string,
): Promise<boolean> {
  return em.transactional(async (tx) => {
    const r = await tx.execute(
      `update scheduled_actions set state = case when ?::text = 'executing' then 'planned' else ?::text end, waiting_reason = 'not_connected', waiting_until = null, updated_at = now()
        where id = ? and state = 'executing'
          and exists (select 1 from platform_accounts p where p.connector_account_id = ? and p.status <> 'connected')
        returning id`,
      [before, before, actionId, connectorAccountId],
    );
    if (r.length) await giveBackSlot(tx as EntityManager, actionId, grantedAt);
    return r.length > 0;
  });
}

/**
 * Puts a claimed action back (its state before the claim) when the connector answered "rate limited":
 * nothing went out, the account is throttled until `until` (domain/accounts/refusals.ts did it as the
 * refusal passed the routing connector), so the action waits `throttled` until then, its slot given
 * back. False when the action moved on meanwhile.
 */
async function unclaimThrottled(
  em: EntityManager,
  actionId: string,
  before: string,
  grantedAt: string,
  until: Date,
): Promise<boolean> {
  return em.transactional(async (tx) => {
    const r = await tx.execute(
      `update scheduled_actions set state = case when ?::text = 'executing' then 'planned' else ?::text end, waiting_reason = 'throttled', waiting_until = ?, updated_at = now()
        where id = ? and state = 'executing' returning id`,
      [before, before, until, actionId],
    );
    if (r.length) await giveBackSlot(tx as EntityManager, actionId, grantedAt);
    return r.length > 0;
  });
}

/** The account's throttle as the governor holds it (set by the refusal), else `fallback`. */
async function throttledUntil(em: EntityManager, actionId: string, fallback: Date): Promise<Date> {
  const [r] = await em.execute<{ throttled_until: string | Date | null }[]>(
    `select g.throttled_until from scheduled_actions a join account_governors g on g.account_id = a.account_id where a.id = ?`,
    [actionId],
  );
  const t = r?.throttled_until ? new Date(r.throttled_until) : null;
  return t && t > fallback ? t : fallback;
}

/**
 * Connector refusals whose reason is the failure's code (`connector_<reason>`): the recipient, not the
 * call, is what failed, and the code says so. Other refusals fail `connector_<code>`.
 */
export const RECIPIENT_REFUSALS: ReadonlySet<string> = new Set([
  'invalid_recipient',
  'already_connected',
  'already_invited',
  'user_unreachable',
  'blocked_recipient',
  'no_connection_with_recipient',
  'cannot_invite_attendee',
  'not_allowed_inmail',
  'note_too_long',
]);

/**
 * Sends the action once. Claims it (`claimSend`: the send-time rule, then `executing`), sends with the action id as the
 * connector's idempotency key, then records the connector's ids, `executed` and `action.executed` in
 * one transaction. A retry (crash anywhere in between) finds `executing` and sends again with the same
 * key, which the connector answers with the first send's ids: the lead receives it once. A connector
 * failure that is not retryable marks `failed` and gives the slot back; a retryable one is thrown so
 * the activity retries.
 */
export async function sendAction(
  em: EntityManager,
  connector: AccountConnector,
  actionId: string,
  grantedAt: string,
  opts: SendOptions = {},
): Promise<SendOutcome> {
  const claim = await claimSend(em, actionId);
  if (claim.outcome !== 'claimed') {
    // Not sent: a slot granted for it goes back unused (one call clears the grant, so never twice).
    if (claim.outcome !== 'executed' && claim.outcome !== 'failed') await giveBackSlot(em, actionId, grantedAt);
    return claim;
  }

  const fail = async (code: string, message: string) => {
    const failedNow = await em.transactional(async (tx) => {
      const r = await tx.execute(
        `update scheduled_actions set state = 'failed', error_code = ?, error_message = ?, updated_at = now() where id = ? and state = 'executing' returning id`,
        [code, message.slice(0, 500), actionId],
      );
      if (r.length) await giveBackSlot(tx as EntityManager, actionId, grantedAt);
      return r.length > 0;
    });
    if (failedNow) countSend(claim.actionType, 'failed');
    return { outcome: 'failed' as const, errorCode: code };
  };
  const content = claim.content ?? {};
  const recipient = content.recipient as string | null;
  if (!claim.connectorAccountId)
    return fail('no_sender_account', 'the sender account is not attached to the connector');
  if (!recipient)
    return fail('no_identity', `the lead has no ${claim.actionType === 'email' ? 'email address' : 'profile URL'}`);
  if (content.draft_failed)
    return fail('draft_failed', `the AI-written draft failed (${String(content.draft_failed)}) and was never fixed`);
  if (Array.isArray(content.missing_variables) && content.missing_variables.length) {
    return fail(
      'missing_variables',
      `template variables without a value: ${(content.missing_variables as string[]).join(', ')}`,
    );
  }

  let ids: { messageId: string; threadId: string | null; sentCopyError?: string; recipientId?: string };
  try {
    if (claim.actionType === 'email') {
      const mail = await emailContext(em, actionId, recipient, opts);
      const r = await connector.sendEmail(claim.connectorAccountId!, {
        idempotencyKey: actionId,
        to: recipient,
        subject: String(content.subject ?? ''),
        body: String(content.body ?? ''),
        ...mail,
        // Claimed before: the first attempt's outcome is unknown, so a connector that can look for it does.
        retry: claim.actionState === 'executing',
      });
      ids = r;
    } else if (claim.actionType === 'invitation') {
      const r = await connector.sendInvitation(claim.connectorAccountId!, {
        idempotencyKey: actionId,
        recipient,
        body: String(content.note ?? ''),
        retry: claim.actionState === 'executing',
      });
      ids = { messageId: r.invitationId, threadId: null, recipientId: r.recipientId };
    } else {
      const r = await connector.sendMessage(claim.connectorAccountId!, {
        idempotencyKey: actionId,
        recipient,
        body: String(content.body ?? ''),
        retry: claim.actionState === 'executing',
      });
      ids = r;
    }
  } catch (err) {
    if (err instanceof ProviderError && err.code === 'rate_limited') {
      // Refused for the account's rate: nothing went out, and the account is throttled; the action
      // waits `throttled` and asks the governor again (refused `throttled` until the time named).
      // The account's throttle is read back; should that fail, the same rule decides the time.
      const effect = refusalEffect(err);
      const fallback = effect?.kind === 'throttled' ? effect.until : new Date(Date.now() + 60_000);
      const until = await throttledUntil(em, actionId, fallback);
      if (await unclaimThrottled(em, actionId, claim.actionState, grantedAt, until))
        return { outcome: 'held', reason: 'throttled' };
      throw err;
    }
    if (err instanceof ProviderError && !err.retryable) {
      // Refused because the account was disconnected meanwhile (an OAuth grant found revoked while
      // sending: docs/email.md; a LinkedIn account restricted: domain/accounts/refusals.ts): nothing
      // went out, so the action is held `not_connected` like any send of a disconnected account, and
      // goes out once the account is connected again.
      if (await unclaimDisconnected(em, actionId, claim.actionState, claim.connectorAccountId!, grantedAt))
        return { outcome: 'held', reason: 'not_connected' };
      const reason = err.details.reason;
      return fail(
        reason && RECIPIENT_REFUSALS.has(reason) ? `connector_${reason}` : `connector_${err.code}`,
        err.message,
      );
    }
    throw err;
  }
  if (opts.pauseAfterSendMs) await new Promise((r) => setTimeout(r, opts.pauseAfterSendMs));

  const executedNow = await em.transactional(async (tx) => {
    const [done] = await tx.execute<{ workspace_id: string; type: string; lead_id: string; campaign_id: string }[]>(
      `update scheduled_actions set state = 'executed', executed_at = now(), connector_message_id = ?, connector_thread_id = ?, connector_recipient_id = ?, waiting_reason = null,
              error_code = coalesce(?, error_code), error_message = coalesce(?, error_message), updated_at = now()
        where id = ? and state = 'executing' returning workspace_id, type, lead_id, campaign_id`,
      // Sent, but its copy is missing from the mailbox's Sent folder (docs/email.md): said on the action.
      [
        ids.messageId,
        ids.threadId,
        ids.recipientId?.slice(0, 200) ?? null,
        ids.sentCopyError ? 'sent_copy_failed' : null,
        ids.sentCopyError ?? null,
        actionId,
      ],
    );
    if (done && ids.recipientId) {
      // The member id the connector resolved: the contact's identity on the network (replies come from it).
      await tx.execute(
        `update contacts c set network_provider_id = ?, updated_at = now() from leads l where l.id = ? and c.id = l.contact_id and c.network_provider_id is null`,
        [ids.recipientId.slice(0, 200), done.lead_id],
      );
    }
    if (done) {
      await emitEvent(tx as EntityManager, done.workspace_id, 'action.executed', {
        action_id: actionId,
        action_type: done.type,
        lead_id: done.lead_id,
        campaign_id: done.campaign_id,
      });
    }
    return !!done;
  });
  if (executedNow) countSend(claim.actionType, 'executed');
  return { outcome: 'executed' };
}

// ---------------------------------------------------------------------------------------------
// Conditions, replies, the end.

/** Whether a condition step holds on the enrollment's previous send (accepted, opened, clicked) or on the enrollment (replied). */
export async function checkCondition(
  em: EntityManager,
  enrollmentId: string,
  previousActionId: string | null,
  config: Record<string, unknown>,
): Promise<boolean> {
  const expect = config.expect !== false;
  let observed = false;
  if (config.check === 'replied') {
    const [r] = await em.execute<{ replied: boolean }[]>(
      `select (e.replied_at is not null or exists (select 1 from scheduled_actions a where a.enrollment_id = e.id and a.replied_at is not null)) as replied from enrollments e where e.id = ?`,
      [enrollmentId],
    );
    observed = !!r?.replied;
  } else if (
    previousActionId &&
    (config.check === 'accepted' || config.check === 'opened' || config.check === 'clicked')
  ) {
    // opened_at and clicked_at hold a person's first open and click only (domain/tracking/record.ts): a machine's never satisfies a condition.
    const [r] = await em.execute<{ accepted_at: Date | null; opened_at: Date | null; clicked_at: Date | null }[]>(
      `select accepted_at, opened_at, clicked_at from scheduled_actions where id = ?`,
      [previousActionId],
    );
    observed = !!(config.check === 'accepted'
      ? r?.accepted_at
      : config.check === 'opened'
        ? r?.opened_at
        : r?.clicked_at);
  }
  return observed === expect;
}

/** A reply reached the enrollment: recorded; true when the campaign stops on reply. */
export async function recordReply(em: EntityManager, enrollmentId: string): Promise<boolean> {
  const [r] = await em.execute<{ stop_on_reply: boolean }[]>(
    `with e as (update enrollments set replied_at = coalesce(replied_at, now()), updated_at = now() where id = ? returning campaign_id)
     select c.stop_on_reply from campaigns c join e on e.campaign_id = c.id`,
    [enrollmentId],
  );
  return !!r?.stop_on_reply;
}

/**
 * The enrollment's own pause (the workflow's `pause` signal): its status, and its unsent action says
 * `paused`; on resume the action gets back the reason it had (`restore`), so stored state stays true.
 */
export async function setEnrollmentPaused(
  em: EntityManager,
  enrollmentId: string,
  paused: boolean,
  restore?: WaitingReason | null,
): Promise<void> {
  await em.execute(`update enrollments set status = ?, updated_at = now() where id = ? and status = ?`, [
    paused ? 'paused' : 'active',
    enrollmentId,
    paused ? 'active' : 'paused',
  ]);
  await em.execute(
    `update scheduled_actions set waiting_reason = ?, updated_at = now() where enrollment_id = ? and state in ('planned', 'awaiting_approval', 'approved') and (? or waiting_reason = 'paused')`,
    [paused ? 'paused' : (restore ?? null), enrollmentId, paused],
  );
}

/**
 * Where an enrollment whose activity was halted between attempts stands: its own status and the
 * campaign's (the workflow holds, ends or tries the step again).
 */
export async function enrollmentStanding(
  em: EntityManager,
  enrollmentId: string,
): Promise<{ enrollmentStatus: string; stopReason: string | null; campaignStatus: string }> {
  const [r] = await em.execute<{ status: string; stop_reason: string | null; c_status: string }[]>(
    `select e.status, e.stop_reason, c.status as c_status from enrollments e join campaigns c on c.id = e.campaign_id where e.id = ?`,
    [enrollmentId],
  );
  if (!r) return { enrollmentStatus: 'failed', stopReason: 'enrollment_missing', campaignStatus: 'archived' };
  return { enrollmentStatus: r.status, stopReason: r.stop_reason, campaignStatus: r.c_status };
}

/**
 * An error that retrying cannot fix (or retries ran out): the action (when one is under way and not
 * sent) ends `failed` with the code, the enrollment ends `failed` with it as reason, and the
 * campaign's members are told once. Returns the enrollment's final status and reason (a stop that
 * committed first, e.g. a removal, is kept).
 */
export async function failEnrollment(
  em: EntityManager,
  enrollmentId: string,
  actionId: string | null,
  code: string,
  message: string,
): Promise<{ status: string; stop_reason: string | null }> {
  return em.transactional(async (tx) => {
    if (actionId) {
      await tx.execute(
        `update scheduled_actions set state = 'failed', error_code = ?, error_message = ?, waiting_reason = null, updated_at = now() where id = ? and state in ('planned', 'awaiting_approval', 'approved', 'executing')`,
        [code.slice(0, 60), message.slice(0, 500), actionId],
      );
    }
    const [e] = await tx.execute<{ workspace_id: string; campaign_id: string; lead_id: string; name: string | null }[]>(
      `update enrollments e set status = 'failed', stop_reason = ?, finished_at = coalesce(finished_at, now()), current_position = null, current_step_id = null, updated_at = now()
         from campaigns c where e.id = ? and c.id = e.campaign_id and e.status in ('active', 'paused') returning e.workspace_id, e.campaign_id, e.lead_id, c.name`,
      [code.slice(0, 60), enrollmentId],
    );
    await tx.execute(
      `update scheduled_actions set state = 'canceled', error_code = coalesce(error_code, ?), waiting_reason = null, updated_at = now() where enrollment_id = ? and state in ('planned', 'awaiting_approval', 'approved')`,
      [code.slice(0, 60), enrollmentId],
    );
    if (e) {
      await notify(tx as EntityManager, e.workspace_id, {
        kind: 'enrollment.failed',
        title: `A lead's sequence failed in ${e.name ?? 'a campaign'}`,
        body: `The enrollment stopped for good (${code}): ${message.slice(0, 200)}`,
        data: { campaign_id: e.campaign_id, lead_id: e.lead_id, enrollment_id: enrollmentId, error_code: code },
        key: `enrollment_failed:${enrollmentId}`,
      });
    }
    const [now] = await tx.execute<{ status: string; stop_reason: string | null }[]>(
      `select status, stop_reason from enrollments where id = ?`,
      [enrollmentId],
    );
    return now ?? { status: 'failed', stop_reason: code };
  });
}

/**
 * Ends the enrollment (idempotent; a `removed` set by the unenroll route is kept): its status and
 * reason, and every action not yet sent is canceled.
 */
export async function finishEnrollment(
  em: EntityManager,
  enrollmentId: string,
  status: string,
  stopReason: string | null,
): Promise<void> {
  await em.transactional(async (tx) => {
    await tx.execute(
      `update enrollments set status = ?, stop_reason = ?, finished_at = coalesce(finished_at, now()), current_position = null, current_step_id = null, updated_at = now()
        where id = ? and status in ('active', 'paused')`,
      [status, stopReason, enrollmentId],
    );
    await tx.execute(
      `update scheduled_actions set state = 'canceled', error_code = coalesce(error_code, ?), waiting_reason = null, updated_at = now()
        where enrollment_id = ? and state in ('planned', 'awaiting_approval', 'approved')`,
      [stopReason ?? status, enrollmentId],
    );
  });
}

// ---------------------------------------------------------------------------------------------
// Fused steps (patch `enrollment-fused-steps`): what always runs back to back, in one activity.

/** `nextStep`, then, when the step is a send, its plan (`plan`), or, at the end, the enrollment finished `completed` (`finishWhenDone`). */
export interface NextAndPlanInput extends NextStepInput {
  /**
   * Plan a send step at once: with `reuse.actionId` when the step is `reuse.stepId` (a step tried again
   * after a halt keeps its action), else with `actionId` (minted by the workflow).
   */
  plan?: { actionId: string; reuse: { stepId: string; actionId: string } | null; notBefore: string | null };
  finishWhenDone?: boolean;
}

export async function nextStepAndPlan(
  em: EntityManager,
  input: NextAndPlanInput,
  opts: PlanOptions = {},
): Promise<{ version: number; step: StepRef | null; plan?: PlanResult; finished?: boolean }> {
  const read: PlanRead = {};
  const next = await nextStep(em, input, read);
  if (!next.step) {
    if (!input.finishWhenDone) return next;
    await finishEnrollment(em, input.enrollmentId, 'completed', null);
    return { ...next, finished: true };
  }
  if (!input.plan || !isSendStep(next.step.type)) return next;
  const { reuse } = input.plan;
  const actionId = reuse && reuse.stepId === next.step.id ? reuse.actionId : input.plan.actionId;
  const plan = await planAction(
    em,
    {
      enrollmentId: input.enrollmentId,
      actionId,
      stepId: next.step.id,
      version: next.version,
      index: next.step.index,
      notBefore: input.plan.notBefore,
    },
    new Date(),
    { ...opts, read },
  );
  return { ...next, plan };
}

export type GateResult = Awaited<ReturnType<typeof gate>>;

/** Whether the workflow goes on from the gate to the governor (its `campaignGate` says 'go'). */
function gateGoes(g: GateResult): boolean {
  if (g.actionState === 'skipped' || !g.verdict) return false;
  if ('stop' in g.verdict || g.actionState === 'canceled') return false;
  return !('hold' in g.verdict) || g.verdict.hold !== 'campaign_paused';
}

/**
 * The campaign gate, the slot request and the send, which run back to back when no review applies:
 * the gate's answer; when it lets the action go, the slot request's; when that grants, the send's
 * (whose claim applies the send-time rule under its locks, the final answer, as alone). A re-run after
 * a slot was granted (a retried attempt, a lost workflow task) goes straight to the slot request,
 * which answers with that grant, and the send, whose claim gives the slot back on a stop or hold.
 */
export async function gateSlotAndSend(
  em: EntityManager,
  connector: AccountConnector,
  actionId: string,
  opts: SendOptions = {},
): Promise<{ gate: GateResult; slot?: SlotResult; send?: SendOutcome }> {
  const now = new Date();
  const f = await actionFacts(em, actionId, { now });
  if (!f) throw new PermanentError('action_missing', `scheduled action ${actionId} not found`);
  const g = gateOf(f);
  const granted =
    g.slotGrantedAt !== null && ['planned', 'approved', 'awaiting_approval', 'executing'].includes(g.actionState);
  if (!granted && !gateGoes(g)) return { gate: g };
  const slot = await acquireSlot(em, actionId, now, f);
  if (!('granted' in slot) || !slot.granted) return { gate: g, slot };
  const send = await sendAction(em, connector, actionId, slot.grantedAt, opts);
  return { gate: g, slot, send };
}
