import test from 'ava';
import { rollupAnalytics } from '../../domain/analytics/rollup.js';
import { refreshInsights } from '../../domain/insights/insights.js';
import { uuidv7 } from '../../lib/ids.js';
import { DEMO_USER_ID } from '../../domain/demo/seed.js';
import { findTool } from '../../domain/tools/index.js';
import { runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { waitFor } from '../../scripts/children.js';
import { api, call, closeApi, createTestApp, createUser, type TestUser } from '../helpers/api.js';
import { createOwner, em, setUserPlan, workspaceIdOf } from '../helpers/billing.js';
import { seedCampaign } from '../helpers/campaigns.js';
import { addTeamMember } from '../helpers/db.js';
import { seedAgent, seedDiscovered, seedEnrollments } from '../helpers/analytics.js';

test.after.always(closeApi);

const H = 3_600_000;
const ago = (h: number) => new Date(Date.now() - h * H);

/** An active campaign whose step has 40 sends and no reply; an active agent with 12 rejections and 1 approval. */
async function world() {
  const owner = await createOwner();
  const app = await createTestApp(owner);
  const ws = await workspaceIdOf(owner.id);
  const campaign = await seedCampaign(ws, { appId: app.id, accountIds: [], steps: [{ type: 'email' }] });
  const seeded = await seedEnrollments(
    ws,
    app.id,
    campaign,
    40,
    Array.from({ length: 40 }, (_, i) => ({ enrollment: i, step: 0, executedAt: ago(30 + i) })),
    ago(80),
  );
  const agent = await seedAgent(ws, app.id);
  await seedDiscovered(ws, app.id, agent, [
    ...Array.from({ length: 12 }, () => ({
      signal: 'hiring',
      source: 'newsforum',
      at: ago(50),
      status: 'rejected' as const,
    })),
    { signal: 'hiring', source: 'newsforum', at: ago(50), status: 'approved' },
  ]);
  const e = await em();
  await rollupAnalytics(e, { from: ago(100), to: new Date(), workspaceId: ws });
  await refreshInsights(e, { workspaceId: ws });
  return { owner, app, ws, campaign, agent, seeded };
}

const list = async (u: TestUser, q = '') => (await call('GET', `/api/insights${q}`, { token: u.accessToken })).body;
const byKind = async (u: TestUser, kind: string, status = 'open') =>
  (await list(u, `?status=${status}&kind=${kind}`)).items[0];

test('a refresh finds a step with a low reply rate and an agent whose rejections dominate; count is per kind; pages', async (t) => {
  const w = await world();
  const step = await byKind(w.owner, 'low_reply_rate_step');
  t.truthy(step);
  t.is(step.subject_id, w.campaign.stepIds[0]);
  t.deepEqual(step.action, { type: 'pause_campaign', campaign_id: w.campaign.id });
  t.is(step.detail.sent, 40);
  t.is(step.app_id, w.app.id);
  const agent = await byKind(w.owner, 'agent_rejections');
  t.deepEqual(agent.action, { type: 'pause_agent', agent_id: w.agent });
  const count = (await call('GET', '/api/insights/count', { token: w.owner.accessToken })).body;
  t.deepEqual(count, { open: 2, by_kind: { low_reply_rate_step: 1, agent_rejections: 1 } });
  // A second refresh updates the same rows (one per kind + subject).
  await refreshInsights(await em(), { workspaceId: w.ws });
  t.is((await list(w.owner)).items.length, 2);
  const first = await list(w.owner, '?limit=1');
  t.is(first.items.length, 1);
  const second = await list(w.owner, `?limit=1&cursor=${first.next_cursor}`);
  t.is(second.items.length, 1);
  t.not(second.items[0].id, first.items[0].id);
  t.is(second.next_cursor, null);
  t.is((await call('GET', '/api/insights?limit=0', { token: w.owner.accessToken })).body.error.code, 'invalid_query');
});

test('apply performs the action once through the domain code: the campaign is paused; a second apply is 409 already_applied', async (t) => {
  const w = await world();
  const token = w.owner.accessToken;
  const step = await byKind(w.owner, 'low_reply_rate_step');
  const r = await call('POST', `/api/insights/${step.id}/apply`, { token });
  t.is(r.status, 200, r.text);
  t.is(r.body.status, 'applied');
  t.deepEqual(r.body.result, { type: 'pause_campaign', campaign_id: w.campaign.id, campaign_status: 'paused' });
  t.is((await call('GET', `/api/campaigns/${w.campaign.id}`, { token })).body.status, 'paused');
  const again = await call('POST', `/api/insights/${step.id}/apply`, { token });
  t.is(again.status, 409);
  t.is(again.body.error.code, 'already_applied');
  t.deepEqual(again.body.error.details.result, r.body.result);
  t.is(again.body.error.details.applied_at, r.body.applied_at);
  // An applied insight keeps its status across refreshes and cannot be dismissed.
  await refreshInsights(await em(), { workspaceId: w.ws });
  t.is((await byKind(w.owner, 'low_reply_rate_step', 'applied')).id, step.id);
  const dismiss = await call('PATCH', `/api/insights/${step.id}/status`, { token, body: { status: 'dismissed' } });
  t.is(dismiss.status, 409);
  t.is(dismiss.body.error.code, 'invalid_transition');

  // Concurrent applies of the agent's insight: one performs, the other is refused.
  const agent = await byKind(w.owner, 'agent_rejections');
  const both = await Promise.all([0, 1].map(() => call('POST', `/api/insights/${agent.id}/apply`, { token })));
  t.deepEqual(both.map((b) => b.status).sort(), [200, 409]);
  t.is((await call('GET', `/api/agents/${w.agent}`, { token })).body.status, 'paused');
});

test('an action the domain refuses is answered as it is and leaves the insight open', async (t) => {
  const w = await world();
  const step = await byKind(w.owner, 'low_reply_rate_step');
  await (await em()).execute(`update campaigns set status = 'completed' where id = ?`, [w.campaign.id]);
  const r = await call('POST', `/api/insights/${step.id}/apply`, { token: w.owner.accessToken });
  t.is(r.status, 409);
  t.is(r.body.error.code, 'invalid_transition');
  t.is((await byKind(w.owner, 'low_reply_rate_step')).status, 'open');
  // The condition no longer holds for a completed campaign: the next refresh resolves it.
  await refreshInsights(await em(), { workspaceId: w.ws });
  const resolved = await byKind(w.owner, 'low_reply_rate_step', 'resolved');
  t.is(resolved.id, step.id);
  const patch = await call('PATCH', `/api/insights/${step.id}/status`, {
    token: w.owner.accessToken,
    body: { status: 'open' },
  });
  t.is(patch.status, 409);
  t.is(patch.body.error.code, 'invalid_transition');
});

test('dismissed stays dismissed across refreshes (not applicable); snoozed comes back after its time', async (t) => {
  const w = await world();
  const token = w.owner.accessToken;
  const agent = await byKind(w.owner, 'agent_rejections');
  const d = await call('PATCH', `/api/insights/${agent.id}/status`, { token, body: { status: 'dismissed' } });
  t.is(d.status, 200, d.text);
  t.is(d.body.status, 'dismissed');
  await refreshInsights(await em(), { workspaceId: w.ws });
  t.is(await byKind(w.owner, 'agent_rejections'), undefined);
  t.is((await byKind(w.owner, 'agent_rejections', 'dismissed')).id, agent.id);
  const na = await call('POST', `/api/insights/${agent.id}/apply`, { token });
  t.is(na.status, 409);
  t.is(na.body.error.code, 'not_applicable');

  const step = await byKind(w.owner, 'low_reply_rate_step');
  const past = await call('PATCH', `/api/insights/${step.id}/status`, {
    token,
    body: { status: 'snoozed', until: new Date(Date.now() - 1000).toISOString() },
  });
  t.is(past.status, 400);
  t.is(past.body.error.code, 'invalid_until');
  const until = new Date(Date.now() + 1500);
  const s = await call('PATCH', `/api/insights/${step.id}/status`, {
    token,
    body: { status: 'snoozed', until: until.toISOString() },
  });
  t.is(s.status, 200, s.text);
  t.is(s.body.status, 'snoozed');
  t.is(await byKind(w.owner, 'low_reply_rate_step'), undefined);
  t.is((await call('GET', '/api/insights/count', { token })).body.open, 0);
  await waitFor('the snooze to pass', async () => Date.now() > until.getTime() + 50, 10_000);
  await refreshInsights(await em(), { workspaceId: w.ws });
  const back = await byKind(w.owner, 'low_reply_rate_step');
  t.is(back.id, step.id);
  t.is(back.snoozed_until, null);

  const bad = await call('PATCH', `/api/insights/${step.id}/status`, { token, body: { status: 'snoozed' } });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_body');
  t.is(
    (await call('PATCH', `/api/insights/not-a-uuid/status`, { token, body: { status: 'dismissed' } })).body.error.code,
    'invalid_id',
  );
  t.is((await call('POST', `/api/insights/${uuidv7()}/apply`, { token })).status, 404);
});

test('overdue review items and a disconnected account: open the queue, reconnect through the connector', async (t) => {
  const owner = await createOwner();
  const app = await createTestApp(owner);
  const ws = await workspaceIdOf(owner.id);
  const token = owner.accessToken;
  const campaign = await seedCampaign(ws, { appId: app.id, accountIds: [], steps: [{ type: 'email' }] });
  const seeded = await seedEnrollments(ws, app.id, campaign, 2, [
    { enrollment: 0, step: 0 },
    { enrollment: 1, step: 0 },
  ]);
  const e = await em();
  await e.execute(
    `insert into message_drafts (id, workspace_id, campaign_id, step_id, action_id, enrollment_id, lead_id, channel, body, status, review_required, model, deadline_at, created_at, updated_at)
     select gen_random_uuid(), ?, ?, ?, a.id, a.enrollment_id, a.lead_id, 'email', 'Hi', 'awaiting_review', true, 'local', now() - interval '1 hour', now(), now() from scheduled_actions a where a.campaign_id = ?`,
    [ws, campaign.id, campaign.stepIds[0], campaign.id],
  );
  const acct = (
    await call('POST', '/api/platform-accounts', {
      token,
      body: { channel: 'email', display_name: 'Ana', time_zone: 'Europe/Paris' },
    })
  ).body;
  await e.execute(
    `update platform_accounts set status = 'disconnected', status_reason = 'credentials_expired', disconnected_at = now() where id = ?`,
    [acct.id],
  );
  await refreshInsights(e, { workspaceId: ws });

  const review = await byKind(owner, 'review_overdue');
  t.is(review.detail.overdue, 2);
  const r = await call('POST', `/api/insights/${review.id}/apply`, { token });
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.result, {
    type: 'open_review_queue',
    campaign_id: campaign.id,
    path: `/api/campaigns/${campaign.id}/message-review`,
  });

  const account = await byKind(owner, 'account_disconnected');
  t.is(account.subject_id, acct.id);
  t.is(account.app_id, null);
  const a = await call('POST', `/api/insights/${account.id}/apply`, { token });
  t.is(a.status, 200, a.text);
  t.is(a.body.result.type, 'reconnect_account');
  t.not((await call('GET', `/api/platform-accounts/${acct.id}`, { token })).body.status, 'disconnected');
  t.truthy(seeded);
});

