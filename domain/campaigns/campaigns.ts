// Campaigns of a product: settings, lifecycle, preflight, duplicate and signal links (docs/campaigns.md).
// Rules:
// - a campaign belongs to one product; members need access to that product (403 not_assigned), another
//   workspace's id is 404 not_found;
// - a new campaign is a draft and never sends until activated; the status moves by TRANSITIONS only
//   (409 invalid_transition), and activation (draft → active, paused → active) runs the preflight and
//   refuses with 409 preflight_failed while it lists blockers;
// - campaigns count against the plan (archived ones excluded), checked under a per-workspace lock;
// - archived campaigns are read-only (409 campaign_archived).
import type { EntityManager } from '@mikro-orm/postgresql';
import { AgentSignal } from '../../db/entities/AgentSignal.js';
import { App } from '../../db/entities/App.js';
import {
  Campaign,
  type CampaignStatus,
  type CountryRule,
  type ICampaign,
  type MessageMode,
  type WindowTimeZone,
  type Rotation,
  type SendingWindows,
} from '../../db/entities/Campaign.js';
import { CampaignSignal } from '../../db/entities/CampaignSignal.js';
import { CampaignStep, type ICampaignStep } from '../../db/entities/CampaignStep.js';
import { CampaignStepAttachment } from '../../db/entities/CampaignStepAttachment.js';
import { CampaignStepVersion } from '../../db/entities/CampaignStepVersion.js';
import { PlatformAccount, type IPlatformAccount } from '../../db/entities/PlatformAccount.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { keyset, type PageRequest } from '../../lib/pagination.js';
import { checkTemplate, requiredVariables } from '../../lib/templates.js';
import { requireApp } from '../apps/apps.js';
import { assertWritable } from '../demo/demo.js';
import { AppError, badRequest, notFound } from '../errors.js';
import { usage } from '../governor/governor.js';
import type { Actor } from '../identity.js';
import { canonicalTimeZone } from '../accounts/accounts.js';
import { recipientTimeZone } from '../contacts/time-zone.js';
import { requireWithinLimit } from '../billing/plans.js';
import { snapshotVersion, templatesOf } from './steps.js';
import { assertNotArchived, requireCampaign } from './guards.js';
export { assertNotArchived, requireCampaign };

/** Mon–Fri 09:00–17:00, the windows of a campaign created without any. */
export const DEFAULT_SENDING_WINDOWS: SendingWindows = Object.fromEntries(
  ['1', '2', '3', '4', '5'].map((d) => [d, [{ start: '09:00', end: '17:00' }]]),
);

/** Which status may follow which (docs/campaigns.md, "Lifecycle"). */
export const TRANSITIONS: Record<CampaignStatus, CampaignStatus[]> = {
  draft: ['active', 'archived'],
  active: ['paused', 'completed', 'archived'],
  paused: ['active', 'completed', 'archived'],
  completed: ['archived'],
  archived: [],
};

/** An account's daily use at or above this share of its cap is a preflight warning. */
export const NEAR_CAP_SHARE = 0.8;

export interface CampaignSettings {
  name?: string;
  description?: string | null;
  timeZone?: string;
  sendingWindows?: SendingWindows;
  accountIds?: string[];
  rotation?: Rotation;
  dailyNewLeadCap?: number | null;
  stopOnReply?: boolean;
  countryRule?: CountryRule | null;
  reviewRequired?: boolean;
  messageMode?: MessageMode;
  exclusiveLeads?: boolean;
  windowTimeZone?: WindowTimeZone;
  trackOpens?: boolean;
  trackClicks?: boolean;
}

/** The settings as the API and the Operator's tools spell them (snake case). */
export interface CampaignSettingsInput {
  name?: string;
  description?: string | null;
  time_zone?: string;
  sending_windows?: SendingWindows;
  account_ids?: string[];
  rotation?: Rotation;
  daily_new_lead_cap?: number | null;
  stop_on_reply?: boolean;
  country_rule?: CountryRule | null;
  review_required?: boolean;
  message_mode?: MessageMode;
  exclusive_leads?: boolean;
  window_time_zone?: WindowTimeZone;
  track_opens?: boolean;
  track_clicks?: boolean;
}

