// Products' profiles and discovery agents: CRUD, status machine, signals, sources, plan and
// subscription rules, Demo simulation, ownership.
import test from 'ava';
import { LeadList } from '../../db/entities/LeadList.js';
import { App } from '../../db/entities/App.js';
import { DiscoveryAgent } from '../../db/entities/DiscoveryAgent.js';
import { DEMO_WORKSPACE_ID, demoId, seedDemo } from '../../domain/demo/seed.js';
import { call, createTestApp, createUser, closeApi, type TestUser } from '../helpers/api.js';
import { createOwner, em, setUserPlan, workspaceIdOf } from '../helpers/billing.js';
import { addTeamMember } from '../helpers/db.js';
test.after.always(closeApi);

const OTHER = '0190a000-0000-7000-8000-000000000000';

async function newList(userId: string, appId: string, name = 'List'): Promise<string> {
  const e = await em();
  const list = e.create(LeadList, { workspace: await workspaceIdOf(userId), app: e.getReference(App, appId), name });
  await e.flush();
  return list.id;
}

async function newAgent(u: TestUser, appId: string, body: Record<string, unknown> = {}) {
  const r = await call('POST', `/api/apps/${appId}/agents`, {
    token: u.accessToken,
    body: { name: 'Finder', ...body },
  });
  if (r.status !== 201) throw new Error(`agent create failed: ${r.status} ${r.text}`);
  return r.body as { id: string; status: string; list_id: string | null };
}

const signals = (keys = ['founders']) => ({
  signals: keys.map((k) => ({ key: k, kind: 'post_keywords', name: `Signal ${k}`, keywords: ['bookkeeping'] })),
});

test('a product has a profile and an ICP: GET and PUT /api/apps/{id}; another workspace’s product is 404', async (t) => {
  const u = await createUser();
  const app = await createTestApp(u);
  const put = await call('PUT', `/api/apps/${app.id}`, {
    token: u.accessToken,
    body: {
      value_proposition: 'Books in minutes',
      icp_description: 'Freelance designers',
      icp_filters: { titles: ['designer'], countries: ['Germany'] },
    },
  });
  t.is(put.status, 200, put.text);
  t.is(put.body.value_proposition, 'Books in minutes');
  t.deepEqual(put.body.icp_filters, { titles: ['designer'], countries: ['Germany'] });
  const got = await call('GET', `/api/apps/${app.id}`, { token: u.accessToken });
  t.deepEqual(got.body, put.body);
  // null clears, absent stays.
  const cleared = await call('PUT', `/api/apps/${app.id}`, { token: u.accessToken, body: { icp_filters: null } });
  t.is(cleared.body.icp_filters, null);
  t.is(cleared.body.value_proposition, 'Books in minutes');
  t.is(
    (await call('PUT', `/api/apps/${app.id}`, { token: u.accessToken, body: { icp_filters: { colour: ['red'] } } }))
      .status,
    400,
  );
  const stranger = await createUser();
  t.is((await call('GET', `/api/apps/${app.id}`, { token: stranger.accessToken })).status, 404);
  t.is((await call('PUT', `/api/apps/${app.id}`, { token: stranger.accessToken, body: { name: 'x' } })).status, 404);
  t.is((await call('GET', '/api/apps/not-a-uuid', { token: u.accessToken })).body.error.code, 'invalid_id');
});

