// Plans and billing, read-only (purchases happen in the web app). Workspace-scoped reads follow
// X-Acting-As (a member sees the plan of the workspace they act in); the catalog and the active offer
// are about the caller as a buyer, so they ignore it.
import { defineOperation } from '../operation.js';
import { creditBalance, ledgerEntries } from '../../domain/billing/credits.js';
import {
  activeOfferFor,
  currentUsage,
  entitlementsFor,
  featuresFor,
  LIMITS,
  PLAN_IDS,
  PLANS,
} from '../../domain/billing/plans.js';
import { AppError } from '../../domain/errors.js';
import type { Actor } from '../../domain/identity.js';
import {
  ActiveOfferView,
  BetaRewardsView,
  CatalogView,
  CurrentPlanView,
  EntitlementView,
  FeaturesView,
  LimitsView,
  toBetaRewardView,
  toCurrentPlanView,
  toEntitlementView,
  toOfferView,
  toPlanView,
} from './schemas.js';

const tag = 'billing';
const actingErrors = { 400: ['invalid_user'], 401: ['unauthorized'], 403: ['not_assigned'] };

/** Billing details (the subscription, rewards) are for the workspace's owner and admins. */
function requireBillingViewer(actor: Actor): void {
  if (actor.role === 'member')
    throw new AppError(403, 'not_assigned', 'only owners and admins can see billing details');
}

export const getEntitlement = defineOperation({
  method: 'GET',
  path: '/api/me/entitlement',
  summary: 'Effective plan, subscription status, entitlements and credit balance of the effective workspace',
  tag,
  auth: 'user',
  responses: { 200: EntitlementView },
  errors: actingErrors,
  handler: async ({ em, actor }) =>
    toEntitlementView(
      await entitlementsFor(em, actor.workspaceId),
      await creditBalance(em, actor.workspaceId),
      actor.isDemo,
    ),
});

export const getActiveOffer = defineOperation({
  method: 'GET',
  path: '/api/me/active-offer',
  summary:
    'The promotional offer for the caller’s own workspace (as a buyer; X-Acting-As is checked, not followed), or null',
  tag,
  auth: 'user',
  actingAs: 'self',
  responses: { 200: ActiveOfferView },
  errors: { 401: ['unauthorized'] },
  handler: async ({ em, actor }) => {
    const offer = activeOfferFor(await entitlementsFor(em, actor.workspaceId));
    return { offer: offer ? toOfferView(offer) : null };
  },
});

export const getCatalog = defineOperation({
  method: 'GET',
  path: '/api/billing/catalog',
  summary: 'The plan catalog: plans, display prices (integer cents) and entitlements',
  tag,
  auth: 'user',
  actingAs: 'self',
  responses: { 200: CatalogView },
  errors: { 401: ['unauthorized'] },
  handler: () => ({ plans: PLAN_IDS.map((id) => toPlanView(PLANS[id])) }),
});

export const getCurrentPlan = defineOperation({
  method: 'GET',
  path: '/api/billing/current-plan',
  summary: 'The plan and subscription state of the effective workspace (owners and admins)',
  tag,
  auth: 'user',
  responses: { 200: CurrentPlanView },
  errors: actingErrors,
  handler: async ({ em, actor }) => {
    requireBillingViewer(actor);
    return toCurrentPlanView(await entitlementsFor(em, actor.workspaceId));
  },
});

export const getBetaRewards = defineOperation({
  method: 'GET',
  path: '/api/billing/beta-rewards',
  summary: 'Credits granted to the effective workspace as beta rewards (owners and admins)',
  tag,
  auth: 'user',
  responses: { 200: BetaRewardsView },
  errors: actingErrors,
  handler: async ({ em, actor }) => {
    requireBillingViewer(actor);
    const rewards = await ledgerEntries(em, actor.workspaceId, { source: 'beta_reward' });
    return {
      workspace_id: actor.workspaceId,
      total_credits: rewards.reduce((s, r) => s + r.amount, 0),
      rewards: rewards.map(toBetaRewardView),
    };
  },
});

export const getFeatures = defineOperation({
  method: 'GET',
  path: '/api/features',
  summary: 'Feature switches of the effective workspace (from its plan and Demo state)',
  tag,
  auth: 'user',
  responses: { 200: FeaturesView },
  errors: actingErrors,
  handler: async ({ em, actor }) => {
    const e = await entitlementsFor(em, actor.workspaceId);
    return {
      workspace_id: actor.workspaceId,
      plan_id: e.plan.id,
      is_demo: actor.isDemo,
      features: featuresFor(e, actor.isDemo),
    };
  },
});

export const getLimits = defineOperation({
  method: 'GET',
  path: '/api/user/limits',
  summary: 'Plan limits of the effective workspace with current usage (null: not counted yet) and credits',
  tag,
  auth: 'user',
  responses: { 200: LimitsView },
  errors: actingErrors,
  handler: async ({ em, actor }) => {
    const [e, used, balance] = await Promise.all([
      entitlementsFor(em, actor.workspaceId),
      currentUsage(em, actor.workspaceId),
      creditBalance(em, actor.workspaceId),
    ]);
    const limit = (k: keyof typeof LIMITS) => ({ max: e.entitlements[LIMITS[k]], used: used[k] });
    return {
      workspace_id: actor.workspaceId,
      plan_id: e.plan.id,
      limits: {
        apps: limit('apps'),
        agents: limit('agents'),
        campaigns: limit('campaigns'),
        seats: limit('seats'),
        platform_accounts: limit('platformAccounts'),
      },
      credits: { balance, monthly_allowance: e.entitlements.monthlyCredits },
    };
  },
});
