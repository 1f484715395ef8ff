// AI-written messages (docs/message-review.md): the campaign's review policy, its example messages,
// the model's input for one lead and step, the validation every written message passes before it can
// be sent, the price of a generation, and the synchronous one-lead preview (`generate-message`).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ICampaign } from '../../db/entities/Campaign.js';
import type { VersionedStep } from '../../db/entities/CampaignStepVersion.js';
import { MessageExample, type IMessageExample } from '../../db/entities/MessageExample.js';
import { writeMessage, type MessageInput, type ModelAdapter, type WrittenMessage } from '../../lib/llm/index.js';
import { LlmError } from '../../lib/llm/types.js';
import { requireCampaign } from '../campaigns/campaigns.js';
import { availableCredits, debitCredits, HOLD_TTL_MS, withCreditHold } from '../billing/credits.js';
import { assertWritable } from '../demo/demo.js';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import { currentSteps } from '../enrollments/enrollments.js';
import { isSendStep } from '../enrollments/executor.js';
import type { Actor } from '../identity.js';
import { entitlementsFor } from '../billing/plans.js';

// ---------------------------------------------------------------------------------------------
// Policy.

export const REVIEW_MODES = ['all', 'first_n', 'sample', 'none'] as const;
export const DEADLINE_RULES = ['skip', 'hold'] as const;

export interface ReviewPolicy {
  /** all: every draft; first_n: the first `firstN` drafts of each step, then auto-approved; sample: a `sampleRate` share; none. */
  mode: (typeof REVIEW_MODES)[number];
  firstN: number | null;
  sampleRate: number | null;
  /** A draft containing one of these (case-insensitive) fails validation (`blocked_phrase`). */
  blockedPhrases: string[];
  /** Below the channel's own limit. */
  maxLength: number | null;
  /** An undecided draft at its deadline: `skip` the action, or `hold` it and notify. */
  onDeadline: (typeof DEADLINE_RULES)[number];
  deadlineHours: number;
}

export const DEFAULT_POLICY: ReviewPolicy = {
  mode: 'all',
  firstN: null,
  sampleRate: null,
  blockedPhrases: [],
  maxLength: null,
  onDeadline: 'skip',
  deadlineHours: 168,
};

export const policyOf = (c: Pick<ICampaign, 'reviewPolicy'>): ReviewPolicy => ({
  ...DEFAULT_POLICY,
  ...((c.reviewPolicy ?? {}) as Partial<ReviewPolicy>),
});

/** Replaces the campaign's policy (400 `invalid_policy` for a mode without its parameter); applies to drafts not yet decided. */
export async function setPolicy(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  p: ReviewPolicy,
): Promise<ReviewPolicy> {
  assertWritable(actor);
  if (p.mode === 'first_n' && !p.firstN) throw badRequest('invalid_policy', 'mode first_n needs first_n (1 or more)');
  if (p.mode === 'sample' && !p.sampleRate)
    throw badRequest('invalid_policy', 'mode sample needs sample_rate (above 0, at most 1)');
  const policy: ReviewPolicy = {
    ...p,
    firstN: p.mode === 'first_n' ? p.firstN : null,
    sampleRate: p.mode === 'sample' ? p.sampleRate : null,
    blockedPhrases: [...new Set(p.blockedPhrases.map((x) => x.trim()).filter(Boolean))],
  };
  const campaign = await requireCampaign(em, actor, campaignId);
  await em.execute(`update campaigns set review_policy = ?::jsonb, updated_at = now() where id = ?`, [
    JSON.stringify(policy),
    campaign.id,
  ]);
  return policy;
}

// ---------------------------------------------------------------------------------------------
// Validation.

export type Channel = MessageInput['channel'];
/** Body limits per channel (the network invitation note: 300) and the email subject's. */
export const CHANNEL_LIMITS: Record<Channel, number> = { email: 20_000, invitation: 300, message: 8_000 };
export const SUBJECT_LIMIT = 200;

export const PROBLEMS = ['empty_body', 'empty_subject', 'unfilled_variables', 'too_long', 'blocked_phrase'] as const;
export interface Problem {
  code: (typeof PROBLEMS)[number];
  message: string;
}