test('agents: create (draft) and list by product; the plan limit is 403 plan_limit_reached; archived agents do not count', async (t) => {
  const u = await createUser(); // free plan: one agent
  const app = await createTestApp(u);
  const a = await newAgent(u, app.id, { icp_description: 'Designers', max_signals: 50 });
  t.is(a.status, 'draft');
  const second = await call('POST', `/api/apps/${app.id}/agents`, { token: u.accessToken, body: { name: 'Two' } });
  t.is(second.status, 403);
  t.is(second.body.error.code, 'plan_limit_reached');
  const list = await call('GET', `/api/apps/${app.id}/agents`, { token: u.accessToken });
  t.deepEqual(
    list.body.items.map((x: any) => x.id),
    [a.id],
  );
  t.is((await call('GET', `/api/apps/${app.id}/agents?status=active`, { token: u.accessToken })).body.items.length, 0);
  // Archiving frees the slot (the update needs a subscription).
  await setUserPlan(u.id, 'starter');
  t.is((await call('PUT', `/api/agents/${a.id}`, { token: u.accessToken, body: { status: 'archived' } })).status, 200);
  await setUserPlan(u.id, 'free');
  t.is((await call('POST', `/api/apps/${app.id}/agents`, { token: u.accessToken, body: { name: 'Two' } })).status, 201);
  // Another workspace's product: 404; invalid body: 400.
  const stranger = await createUser();
  t.is(
    (await call('POST', `/api/apps/${app.id}/agents`, { token: stranger.accessToken, body: { name: 'x' } })).status,
    404,
  );
  t.is((await call('GET', `/api/apps/${app.id}/agents`, { token: stranger.accessToken })).status, 404);
  t.is(
    (await call('POST', `/api/apps/${app.id}/agents`, { token: u.accessToken, body: { name: '' } })).body.error.code,
    'invalid_body',
  );
});

test('PUT needs an active subscription: 403 subscription_required on the free plan', async (t) => {
  const u = await createUser();
  const app = await createTestApp(u);
  const a = await newAgent(u, app.id);
  const r = await call('PUT', `/api/agents/${a.id}`, { token: u.accessToken, body: { name: 'New' } });
  t.is(r.status, 403);
  t.is(r.body.error.code, 'subscription_required');
  await setUserPlan(u.id, 'pro', { status: 'past_due' });
  t.is(
    (await call('PUT', `/api/agents/${a.id}`, { token: u.accessToken, body: { name: 'New' } })).body.error.code,
    'subscription_required',
  );
  await setUserPlan(u.id, 'pro');
  t.is((await call('PUT', `/api/agents/${a.id}`, { token: u.accessToken, body: { name: 'New' } })).body.name, 'New');
});

test('PUT: every field optional and nullable; icp_filters and config stored as sent; null clears what can be cleared', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const a = await newAgent(u, app.id, { max_signals: 10 });
  const filters = [{ any: 'shape' }, 3, 'x', null, true];
  const r = await call('PUT', `/api/agents/${a.id}`, {
    token: u.accessToken,
    body: {
      b2b: false,
      icp_description: 'Who',
      icp_filters: filters,
      config: { schedule: { every: 'day' } },
      require_current_employer: true,
    },
  });
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.icp_filters, filters);
  t.deepEqual(r.body.config, { schedule: { every: 'day' } });
  t.like(r.body, {
    b2b: false,
    icp_description: 'Who',
    require_current_employer: true,
    max_signals: 10,
    name: 'Finder',
    status: 'draft',
  });
  const nulls = await call('PUT', `/api/agents/${a.id}`, {
    token: u.accessToken,
    body: {
      name: null,
      status: null,
      b2b: null,
      icp_description: null,
      icp_filters: null,
      config: null,
      list_id: null,
      max_signals: null,
      require_current_employer: null,
    },
  });
  t.like(nulls.body, {
    name: 'Finder',
    status: 'draft',
    b2b: false,
    icp_description: null,
    icp_filters: null,
    config: null,
    list_id: null,
    max_signals: null,
    require_current_employer: true,
  });
  t.is(
    (await call('PUT', `/api/agents/${a.id}`, { token: u.accessToken, body: { colour: 'red' } })).body.error.code,
    'invalid_body',
  );
  t.is(
    (await call('PUT', `/api/agents/${a.id}`, { token: u.accessToken, body: { max_signals: 0 } })).body.error.code,
    'invalid_body',
  );
  t.deepEqual((await call('GET', `/api/agents/${a.id}`, { token: u.accessToken })).body, nulls.body);
});

