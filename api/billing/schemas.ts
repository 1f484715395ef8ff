import { z } from 'zod';
import type { Entitlements, Offer, Plan, WorkspaceEntitlements } from '../../domain/billing/plans.js';
import { SUBSCRIPTION_STATUSES } from '../../db/entities/Subscription.js';
import { ACTION_TYPES } from '../../db/entities/PlatformAccount.js';
import type { ICreditLedgerEntry } from '../../db/entities/CreditLedgerEntry.js';
import { Timestamp, iso } from '../schemas.js';

export const EntitlementsView = z.object({
  operator_access: z.boolean(),
  max_apps: z.number().int(),
  max_discovery_agents: z.number().int(),
  max_campaigns: z.number().int(),
  seats: z.number().int(),
  monthly_credits: z.number().int(),
  draft_credits: z
    .number()
    .int()
    .meta({ description: 'Credits per AI-written message draft (generation, revision or retry)' }),
  max_platform_accounts: z.number().int(),
  sender_caps: z
    .record(z.enum(ACTION_TYPES), z.object({ daily: z.number().int(), weekly: z.number().int() }))
    .meta({ description: 'The highest daily and weekly caps a sender account may be given, per action type' }),
});
export const toEntitlementsView = (e: Entitlements): z.infer<typeof EntitlementsView> => ({
  operator_access: e.operatorAccess,
  max_apps: e.maxApps,
  max_discovery_agents: e.maxDiscoveryAgents,
  max_campaigns: e.maxCampaigns,
  seats: e.seats,
  monthly_credits: e.monthlyCredits,
  draft_credits: e.draftCredits,
  max_platform_accounts: e.maxPlatformAccounts,
  sender_caps: e.senderCaps,
});

export const PlanView = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  paid: z.boolean(),
  price_monthly_cents: z.number().int(),
  price_yearly_cents: z.number().int(),
  currency: z.string(),
  entitlements: EntitlementsView,
});
export const toPlanView = (p: Plan): z.infer<typeof PlanView> => ({
  id: p.id,
  name: p.name,
  description: p.description,
  paid: p.paid,
  price_monthly_cents: p.priceMonthlyCents,
  price_yearly_cents: p.priceYearlyCents,
  currency: p.currency,
  entitlements: toEntitlementsView(p.entitlements),
});

export const CatalogView = z.object({ plans: z.array(PlanView) });

const Status = z.enum(SUBSCRIPTION_STATUSES);

export const EntitlementView = z.object({
  workspace_id: z.uuid(),
  /** The plan whose entitlements apply now. */
  plan_id: z.string(),
  plan_name: z.string(),
  paid: z.boolean(),
  /** The stored subscription's plan (differs from plan_id once a cancellation has run out). */
  subscribed_plan_id: z.string(),
  status: Status,
  current_period_end: Timestamp.nullable(),
  is_demo: z.boolean(),
  entitlements: EntitlementsView,
  credits: z.object({ balance: z.number().int() }),
});
export const toEntitlementView = (
  e: WorkspaceEntitlements,
  balance: number,
  isDemo: boolean,
): z.infer<typeof EntitlementView> => ({
  workspace_id: e.workspaceId,
  plan_id: e.plan.id,
  plan_name: e.plan.name,
  paid: e.plan.paid,
  subscribed_plan_id: e.subscribedPlan.id,
  status: e.status,
  current_period_end: iso(e.currentPeriodEnd),
  is_demo: isDemo,
  entitlements: toEntitlementsView(e.entitlements),
  credits: { balance },
});

export const CurrentPlanView = z.object({
  workspace_id: z.uuid(),
  plan: PlanView,
  subscribed_plan_id: z.string(),
  status: Status,
  current_period_end: Timestamp.nullable(),
});
export const toCurrentPlanView = (e: WorkspaceEntitlements): z.infer<typeof CurrentPlanView> => ({
  workspace_id: e.workspaceId,
  plan: toPlanView(e.plan),
  subscribed_plan_id: e.subscribedPlan.id,
  status: e.status,
  current_period_end: iso(e.currentPeriodEnd),
});

export const OfferView = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string(),
  plan_id: z.string(),
  discount_percent: z.number().int(),
  duration_months: z.number().int(),
});
export const ActiveOfferView = z.object({ offer: OfferView.nullable() });
export const toOfferView = (o: Offer): z.infer<typeof OfferView> => ({
  id: o.id,
  title: o.title,
  description: o.description,
  plan_id: o.planId,
  discount_percent: o.discountPercent,
  duration_months: o.durationMonths,
});

export const BetaRewardView = z.object({
  id: z.uuid(),
  amount: z.number().int(),
  reason: z.string(),
  created_at: Timestamp,
});
export const BetaRewardsView = z.object({
  workspace_id: z.uuid(),
  total_credits: z.number().int(),
  rewards: z.array(BetaRewardView),
});
export const toBetaRewardView = (r: ICreditLedgerEntry): z.infer<typeof BetaRewardView> => ({
  id: r.id,
  amount: r.amount,
  reason: r.reason,
  created_at: r.createdAt.toISOString(),
});

export const FeaturesView = z.object({
  workspace_id: z.uuid(),
  plan_id: z.string(),
  is_demo: z.boolean(),
  /** Feature key → available to this workspace now. */
  features: z.record(z.string(), z.boolean()),
});

const LimitView = z.object({ max: z.number().int(), used: z.number().int().nullable() });
export const LimitsView = z.object({
  workspace_id: z.uuid(),
  plan_id: z.string(),
  limits: z.object({
    apps: LimitView,
    agents: LimitView,
    campaigns: LimitView,
    seats: LimitView,
    platform_accounts: LimitView,
  }),
  credits: z.object({ balance: z.number().int(), monthly_allowance: z.number().int() }),
});