export const settingsOf = (b: CampaignSettingsInput): CampaignSettings => ({
  name: b.name,
  description: b.description,
  timeZone: b.time_zone,
  sendingWindows: b.sending_windows,
  accountIds: b.account_ids,
  rotation: b.rotation,
  dailyNewLeadCap: b.daily_new_lead_cap,
  stopOnReply: b.stop_on_reply,
  countryRule: b.country_rule,
  reviewRequired: b.review_required,
  messageMode: b.message_mode,
  exclusiveLeads: b.exclusive_leads,
  windowTimeZone: b.window_time_zone,
  trackOpens: b.track_opens,
  trackClicks: b.track_clicks,
});

export interface CampaignWithCount {
  id: string;
  campaign: ICampaign;
  stepCount: number;
}

async function stepCounts(em: EntityManager, ids: string[]): Promise<Map<string, number>> {
  if (!ids.length) return new Map();
  const rows: { campaign_id: string; n: number }[] = await em.execute(
    `select campaign_id, count(*)::int as n from campaign_steps where campaign_id in (${ids.map(() => '?').join(', ')}) group by campaign_id`,
    ids,
  );
  return new Map(rows.map((r) => [r.campaign_id, r.n]));
}

async function withCounts(em: EntityManager, campaigns: ICampaign[]): Promise<CampaignWithCount[]> {
  const counts = await stepCounts(
    em,
    campaigns.map((c) => c.id),
  );
  return campaigns.map((campaign) => ({ id: campaign.id, campaign, stepCount: counts.get(campaign.id) ?? 0 }));
}

/** Account ids must name accounts of the workspace (any status: preflight says which are not connected). */
async function checkAccounts(em: EntityManager, actor: Actor, ids: string[]): Promise<string[]> {
  const unique = [...new Set(ids.map((i) => i.toLowerCase()))];
  if (!unique.length) return unique;
  const found = await em.find(
    PlatformAccount,
    { id: { $in: unique }, workspace: actor.workspaceId },
    { fields: ['id'] },
  );
  const known = new Set(found.map((a) => a.id));
  const missing = unique.filter((id) => !known.has(id));
  if (missing.length) {
    throw badRequest(
      'invalid_account',
      'account_ids must name sender accounts of this workspace',
      missing.map((id) => ({
        path: `account_ids.${ids.findIndex((i) => i.toLowerCase() === id)}`,
        message: `no sender account ${id}`,
      })),
    );
  }
  return unique;
}

async function applySettings(
  em: EntityManager,
  actor: Actor,
  c: Partial<ICampaign>,
  s: CampaignSettings,
): Promise<void> {
  if (s.name !== undefined) c.name = s.name.trim();
  if (s.description !== undefined) c.description = s.description;
  if (s.timeZone !== undefined) c.timeZone = canonicalTimeZone(s.timeZone);
  if (s.sendingWindows !== undefined) c.sendingWindows = s.sendingWindows;
  if (s.accountIds !== undefined) c.accountIds = await checkAccounts(em, actor, s.accountIds);
  if (s.rotation !== undefined) c.rotation = s.rotation;
  if (s.dailyNewLeadCap !== undefined) c.dailyNewLeadCap = s.dailyNewLeadCap;
  if (s.stopOnReply !== undefined) c.stopOnReply = s.stopOnReply;
  if (s.countryRule !== undefined)
    c.countryRule = s.countryRule
      ? { mode: s.countryRule.mode, countries: [...new Set(s.countryRule.countries.map((x) => x.toUpperCase()))] }
      : null;
  if (s.reviewRequired !== undefined) c.reviewRequired = s.reviewRequired;
  if (s.messageMode !== undefined) c.messageMode = s.messageMode;
  if (s.exclusiveLeads !== undefined) c.exclusiveLeads = s.exclusiveLeads;
  if (s.windowTimeZone !== undefined) c.windowTimeZone = s.windowTimeZone;
  if (s.trackOpens !== undefined) c.trackOpens = s.trackOpens;
  if (s.trackClicks !== undefined) c.trackClicks = s.trackClicks;
}