test('another workspace’s insight is 404 and unchanged; a member limited to another product does not see it (403 not_assigned on its id)', async (t) => {
  const w = await world();
  const step = await byKind(w.owner, 'low_reply_rate_step');
  const stranger = await createOwner();
  for (const [method, path, body] of [
    ['POST', `/api/insights/${step.id}/apply`, undefined],
    ['PATCH', `/api/insights/${step.id}/status`, { status: 'dismissed' }],
  ] as const) {
    const r = await call(method, path, { token: stranger.accessToken, body });
    t.is(r.status, 404, path);
    t.is(r.body.error.code, 'not_found');
  }
  t.deepEqual((await list(stranger)).items, []);
  t.is((await byKind(w.owner, 'low_reply_rate_step')).status, 'open');
  t.is((await call('GET', `/api/campaigns/${w.campaign.id}`, { token: w.owner.accessToken })).body.status, 'active');

  const other = await createTestApp(w.owner, 'Other product');
  const member = await createUser();
  await addTeamMember(w.owner.id, member.id, { appIds: [other.id] });
  const headers = { 'x-acting-as': w.owner.id };
  t.deepEqual((await call('GET', '/api/insights', { token: member.accessToken, headers })).body.items, []);
  t.is((await call('GET', '/api/insights/count', { token: member.accessToken, headers })).body.open, 0);
  // Another product's insight is refused as every id is (domain/access.ts): 403 not_assigned.
  const applied = await call('POST', `/api/insights/${step.id}/apply`, { token: member.accessToken, headers });
  t.is(applied.status, 403);
  t.is(applied.body.error.code, 'not_assigned');
});