const channelOf = (type: string): Channel =>
  type === 'email' ? 'email' : type === 'invitation' ? 'invitation' : 'message';
export const maxLengthOf = (channel: Channel, policy: ReviewPolicy) =>
  Math.min(CHANNEL_LIMITS[channel], policy.maxLength ?? Infinity);

/** Every reason the message cannot be sent as it is (empty: it can). */
export function validateMessage(channel: Channel, m: WrittenMessage, policy: ReviewPolicy): Problem[] {
  const out: Problem[] = [];
  const body = m.body.trim();
  if (!body) out.push({ code: 'empty_body', message: 'the message is empty' });
  if (channel === 'email' && !m.subject?.trim())
    out.push({ code: 'empty_subject', message: 'an email needs a subject' });
  if (/\{\{|\}\}/.test(`${m.subject ?? ''}${m.body}`))
    out.push({ code: 'unfilled_variables', message: 'the message still contains {{template variables}}' });
  const max = maxLengthOf(channel, policy);
  if ([...m.body].length > max)
    out.push({ code: 'too_long', message: `the message has ${[...m.body].length} characters; at most ${max}` });
  if (m.subject && [...m.subject].length > SUBJECT_LIMIT)
    out.push({ code: 'too_long', message: `the subject has more than ${SUBJECT_LIMIT} characters` });
  const text = `${m.subject ?? ''}\n${m.body}`.toLowerCase();
  const blocked = policy.blockedPhrases.filter((p) => text.includes(p.toLowerCase()));
  if (blocked.length) out.push({ code: 'blocked_phrase', message: `blocked phrases: ${blocked.join(', ')}` });
  return out;
}

// ---------------------------------------------------------------------------------------------
// The model's input.

/** The step given (a send step of the campaign's current version: 400 `invalid_step`), else the first send step (400 `no_send_step`). */
export async function sendStepOf(em: EntityManager, campaign: ICampaign, stepId?: string): Promise<VersionedStep> {
  const steps = (await currentSteps(em, campaign)).filter((s) => isSendStep(s.type));
  if (stepId) {
    const s = steps.find((x) => x.id === stepId);
    if (!s)
      throw badRequest('invalid_step', 'step_id is not a send step (email, invitation or message) of this campaign');
    return s;
  }
  if (!steps.length) throw badRequest('no_send_step', 'the campaign has no send step to write a message for');
  return steps[0];
}

const LEAD_FIELDS = ['first_name', 'last_name', 'full_name', 'title', 'headline', 'company', 'country'] as const;
/** Used for examples when no lead is named: a plausible person with every field the template may use. */
const SAMPLE_LEAD: Record<string, string | null> = {
  first_name: 'Alex',
  last_name: 'Morgan',
  full_name: 'Alex Morgan',
  title: 'Head of Sales',
  headline: null,
  company: 'Northwind',
  country: 'US',
};

/** A lead of the campaign's product (404 `not_found` otherwise): its contact's fields, as edited and enriched. */
export async function leadFields(
  em: EntityManager,
  campaign: ICampaign,
  leadId: string,
): Promise<Record<string, string | null>> {
  const [row] = await em.execute<Record<string, string | null>[]>(
    `select ${LEAD_FIELDS.map((f) => `c.${f}`).join(', ')} from leads l join lead_lists ll on ll.id = l.list_id join contacts c on c.id = l.contact_id
      where l.id = ? and l.workspace_id = ? and ll.app_id = ?`,
    [leadId, campaign.workspace.id, campaign.app.id],
  );
  if (!row) throw notFound('lead');
  return row;
}

export async function examplesFor(
  em: EntityManager,
  campaignId: string,
  stepId: string | null,
): Promise<IMessageExample[]> {
  const all = await em.find(MessageExample, { campaign: campaignId }, { orderBy: { createdAt: 'asc' } });
  // The step's own examples first, then the campaign-wide ones.
  return [...all.filter((e) => stepId && e.stepId === stepId), ...all.filter((e) => !e.stepId)];
}

/** The intent of a step: its template as the user wrote it (variables are hints, never copied). */
const intentOf = (step: VersionedStep): string | null => {
  const c = (step.config ?? {}) as Record<string, unknown>;
  return (typeof c.body === 'string' ? c.body : typeof c.note === 'string' ? c.note : null) || null;
};