/** The plan's campaign limit, checked under a per-workspace lock so concurrent creates cannot pass it together. */
async function assertPlanRoom(tx: EntityManager, actor: Actor): Promise<void> {
  await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`campaigns:${actor.workspaceId}`]);
  const count = await tx.count(Campaign, { workspace: actor.workspaceId, status: { $ne: 'archived' } });
  await requireWithinLimit(tx, actor, 'campaigns', count);
}

export async function createCampaign(
  em: EntityManager,
  actor: Actor,
  appId: string,
  input: CampaignSettings & { name: string; timeZone: string },
): Promise<CampaignWithCount> {
  assertWritable(actor);
  const app = await requireApp(em, actor, appId);
  const timeZone = canonicalTimeZone(input.timeZone);
  const campaign = await em.transactional(async (tx) => {
    await assertPlanRoom(tx, actor);
    const c = tx.create(Campaign, {
      workspace: tx.getReference(Workspace, actor.workspaceId),
      app: tx.getReference(App, app.id),
      name: input.name.trim(),
      timeZone,
      sendingWindows: DEFAULT_SENDING_WINDOWS,
      createdBy: actor.userId,
    } as never) as ICampaign;
    await applySettings(tx, actor, c, { ...input, timeZone: undefined });
    tx.create(CampaignStepVersion, { campaign: c, version: c.stepVersion ?? 1, steps: [] });
    await tx.flush();
    return c;
  });
  return { id: campaign.id, campaign, stepCount: 0 };
}

/** One page (`limit + 1` rows) of a product's campaigns, oldest first, optionally of one status. */
export async function listCampaigns(
  em: EntityManager,
  actor: Actor,
  appId: string,
  page: PageRequest,
  status?: CampaignStatus,
): Promise<CampaignWithCount[]> {
  const app = await requireApp(em, actor, appId);
  const k = keyset(page);
  const rows = await em.find(
    Campaign,
    { workspace: actor.workspaceId, app: app.id, ...(status ? { status } : {}), ...k.where },
    k.options,
  );
  return withCounts(em, rows);
}

export async function getCampaign(em: EntityManager, actor: Actor, id: string): Promise<CampaignWithCount> {
  const [one] = await withCounts(em, [await requireCampaign(em, actor, id)]);
  return one;
}

export async function updateCampaign(
  em: EntityManager,
  actor: Actor,
  id: string,
  input: CampaignSettings,
): Promise<CampaignWithCount> {
  assertWritable(actor);
  const campaign = await em.transactional(async (tx) => {
    const c = await requireCampaign(tx, actor, id, true);
    assertNotArchived(c);
    await applySettings(tx, actor, c, input);
    await tx.flush();
    return c;
  });
  const [one] = await withCounts(em, [campaign]);
  return one;
}