test('the action’s own refusals: 403 subscription_required (agent change without a paid plan), 403 not_assigned (a member reconnecting), 409 already_connected', async (t) => {
  // A workspace without a paid subscription: pausing the agent is refused by updateAgent.
  const free = await createUser();
  const app = await createTestApp(free);
  const ws = await workspaceIdOf(free.id);
  const agentId = await seedAgent(ws, app.id);
  await seedDiscovered(
    ws,
    app.id,
    agentId,
    Array.from({ length: 10 }, () => ({ signal: 's', source: 'newsforum', at: ago(20), status: 'rejected' as const })),
  );
  const e = await em();
  await rollupAnalytics(e, { from: ago(30), to: new Date(), workspaceId: ws });
  const acct = (
    await call('POST', '/api/platform-accounts', {
      token: free.accessToken,
      body: { channel: 'email', display_name: 'Bo', time_zone: 'UTC' },
    })
  ).body;
  await e.execute(`update platform_accounts set status = 'disconnected', disconnected_at = now() where id = ?`, [
    acct.id,
  ]);
  await refreshInsights(e, { workspaceId: ws });
  const agent = await byKind(free, 'agent_rejections');
  const r = await call('POST', `/api/insights/${agent.id}/apply`, { token: free.accessToken });
  t.is(r.status, 403, r.text);
  t.is(r.body.error.code, 'subscription_required');
  t.is((await byKind(free, 'agent_rejections')).status, 'open');

  // A member (not owner or admin) may not reconnect a sender account.
  const account = await byKind(free, 'account_disconnected');
  const member = await createUser();
  await addTeamMember(free.id, member.id, { role: 'member' });
  const m = await call('POST', `/api/insights/${account.id}/apply`, {
    token: member.accessToken,
    headers: { 'x-acting-as': free.id },
  });
  t.is(m.status, 403, m.text);
  t.is(m.body.error.code, 'not_assigned');
  // Connected meanwhile (before a refresh resolved the insight): the connect call refuses.
  await e.execute(`update platform_accounts set status = 'connected' where id = ?`, [acct.id]);
  const c = await call('POST', `/api/insights/${account.id}/apply`, { token: free.accessToken });
  t.is(c.status, 409, c.text);
  t.is(c.body.error.code, 'already_connected');
  t.is((await byKind(free, 'account_disconnected')).status, 'open');
});