test('PUT list_id: a list of the agent’s product is accepted; another product’s, another workspace’s or a malformed id is 400 invalid_list_id', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u, 'one');
  const other = await createTestApp(u, 'two');
  const a = await newAgent(u, app.id);
  const own = await newList(u.id, app.id);
  const wrongApp = await newList(u.id, other.id);
  const stranger = await createOwner();
  const foreign = await newList(stranger.id, (await createTestApp(stranger)).id);
  t.is((await call('PUT', `/api/agents/${a.id}`, { token: u.accessToken, body: { list_id: own } })).body.list_id, own);
  for (const list_id of [wrongApp, foreign, OTHER, 'not-a-uuid']) {
    const r = await call('PUT', `/api/agents/${a.id}`, { token: u.accessToken, body: { list_id } });
    t.is(r.status, 400, list_id);
    t.is(r.body.error.code, 'invalid_list_id', list_id);
  }
  t.is(
    (await call('GET', `/api/agents/${a.id}`, { token: u.accessToken })).body.list_id,
    own,
    'unchanged after refusals',
  );
  // At creation too.
  const created = await call('POST', `/api/apps/${app.id}/agents`, {
    token: u.accessToken,
    body: { name: 'x', list_id: wrongApp },
  });
  t.is(created.body.error.code, 'invalid_list_id');
});

test('status machine: every allowed transition works and every other one is 400 invalid_transition', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const put = (id: string, status: string) =>
    call('PUT', `/api/agents/${id}`, { token: u.accessToken, body: { status } });
  const a = await newAgent(u, app.id);
  // Activating needs an enabled signal.
  const noSignal = await put(a.id, 'active');
  t.is(noSignal.body.error.code, 'invalid_transition');
  t.is((await call('PUT', `/api/agents/${a.id}/signals`, { token: u.accessToken, body: signals() })).status, 200);
  const allowed: [string, string][] = [
    ['draft', 'active'],
    ['active', 'paused'],
    ['paused', 'active'],
    ['active', 'archived'],
    ['archived', 'paused'],
    ['paused', 'archived'],
  ];
  for (const [from, to] of allowed) {
    t.is((await call('GET', `/api/agents/${a.id}`, { token: u.accessToken })).body.status, from);
    const r = await put(a.id, to);
    t.is(r.status, 200, `${from} → ${to}: ${r.text}`);
    t.is(r.body.status, to);
  }
  // From archived: only paused.
  for (const to of ['active', 'draft'])
    t.is((await put(a.id, to)).body.error.code, 'invalid_transition', `archived → ${to}`);
  t.is((await put(a.id, 'archived')).status, 200, 'the current status is a no-op');
  const b = await newAgent(u, app.id);
  t.is((await put(b.id, 'paused')).body.error.code, 'invalid_transition', 'draft → paused');
  await call('PUT', `/api/agents/${b.id}/signals`, { token: u.accessToken, body: signals() });
  await put(b.id, 'active');
  t.is((await put(b.id, 'draft')).body.error.code, 'invalid_transition', 'active → draft');
  // An active agent cannot lose its last enabled signal.
  const off = await call('PUT', `/api/agents/${b.id}/signals`, { token: u.accessToken, body: { signals: [] } });
  t.is(off.body.error.code, 'invalid_transition');
});