/** A copy in draft: settings, steps (new ids) and their attachments; no enrollments, no signal links. */
export async function duplicateCampaign(
  em: EntityManager,
  actor: Actor,
  id: string,
  name?: string,
): Promise<CampaignWithCount> {
  assertWritable(actor);
  const copy = await em.transactional(async (tx) => {
    const src = await requireCampaign(tx, actor, id);
    await assertPlanRoom(tx, actor);
    const c = tx.create(Campaign, {
      workspace: tx.getReference(Workspace, actor.workspaceId),
      app: tx.getReference(App, src.app.id),
      name: name?.trim() || [...`${src.name} (copy)`].slice(0, 200).join(''),
      description: src.description ?? null,
      status: 'draft',
      timeZone: src.timeZone,
      sendingWindows: src.sendingWindows,
      accountIds: src.accountIds,
      rotation: src.rotation,
      dailyNewLeadCap: src.dailyNewLeadCap ?? null,
      stopOnReply: src.stopOnReply,
      countryRule: src.countryRule ?? null,
      reviewRequired: src.reviewRequired,
      messageMode: src.messageMode,
      exclusiveLeads: src.exclusiveLeads,
      windowTimeZone: src.windowTimeZone,
      trackOpens: src.trackOpens,
      trackClicks: src.trackClicks,
      stepVersion: 1,
      createdBy: actor.userId,
    } as never) as ICampaign;
    const steps = await tx.find(CampaignStep, { campaign: src.id }, { orderBy: { position: 'asc' } });
    const copies: ICampaignStep[] = [];
    for (const s of steps) {
      const n = tx.create(CampaignStep, {
        campaign: c,
        position: s.position,
        type: s.type,
        config: s.config,
        messageMode: s.messageMode ?? null,
        variants: s.variants ?? null,
        winnerRule: s.winnerRule ?? null,
        attachmentName: s.attachmentName ?? null,
        attachmentType: s.attachmentType ?? null,
        attachmentSize: s.attachmentSize ?? null,
      } as never) as ICampaignStep;
      copies.push(n);
      if (s.attachmentName) {
        const a = await tx.findOne(CampaignStepAttachment, { step: s.id });
        if (a) tx.create(CampaignStepAttachment, { step: n, data: a.data, sha256: a.sha256 });
      }
    }
    // The snapshot names each step by id: the ids are assigned when the steps are inserted, so flush first.
    await tx.flush();
    tx.create(CampaignStepVersion, { campaign: c, version: 1, steps: copies.map(snapshotVersion) });
    await tx.flush();
    return c;
  });
  const [one] = await withCounts(em, [copy]);
  return one;
}

// ---- preflight ----

export type Severity = 'blocker' | 'warning';
export interface PreflightProblem {
  code: string;
  severity: Severity;
  message: string;
  stepId: string | null;
  accountId: string | null;
  details?: Record<string, unknown>;
}

/** What preflight looks at: the campaign's stored settings and steps, or a draft's. */
export interface PreflightInput {
  timeZone?: string;
  windowTimeZone?: WindowTimeZone;
  sendingWindows?: SendingWindows;
  accountIds?: string[];
  steps?: { id?: string | null; type: string; config: Record<string, unknown> }[];
}

export interface PreflightResult {
  ready: boolean;
  blockers: number;
  warnings: number;
  problems: PreflightProblem[];
  /** Running leads (enrollments active or paused) whose contact has no zone of its own (docs/contacts.md "Time zone"); 0 without a campaign. */
  leadsWithoutTimeZone: number;
}

/** Variables every send has a value for, whatever the lead: not worth a `template_variables` warning. */
const ALWAYS_FILLED: ReadonlySet<string> = new Set(['sender_name', 'unsubscribe_url']);
const CHANNEL_OF: Record<string, 'email' | 'network' | undefined> = {
  email: 'email',
  invitation: 'network',
  message: 'network',
};
const SEND_TYPES = new Set(['email', 'invitation', 'message']);

