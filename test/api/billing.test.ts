import test from 'ava';
import { z } from 'zod';
import { defineOperation } from '../../api/operation.js';
import { allOperations } from '../../api/operations.js';
import {
  effectivePlan,
  requireActiveSubscription,
  requireOperatorAccess,
  requireWithinLimit,
  PLANS,
} from '../../domain/billing/plans.js';
import { DEMO_USER_ID } from '../../domain/demo/seed.js';
import { api, call, createTestApp, createUser, listen, closeApi } from '../helpers/api.js';
import { addTeamMember } from '../helpers/db.js';
import { grant, setUserPlan } from '../helpers/billing.js';
test.after.always(closeApi);

// Test-only operations exercising the plan rules that later issues' operations will call.
const ok = z.object({ ok: z.boolean() });
const probes = [
  defineOperation({
    method: 'GET',
    path: '/api/test/operator',
    summary: 'probe',
    tag: 'test',
    auth: 'user',
    responses: { 200: ok },
    handler: async ({ em, actor }) => (await requireOperatorAccess(em, actor), { ok: true }),
  }),
  defineOperation({
    method: 'GET',
    path: '/api/test/subscription',
    summary: 'probe',
    tag: 'test',
    auth: 'user',
    responses: { 200: ok },
    handler: async ({ em, actor }) => (await requireActiveSubscription(em, actor), { ok: true }),
  }),
  defineOperation({
    method: 'GET',
    path: '/api/test/agents-limit',
    summary: 'probe',
    tag: 'test',
    auth: 'user',
    query: z.object({ count: z.coerce.number().int() }),
    responses: { 200: ok },
    handler: async ({ em, actor, query }) => (await requireWithinLimit(em, actor, 'agents', query.count), { ok: true }),
  }),
];
let probeBase: Promise<string> | undefined;
const probe = async () =>
  (probeBase ??= api().then(async ({ services }) => (await listen(services, [...allOperations(), ...probes])).base));

test('GET /api/billing/catalog lists the plans with integer prices in cents and their entitlements', async (t) => {
  const u = await createUser();
  const r = await call('GET', '/api/billing/catalog', { token: u.accessToken });
  t.is(r.status, 200, r.text);
  t.deepEqual(
    r.body.plans.map((p: any) => p.id),
    ['free', 'starter', 'pro'],
  );
  const [free, starter] = r.body.plans;
  t.false(free.paid);
  t.false(free.entitlements.operator_access);
  t.true(starter.paid);
  t.true(starter.entitlements.operator_access);
  t.is(starter.price_monthly_cents, 4900);
  t.true(
    r.body.plans.every((p: any) => Number.isInteger(p.price_monthly_cents) && Number.isInteger(p.price_yearly_cents)),
  );
  t.is((await call('GET', '/api/billing/catalog')).status, 401);
});

test('a new workspace is on the free plan with status none and no credits', async (t) => {
  const u = await createUser();
  const r = await call('GET', '/api/me/entitlement', { token: u.accessToken });
  t.is(r.status, 200, r.text);
  t.like(r.body, {
    plan_id: 'free',
    subscribed_plan_id: 'free',
    status: 'none',
    paid: false,
    current_period_end: null,
    is_demo: false,
    credits: { balance: 0 },
  });
  t.false(r.body.entitlements.operator_access);
  const cp = await call('GET', '/api/billing/current-plan', { token: u.accessToken });
  t.is(cp.status, 200, cp.text);
  t.like(cp.body, { plan: { id: 'free' }, status: 'none' });
  t.is((await call('GET', '/api/me/entitlement')).status, 401);
  t.is((await call('GET', '/api/billing/current-plan')).status, 401);
});

test('setting a paid plan applies its entitlements and grants its monthly credits once per period', async (t) => {
  const u = await createUser();
  const first = await setUserPlan(u.id, 'starter');
  t.is(first.creditsGranted, 1000);
  t.is((await setUserPlan(u.id, 'starter')).creditsGranted, 0, 'same plan, same period: no second grant');
  const r = await call('GET', '/api/me/entitlement', { token: u.accessToken });
  t.like(r.body, { plan_id: 'starter', status: 'active', paid: true, credits: { balance: 1000 } });
  t.true(r.body.entitlements.operator_access);
  t.truthy(r.body.current_period_end);
  const cp = await call('GET', '/api/billing/current-plan', { token: u.accessToken });
  t.like(cp.body, { plan: { id: 'starter', price_monthly_cents: 4900 }, status: 'active' });
});