test('DELETE is 204 and the agent is gone; ids of another workspace are 404 on every agent route; members need product access', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const a = await newAgent(u, app.id);
  const stranger = await createOwner();
  for (const [method, path, body] of [
    ['GET', `/api/agents/${a.id}`],
    ['PUT', `/api/agents/${a.id}`, { name: 'x' }],
    ['DELETE', `/api/agents/${a.id}`],
    ['GET', `/api/agents/${a.id}/signals`],
    ['PUT', `/api/agents/${a.id}/signals`, signals()],
    ['GET', `/api/agents/${a.id}/sources`],
    ['PUT', `/api/agents/${a.id}/sources/newsforum`, { enabled: true }],
    ['GET', `/api/agents/${a.id}/next-launches`],
  ] as [string, string, unknown?][]) {
    const r = await call(method, path, { token: stranger.accessToken, body });
    t.is(r.status, 404, `${method} ${path}`);
    t.is(r.body.error.code, 'not_found');
  }
  // A malformed id is 400 invalid_id on every agent route the spec lists it for.
  for (const [method, path] of [
    ['GET', '/api/agents/123'],
    ['PUT', '/api/agents/123'],
    ['DELETE', '/api/agents/123'],
    ['GET', '/api/agents/123/discovery-funnel'],
    ['POST', '/api/agents/123/generate-keywords'],
  ]) {
    const r = await call(method, path, { token: u.accessToken, body: method === 'PUT' ? { name: 'x' } : undefined });
    t.is(r.status, 400, `${method} ${path}`);
    t.is(r.body.error.code, 'invalid_id', `${method} ${path}`);
  }
  // A member limited to another product: 403 not_assigned.
  const other = await createTestApp(u, 'other');
  const member = await createUser();
  await addTeamMember(u.id, member.id, { appIds: [other.id] });
  for (const [method, body] of [['GET'], ['PUT', { name: 'x' }], ['DELETE']] as [string, unknown?][]) {
    const m = await call(method, `/api/agents/${a.id}`, {
      token: member.accessToken,
      headers: { 'x-acting-as': u.id },
      body,
    });
    t.is(m.status, 403, method);
    t.is(m.body.error.code, 'not_assigned', method);
  }
  t.is((await call('DELETE', `/api/agents/${a.id}`, { token: u.accessToken })).status, 204);
  t.is((await call('GET', `/api/agents/${a.id}`, { token: u.accessToken })).status, 404);
  t.is((await call('DELETE', `/api/agents/${a.id}`, { token: u.accessToken })).status, 404);
});

test('signals: replaced as a set, a kept key keeps its id; duplicate keys and keyword signals without keywords are 400 invalid_signal', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const a = await newAgent(u, app.id);
  const first = await call('PUT', `/api/agents/${a.id}/signals`, {
    token: u.accessToken,
    body: {
      signals: [
        { kind: 'post_keywords', name: 'Tax Season Pain', keywords: ['tax', ' tax ', 'invoice'] },
        { key: 'hiring', kind: 'hiring', name: 'Hiring' },
      ],
    },
  });
  t.is(first.status, 200, first.text);
  t.deepEqual(
    first.body.map((s: any) => s.key),
    ['tax-season-pain', 'hiring'],
  );
  t.deepEqual(first.body[0].keywords, ['tax', 'invoice']);
  const second = await call('PUT', `/api/agents/${a.id}/signals`, {
    token: u.accessToken,
    body: {
      signals: [
        { key: 'hiring', kind: 'hiring', name: 'Hiring now', enabled: false },
        { key: 'funding', kind: 'funding', name: 'Raised' },
      ],
    },
  });
  t.is(second.body.find((s: any) => s.key === 'hiring').id, first.body[1].id);
  t.is(second.body.find((s: any) => s.key === 'hiring').name, 'Hiring now');
  t.false(second.body.some((s: any) => s.key === 'tax-season-pain'));
  t.deepEqual((await call('GET', `/api/agents/${a.id}/signals`, { token: u.accessToken })).body, second.body);
  const dup = await call('PUT', `/api/agents/${a.id}/signals`, {
    token: u.accessToken,
    body: {
      signals: [
        { key: 'x', kind: 'hiring', name: 'a' },
        { key: 'x', kind: 'funding', name: 'b' },
      ],
    },
  });
  t.is(dup.body.error.code, 'invalid_signal');
  const noKeywords = await call('PUT', `/api/agents/${a.id}/signals`, {
    token: u.accessToken,
    body: { signals: [{ kind: 'post_keywords', name: 'a' }] },
  });
  t.is(noKeywords.body.error.code, 'invalid_signal');
  t.is(
    (
      await call('PUT', `/api/agents/${a.id}/signals`, {
        token: u.accessToken,
        body: { signals: [{ kind: 'telepathy', name: 'a' }] },
      })
    ).body.error.code,
    'invalid_body',
  );
});