/** Runs every check over settings and steps (pure apart from reading the accounts and their usage). */
export async function runPreflight(
  em: EntityManager,
  actor: Actor,
  input: Required<Omit<PreflightInput, 'timeZone'>> & { timeZone?: string; leadsWithoutTimeZone?: number },
  now = new Date(),
): Promise<PreflightResult> {
  const problems: PreflightProblem[] = [];
  const add = (
    p: Omit<PreflightProblem, 'stepId' | 'accountId'> & { stepId?: string | null; accountId?: string | null },
  ) => problems.push({ stepId: null, accountId: null, ...p });

  if (input.timeZone === undefined)
    add({
      code: 'no_time_zone',
      severity: 'blocker',
      message: 'the campaign needs a time zone for its sending windows',
    });

  const steps = input.steps;
  const sends = steps.filter((s) => SEND_TYPES.has(s.type));
  if (!steps.length) add({ code: 'no_steps', severity: 'blocker', message: 'the campaign has no steps' });
  else if (!sends.length)
    add({
      code: 'no_send_steps',
      severity: 'blocker',
      message: 'the campaign has no email, invitation or message step: it would never contact anyone',
    });

  // A condition looks at the previous send step: there must be one before it.
  steps.forEach((s, i) => {
    if (s.type === 'condition' && !steps.slice(0, i).some((p) => SEND_TYPES.has(p.type))) {
      add({
        code: 'condition_without_send',
        severity: 'blocker',
        message: `step ${i + 1} is a condition with no send step before it`,
        stepId: s.id ?? null,
      });
    }
  });

  // Templates: problems (a draft's steps were not checked on save) and variables leads may lack.
  steps.forEach((s, i) => {
    for (const [field, text] of templatesOf(s.type, s.config)) {
      const bad = checkTemplate(text);
      if (bad.length)
        add({
          code: 'invalid_template',
          severity: 'blocker',
          message: `step ${i + 1} ${field}: ${bad.map((b) => b.message).join('; ')}`,
          stepId: s.id ?? null,
          details: { field },
        });
      // {{sender_name}} always has a value: the sending account's display name (required, never blank);
      // {{unsubscribe_url}} too: the recipient's signed link.
      const vars = requiredVariables(text).filter((v) => !ALWAYS_FILLED.has(v));
      if (vars.length) {
        add({
          code: 'template_variables',
          severity: 'warning',
          message: `step ${i + 1} ${field} uses ${vars.map((v) => `{{${v}}}`).join(', ')} without a fallback: a lead lacking ${vars.length > 1 ? 'one of them' : 'it'} is not sent this message (add a fallback: {{${vars[0]}|…}})`,
          stepId: s.id ?? null,
          details: { field, variables: vars },
        });
      }
    }
  });

  // Windows: at least one day with a window.
  const open = Object.values(input.sendingWindows).some((w) => (w ?? []).some((x) => x.end > x.start));
  if (!open)
    add({ code: 'window_never_opens', severity: 'blocker', message: 'no sending window opens on any weekday' });
  // Windows on the recipient's clock: say how many leads have no clock of their own.
  const withoutZone = input.leadsWithoutTimeZone ?? 0;
  if (input.windowTimeZone === 'recipient' && withoutZone > 0) {
    add({
      code: 'leads_without_time_zone',
      severity: 'warning',
      message: `${withoutZone} lead${withoutZone === 1 ? ' has' : 's have'} no time zone (none stored, and no country with a single zone): their sending windows follow the campaign's time zone${input.timeZone ? ` (${input.timeZone})` : ''}`,
      details: { count: withoutZone },
    });
  }

  // Accounts: a connected one per channel the steps use; those near their caps.
  const accounts = input.accountIds.length
    ? await em.find(
        PlatformAccount,
        { id: { $in: input.accountIds }, workspace: actor.workspaceId },
        { orderBy: { id: 'asc' } },
      )
    : [];
  if (!input.accountIds.length)
    add({ code: 'no_accounts', severity: 'blocker', message: 'the campaign has no sender accounts' });
  for (const id of input.accountIds) {
    if (!accounts.some((a) => a.id === id))
      add({
        code: 'account_missing',
        severity: 'warning',
        message: `sender account ${id} no longer exists`,
        accountId: id,
      });
  }
  const connected = accounts.filter((a) => a.status === 'connected');
  for (const a of accounts) {
    if (a.status !== 'connected')
      add({
        code: 'account_not_connected',
        severity: 'warning',
        message: `sender account "${a.displayName}" is ${a.status}: it sends nothing until connected`,
        accountId: a.id,
      });
  }
  const channels = new Set(sends.map((s) => CHANNEL_OF[s.type]!));
  if (input.accountIds.length) {
    for (const channel of channels) {
      if (!connected.some((a) => a.channel === channel)) {
        add({
          code: 'no_connected_account',
          severity: 'blocker',
          message:
            channel === 'email'
              ? 'email steps need a connected email account'
              : 'invitation and message steps need a connected professional-network account',
          details: { channel },
        });
      }
    }
  }
  const types = new Set(sends.map((s) => s.type));
  for (const a of connected) await nearCaps(em, a, types, now, add);

  const blockers = problems.filter((p) => p.severity === 'blocker').length;
  return {
    ready: blockers === 0,
    blockers,
    warnings: problems.length - blockers,
    problems,
    leadsWithoutTimeZone: withoutZone,
  };
}

