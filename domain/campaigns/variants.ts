// A/B variants of a send step (docs/campaigns.md "A/B variants"): each variant has its own content and
// a weight; the planner picks one per enrollment (the same one on every re-run: a hash of the
// enrollment and step ids, never a random draw) and records it on the scheduled action. Once a winner
// is recorded (by hand, or by the step's winner rule when its test holds), new sends use it. Winners
// live in `step_winners`, not in the step, so a choice makes no new step version.
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { StepVariant, WinnerRule } from '../../db/entities/CampaignStep.js';
import { CampaignStep } from '../../db/entities/CampaignStep.js';
import { uuidv7 } from '../../lib/ids.js';
import { assertWritable } from '../demo/demo.js';
import { badRequest, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import { notify } from '../notifications/notifications.js';
import { assertNotArchived, requireCampaign } from './guards.js';

/** Variants a step may have. */
export const MAX_VARIANTS = 5;
export const VARIANT_STEP_TYPES: readonly string[] = ['email', 'message'];
export const WINNER_METRICS = ['reply_rate', 'open_rate', 'click_rate'] as const;
/** The confidences a rule may ask for, with the one-sided normal quantile each needs. */
export const CONFIDENCE_Z: Record<string, number> = { '0.8': 0.8416, '0.9': 1.2816, '0.95': 1.6449, '0.99': 2.3263 };

export const VariantInput = <C extends z.ZodType>(config: C) =>
  z
    .object({
      id: z
        .uuid()
        .optional()
        .meta({ description: 'An existing variant of the step (kept, with its statistics); absent: a new variant' }),
      name: z.string().trim().min(1).max(60).optional().meta({ description: 'Default: A, B, C… by place' }),
      weight: z
        .number()
        .int()
        .min(1)
        .max(100)
        .optional()
        .meta({ description: 'Relative share of new sends until a winner is chosen (default 1: an even split)' }),
      config: config
        .optional()
        .meta({ description: 'The variant’s content, as the step’s config; absent: the step’s own config' }),
    })
    .strict();

export const WinnerRuleInput = z
  .object({
    metric: z.enum(WINNER_METRICS).meta({
      description:
        'What the winner must lead on: replies, human opens or human clicks per send (machine opens and clicks never count)',
    }),
    min_sends: z
      .number()
      .int()
      .min(5)
      .max(100000)
      .meta({ description: 'Sends every variant needs before a winner can be chosen' }),
    confidence: z.union([z.literal(0.8), z.literal(0.9), z.literal(0.95), z.literal(0.99)]).meta({
      description: 'One-sided two-proportion z-test: the leader beats every other variant at this confidence',
    }),
  })
  .strict();

export const variantFields = <C extends z.ZodType>(config: C) => ({
  variants: z
    .array(VariantInput(config))
    .min(2)
    .max(MAX_VARIANTS)
    .nullable()
    .optional()
    .meta({
      description: `Beyond the spec. A/B variants (2–${MAX_VARIANTS}); absent or null: none (the step sends its config)`,
    }),
  winner_rule: WinnerRuleInput.nullable().optional().meta({
    description: 'Beyond the spec. Choose the winner automatically; absent or null: by hand only (needs variants)',
  }),
});

export type VariantInputT = { id?: string; name?: string; weight?: number; config?: Record<string, unknown> };

/**
 * The variants as stored: each with an id (kept when it names one of the step's variants, 400
 * otherwise), a name, a weight and its resolved config.
 */
export function resolveVariants(
  input: VariantInputT[] | null | undefined,
  stepConfig: Record<string, unknown>,
  existing: StepVariant[] | null | undefined,
  type: string,
): StepVariant[] | null {
  if (!input?.length) return null;
  if (!VARIANT_STEP_TYPES.includes(type))
    throw badRequest('invalid_body', `a ${type} step has no variants`, [
      { path: 'variants', message: 'only email and message steps have variants' },
    ]);
  const known = new Set((existing ?? []).map((v) => v.id));
  const seen = new Set<string>();
  return input.map((v, i) => {
    const id = v.id?.toLowerCase();
    if (id && (!known.has(id) || seen.has(id))) {
      throw badRequest('invalid_body', `variant ${id} is not a variant of this step`, [
        {
          path: `variants.${i}.id`,
          message: seen.has(id) ? 'given twice' : 'not a variant of this step: leave it out for a new one',
        },
      ]);
    }
    if (id) seen.add(id);
    return {
      id: id ?? uuidv7(),
      name: v.name ?? String.fromCharCode(65 + i),
      weight: v.weight ?? 1,
      config: v.config ?? stepConfig,
    };
  });
}

/** The variant of an enrollment: a point in [0, 1) from a hash of its ids, against the cumulative weights. */
export function pickVariant(enrollmentId: string, stepId: string, variants: StepVariant[]): StepVariant {
  const point = createHash('sha256').update(`${enrollmentId}:${stepId}`).digest().readUInt32BE(0) / 2 ** 32;
  const total = variants.reduce((n, v) => n + v.weight, 0);
  let at = 0;
  for (const v of variants) {
    at += v.weight / total;
    if (point < at) return v;
  }
  return variants[variants.length - 1];
}

// ---- statistics ----

export interface VariantCounts {
  variant_id: string;
  sent: number;
  opened: number;
  opened_machine: number;
  clicked: number;
  clicked_machine: number;
  replied: number;
}

/**
 * A person's opens, clicks and replies among the sends of `a` (an alias of scheduled_actions), each
 * counted once per email, and the sends that only machines opened or clicked (docs/tracking.md): what
 * the variant figures and the campaign stats both count.
 */
export const engagementCols = (a: string) => `count(*) filter (where ${a}.opened_at is not null)::int as opened,
  count(*) filter (where ${a}.opened_at is null and exists (select 1 from tracking_events t where t.action_id = ${a}.id and t.kind = 'open'))::int as opened_machine,
  count(*) filter (where ${a}.clicked_at is not null)::int as clicked,
  count(*) filter (where ${a}.clicked_at is null and exists (select 1 from tracking_events t where t.action_id = ${a}.id and t.kind = 'click'))::int as clicked_machine,
  count(*) filter (where ${a}.replied_at is not null)::int as replied`;

/** Per variant of a step: executed sends and their engagement (`engagementCols`). */
export async function variantCounts(
  em: EntityManager,
  stepIds: string[],
): Promise<(VariantCounts & { step_id: string })[]> {
  if (!stepIds.length) return [];
  return em.execute(
    `select a.step_id, a.variant_id, count(*)::int as sent, ${engagementCols('a')}
       from scheduled_actions a where a.step_id = any(?::uuid[]) and a.variant_id is not null and a.state = 'executed'
      group by a.step_id, a.variant_id`,
    [`{${stepIds.join(',')}}`],
  );
}

const METRIC_FIELD = { reply_rate: 'replied', open_rate: 'opened', click_rate: 'clicked' } as const;
/** n / d to four decimals (0 when d is 0): every rate of the stats. */
export const ratio = (n: number, d: number) => (d ? Math.round((n / d) * 10000) / 10000 : 0);

export interface WinnerTest {
  /** The leader's id when the rule holds; null when not (yet). */
  winner: string | null;
  leader: string | null;
  /** Why there is no winner yet: `min_sends` (a variant has too few sends) or `not_significant`. */
  pending: 'min_sends' | 'not_significant' | null;
  /** The smallest z of the leader against another variant (null before min_sends). */
  z: number | null;
  metric: WinnerRule['metric'];
  rates: Record<string, number>;
}

/**
 * The winner rule on the counts: every variant has `min_sends`; the leader (highest rate, then the
 * earlier variant) beats each other variant in a one-sided two-proportion z-test at the confidence.
 */
export function testWinner(variants: StepVariant[], counts: VariantCounts[], rule: WinnerRule): WinnerTest {
  const field = METRIC_FIELD[rule.metric];
  const of = new Map(counts.map((c) => [c.variant_id, c]));
  const rows = variants.map((v) => {
    const c = of.get(v.id);
    return { id: v.id, n: c?.sent ?? 0, x: c ? c[field] : 0 };
  });
  const rates = Object.fromEntries(rows.map((r) => [r.id, ratio(r.x, r.n)]));
  const leader = [...rows].sort((a, b) => (b.n ? b.x / b.n : 0) - (a.n ? a.x / a.n : 0))[0] ?? null;
  const base = { leader: leader?.id ?? null, metric: rule.metric, rates };
  if (!leader || rows.some((r) => r.n < rule.min_sends))
    return { ...base, winner: null, pending: 'min_sends', z: null };
  const need = CONFIDENCE_Z[String(rule.confidence)] ?? CONFIDENCE_Z['0.95'];
  let minZ = Infinity;
  for (const r of rows) {
    if (r === leader) continue;
    const p = (leader.x + r.x) / (leader.n + r.n);
    const se = Math.sqrt(p * (1 - p) * (1 / leader.n + 1 / r.n));
    const z = se === 0 ? 0 : (leader.x / leader.n - r.x / r.n) / se;
    minZ = Math.min(minZ, z);
  }
  const z = Math.round(minZ * 1000) / 1000;
  return { ...base, z, winner: minZ >= need ? leader.id : null, pending: minZ >= need ? null : 'not_significant' };
}

// ---- the planner's choice ----

/**
 * The variant a new send of the step uses: the recorded winner; else, when the step's rule holds now,
 * the winner it records (once: the insert is the decision, a concurrent plan's loses and reads it);
 * else the enrollment's own by weight.
 */
export async function chooseVariant(
  em: EntityManager,
  ctx: { id: string; workspace_id: string; campaign_id: string },
  step: { id: string; variants?: StepVariant[] | null; winnerRule?: WinnerRule | null },
): Promise<StepVariant | null> {
  const variants = step.variants;
  if (!variants?.length) return null;
  const [won] = await em.execute<{ variant_id: string }[]>(`select variant_id from step_winners where step_id = ?`, [
    step.id,
  ]);
  const winner = won && variants.find((v) => v.id === won.variant_id);
  if (winner) return winner;
  if (step.winnerRule && !won) {
    const test = testWinner(variants, await variantCounts(em, [step.id]), step.winnerRule);
    if (test.winner) {
      const [set] = await em.execute<{ variant_id: string }[]>(
        `insert into step_winners (step_id, campaign_id, workspace_id, variant_id, chosen_by, evidence, chosen_at) values (?, ?, ?, ?, 'auto', ?::jsonb, now())
         on conflict (step_id) do nothing returning variant_id`,
        [
          step.id,
          ctx.campaign_id,
          ctx.workspace_id,
          test.winner,
          JSON.stringify({ rule: step.winnerRule, z: test.z, rates: test.rates }),
        ],
      );
      if (set) {
        const name = variants.find((v) => v.id === test.winner)?.name ?? test.winner;
        await notify(em, ctx.workspace_id, {
          kind: 'campaign.variant_winner',
          title: `Variant ${name} won its A/B test`,
          body: `Its ${test.metric.replace('_', ' ')} beat the other variants at the rule's confidence; new sends of the step use it.`,
          data: { campaign_id: ctx.campaign_id, step_id: step.id, variant_id: test.winner },
          key: `variant_winner:${step.id}`,
        });
        return variants.find((v) => v.id === test.winner)!;
      }
      const [now] = await em.execute<{ variant_id: string }[]>(
        `select variant_id from step_winners where step_id = ?`,
        [step.id],
      );
      const chosen = now && variants.find((v) => v.id === now.variant_id);
      if (chosen) return chosen;
    }
  }
  return pickVariant(ctx.id, step.id, variants);
}

// ---- the routes' side ----

export interface StepVariantsView {
  campaign_id: string;
  step_id: string;
  winner: { variant_id: string; chosen_by: string; chosen_at: Date; evidence: Record<string, unknown> | null } | null;
  winner_rule: WinnerRule | null;
  test: WinnerTest | null;
  variants: (Omit<StepVariant, 'config'> & { config: Record<string, unknown>; is_winner: boolean } & Omit<
      VariantCounts,
      'variant_id'
    > & { reply_rate: number; open_rate: number; click_rate: number })[];
}

async function loadStep(em: EntityManager, actor: Actor, campaignId: string, stepId: string, lock = false) {
  const campaign = await requireCampaign(em, actor, campaignId, lock);
  const step = await em.findOne(CampaignStep, { id: stepId.toLowerCase(), campaign: campaign.id });
  if (!step) throw notFound('step');
  return { campaign, step };
}

/** A step's variants with their statistics, its winner and where its rule stands. */
export async function getStepVariants(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  stepId: string,
): Promise<StepVariantsView> {
  const { campaign, step } = await loadStep(em, actor, campaignId, stepId);
  const variants = step.variants ?? [];
  const counts = (await variantCounts(em, [step.id])).filter((c) => variants.some((v) => v.id === c.variant_id));
  // Read as a row, not an entity: an Operator turn reuses its entity manager across tools, and a
  // winner cleared by one call must not come back from its identity map in the next.
  const [winner] = await em.execute<
    { variant_id: string; chosen_by: string; chosen_at: Date; evidence: Record<string, unknown> | null }[]
  >(`select variant_id, chosen_by, chosen_at, evidence from step_winners where step_id = ?`, [step.id]);
  const zero = { sent: 0, opened: 0, opened_machine: 0, clicked: 0, clicked_machine: 0, replied: 0 };
  return {
    campaign_id: campaign.id,
    step_id: step.id,
    winner: winner
      ? {
          variant_id: winner.variant_id,
          chosen_by: winner.chosen_by,
          chosen_at: new Date(winner.chosen_at),
          evidence: winner.evidence ?? null,
        }
      : null,
    winner_rule: step.winnerRule ?? null,
    test: step.winnerRule && variants.length ? testWinner(variants, counts, step.winnerRule) : null,
    variants: variants.map((v) => {
      const { variant_id: _, ...c } = counts.find((x) => x.variant_id === v.id) ?? { variant_id: v.id, ...zero };
      return {
        ...v,
        is_winner: winner?.variant_id === v.id,
        ...c,
        reply_rate: ratio(c.replied, c.sent),
        open_rate: ratio(c.opened, c.sent),
        click_rate: ratio(c.clicked, c.sent),
      };
    }),
  };
}

/** Records a person's choice (replacing any earlier one, automatic or not); new sends of the step use it. */
export async function setStepWinner(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  stepId: string,
  variantId: string,
): Promise<StepVariantsView> {
  assertWritable(actor);
  await em.transactional(async (tx) => {
    const { campaign, step } = await loadStep(tx, actor, campaignId, stepId, true);
    assertNotArchived(campaign);
    const variant = (step.variants ?? []).find((v) => v.id === variantId.toLowerCase());
    if (!variant) throw notFound('variant');
    const counts = await variantCounts(tx, [step.id]);
    await tx.execute(
      `insert into step_winners (step_id, campaign_id, workspace_id, variant_id, chosen_by, user_id, evidence, chosen_at) values (?, ?, ?, ?, 'manual', ?, ?::jsonb, now())
       on conflict (step_id) do update set variant_id = excluded.variant_id, chosen_by = 'manual', user_id = excluded.user_id, evidence = excluded.evidence, chosen_at = now()
       where step_winners.variant_id <> excluded.variant_id or step_winners.chosen_by <> 'manual'`,
      [step.id, campaign.id, actor.workspaceId, variant.id, actor.userId, JSON.stringify({ counts })],
    );
  });
  return getStepVariants(em, actor, campaignId, stepId);
}

/** Clears the winner: new sends split by weight again (and the rule, if any, may choose again). */
export async function clearStepWinner(
  em: EntityManager,
  actor: Actor,
  campaignId: string,
  stepId: string,
): Promise<StepVariantsView> {
  assertWritable(actor);
  await em.transactional(async (tx) => {
    const { campaign, step } = await loadStep(tx, actor, campaignId, stepId, true);
    assertNotArchived(campaign);
    await tx.execute(`delete from step_winners where step_id = ?`, [step.id]);
  });
  return getStepVariants(em, actor, campaignId, stepId);
}