test('the Demo workspace is read-only: apply and status are 403 demo_read_only', async (t) => {
  const u = await createUser();
  t.is((await call('POST', '/api/me/workspaces/demo/join', { token: u.accessToken })).status, 201);
  const headers = { 'x-acting-as': DEMO_USER_ID };
  const a = await call('POST', `/api/insights/${uuidv7()}/apply`, { token: u.accessToken, headers });
  t.is(a.status, 403);
  t.is(a.body.error.code, 'demo_read_only');
  const p = await call('PATCH', `/api/insights/${uuidv7()}/status`, {
    token: u.accessToken,
    headers,
    body: { status: 'dismissed' },
  });
  t.is(p.status, 403);
  t.is(p.body.error.code, 'demo_read_only');
  t.is((await call('GET', '/api/insights', { token: u.accessToken, headers })).status, 200);
});

test('Operator tools: get_analytics_overview and get_funnel read, list_insights lists, apply_insight (risky) applies once', async (t) => {
  const w = await world();
  const { services } = await api();
  const e = await em();
  const ctx = {
    em: e as never,
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(e as never, { userId: w.owner.id, kind: 'session' }, undefined),
  };
  const [ov, fun, list, apply] = ['get_analytics_overview', 'get_funnel', 'list_insights', 'apply_insight'].map((n) =>
    findTool(n)!,
  );
  t.deepEqual([ov!.risk, fun!.risk, list!.risk, apply!.risk], ['read', 'read', 'read', 'change']);
  const o = (await runTool(ov!, ctx, { campaign_id: w.campaign.id })) as { totals: { sent: number } };
  t.is(o.totals.sent, 40);
  const f = (await runTool(fun!, ctx, {})) as { stages: { stage: string; count: number }[] };
  t.is(f.stages.find((x) => x.stage === 'enrolled')!.count, 40);
  const items = (await runTool(list!, ctx, {})) as { id: string; kind: string }[];
  const step = items.find((i) => i.kind === 'low_reply_rate_step')!;
  const r = (await runTool(apply!, ctx, { insight_id: step.id })) as { status: string };
  t.is(r.status, 'applied');
  await t.throwsAsync(runTool(apply!, ctx, { insight_id: step.id }), { message: /applied already/ });
});

