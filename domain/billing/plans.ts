/**
 * Plans, subscriptions and entitlements: the ONE place that decides what a workspace's plan allows.
 *
 * How other domains use it (never copy these checks into handlers):
 * - `await requireOperatorAccess(em, actor)` first thing in every Operator operation (reads too) →
 *   403 `demo_read_only` in a Demo workspace, else 402 with an empty code `''` ("Operator is for paid
 *   plans") when the effective plan has no Operator access.
 * - `await requireActiveSubscription(em, actor)` where the spec says an active subscription is
 *   required (e.g. PUT /api/agents/{id}) → 403 `subscription_required`.
 * - `await requireWithinLimit(em, actor, 'agents', currentCount)` before creating a counted
 *   resource; `currentCount` is how many exist now (before the new one) → 403 `plan_limit_reached`
 *   (details: limit, max, plan).
 * - `await entitlementsFor(em, workspaceId)` to read the effective plan, status and limits.
 * - `currentUsage(em, workspaceId)` counts what exists; domains that add counted resources (agents,
 *   campaigns) extend it so GET /api/user/limits shows their usage.
 * Credits are in domain/billing/credits.ts; demo read-only rules in domain/demo/demo.ts.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { App } from '../../db/entities/App.js';
import { Subscription, type ISubscription, type SubscriptionStatus } from '../../db/entities/Subscription.js';
import { TeamMember } from '../../db/entities/TeamMember.js';
import { DiscoveryAgent } from '../../db/entities/DiscoveryAgent.js';
import { PlatformAccount, type ActionType } from '../../db/entities/PlatformAccount.js';
import { Campaign } from '../../db/entities/Campaign.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { grantCredits } from './credits.js';
import { assertWritable } from '../demo/demo.js';
import { AppError } from '../errors.js';
import type { Actor } from '../identity.js';

export const PLAN_IDS = ['free', 'starter', 'pro'] as const;
export type PlanId = (typeof PLAN_IDS)[number];

export interface Entitlements {
  /** The Operator agent (chat, tools, attachments). Paid plans only. */
  operatorAccess: boolean;
  /** Products (apps) per workspace. */
  maxApps: number;
  /** Discovery agents per workspace. */
  maxDiscoveryAgents: number;
  /** Campaigns per workspace. */
  maxCampaigns: number;
  /** People who can work in the workspace, the owner included. */
  seats: number;
  /** Credits granted at the start of each billing period. */
  monthlyCredits: number;
  /** Credits per AI-written message draft: a generation, a revision or a retry (docs/message-review.md). */
  draftCredits: number;
  /** Sender (platform) accounts per workspace. */
  maxPlatformAccounts: number;
  /** The highest daily and weekly caps a user may set per sender account and action type (docs/accounts.md). */
  senderCaps: Record<ActionType, { daily: number; weekly: number }>;
}

export interface Plan {
  id: PlanId;
  name: string;
  description: string;
  paid: boolean;
  /** Display prices in integer cents (USD); purchases happen in the web app. */
  priceMonthlyCents: number;
  priceYearlyCents: number;
  currency: 'usd';
  entitlements: Entitlements;
}

