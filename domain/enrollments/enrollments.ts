// Enrolling leads in campaigns and acting on running enrollments and their scheduled actions
// (docs/executor.md). Per-lead checks live in `checkLeadsForCampaign`, shared by the bulk enroll and
// the enrollment preview. Workflows are reached through the Jobs port only.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ICampaign } from '../../db/entities/Campaign.js';
import { Enrollment, type IEnrollment } from '../../db/entities/Enrollment.js';
import { ScheduledAction, type IScheduledAction } from '../../db/entities/ScheduledAction.js';
import type { VersionedStep } from '../../db/entities/CampaignStepVersion.js';
import { uuidv7 } from '../../lib/ids.js';
import { requireCampaign } from '../campaigns/campaigns.js';
import { assertWritable } from '../demo/demo.js';
import { AppError, conflict, notFound } from '../errors.js';
import { isSendStep } from './executor.js';
import { canAccessApp, type Actor } from '../identity.js';
import type { Jobs } from '../jobs.js';

export const SKIP_REASONS = [
  'not_found',
  'already_enrolled',
  'unsubscribed',
  'no_identity',
  'email_bounced',
  'suppressed',
  'blocked_country',
  'in_other_campaign',
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export interface LeadCheck {
  leadId: string;
  ok: boolean;
  reason: SkipReason | null;
  contactId: string | null;
}

// One requireCampaign (domain/campaigns/campaigns.ts); re-exported for the enrollment code that imports it here.
export { requireCampaign };

/** The steps of the campaign's current version. */
export async function currentSteps(em: EntityManager, campaign: ICampaign): Promise<VersionedStep[]> {
  const [row] = await em.execute<{ steps: VersionedStep[] }[]>(
    `select steps from campaign_step_versions where campaign_id = ? and version = ?`,
    [campaign.id, campaign.stepVersion],
  );
  return [...(row?.steps ?? [])].sort((a, b) => a.position - b.position);
}

/**
 * Checks each lead against the campaign, without writing: the lead exists in the workspace, has no
 * enrollment in this campaign yet (an ended one restarts only through `reenroll`), has an identity on the first send step's channel (an email address for email, a
 * profile URL or network id for the network) and, for an email first send, an address that has not
 * bounced, is not in a country the campaign's country rule
 * blocks (an allow rule also refuses an unknown country), and, when the campaign has exclusive
 * leads, is not active in another campaign of the workspace. Results in the order given. A lead the
 * caller may not see (`refused` by the access policy: another product's) is `not_found`, like an
 * unknown id, whatever its state.
 */
export async function checkLeadsForCampaign(
  em: EntityManager,
  campaign: ICampaign,
  leadIds: string[],
  refused: ReadonlySet<string> = new Set(),
): Promise<LeadCheck[]> {
  const steps = await currentSteps(em, campaign);
  const firstSend = steps.find((s) => isSendStep(s.type));
  const visible = leadIds.filter((id) => !refused.has(id.toLowerCase()));
  const rows = visible.length
    ? await em.execute<
        {
          lead_id: string;
          contact_id: string;
          email: string | null;
          profile_url: string | null;
          network_provider_id: string | null;
          country: string | null;
          unsubscribed: boolean;
          email_bounced: boolean;
          suppressed: boolean;
          enrolled: boolean;
          elsewhere: boolean;
        }[]
      >(
        `select l.id as lead_id, c.id as contact_id, c.email, c.profile_url, c.network_provider_id, c.country, c.unsubscribed_at is not null as unsubscribed, c.email_bounced_at is not null as email_bounced,
                exists (select 1 from suppressions s where s.workspace_id = l.workspace_id and c.email_normalised is not null
                         and ((s.kind = 'address' and s.value = c.email_normalised) or (s.kind = 'domain' and s.value = split_part(c.email_normalised, '@', 2)))) as suppressed,
                exists (select 1 from enrollments e where e.campaign_id = ? and e.lead_id = l.id) as enrolled,
                exists (select 1 from enrollments e join campaigns oc on oc.id = e.campaign_id
                         where e.workspace_id = l.workspace_id and e.contact_id = c.id and e.campaign_id <> ? and e.status in ('active', 'paused') and oc.status in ('active', 'paused')) as elsewhere
           from leads l join contacts c on c.id = l.contact_id where l.workspace_id = ? and l.id = any(?::uuid[])`,
        [campaign.id, campaign.id, campaign.workspace.id, `{${visible.join(',')}}`],
      )
    : [];
  const byId = new Map(rows.map((r) => [r.lead_id, r]));
  const rule = campaign.countryRule;
  // Ids are matched as the database returns them (lower-case).
  leadIds = leadIds.map((id) => id.toLowerCase());
  const countries = new Set((rule?.countries ?? []).map((x) => x.toUpperCase()));
  return leadIds.map((leadId) => {
    const r = byId.get(leadId);
    const no = (reason: SkipReason): LeadCheck => ({ leadId, ok: false, reason, contactId: r?.contact_id ?? null });
    if (!r) return no('not_found');
    if (r.enrolled) return no('already_enrolled');
    if (r.unsubscribed) return no('unsubscribed');
    if (firstSend && (firstSend.type === 'email' ? !r.email : !(r.profile_url || r.network_provider_id)))
      return no('no_identity');
    if (firstSend?.type === 'email' && r.email_bounced) return no('email_bounced');
    if (firstSend?.type === 'email' && r.suppressed) return no('suppressed');
    if (rule && countries.size) {
      const country = r.country?.trim().toUpperCase() ?? null;
      if (
        rule.mode === 'block' ? country !== null && countries.has(country) : country === null || !countries.has(country)
      )
        return no('blocked_country');
    }
    if (campaign.exclusiveLeads && r.elsewhere) return no('in_other_campaign');
    return { leadId, ok: true, reason: null, contactId: r.contact_id };
  });
}

export interface EnrollResult {
  lead_id: string;
  status: 'enrolled' | 'skipped';
  reason: SkipReason | 'start_failed' | null;
  enrollment_id: string | null;
}

/**
 * Enrolls the leads that pass the checks and starts their workflows in batches; 409 unless the campaign
 * is active or paused. `refused`: the leads the access policy hides from the caller (skipped `not_found`).
 */
export async function enrollLeads(
  em: EntityManager,
  jobs: Jobs,
  actor: Actor,
  campaignId: string,
  leadIds: string[],
  refused: ReadonlySet<string>,
): Promise<EnrollResult[]> {
  assertWritable(actor);
  const campaign = await requireCampaign(em, actor, campaignId);
  if (campaign.status !== 'active' && campaign.status !== 'paused')
    throw conflict(
      'invalid_transition',
      `leads can be enrolled only in an active or paused campaign (this one is ${campaign.status})`,
    );
  const unique = [...new Set(leadIds.map((id) => id.toLowerCase()))];
  const checks = await checkLeadsForCampaign(em, campaign, unique, refused);
  // One enrollment per lead and campaign, whatever its status: an ended one starts again only by `reenroll`
  // (a lead who replied or was removed is never re-contacted by a bulk add). One set-based insert.
  const ok = checks.filter((x) => x.ok);
  const inserted = ok.length
    ? await em.execute<{ id: string; lead_id: string; run: number }[]>(
        `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, run, enrolled_at, created_at, updated_at)
         select x.id, ?, ?, x.lead_id, x.contact_id, 'active', ?, 1, now(), now(), now()
           from unnest(?::uuid[], ?::uuid[], ?::uuid[]) as x(id, lead_id, contact_id)
         on conflict (campaign_id, lead_id) do nothing
         returning id, lead_id, run`,
        [
          campaign.workspace.id,
          campaign.id,
          campaign.stepVersion,
          `{${ok.map(() => uuidv7()).join(',')}}`,
          `{${ok.map((c) => c.leadId).join(',')}}`,
          `{${ok.map((c) => c.contactId).join(',')}}`,
        ],
      )
    : [];
  const got = new Map(inserted.map((r) => [r.lead_id, r]));
  // A lead enrolled meanwhile (a concurrent add) is a skip like any other already enrolled.
  for (const c of ok) if (!got.has(c.leadId)) Object.assign(c, { ok: false, reason: 'already_enrolled' });
  const starts = ok
    .filter((c) => got.has(c.leadId))
    .map((c) => ({ enrollmentId: got.get(c.leadId)!.id, leadId: c.leadId, run: got.get(c.leadId)!.run }));
  const { failed } = await jobs.startEnrollments(
    starts.map((s) => ({
      ...s,
      campaignId: campaign.id,
      workspaceId: campaign.workspace.id,
      appId: campaign.app.id,
      version: campaign.stepVersion,
    })),
  );
  const failedSet = new Set(failed);
  const byLead = new Map(starts.map((s) => [s.leadId, s.enrollmentId]));
  return checks.map((c) => {
    const enrollmentId = byLead.get(c.leadId) ?? null;
    if (!c.ok) return { lead_id: c.leadId, status: 'skipped', reason: c.reason, enrollment_id: null };
    if (enrollmentId && failedSet.has(enrollmentId))
      return { lead_id: c.leadId, status: 'skipped', reason: 'start_failed', enrollment_id: enrollmentId };
    return { lead_id: c.leadId, status: 'enrolled', reason: null, enrollment_id: enrollmentId };
  });
}

async function requireEnrollment(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  leadId: string,
): Promise<IEnrollment> {
  const campaign = await requireCampaign(em, actor, campaignId);
  const e = await em.findOne(Enrollment, { campaign: campaign.id, lead: leadId });
  if (!e) throw notFound('enrollment');
  return e;
}

/** Removes the lead from the campaign: the enrollment ends `removed`, its unsent actions are canceled, its workflow stops. */
export async function unenrollLead(
  em: EntityManager,
  jobs: Jobs,
  actor: Actor,
  campaignId: string,
  leadId: string,
): Promise<IEnrollment> {
  assertWritable(actor);
  const e = await requireEnrollment(em, actor, campaignId, leadId);
  if (e.status !== 'active' && e.status !== 'paused')
    throw conflict('invalid_transition', `the enrollment has already ended (${e.status})`);
  await em.transactional(async (tx) => {
    await tx.execute(
      `update enrollments set status = 'removed', stop_reason = 'unenrolled', finished_at = now(), current_position = null, current_step_id = null, updated_at = now() where id = ?`,
      [e.id],
    );
    await tx.execute(
      `update scheduled_actions set state = 'canceled', error_code = 'unenrolled', waiting_reason = null, updated_at = now() where enrollment_id = ? and state in ('planned', 'awaiting_approval', 'approved')`,
      [e.id],
    );
  });
  await jobs.signal('enrollment', { campaignId: campaignId, leadId: leadId }, 'unenroll');
  await em.refresh(e);
  return e;
}

/** The lead's enrollments, latest first, across the workspace's campaigns. */
async function leadEnrollments(em: EntityManager, actor: Actor, leadId: string): Promise<IEnrollment[]> {
  // The lead passed the declared check (domain/access.ts): another workspace's is 404, another product's 403.
  const list = await em.find(
    Enrollment,
    { lead: leadId, workspace: actor.workspaceId },
    { orderBy: { updatedAt: 'desc' }, populate: ['campaign'] },
  );
  if (!list.length) {
    const [lead] = await em.execute(`select 1 from leads where id = ? and workspace_id = ?`, [
      leadId,
      actor.workspaceId,
    ]);
    if (!lead) throw notFound('lead');
  }
  return list.filter((e) => canAccessApp(actor, e.campaign.getEntity().app.id));
}

/**
 * Starts the lead again in a campaign (the given one, else its latest enrollment's), from the first
 * step or `stepId`: a new run under the same workflow id once the previous one closed (409 while it runs).
 */
export async function reenrollLead(
  em: EntityManager,
  jobs: Jobs,
  actor: Actor,
  leadId: string,
  input: { campaignId?: string; stepId?: string },
): Promise<IEnrollment> {
  assertWritable(actor);
  const all = await leadEnrollments(em, actor, leadId);
  const e = input.campaignId ? all.find((x) => x.campaign.id === input.campaignId) : all[0];
  if (!e) throw notFound('enrollment');
  if (e.status === 'active' || e.status === 'paused')
    throw conflict('invalid_transition', 'the lead is still enrolled in this campaign');
  const campaign = e.campaign.getEntity();
  if (campaign.status !== 'active' && campaign.status !== 'paused')
    throw conflict('invalid_transition', `the campaign is ${campaign.status}`);
  const steps = await currentSteps(em, campaign);
  if (input.stepId && !steps.some((s) => s.id === input.stepId)) throw notFound('step');
  const [row] = await em.execute<{ run: number }[]>(
    `update enrollments set status = 'active', step_version = ?, run = run + 1, stop_reason = null, replied_at = null, bounced_at = null, finished_at = null, current_position = null,
       current_step_id = null, enrolled_at = now(), updated_at = now() where id = ? and status not in ('active', 'paused') returning run`,
    [campaign.stepVersion, e.id],
  );
  if (!row) throw conflict('invalid_transition', 'the lead is still enrolled in this campaign');
  const { failed } = await jobs.startEnrollments([
    {
      enrollmentId: e.id,
      campaignId: campaign.id,
      leadId,
      workspaceId: campaign.workspace.id,
      appId: campaign.app.id,
      version: campaign.stepVersion,
      startAtStepId: input.stepId ?? null,
      run: row.run,
    },
  ]);
  if (failed.length) throw new AppError(503, 'unavailable', 'the enrollment could not be started; retry');
  await em.refresh(e);
  return e;
}

/** A person says the lead replied: recorded on the lead's running enrollments and signalled (they stop when the campaign stops on reply). */
export async function markReplied(em: EntityManager, jobs: Jobs, actor: Actor, leadId: string): Promise<IEnrollment[]> {
  assertWritable(actor);
  const all = await leadEnrollments(em, actor, leadId);
  const running = all.filter((e) => e.status === 'active' || e.status === 'paused');
  for (const e of running) {
    await em.execute(
      `update enrollments set replied_at = coalesce(replied_at, now()), updated_at = now() where id = ?`,
      [e.id],
    );
    await jobs.signal('enrollment', { campaignId: e.campaign.id, leadId: leadId }, 'reply', {});
  }
  for (const e of all) await em.refresh(e);
  return running;
}

export async function requireAction(em: EntityManager, actor: Actor, id: string): Promise<IScheduledAction> {
  const a = await em.findOne(ScheduledAction, { id, workspace: actor.workspaceId }, { populate: ['campaign'] });
  if (!a) throw notFound('scheduled action');
  return a;
}

/**
 * Approves an action awaiting review (or a planned one ahead of its review); 409 from any other
 * state. The workflow is told at once.
 */
export async function approveAction(
  em: EntityManager,
  jobs: Jobs,
  actor: Actor,
  id: string,
): Promise<IScheduledAction> {
  assertWritable(actor);
  const a = await requireAction(em, actor, id);
  // A failed AI draft is never sent as it is: it is edited or written again first (docs/message-review.md).
  if (a.content?.draft_failed)
    throw conflict(
      'draft_failed',
      `the AI-written draft of this action failed (${String(a.content.draft_failed)}): edit or retry it before approving`,
    );
  const done = await em.execute(
    `update scheduled_actions set state = 'approved', approved_at = now(), approved_by = ?, updated_at = now(),
       waiting_reason = (select case when c.status = 'paused' then 'campaign_paused' end from campaigns c where c.id = scheduled_actions.campaign_id)
      where id = ? and state in ('planned', 'awaiting_approval') and content->>'draft_failed' is null returning id`,
    [actor.userId, id],
  );
  if (!done.length) throw conflict('invalid_transition', `an action that is ${a.state} cannot be approved`);
  // The answer is the action as this approval left it, read before the workflow is woken: an eager
  // send could otherwise answer `executing` or `executed` to some calls and `approved` to others.
  await em.refresh(a);
  await jobs.signal('enrollment', { campaignId: a.campaign.id, leadId: a.leadId }, 'approve', { actionId: id });
  return a;
}

/** Skips an action not yet executing; the enrollment goes on with the next step. 409 from any other state. */
export async function skipAction(em: EntityManager, jobs: Jobs, actor: Actor, id: string): Promise<IScheduledAction> {
  assertWritable(actor);
  const a = await requireAction(em, actor, id);
  const done = await em.execute(
    `update scheduled_actions set state = 'skipped', waiting_reason = null, updated_at = now() where id = ? and state in ('planned', 'awaiting_approval', 'approved') returning id`,
    [id],
  );
  if (!done.length) throw conflict('invalid_transition', `an action that is ${a.state} cannot be skipped`);
  await em.refresh(a); // as the skip left it (see approveAction)
  await jobs.signal('enrollment', { campaignId: a.campaign.id, leadId: a.leadId }, 'skip', { actionId: id });
  return a;
}

/**
 * Sends `signal` to every running enrollment of the campaign (for the campaign status route: `campaign_resumed`
 * on resume wakes enrollments held by the pause at once instead of at their next recheck). Returns how many were open.
 */
export async function signalCampaignEnrollments(
  em: EntityManager,
  jobs: Jobs,
  campaignId: string,
  signal: 'campaign_resumed' | 'campaign_paused' | 'campaign_stopped' | 'unenroll',
): Promise<number> {
  const rows = await em.execute<{ lead_id: string }[]>(
    `select lead_id from enrollments where campaign_id = ? and status in ('active', 'paused')`,
    [campaignId],
  );
  let open = 0;
  for (let i = 0; i < rows.length; i += 50) {
    const sent = await Promise.all(
      rows
        .slice(i, i + 50)
        .map((r) => jobs.signal('enrollment', { campaignId: campaignId, leadId: r.lead_id }, signal)),
    );
    open += sent.filter(Boolean).length;
  }
  return open;
}