export async function messageInput(
  em: EntityManager,
  campaign: ICampaign,
  step: VersionedStep,
  lead: Record<string, string | null>,
  extra: Pick<MessageInput, 'variant' | 'revise'> = {},
): Promise<MessageInput> {
  const [app] = await em.execute<{ name: string; description: string | null; value_proposition: string | null }[]>(
    `select name, description, value_proposition from apps where id = ?`,
    [campaign.app.id],
  );
  const [sender] = campaign.accountIds.length
    ? await em.execute<{ display_name: string }[]>(
        `select display_name from platform_accounts where id = any(?::uuid[]) order by display_name limit 1`,
        [`{${campaign.accountIds.join(',')}}`],
      )
    : [];
  const channel = channelOf(step.type);
  const examples = (await examplesFor(em, campaign.id, step.id))
    .slice(0, 5)
    .map((e) => ({ subject: e.subject ?? null, body: e.body }));
  return {
    channel,
    maxLength: maxLengthOf(channel, policyOf(campaign)),
    product: app,
    lead,
    sender_name: sender?.display_name ?? null,
    intent: intentOf(step),
    examples,
    ...extra,
  };
}

// ---------------------------------------------------------------------------------------------
// Credits.

export interface Quote {
  drafts: number;
  credits_per_draft: number;
  credits: number;
  balance: number;
  sufficient: boolean;
}

/** The price of `drafts` generations at the workspace's plan rate, against what it can spend (its balance minus the credits held by work in progress). */
export async function quoteDrafts(em: EntityManager, workspaceId: string, drafts: number): Promise<Quote> {
  const { entitlements } = await entitlementsFor(em, workspaceId);
  const balance = await availableCredits(em, workspaceId);
  const credits = drafts * entitlements.draftCredits;
  return { drafts, credits_per_draft: entitlements.draftCredits, credits, balance, sufficient: balance >= credits };
}

/** How many drafts a request would make: a count, or the leads of a list of the product × its AI-written send steps (or the one step). */
export async function quote(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  input: { drafts?: number; listId?: string; stepId?: string },
): Promise<Quote & { steps: number; leads: number | null }> {
  const campaign = await requireCampaign(em, actor, campaignId);
  let leads: number | null = null;
  let steps = 1;
  if (input.listId) {
    const [list] = await em.execute<{ n: number }[]>(
      `select (select count(*)::int from leads l where l.list_id = ll.id) as n from lead_lists ll where ll.id = ? and ll.workspace_id = ? and ll.app_id = ?`,
      [input.listId, actor.workspaceId, campaign.app.id],
    );
    if (!list) throw notFound('list');
    leads = list.n;
    if (input.stepId) await sendStepOf(em, campaign, input.stepId);
    else
      steps = (await currentSteps(em, campaign)).filter(
        (s) => isSendStep(s.type) && (s.messageMode ?? campaign.messageMode) !== 'template',
      ).length;
  }
  const drafts = input.drafts ?? (leads ?? 0) * steps;
  return { ...(await quoteDrafts(em, actor.workspaceId, drafts)), steps, leads };
}

// ---------------------------------------------------------------------------------------------
// Writing.

export interface Written {
  subject: string | null;
  body: string;
  problems: Problem[];
  credits: number;
  model: string;
}

const modelFailure = (err: unknown) =>
  err instanceof LlmError
    ? new AppError(
        err.retryable ? 503 : 502,
        'model_unavailable',
        `the model could not write the message (${err.code})`,
        { retryable: err.retryable },
      )
    : err;

/**
 * Writes `count` messages for one lead (variants 0..count-1) and debits `draftCredits` each under
 * `key` (idempotent: a repeated key is not charged again). The price is held before the first model
 * call: 402 `insufficient_credits`, and no model call, when it cannot be covered.
 */