test('entitlement, features, limits and current plan follow X-Acting-As; billing details are for owners and admins', async (t) => {
  const owner = await createUser();
  const admin = await createUser();
  const member = await createUser();
  const stranger = await createUser();
  await setUserPlan(owner.id, 'pro');
  await addTeamMember(owner.id, admin.id, { role: 'admin' });
  await addTeamMember(owner.id, member.id, { role: 'member' });
  const as = (u: { accessToken: string }) => ({ token: u.accessToken, headers: { 'x-acting-as': owner.id } });

  const e = await call('GET', '/api/me/entitlement', as(member));
  t.is(e.status, 200, e.text);
  t.is(e.body.plan_id, 'pro');
  t.is(
    (await call('GET', '/api/me/entitlement', { token: member.accessToken })).body.plan_id,
    'free',
    'own workspace without the header',
  );
  t.is((await call('GET', '/api/features', as(member))).body.features.operator, true);
  t.is((await call('GET', '/api/user/limits', as(member))).body.plan_id, 'pro');

  t.is((await call('GET', '/api/billing/current-plan', as(admin))).status, 200);
  t.is((await call('GET', '/api/billing/beta-rewards', as(admin))).status, 200);
  for (const path of ['/api/billing/current-plan', '/api/billing/beta-rewards']) {
    const r = await call('GET', path, as(member));
    t.is(r.status, 403, path);
    t.is(r.body.error.code, 'not_assigned');
  }
  // Not in the owner's team, or a malformed header.
  for (const path of [
    '/api/me/entitlement',
    '/api/features',
    '/api/user/limits',
    '/api/billing/current-plan',
    '/api/billing/beta-rewards',
  ]) {
    const r = await call('GET', path, as(stranger));
    t.is(r.status, 403, path);
    t.is(r.body.error.code, 'not_assigned');
    const bad = await call('GET', path, { token: stranger.accessToken, headers: { 'x-acting-as': 'nope' } });
    t.is(bad.status, 400, path);
    t.is(bad.body.error.code, 'invalid_user');
  }
  // The catalog and the active offer are about the caller as a buyer: the header is checked, not followed.
  const offer = await call('GET', '/api/me/active-offer', as(member));
  t.is(offer.status, 200);
  t.is(offer.body.offer.id, 'starter-launch-20');
  t.is((await call('GET', '/api/billing/catalog', as(member))).status, 200);
  for (const path of ['/api/me/active-offer', '/api/billing/catalog']) {
    const r = await call('GET', path, as(stranger));
    t.is(r.status, 403, path);
    t.is(r.body.error.code, 'not_assigned');
  }
});

test('GET /api/me/active-offer: free workspaces get the launch offer, paying ones none, canceled ones a win-back', async (t) => {
  const u = await createUser();
  let r = await call('GET', '/api/me/active-offer', { token: u.accessToken });
  t.is(r.status, 200, r.text);
  t.like(r.body.offer, { id: 'starter-launch-20', plan_id: 'starter', discount_percent: 20 });
  await setUserPlan(u.id, 'pro');
  r = await call('GET', '/api/me/active-offer', { token: u.accessToken });
  t.is(r.body.offer, null);
  await setUserPlan(u.id, 'pro', { status: 'canceled', currentPeriodEnd: new Date(Date.now() - 1000) });
  r = await call('GET', '/api/me/active-offer', { token: u.accessToken });
  t.like(r.body.offer, { id: 'win-back-30', plan_id: 'pro' });
  t.is((await call('GET', '/api/me/active-offer')).status, 401);
});

test('GET /api/billing/beta-rewards lists only beta-reward grants', async (t) => {
  const u = await createUser();
  await grant(u.id, 100, 'beta_reward', 'bug report: import crash');
  await grant(u.id, 50, 'beta_reward', 'feedback call');
  await grant(u.id, 500, 'admin', 'support goodwill');
  const r = await call('GET', '/api/billing/beta-rewards', { token: u.accessToken });
  t.is(r.status, 200, r.text);
  t.is(r.body.total_credits, 150);
  t.deepEqual(r.body.rewards.map((x: any) => x.reason).sort(), ['bug report: import crash', 'feedback call']);
  t.is((await call('GET', '/api/billing/beta-rewards')).status, 401);
});

test('GET /api/features and GET /api/user/limits reflect the plan and usage', async (t) => {
  const u = await createUser();
  let f = await call('GET', '/api/features', { token: u.accessToken });
  t.is(f.status, 200, f.text);
  t.like(f.body, { plan_id: 'free', is_demo: false, features: { operator: false, writes: true, team: false } });
  await createTestApp(u);
  await grant(u.id, 7);
  let l = await call('GET', '/api/user/limits', { token: u.accessToken });
  t.is(l.status, 200, l.text);
  t.deepEqual(l.body.limits.apps, { max: 1, used: 1 });
  t.deepEqual(l.body.limits.seats, { max: 1, used: 1 });
  t.deepEqual(l.body.limits.agents, { max: 1, used: 0 });
  t.deepEqual(l.body.limits.platform_accounts, { max: 1, used: 0 });
  t.deepEqual(l.body.credits, { balance: 7, monthly_allowance: 50 });
  await setUserPlan(u.id, 'starter');
  f = await call('GET', '/api/features', { token: u.accessToken });
  t.like(f.body, { plan_id: 'starter', features: { operator: true, team: true } });
  l = await call('GET', '/api/user/limits', { token: u.accessToken });
  t.deepEqual(l.body.limits.apps, { max: 3, used: 1 });
  t.is(l.body.credits.balance, 1007);
  t.is((await call('GET', '/api/features')).status, 401);
  t.is((await call('GET', '/api/user/limits')).status, 401);
});