/** A connected email account past its warm-up (Pro plan: email caps default 40/200, bound 500/2500) with `counts` email actions on its last local days (today first). */
async function busyAccount(owner: TestUser, counts: number[], patch: Record<string, unknown> = {}) {
  const acct = (
    await call('POST', '/api/platform-accounts', {
      token: owner.accessToken,
      body: { channel: 'email', display_name: 'Cy', time_zone: 'UTC' },
    })
  ).body;
  const e = await em();
  await e.execute(
    `update platform_accounts set status = 'connected', connected_at = now(), warmup_started_at = now() - interval '30 days' where id = ?`,
    [acct.id],
  );
  for (const [k, v] of Object.entries(patch))
    await e.execute(`update platform_accounts set ${k} = ? where id = ?`, [v, acct.id]);
  await e.execute(
    `insert into account_usage (account_id, action, day, count) select ?, 'email', (now() at time zone 'UTC')::date - (i0 - 1)::int, c::int from json_array_elements_text(?::json) with ordinality as x(c, i0)`,
    [acct.id, JSON.stringify(counts)],
  );
  return acct.id as string;
}

test('an account near its cap: found on 3 busy days of 7 (not 2, not in warm-up); apply raises the caps within the plan through setLimits, once', async (t) => {
  const free = await createOwner();
  const ws = await workspaceIdOf(free.id);
  const token = free.accessToken;
  const busy = await busyAccount(free, [36, 40, 12, 38]);
  const calm = await busyAccount(free, [40, 40, 0, 10]);
  const warming = await busyAccount(free, [40, 40, 40], { warmup_started_at: new Date(Date.now() - 3 * 86_400_000) });
  await refreshInsights(await em(), { workspaceId: ws });
  const found = (await list(free, '?kind=account_near_cap')).items;
  t.deepEqual(
    found.map((i: { subject_id: string }) => i.subject_id),
    [busy],
    `not ${calm} (2 busy days) nor ${warming} (warm-up)`,
  );
  const ins = found[0];
  t.is(ins.app_id, null);
  t.deepEqual(ins.detail.types, [
    {
      action: 'email',
      busy_days: 3,
      days: 7,
      week: ins.detail.types[0].week,
      daily: 40,
      weekly: 200,
      plan_daily: 500,
      plan_weekly: 2500,
    },
  ]);
  t.deepEqual(ins.action, {
    type: 'raise_account_caps',
    account_id: busy,
    caps: { email: { daily: 50, weekly: 250 } },
  });
  t.is((await call('GET', '/api/insights/count', { token })).body.by_kind.account_near_cap, 1);

  const stranger = await createOwner();
  const other = await call('POST', `/api/insights/${ins.id}/apply`, { token: stranger.accessToken });
  t.is(other.status, 404);
  const r = await call('POST', `/api/insights/${ins.id}/apply`, { token });
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.result, {
    type: 'raise_account_caps',
    account_id: busy,
    caps: { email: { daily: 50, weekly: 250 } },
    raised: ['email'],
  });
  // The same state PATCH /limits leaves: the usage route's configured caps.
  const usage = (await call('GET', `/api/platform-accounts/${busy}/usage`, { token })).body;
  t.deepEqual(usage.actions.find((a: { action: string }) => a.action === 'email').full_caps, {
    daily: 50,
    weekly: 250,
  });
  const again = await call('POST', `/api/insights/${ins.id}/apply`, { token });
  t.is(again.status, 409);
  t.is(again.body.error.code, 'already_applied');
});