/** The plan catalog. Order matters: cheapest first. */
export const PLANS: Record<PlanId, Plan> = {
  free: {
    id: 'free',
    name: 'Free',
    description: 'Try discovery on one product.',
    paid: false,
    priceMonthlyCents: 0,
    priceYearlyCents: 0,
    currency: 'usd',
    entitlements: {
      operatorAccess: false,
      maxApps: 1,
      maxDiscoveryAgents: 1,
      maxCampaigns: 1,
      seats: 1,
      monthlyCredits: 50,
      draftCredits: 2,
      maxPlatformAccounts: 1,
      senderCaps: {
        email: { daily: 50, weekly: 250 },
        invitation: { daily: 20, weekly: 100 },
        message: { daily: 50, weekly: 250 },
        profile_view: { daily: 80, weekly: 400 },
      },
    },
  },
  starter: {
    id: 'starter',
    name: 'Starter',
    description: 'The Operator, more agents and campaigns for a small team.',
    paid: true,
    priceMonthlyCents: 4900,
    priceYearlyCents: 49000,
    currency: 'usd',
    entitlements: {
      operatorAccess: true,
      maxApps: 3,
      maxDiscoveryAgents: 5,
      maxCampaigns: 10,
      seats: 3,
      monthlyCredits: 1000,
      draftCredits: 1,
      maxPlatformAccounts: 5,
      senderCaps: {
        email: { daily: 200, weekly: 1000 },
        invitation: { daily: 40, weekly: 200 },
        message: { daily: 100, weekly: 500 },
        profile_view: { daily: 150, weekly: 750 },
      },
    },
  },
  pro: {
    id: 'pro',
    name: 'Pro',
    description: 'For teams running outreach across many products.',
    paid: true,
    priceMonthlyCents: 14900,
    priceYearlyCents: 149000,
    currency: 'usd',
    entitlements: {
      operatorAccess: true,
      maxApps: 20,
      maxDiscoveryAgents: 25,
      maxCampaigns: 100,
      seats: 10,
      monthlyCredits: 5000,
      draftCredits: 1,
      maxPlatformAccounts: 25,
      senderCaps: {
        email: { daily: 500, weekly: 2500 },
        invitation: { daily: 100, weekly: 500 },
        message: { daily: 250, weekly: 1250 },
        profile_view: { daily: 300, weekly: 1500 },
      },
    },
  },
};

export const isPlanId = (s: string): s is PlanId => (PLAN_IDS as readonly string[]).includes(s);

export function getPlan(id: string): Plan {
  if (!isPlanId(id)) throw new AppError(400, 'invalid_plan', `unknown plan "${id}"; plans: ${PLAN_IDS.join(', ')}`);
  return PLANS[id];
}

/** Limit names usable with requireWithinLimit, mapped to their entitlement. */
export const LIMITS = {
  apps: 'maxApps',
  agents: 'maxDiscoveryAgents',
  campaigns: 'maxCampaigns',
  seats: 'seats',
  platformAccounts: 'maxPlatformAccounts',
} as const satisfies Record<string, keyof Entitlements>;
export type LimitName = keyof typeof LIMITS;

export interface WorkspaceEntitlements {
  workspaceId: string;
  /** The plan whose entitlements apply now (free unless the subscription is in force). */
  plan: Plan;
  /** The subscribed plan as stored (may differ from `plan` after a cancellation has run out). */
  subscribedPlan: Plan;
  status: SubscriptionStatus;
  currentPeriodEnd: Date | null;
  entitlements: Entitlements;
}

/**
 * Which plan applies, given the stored subscription:
 * - no row, or status `none` → free;
 * - `active` → the plan;
 * - `past_due` → the plan (grace: entitlements stay, but requireActiveSubscription refuses);
 * - `canceled` → the plan until `current_period_end`, then free.
 */
export function effectivePlan(
  sub: Pick<ISubscription, 'plan' | 'status' | 'currentPeriodEnd'> | null,
  now = new Date(),
): Plan {
  if (!sub || !isPlanId(sub.plan)) return PLANS.free;
  switch (sub.status) {
    case 'active':
    case 'past_due':
      return PLANS[sub.plan];
    case 'canceled':
      return sub.currentPeriodEnd && sub.currentPeriodEnd > now ? PLANS[sub.plan] : PLANS.free;
    default:
      return PLANS.free;
  }
}

export async function subscriptionOf(em: EntityManager, workspaceId: string): Promise<ISubscription | null> {
  return em.findOne(Subscription, { workspace: workspaceId }, { disableIdentityMap: true });
}

export async function entitlementsFor(em: EntityManager, workspaceId: string): Promise<WorkspaceEntitlements> {
  const sub = await subscriptionOf(em, workspaceId);
  const plan = effectivePlan(sub);
  return {
    workspaceId,
    plan,
    subscribedPlan: sub && isPlanId(sub.plan) ? PLANS[sub.plan] : PLANS.free,
    status: sub?.status ?? 'none',
    currentPeriodEnd: sub?.currentPeriodEnd ?? null,
    entitlements: plan.entitlements,
  };
}

/**
 * The Operator gate: 403 `demo_read_only` in a Demo workspace (the spec: the Operator is unavailable
 * there, reads included), else 402 with an empty code (as the spec documents it) unless the
 * effective plan includes the Operator.
 */