test('requireOperatorAccess: 402 with an empty code unless the effective plan is paid', async (t) => {
  const base = await probe();
  const u = await createUser();
  let r = await call('GET', '/api/test/operator', { base, token: u.accessToken });
  t.is(r.status, 402);
  t.is(r.body.error.code, '');
  t.regex(r.body.error.message, /paid plans/);
  await setUserPlan(u.id, 'starter');
  t.is((await call('GET', '/api/test/operator', { base, token: u.accessToken })).status, 200);
  await setUserPlan(u.id, 'starter', { status: 'past_due' });
  t.is(
    (await call('GET', '/api/test/operator', { base, token: u.accessToken })).status,
    200,
    'past_due keeps entitlements (grace)',
  );
  await setUserPlan(u.id, 'starter', { status: 'canceled', currentPeriodEnd: new Date(Date.now() + 86_400_000) });
  t.is(
    (await call('GET', '/api/test/operator', { base, token: u.accessToken })).status,
    200,
    'canceled: paid until the period ends',
  );
  await setUserPlan(u.id, 'starter', { status: 'canceled', currentPeriodEnd: new Date(Date.now() - 1000) });
  t.is(
    (await call('GET', '/api/test/operator', { base, token: u.accessToken })).status,
    402,
    'canceled and ended: free',
  );
  // A member acting for a paying owner gets the owner's plan.
  const owner = await createUser();
  await setUserPlan(owner.id, 'pro');
  await addTeamMember(owner.id, u.id);
  t.is(
    (await call('GET', '/api/test/operator', { base, token: u.accessToken, headers: { 'x-acting-as': owner.id } }))
      .status,
    200,
  );
  // The Operator is unavailable in the Demo workspace (on a paid plan), reads included.
  t.is((await call('POST', '/api/me/workspaces/demo/join', { token: u.accessToken })).status, 201);
  const demo = await call('GET', '/api/test/operator', {
    base,
    token: u.accessToken,
    headers: { 'x-acting-as': DEMO_USER_ID },
  });
  t.is(demo.status, 403);
  t.is(demo.body.error.code, 'demo_read_only');
});

test('requireActiveSubscription: 403 subscription_required unless a paid subscription is active', async (t) => {
  const base = await probe();
  const u = await createUser();
  const r = await call('GET', '/api/test/subscription', { base, token: u.accessToken });
  t.is(r.status, 403);
  t.is(r.body.error.code, 'subscription_required');
  await setUserPlan(u.id, 'pro');
  t.is((await call('GET', '/api/test/subscription', { base, token: u.accessToken })).status, 200);
  await setUserPlan(u.id, 'pro', { status: 'past_due' });
  t.is(
    (await call('GET', '/api/test/subscription', { base, token: u.accessToken })).body.error.code,
    'subscription_required',
  );
  await setUserPlan(u.id, 'free');
  t.is((await call('GET', '/api/test/subscription', { base, token: u.accessToken })).status, 403);
});

test('requireWithinLimit: 403 plan_limit_reached when one more would exceed the plan', async (t) => {
  const base = await probe();
  const u = await createUser();
  t.is((await call('GET', '/api/test/agents-limit?count=0', { base, token: u.accessToken })).status, 200);
  const r = await call('GET', '/api/test/agents-limit?count=1', { base, token: u.accessToken });
  t.is(r.status, 403);
  t.is(r.body.error.code, 'plan_limit_reached');
  t.deepEqual(r.body.error.details, { limit: 'agents', max: 1, plan: 'free' });
  await setUserPlan(u.id, 'starter');
  t.is((await call('GET', '/api/test/agents-limit?count=4', { base, token: u.accessToken })).status, 200);
  t.is((await call('GET', '/api/test/agents-limit?count=5', { base, token: u.accessToken })).status, 403);
});

test('effectivePlan: no row / none → free; active and past_due → plan; canceled → plan until the period ends', (t) => {
  const now = new Date('2026-06-15T00:00:00Z');
  t.is(effectivePlan(null, now), PLANS.free);
  t.is(effectivePlan({ plan: 'pro', status: 'none', currentPeriodEnd: null }, now), PLANS.free);
  t.is(effectivePlan({ plan: 'pro', status: 'active', currentPeriodEnd: null }, now), PLANS.pro);
  t.is(effectivePlan({ plan: 'pro', status: 'past_due', currentPeriodEnd: null }, now), PLANS.pro);
  t.is(
    effectivePlan({ plan: 'pro', status: 'canceled', currentPeriodEnd: new Date('2026-07-01T00:00:00Z') }, now),
    PLANS.pro,
  );
  t.is(
    effectivePlan({ plan: 'pro', status: 'canceled', currentPeriodEnd: new Date('2026-06-01T00:00:00Z') }, now),
    PLANS.free,
  );
  t.is(
    effectivePlan({ plan: 'gold', status: 'active', currentPeriodEnd: null }, now),
    PLANS.free,
    'unknown plan ids fall back to free',
  );
});