/**
 * The campaign's running enrollments (active, paused) whose contact has neither a valid stored zone
 * nor a country with a single one. The rule is JavaScript (domain/contacts/time-zone.ts), so it is
 * applied per distinct (time_zone, country) pair rather than per lead.
 */
async function leadsWithoutTimeZone(em: EntityManager, campaignId: string): Promise<number> {
  const groups: { time_zone: string | null; country: string | null; n: number }[] = await em.execute(
    `select c.time_zone, c.country, count(*)::int as n from enrollments e join contacts c on c.id = e.contact_id
      where e.campaign_id = ? and e.status in ('active', 'paused') group by 1, 2`,
    [campaignId],
  );
  return groups.reduce(
    (sum, g) => sum + (recipientTimeZone({ timeZone: g.time_zone, country: g.country }) ? 0 : g.n),
    0,
  );
}

async function nearCaps(
  em: EntityManager,
  a: IPlatformAccount,
  types: Set<string>,
  now: Date,
  add: (p: Omit<PreflightProblem, 'stepId' | 'accountId'> & { accountId: string }) => void,
) {
  for (const u of await usage(em, a, now)) {
    if (!types.has(u.action) || u.caps.daily <= 0) continue;
    if (u.today >= u.caps.daily * NEAR_CAP_SHARE) {
      add({
        code: 'account_near_cap',
        severity: 'warning',
        message: `sender account "${a.displayName}" has used ${u.today} of ${u.caps.daily} ${u.action} actions today`,
        accountId: a.id,
        details: { action: u.action, today: u.today, daily_cap: u.caps.daily },
      });
    }
  }
}

/** Preflight of a stored campaign, with draft values (settings or steps) taking the place of the stored ones. */
export async function preflightCampaign(
  em: EntityManager,
  actor: Actor,
  campaign: ICampaign,
  draft: PreflightInput = {},
): Promise<PreflightResult> {
  const steps =
    draft.steps ??
    (await em.find(CampaignStep, { campaign: campaign.id }, { orderBy: { position: 'asc' } })).map((s) => ({
      id: s.id,
      type: s.type,
      config: s.config,
    }));
  return runPreflight(em, actor, {
    timeZone: draft.timeZone !== undefined ? canonicalTimeZone(draft.timeZone) : campaign.timeZone,
    windowTimeZone: draft.windowTimeZone ?? (campaign.windowTimeZone as WindowTimeZone),
    sendingWindows: draft.sendingWindows ?? campaign.sendingWindows,
    accountIds: draft.accountIds !== undefined ? await checkAccounts(em, actor, draft.accountIds) : campaign.accountIds,
    steps,
    leadsWithoutTimeZone: await leadsWithoutTimeZone(em, campaign.id),
  });
}

/** POST /api/apps/{appId}/campaigns/preflight: a campaign of the product (plus draft overrides), or draft settings alone. */
export async function preflight(
  em: EntityManager,
  actor: Actor,
  appId: string,
  input: PreflightInput & { campaignId?: string },
): Promise<PreflightResult> {
  const app = await requireApp(em, actor, appId);
  if (input.campaignId) {
    const c = await requireCampaign(em, actor, input.campaignId);
    if (c.app.id !== app.id) throw notFound('campaign');
    return preflightCampaign(em, actor, c, input);
  }
  return runPreflight(em, actor, {
    timeZone: input.timeZone !== undefined ? canonicalTimeZone(input.timeZone) : undefined,
    windowTimeZone: input.windowTimeZone ?? 'campaign',
    sendingWindows: input.sendingWindows ?? DEFAULT_SENDING_WINDOWS,
    accountIds: input.accountIds !== undefined ? await checkAccounts(em, actor, input.accountIds) : [],
    steps: input.steps ?? [],
  });
}

// ---- lifecycle ----