export async function requireOperatorAccess(em: EntityManager, actor: Actor): Promise<WorkspaceEntitlements> {
  assertWritable(actor);
  const e = await entitlementsFor(em, actor.workspaceId);
  if (!e.entitlements.operatorAccess) {
    throw new AppError(402, '', `the Operator is for paid plans; this workspace is on the ${e.plan.name} plan`);
  }
  return e;
}

/** 403 `subscription_required` unless the workspace has a paid subscription with status `active`. */
export async function requireActiveSubscription(em: EntityManager, actor: Actor): Promise<WorkspaceEntitlements> {
  const e = await entitlementsFor(em, actor.workspaceId);
  if (e.status !== 'active' || !e.subscribedPlan.paid) {
    throw new AppError(403, 'subscription_required', 'an active paid subscription is required for this operation');
  }
  return e;
}

/**
 * 403 `plan_limit_reached` when creating one more `limit` resource would exceed the plan.
 * `currentCount` is the number that exists before the new one.
 */
export async function requireWithinLimit(
  em: EntityManager,
  actor: Actor,
  limit: LimitName,
  currentCount: number,
): Promise<WorkspaceEntitlements> {
  const e = await entitlementsFor(em, actor.workspaceId);
  const max = e.entitlements[LIMITS[limit]];
  if (currentCount + 1 > max) {
    throw new AppError(403, 'plan_limit_reached', `the ${e.plan.name} plan allows at most ${max} ${limit}`, {
      limit,
      max,
      plan: e.plan.id,
    });
  }
  return e;
}

/** Agents that count against the plan: every one not archived. */
export const countAgents = (em: EntityManager, workspaceId: string) =>
  em.count(DiscoveryAgent, { workspace: workspaceId, status: { $ne: 'archived' } });

/**
 * What a workspace uses now, per limit; `null` where the resource does not exist yet in this code
 * base. Domains that add counted resources (agents, campaigns) fill their entry in here.
 */
export async function currentUsage(em: EntityManager, workspaceId: string): Promise<Record<LimitName, number | null>> {
  const [apps, members] = await Promise.all([
    em.count(App, { workspace: workspaceId }),
    em.count(TeamMember, { workspace: workspaceId }),
  ]);
  // Sign-up writes an owner TeamMember row; count the owner once even if it is missing.
  const ownerRows = await em.count(TeamMember, { workspace: workspaceId, role: 'owner' });
  const agents = await countAgents(em, workspaceId);
  const platformAccounts = await em.count(PlatformAccount, { workspace: workspaceId });
  const campaigns = await em.count(Campaign, { workspace: workspaceId, status: { $ne: 'archived' } });
  return { apps, agents, campaigns, seats: members + (ownerRows ? 0 : 1), platformAccounts };
}

/**
 * Sets a workspace's plan and status (support staff via the admin CLI; the web app's billing in
 * production). A paid plan set `active` gets the plan's monthly credits once per plan and period
 * (idempotency key `plan:<plan>:<YYYY-MM>`), in the same transaction.
 */
export async function setPlan(
  em: EntityManager,
  workspaceId: string,
  planId: string,
  opts: { status?: SubscriptionStatus; currentPeriodEnd?: Date | null; now?: Date } = {},
): Promise<{ subscription: ISubscription; creditsGranted: number }> {
  const plan = getPlan(planId);
  const status = opts.status ?? (plan.paid ? 'active' : 'none');
  const now = opts.now ?? new Date();
  return em.transactional(async (tx) => {
    const periodEnd =
      opts.currentPeriodEnd !== undefined
        ? opts.currentPeriodEnd
        : plan.paid
          ? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1))
          : null;
    let sub = await tx.findOne(Subscription, { workspace: workspaceId });
    if (sub) {
      sub.plan = plan.id;
      sub.status = status;
      sub.currentPeriodEnd = periodEnd;
    } else {
      sub = tx.create(Subscription, {
        workspace: tx.getReference(Workspace, workspaceId),
        plan: plan.id,
        status,
        currentPeriodEnd: periodEnd,
      });
    }
    await tx.flush();
    let creditsGranted = 0;
    if (status === 'active' && plan.entitlements.monthlyCredits > 0) {
      const period = creditPeriod(now);
      const r = await grantCredits(tx, workspaceId, plan.entitlements.monthlyCredits, {
        key: `plan:${plan.id}:${period}`,
        reason: `${plan.name} plan credits for ${period}`,
        source: 'plan',
      });
      if (r.created) creditsGranted = plan.entitlements.monthlyCredits;
    }
    return { subscription: sub, creditsGranted };
  });
}