test('sources: every source is listed (disabled until configured); PUT enables and configures one; an unknown source is 400', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const a = await newAgent(u, app.id);
  const before = await call('GET', `/api/agents/${a.id}/sources`, { token: u.accessToken });
  t.deepEqual(
    before.body.map((s: any) => [s.source, s.enabled]),
    [
      ['newsforum', false],
      ['pronet', false],
    ],
  );
  const put = await call('PUT', `/api/agents/${a.id}/sources/newsforum`, {
    token: u.accessToken,
    body: { config: { queries: ['bookkeeping'] } },
  });
  t.is(put.status, 200, put.text);
  t.like(put.body, { source: 'newsforum', enabled: true, config: { queries: ['bookkeeping'] } });
  const off = await call('PUT', `/api/agents/${a.id}/sources/newsforum`, {
    token: u.accessToken,
    body: { enabled: false },
  });
  t.like(off.body, { enabled: false, config: { queries: ['bookkeeping'] } });
  t.is((await call('PUT', `/api/agents/${a.id}/sources/myspace`, { token: u.accessToken, body: {} })).status, 400);
});

test('Demo workspace: PUT and DELETE answer a simulation (200) with what would change, and write nothing; create is 403 demo_read_only', async (t) => {
  await seedDemo(await em());
  const u = await createUser();
  t.is((await call('POST', '/api/me/workspaces/demo/join', { token: u.accessToken })).status < 300, true);
  const demo = { token: u.accessToken, headers: { 'x-acting-as': demoId(1) } };
  const agentId = demoId(0x300);
  const before = await call('GET', `/api/agents/${agentId}`, demo);
  t.is(before.status, 200, before.text);
  const sim = await call('PUT', `/api/agents/${agentId}`, { ...demo, body: { name: 'Renamed', status: 'paused' } });
  t.is(sim.status, 200, sim.text);
  t.like(sim.body, { simulated: true, action: 'update', agent: { name: 'Renamed', status: 'paused' } });
  t.deepEqual(sim.body.changes, [
    { field: 'status', from: 'active', to: 'paused' },
    { field: 'name', from: before.body.name, to: 'Renamed' },
  ]);
  // The same rules apply in a simulation.
  t.is(
    (await call('PUT', `/api/agents/${agentId}`, { ...demo, body: { status: 'draft' } })).body.error.code,
    'invalid_transition',
  );
  const del = await call('DELETE', `/api/agents/${agentId}`, demo);
  t.is(del.status, 200);
  t.like(del.body, { simulated: true, action: 'delete', agent: { id: agentId } });
  t.deepEqual((await call('GET', `/api/agents/${agentId}`, demo)).body, before.body, 'nothing written');
  const create = await call('POST', `/api/apps/${demoId(0x100)}/agents`, { ...demo, body: { name: 'x' } });
  t.is(create.body.error.code, 'demo_read_only');
  t.is((await (await em()).count(DiscoveryAgent, { workspace: DEMO_WORKSPACE_ID })) >= 2, true);
});

test('stats and active agents: per-product counts add up; active agents of the workspace', async (t) => {
  const u = await createOwner();
  const one = await createTestApp(u, 'one');
  const two = await createTestApp(u, 'two');
  const a = await newAgent(u, one.id);
  await newAgent(u, one.id);
  await newAgent(u, two.id);
  await newList(u.id, one.id);
  await call('PUT', `/api/agents/${a.id}/signals`, { token: u.accessToken, body: signals() });
  t.is((await call('PUT', `/api/agents/${a.id}`, { token: u.accessToken, body: { status: 'active' } })).status, 200);
  const stats = await call('GET', '/api/apps/stats', { token: u.accessToken });
  t.is(stats.status, 200, stats.text);
  t.deepEqual(stats.body.items, [
    { app_id: one.id, name: 'one', agents: 2, active_agents: 1, lists: 1, leads: 0 },
    { app_id: two.id, name: 'two', agents: 1, active_agents: 0, lists: 0, leads: 0 },
  ]);
  const active = await call('GET', '/api/me/active-agents', { token: u.accessToken });
  t.deepEqual(
    active.body.map((x: any) => [x.id, x.app_name]),
    [[a.id, 'one']],
  );
  // Usage shows the agents that count.
  t.is((await call('GET', '/api/user/limits', { token: u.accessToken })).body.limits.agents.used, 3);
});