export async function setStatus(
  em: EntityManager,
  actor: Actor,
  id: string,
  to: CampaignStatus,
): Promise<CampaignWithCount> {
  assertWritable(actor);
  const campaign = await em.transactional(async (tx) => {
    const c = await requireCampaign(tx, actor, id, true);
    const from = c.status as CampaignStatus;
    if (!TRANSITIONS[from].includes(to)) {
      throw new AppError(409, 'invalid_transition', `a ${from} campaign cannot become ${to}`, {
        from,
        to,
        allowed: TRANSITIONS[from],
      });
    }
    if (to === 'active') {
      const result = await preflightCampaign(tx, actor, c);
      if (!result.ready) {
        throw new AppError(
          409,
          'preflight_failed',
          `the campaign cannot be activated: ${result.problems
            .filter((p) => p.severity === 'blocker')
            .map((p) => p.message)
            .join('; ')}`,
          {
            blockers: result.problems.filter((p) => p.severity === 'blocker').map(toProblemView),
          },
        );
      }
    }
    const now = new Date();
    c.status = to;
    if (to === 'active') {
      c.activatedAt ??= now;
      c.pausedAt = null;
    }
    if (to === 'paused') c.pausedAt = now;
    if (to === 'completed') c.completedAt = now;
    if (to === 'archived') c.archivedAt = now;
    await tx.flush();
    return c;
  });
  const [one] = await withCounts(em, [campaign]);
  return one;
}

export const toProblemView = (p: PreflightProblem) => ({
  code: p.code,
  severity: p.severity,
  message: p.message,
  step_id: p.stepId,
  account_id: p.accountId,
  details: p.details ?? null,
});

// ---- signals ----

export interface LinkedSignal {
  id: string;
  agentId: string;
  agentName: string;
  key: string;
  kind: string;
  name: string;
  linkedAt: Date;
}

async function linkedSignals(em: EntityManager, campaignId: string): Promise<LinkedSignal[]> {
  const rows: {
    id: string;
    agent_id: string;
    agent_name: string;
    key: string;
    kind: string;
    name: string;
    created_at: string | Date;
  }[] = await em.execute(
    `select s.id, s.agent_id, a.name as agent_name, s.key, s.kind, s.name, cs.created_at
       from campaign_signals cs join agent_signals s on s.id = cs.signal_id join discovery_agents a on a.id = s.agent_id
      where cs.campaign_id = ? order by s.id`,
    [campaignId],
  );
  return rows.map((r) => ({
    id: r.id,
    agentId: r.agent_id,
    agentName: r.agent_name,
    key: r.key,
    kind: r.kind,
    name: r.name,
    linkedAt: new Date(r.created_at),
  }));
}

export async function getSignals(em: EntityManager, actor: Actor, id: string): Promise<LinkedSignal[]> {
  const c = await requireCampaign(em, actor, id);
  return linkedSignals(em, c.id);
}

/** Replaces the campaign's linked signals; each must be a signal of an agent of the campaign's product. */
export async function setSignals(
  em: EntityManager,
  actor: Actor,
  id: string,
  signalIds: string[],
): Promise<LinkedSignal[]> {
  assertWritable(actor);
  const ids = [...new Set(signalIds.map((s) => s.toLowerCase()))];
  await em.transactional(async (tx) => {
    const c = await requireCampaign(tx, actor, id, true);
    assertNotArchived(c);
    const found = ids.length
      ? await tx.find(
          AgentSignal,
          { id: { $in: ids }, agent: { app: c.app.id, workspace: actor.workspaceId } },
          { fields: ['id'] },
        )
      : [];
    const known = new Set(found.map((s) => s.id));
    const missing = ids.filter((s) => !known.has(s));
    if (missing.length) {
      throw badRequest(
        'invalid_signal',
        'signal_ids must name signals of discovery agents of the campaign’s product',
        missing.map((s) => ({
          path: `signal_ids.${signalIds.findIndex((x) => x.toLowerCase() === s)}`,
          message: `no signal ${s} in this product`,
        })),
      );
    }
    await tx.nativeDelete(CampaignSignal, { campaign: c.id, ...(ids.length ? { signal: { $nin: ids } } : {}) });
    const existing = new Set((await tx.find(CampaignSignal, { campaign: c.id })).map((l) => l.signal.id));
    for (const s of ids)
      if (!existing.has(s)) tx.create(CampaignSignal, { campaign: c, signal: tx.getReference(AgentSignal, s) });
    await tx.flush();
  });
  return linkedSignals(em, id);
}