export interface Offer {
  id: string;
  title: string;
  description: string;
  planId: PlanId;
  discountPercent: number;
  /** Billing months the discount applies to. */
  durationMonths: number;
}

/**
 * The one promotional offer shown to a workspace (purchases happen in the web app): free
 * workspaces get the Starter launch offer, canceled ones a win-back offer, paying ones none.
 */
export function activeOfferFor(e: WorkspaceEntitlements): Offer | null {
  if (e.status === 'canceled') {
    return {
      id: 'win-back-30',
      title: 'Come back to ' + e.subscribedPlan.name,
      description: '30% off your first 3 months when you resubscribe.',
      planId: e.subscribedPlan.id,
      discountPercent: 30,
      durationMonths: 3,
    };
  }
  if (!e.plan.paid) {
    return {
      id: 'starter-launch-20',
      title: 'Unlock the Operator',
      description: '20% off Starter for your first 3 months.',
      planId: 'starter',
      discountPercent: 20,
      durationMonths: 3,
    };
  }
  return null;
}

/** Feature switches for clients (GET /api/features): what the workspace can use right now. */
export function featuresFor(e: WorkspaceEntitlements, isDemo: boolean): Record<string, boolean> {
  return {
    operator: e.entitlements.operatorAccess && !isDemo, // the Operator is unavailable in Demo workspaces
    discovery_agents: e.entitlements.maxDiscoveryAgents > 0,
    campaigns: e.entitlements.maxCampaigns > 0,
    team: e.entitlements.seats > 1 && !isDemo,
    writes: !isDemo,
  };
}

/** `YYYY-MM` (UTC) of a date: the credit period key. */
export const creditPeriod = (d: Date) => `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;

/**
 * One page of the monthly credit grant: every non-demo workspace after `afterId` (by id) gets its
 * effective plan's `monthlyCredits` for `period`, idempotently (key `plan:<plan>:<period>`, the same
 * key `setPlan` uses, so a plan set this month is not granted twice). Returns the last id seen, or
 * null when there are no more workspaces.
 */
export async function grantMonthlyCreditsPage(
  em: EntityManager,
  period: string,
  opts: { afterId?: string | null; limit?: number; workspaceIds?: string[] } = {},
): Promise<{ lastId: string | null; workspaces: number; granted: number }> {
  const limit = opts.limit ?? 500;
  const params: unknown[] = [opts.afterId ?? '00000000-0000-0000-0000-000000000000'];
  let filter = '';
  if (opts.workspaceIds) {
    if (!opts.workspaceIds.length) return { lastId: null, workspaces: 0, granted: 0 };
    filter = ` and w.id in (${opts.workspaceIds.map(() => '?').join(', ')})`;
    params.push(...opts.workspaceIds);
  }
  const rows = await em.execute<
    { id: string; plan: string | null; status: SubscriptionStatus | null; current_period_end: Date | null }[]
  >(
    `select w.id, s.plan, s.status, s.current_period_end from workspaces w left join subscriptions s on s.workspace_id = w.id
     where not w.is_demo and w.id > ?${filter} order by w.id limit ${Number(limit)}`,
    params,
  );
  let granted = 0;
  for (const r of rows) {
    const plan = effectivePlan(
      r.plan && r.status
        ? { plan: r.plan, status: r.status, currentPeriodEnd: r.current_period_end && new Date(r.current_period_end) }
        : null,
    );
    if (plan.entitlements.monthlyCredits <= 0) continue;
    const g = await grantCredits(em.fork(), r.id, plan.entitlements.monthlyCredits, {
      key: `plan:${plan.id}:${period}`,
      reason: `${plan.name} plan credits for ${period}`,
      source: 'plan',
    });
    if (g.created) granted++;
  }
  return { lastId: rows.length === limit ? rows[rows.length - 1].id : null, workspaces: rows.length, granted };
}
