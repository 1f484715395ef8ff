// The ordered steps of a campaign (docs/campaigns.md, "Steps" and "Versions"). Every change of the steps
// (add, edit, delete, reorder, a step's message mode, an attachment) runs in one transaction that locks
// the campaign row, applies the change, bumps `campaigns.step_version` and writes that version's whole
// ordered step list to `campaign_step_versions`, so concurrent edits make consecutive versions and an
// enrollment can pin the version it runs.
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { MESSAGE_MODES, type ICampaign, type MessageMode } from '../../db/entities/Campaign.js';
import { CampaignStep, type ICampaignStep, type StepType } from '../../db/entities/CampaignStep.js';
import { CampaignStepAttachment } from '../../db/entities/CampaignStepAttachment.js';
import { CampaignStepVersion, type VersionedStep } from '../../db/entities/CampaignStepVersion.js';
import { checkTemplate } from '../../lib/templates.js';
import { assertWritable } from '../demo/demo.js';
import { badRequest, conflict, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import { assertNotArchived, requireCampaign } from './guards.js';
import { cleanFilename } from '../lists/imports.js';
import { resolveVariants, variantFields, type VariantInputT } from './variants.js';

/** Steps per campaign. */
export const MAX_STEPS = 50;
/** Largest step attachment: 5 MiB (413 file_too_large above it). */
export const MAX_STEP_ATTACHMENT_BYTES = 5 * 1024 * 1024;
/** Step types that may carry an attachment. */
export const ATTACHMENT_TYPES: readonly string[] = ['email', 'message'];

/** Code points, as JSON Schema's maxLength counts them. */
const codePoints = (s: string): number => [...s].length;
/** What String.prototype.trim() removes, spelled out so every regex engine agrees (as api/schemas.ts `text`). */
const TRIMMED = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
const NOT_BLANK = `^[^\\u0000]*[^${TRIMMED}\\u0000][^\\u0000]*$`;
/** A template: at most `max` code points, kept as written; `required`: not blank. */
const template = (max: number, required = true) => {
  const s = z.string().refine((v) => codePoints(v) <= max, `at most ${max} characters`);
  return (required ? s.refine((v) => v.trim().length > 0, 'must not be blank') : s).meta({
    maxLength: max,
    ...(required ? { minLength: 1, pattern: NOT_BLANK } : {}),
  });
};

export const EmailConfig = z.object({ subject: template(200), body: template(20000) }).strict();
export const InvitationConfig = z
  .object({
    note: template(300, false)
      .nullable()
      .optional()
      .meta({ description: 'The invitation note (at most 300 characters); absent or null: no note' }),
  })
  .strict();
export const MessageConfig = z.object({ body: template(8000) }).strict();
/** The longest wait in each unit: a year (8760 hours, 525600 minutes, 365 business days). */
export const WAIT_MAX = { minutes: 525_600, hours: 8760, business_days: 365 } as const;
export const WAIT_UNITS = ['minutes', 'hours', 'business_days'] as const;
const waitIn = <U extends (typeof WAIT_UNITS)[number]>(unit: U) =>
  z.object({ amount: z.number().int().min(1).max(WAIT_MAX[unit]), unit: z.literal(unit) }).strict();
export const WaitConfig = z
  .discriminatedUnion('unit', [waitIn('minutes'), waitIn('hours'), waitIn('business_days')])
  .meta({
    description:
      'a whole amount of minutes (1–525600), hours (1–8760) or business days (1–365: Monday–Friday in the campaign’s time zone)',
  });
export const ConditionConfig = z
  .object({
    check: z.enum(['accepted', 'opened', 'clicked', 'replied']).meta({
      description:
        'On the previous send: accepted (an invitation), opened or clicked (by a person: machine opens and clicks never count), or replied (the enrollment)',
    }),
    expect: z.boolean().meta({ description: 'true: go on when it happened; false: go on when it did not' }),
  })
  .strict();

const Mode = z
  .enum(MESSAGE_MODES)
  .nullable()
  .optional()
  .meta({ description: 'null or absent: the campaign’s message mode (send steps only)' });

const variants = <E extends z.ZodRawShape>(extra: E) =>
  z.discriminatedUnion('type', [
    z
      .object({
        type: z.literal('email'),
        config: EmailConfig,
        message_mode: Mode,
        ...variantFields(EmailConfig),
        ...extra,
      })
      .strict(),
    z.object({ type: z.literal('invitation'), config: InvitationConfig, message_mode: Mode, ...extra }).strict(),
    z
      .object({
        type: z.literal('message'),
        config: MessageConfig,
        message_mode: Mode,
        ...variantFields(MessageConfig),
        ...extra,
      })
      .strict(),
    z.object({ type: z.literal('wait'), config: WaitConfig, ...extra }).strict(),
    z.object({ type: z.literal('condition'), config: ConditionConfig, ...extra }).strict(),
  ]);

/** A step as replaced: its type and that type's config. */
export const StepInput = variants({});
/** A step as created: also where it goes. */
export const CreateStepInput = variants({
  position: z
    .number()
    .int()
    .min(0)
    .max(MAX_STEPS)
    .optional()
    .meta({ description: '0-based; absent or past the end: appended' }),
});
export type StepInputT = z.infer<typeof StepInput>;

/** The templates of a step's config, as [field, text]. */
export function templatesOf(type: string, config: Record<string, unknown>): [string, string][] {
  const out: [string, string][] = [];
  const take = (field: string) => {
    const v = config[field];
    if (typeof v === 'string' && v) out.push([field, v]);
  };
  if (type === 'email') (take('subject'), take('body'));
  if (type === 'invitation') take('note');
  if (type === 'message') take('body');
  return out;
}

/** 400 invalid_template with each problem of each template field. */
export function assertTemplates(type: string, config: Record<string, unknown>, prefix = 'config'): void {
  const details: { path: string; code: string; message: string }[] = [];
  for (const [field, text] of templatesOf(type, config)) {
    for (const p of checkTemplate(text)) details.push({ path: `${prefix}.${field}`, code: p.code, message: p.message });
  }
  if (details.length)
    throw badRequest(
      'invalid_template',
      `the step's template is not valid: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`,
      details,
    );
}

export const snapshotVersion = (s: ICampaignStep): VersionedStep => ({
  id: s.id,
  position: s.position,
  type: s.type,
  config: s.config,
  messageMode: s.messageMode ?? null,
  hasAttachment: !!s.attachmentName,
  ...(s.variants?.length ? { variants: s.variants, winnerRule: s.winnerRule ?? null } : {}),
});

/** 400 invalid_template for each variant's templates, as for the step's own. */
function assertStepTemplates(input: StepInputT): void {
  assertTemplates(input.type, input.config);
  if ('variants' in input)
    input.variants?.forEach(
      (v, i) => v.config && assertTemplates(input.type, v.config as Record<string, unknown>, `variants.${i}.config`),
    );
}

/** The step's variants and rule from the input (a rule needs variants); a winner whose variant is gone is cleared. */
async function applyVariants(tx: EntityManager, step: ICampaignStep, input: StepInputT): Promise<void> {
  const given = 'variants' in input ? input.variants : null;
  const rule = 'winner_rule' in input ? (input.winner_rule ?? null) : null;
  if (rule && !given?.length)
    throw badRequest('invalid_body', 'a winner rule needs variants', [
      { path: 'winner_rule', message: 'give at least two variants' },
    ]);
  step.variants = resolveVariants(given as VariantInputT[] | null, step.config, step.variants, step.type);
  step.winnerRule = rule;
  const kept = (step.variants ?? []).map((v) => v.id);
  if (step.id)
    await tx.execute(`delete from step_winners where step_id = ? and not (variant_id = any(?::uuid[]))`, [
      step.id,
      `{${kept.join(',')}}`,
    ]);
}

const stepsOf = (em: EntityManager, campaignId: string) =>
  em.find(CampaignStep, { campaign: campaignId }, { orderBy: { position: 'asc' } });

/**
 * Runs `change` on the locked campaign and its steps, then renumbers positions 0..n-1, bumps the
 * version and writes its snapshot, all in one transaction.
 */
async function editSteps<T>(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  change: (
    tx: EntityManager,
    campaign: ICampaign,
    steps: ICampaignStep[],
  ) => Promise<{ steps: ICampaignStep[]; result: T }>,
): Promise<{ campaign: ICampaign; steps: ICampaignStep[]; result: T }> {
  assertWritable(actor);
  return em.transactional(async (tx) => {
    const campaign = await requireCampaign(tx, actor, campaignId, true);
    assertEditable(campaign);
    const before = await stepsOf(tx, campaign.id);
    const { steps, result } = await change(tx, campaign, before);
    // Positions are unique in the result: move them out of the way first (no unique index today, but keep it safe).
    steps.forEach((s, i) => (s.position = i));
    campaign.stepVersion += 1;
    await tx.flush();
    tx.create(CampaignStepVersion, { campaign, version: campaign.stepVersion, steps: steps.map(snapshotVersion) });
    await tx.flush();
    return { campaign, steps, result };
  });
}

function assertEditable(c: ICampaign) {
  assertNotArchived(c);
  if (c.status === 'completed') throw conflict('campaign_completed', 'a completed campaign’s steps cannot be changed');
}

export interface StepList {
  campaign: ICampaign;
  steps: ICampaignStep[];
}

export async function listSteps(em: EntityManager, actor: Actor, campaignId: string): Promise<StepList> {
  const campaign = await requireCampaign(em, actor, campaignId);
  return { campaign, steps: await stepsOf(em, campaign.id) };
}

function findStep(steps: ICampaignStep[], stepId: string): ICampaignStep {
  const s = steps.find((x) => x.id === stepId.toLowerCase());
  if (!s) throw notFound('step');
  return s;
}

export interface StepResult {
  campaign: ICampaign;
  step: ICampaignStep;
}

export async function addStep(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  input: StepInputT & { position?: number },
): Promise<StepResult> {
  assertStepTemplates(input);
  const { campaign, result } = await editSteps(em, actor, campaignId, async (tx, campaign, steps) => {
    if (steps.length >= MAX_STEPS) throw conflict('step_limit_reached', `a campaign has at most ${MAX_STEPS} steps`);
    const step = tx.create(CampaignStep, {
      campaign,
      position: steps.length,
      type: input.type,
      config: input.config as Record<string, unknown>,
      messageMode: 'message_mode' in input ? (input.message_mode ?? null) : null,
    } as never) as ICampaignStep;
    await applyVariants(tx, step, input);
    const at = Math.min(input.position ?? steps.length, steps.length);
    const next = [...steps];
    next.splice(at, 0, step);
    return { steps: next, result: step };
  });
  return { campaign, step: result };
}

/** Replaces a step's type, config and message mode (its id and position stay). */
export async function updateStep(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  stepId: string,
  input: StepInputT,
): Promise<StepResult> {
  assertStepTemplates(input);
  const { campaign, result } = await editSteps(em, actor, campaignId, async (tx, _c, steps) => {
    const step = findStep(steps, stepId);
    if (step.attachmentName && !ATTACHMENT_TYPES.includes(input.type)) {
      throw conflict(
        'attachment_not_supported',
        `a ${input.type} step cannot carry an attachment: delete the attachment first`,
      );
    }
    step.type = input.type as StepType;
    step.config = input.config as Record<string, unknown>;
    step.messageMode = 'message_mode' in input ? (input.message_mode ?? null) : null;
    await applyVariants(tx, step, input);
    return { steps, result: step };
  });
  return { campaign, step: result };
}

export async function deleteStep(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  stepId: string,
): Promise<{ campaign: ICampaign; id: string }> {
  const { campaign, result } = await editSteps(em, actor, campaignId, async (tx, _c, steps) => {
    const step = findStep(steps, stepId);
    await tx.nativeDelete(CampaignStepAttachment, { step: step.id });
    tx.remove(step);
    return { steps: steps.filter((s) => s !== step), result: step.id };
  });
  return { campaign, id: result };
}

/** Puts the steps in the given order: the ids must be exactly the campaign's steps (400 invalid_order otherwise). */
export async function reorderSteps(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  stepIds: string[],
): Promise<StepList> {
  const { campaign, steps } = await editSteps(em, actor, campaignId, async (_tx, _c, steps) => {
    const ids = stepIds.map((s) => s.toLowerCase());
    const byId = new Map(steps.map((s) => [s.id, s]));
    const seen = new Set<string>();
    const details: { path: string; message: string }[] = [];
    ids.forEach((id, i) => {
      if (!byId.has(id)) details.push({ path: `step_ids.${i}`, message: `${id} is not a step of this campaign` });
      else if (seen.has(id)) details.push({ path: `step_ids.${i}`, message: `${id} appears more than once` });
      seen.add(id);
    });
    for (const s of steps) if (!seen.has(s.id)) details.push({ path: 'step_ids', message: `step ${s.id} is missing` });
    if (details.length)
      throw badRequest('invalid_order', 'step_ids must list every step of the campaign exactly once', details);
    return { steps: ids.map((id) => byId.get(id)!), result: undefined };
  });
  return { campaign, steps };
}

/**
 * Sets the message mode campaign-wide (no step_id: the campaign's mode; with reset_steps the steps'
 * own modes are cleared too) or for one step (null: back to the campaign's). Either way the steps'
 * effective modes may change, so it makes a new version like every other step change.
 */
export async function setMessageMode(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  input: { messageMode: MessageMode | null; stepId?: string; resetSteps?: boolean },
): Promise<StepList> {
  if (!input.stepId && input.messageMode === null) {
    throw badRequest('invalid_body', 'message_mode null applies to a step only', [
      { path: 'message_mode', message: 'give a mode for the campaign' },
    ]);
  }
  const { campaign, steps } = await editSteps(em, actor, campaignId, async (_tx, c, steps) => {
    if (input.stepId) {
      const step = findStep(steps, input.stepId);
      if (!SEND.has(step.type))
        throw badRequest('invalid_step', `a ${step.type} step has no message mode`, [
          { path: 'step_id', message: 'only email, invitation and message steps have a message mode' },
        ]);
      step.messageMode = input.messageMode;
    } else {
      c.messageMode = input.messageMode!;
      if (input.resetSteps) for (const s of steps) s.messageMode = null;
    }
    return { steps, result: undefined };
  });
  return { campaign, steps };
}

const SEND = new Set(['email', 'invitation', 'message']);

export interface AffectedCounts {
  step: ICampaignStep;
  campaign: ICampaign;
  before: number;
  on: number;
  after: number;
  active: number;
  paused: number;
}

/**
 * Enrollments of the campaign (active or paused) before, on and after the step, by their current
 * position against the step's position (null: not started yet, so before).
 */
export async function affectedCounts(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  stepId: string,
): Promise<AffectedCounts> {
  const campaign = await requireCampaign(em, actor, campaignId);
  const step = await em.findOne(CampaignStep, { id: stepId, campaign: campaign.id });
  if (!step) throw notFound('step');
  const [row]: { before: number; on: number; after: number; active: number; paused: number }[] = await em.execute(
    `select count(*) filter (where current_position is null or current_position < ?)::int as before,
            count(*) filter (where current_position = ?)::int as on,
            count(*) filter (where current_position > ?)::int as after,
            count(*) filter (where status = 'active')::int as active,
            count(*) filter (where status = 'paused')::int as paused
       from enrollments where campaign_id = ? and status in ('active', 'paused')`,
    [step.position, step.position, step.position, campaign.id],
  );
  return { step, campaign, ...row };
}

// ---- attachments ----

const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/;

export async function setAttachment(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  stepId: string,
  file: { filename?: string; mimeType: string; data: Buffer },
): Promise<StepResult> {
  if (!file.data.length) throw badRequest('invalid_file', 'the file is empty');
  const { campaign, result } = await editSteps(em, actor, campaignId, async (tx, _c, steps) => {
    const step = findStep(steps, stepId);
    if (!ATTACHMENT_TYPES.includes(step.type))
      throw conflict(
        'attachment_not_supported',
        `only email and message steps carry an attachment, not ${step.type} steps`,
      );
    const type = file.mimeType.toLowerCase().split(';')[0].trim();
    step.attachmentName = file.filename ? cleanFilename(file.filename) : 'attachment';
    step.attachmentType = MIME.test(type) ? type : 'application/octet-stream';
    step.attachmentSize = file.data.length;
    await tx.nativeDelete(CampaignStepAttachment, { step: step.id });
    tx.create(CampaignStepAttachment, {
      step,
      data: file.data,
      sha256: createHash('sha256').update(file.data).digest('hex'),
    });
    return { steps, result: step };
  });
  return { campaign, step: result };
}

/** Checks, before the body is read, that the step exists and may carry an attachment. */
export async function assertAttachable(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  stepId: string,
): Promise<void> {
  assertWritable(actor);
  const campaign = await requireCampaign(em, actor, campaignId);
  const step = await em.findOne(CampaignStep, { id: stepId, campaign: campaign.id });
  if (!step) throw notFound('step');
  assertEditable(campaign);
  if (!ATTACHMENT_TYPES.includes(step.type))
    throw conflict(
      'attachment_not_supported',
      `only email and message steps carry an attachment, not ${step.type} steps`,
    );
}

export async function deleteAttachment(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  stepId: string,
): Promise<StepResult> {
  const { campaign, result } = await editSteps(em, actor, campaignId, async (tx, _c, steps) => {
    const step = findStep(steps, stepId);
    if (!step.attachmentName) throw notFound('attachment');
    await tx.nativeDelete(CampaignStepAttachment, { step: step.id });
    step.attachmentName = null;
    step.attachmentType = null;
    step.attachmentSize = null;
    return { steps, result: step };
  });
  return { campaign, step: result };
}