test('near the plan’s bound the action is to add a sender account; a cap set since the refresh is never lowered; the insight resolves when the load drops', async (t) => {
  const free = await createOwner();
  const ws = await workspaceIdOf(free.id);
  const token = free.accessToken;
  const atBound = await busyAccount(free, [460, 450, 470], {
    caps: JSON.stringify({ email: { daily: 500, weekly: 2500 } }),
  });
  const nearBound = await busyAccount(free, [440, 430, 450], {
    caps: JSON.stringify({ email: { daily: 450, weekly: 2300 } }),
  });
  const raisable = await busyAccount(free, [40, 40, 40]);
  const fading = await busyAccount(free, [39, 40, 38]);
  await refreshInsights(await em(), { workspaceId: ws });
  const items = (await list(free, '?kind=account_near_cap')).items as {
    id: string;
    subject_id: string;
    action: Record<string, unknown>;
    title: string;
  }[];
  t.is(items.length, 4);
  // A quarter more, clamped to the plan's bound.
  const near = items.find((i) => i.subject_id === nearBound)!;
  t.deepEqual(near.action, {
    type: 'raise_account_caps',
    account_id: nearBound,
    caps: { email: { daily: 500, weekly: 2500 } },
  });
  // The plan shrank since the refresh: setLimits refuses the suggestion and the insight stays open.
  await setUserPlan(free.id, 'starter');
  const shrunk = await call('POST', `/api/insights/${near.id}/apply`, { token });
  t.is(shrunk.status, 400, shrunk.text);
  t.is(shrunk.body.error.code, 'invalid_limits');
  t.is((await list(free, '?kind=account_near_cap')).items.find((i: { id: string }) => i.id === near.id).status, 'open');
  await setUserPlan(free.id, 'pro');
  const bound = items.find((i) => i.subject_id === atBound)!;
  t.deepEqual(bound.action, { type: 'add_sender_account', channel: 'email' });
  t.regex(bound.title, /plan’s bound/);
  const b = await call('POST', `/api/insights/${bound.id}/apply`, { token });
  t.is(b.status, 200, b.text);
  t.deepEqual(b.body.result, {
    type: 'add_sender_account',
    channel: 'email',
    path: '/api/platform-accounts',
    plans_path: '/api/billing/catalog',
  });

  // The user set the caps by hand since the refresh: apply lowers nothing and raises nothing already as high.
  const mine = items.find((i) => i.subject_id === raisable)!;
  const set = await call('PATCH', `/api/platform-accounts/${raisable}/limits`, {
    token,
    body: { caps: { email: { daily: 60, weekly: 250 } } },
  });
  t.is(set.status, 200, set.text);
  const r = await call('POST', `/api/insights/${mine.id}/apply`, { token });
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.result.raised, []);
  t.deepEqual(r.body.result.caps.email, { daily: 60, weekly: 250 });

  // The load drops: the next refresh resolves the open one.
  const fade = items.find((i) => i.subject_id === fading)!;
  await (await em()).execute(`delete from account_usage where account_id = ?`, [fading]);
  await refreshInsights(await em(), { workspaceId: ws });
  t.is((await byKind(free, 'account_near_cap', 'resolved')).id, fade.id);
});