async function writeAndCharge(
  em: EntityManager,
  llm: ModelAdapter,
  actor: Actor,
  input: MessageInput,
  count: number,
  key: string,
  reason: string,
  policy: ReviewPolicy,
): Promise<Written[]> {
  const q = await quoteDrafts(em, actor.workspaceId, count);
  return withCreditHold(em, actor.workspaceId, q.credits, { key, reason, ttlMs: HOLD_TTL_MS }, async () => {
    const out: Written[] = [];
    for (let i = 0; i < count; i++) {
      try {
        const { value } = await writeMessage(llm, { ...input, variant: (input.variant ?? 0) + i });
        const msg = { subject: input.channel === 'email' ? value.subject : null, body: value.body };
        out.push({
          ...msg,
          problems: validateMessage(input.channel, msg, policy),
          credits: q.credits_per_draft,
          model: llm.model,
        });
      } catch (err) {
        throw modelFailure(err);
      }
    }
    if (q.credits > 0) await debitCredits(em, actor.workspaceId, q.credits, { key, reason });
    return out;
  });
}

/** `generate-message`: one lead's message for a step, written now (not stored); charged as one draft. */
export async function previewMessage(
  em: EntityManager,
  llm: ModelAdapter,
  actor: Actor,
  campaignId: string,
  input: { leadId: string; stepId?: string; requestId: string },
): Promise<Written & { step_id: string; channel: Channel }> {
  assertWritable(actor);
  const campaign = await requireCampaign(em, actor, campaignId);
  const step = await sendStepOf(em, campaign, input.stepId);
  const lead = await leadFields(em, campaign, input.leadId);
  const mi = await messageInput(em, campaign, step, lead);
  const [w] = await writeAndCharge(
    em,
    llm,
    actor,
    mi,
    1,
    `message-preview:${input.requestId}`,
    'Message preview',
    policyOf(campaign),
  );
  return { ...w, step_id: step.id, channel: mi.channel };
}

export const MAX_EXAMPLES = 50;

/** `examples/generate`: `count` proposals for a step (for a named lead, else a sample person); not stored until saved. */
export async function proposeExamples(
  em: EntityManager,
  llm: ModelAdapter,
  actor: Actor,
  campaignId: string,
  input: { stepId?: string; leadId?: string; count: number; requestId: string },
) {
  assertWritable(actor);
  const campaign = await requireCampaign(em, actor, campaignId);
  const step = await sendStepOf(em, campaign, input.stepId);
  const lead = input.leadId ? await leadFields(em, campaign, input.leadId) : SAMPLE_LEAD;
  const mi = await messageInput(em, campaign, step, lead);
  const items = await writeAndCharge(
    em,
    llm,
    actor,
    mi,
    input.count,
    `message-examples:${input.requestId}`,
    `Example messages (${input.count})`,
    policyOf(campaign),
  );
  return { step_id: step.id, channel: mi.channel, items };
}

/** `examples/save`: keeps the given examples (the user's own or accepted proposals); 409 `too_many_examples` past MAX_EXAMPLES. */
export async function saveExamples(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  input: { stepId?: string | null; items: { subject?: string | null; body: string; source?: 'user' | 'generated' }[] },
): Promise<IMessageExample[]> {
  assertWritable(actor);
  return em.transactional(async (tx) => {
    const campaign = await requireCampaign(tx as EntityManager, actor, campaignId, true);
    if (input.stepId) await sendStepOf(tx as EntityManager, campaign, input.stepId);
    const n = await tx.count(MessageExample, { campaign: campaign.id });
    if (n + input.items.length > MAX_EXAMPLES)
      throw conflict('too_many_examples', `a campaign keeps at most ${MAX_EXAMPLES} examples; it has ${n}`);
    const rows = input.items.map((i) =>
      tx.create(MessageExample, {
        workspaceId: actor.workspaceId,
        campaign: campaign.id,
        stepId: input.stepId ?? null,
        subject: i.subject?.trim() || null,
        body: i.body,
        source: i.source ?? 'user',
      }),
    );
    await tx.flush();
    return rows;
  });
}

/** `PUT examples/{exampleID}`: replaces an example's text (404 for another campaign's). */
export async function updateExample(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  exampleId: string,
  input: { subject?: string | null; body: string },
): Promise<IMessageExample> {
  assertWritable(actor);
  const campaign = await requireCampaign(em, actor, campaignId);
  const ex = await em.findOne(MessageExample, { id: exampleId, campaign: campaign.id });
  if (!ex) throw notFound('example');
  ex.subject = input.subject?.trim() || null;
  ex.body = input.body;
  ex.source = 'user';
  await em.flush();
  return ex;
}
