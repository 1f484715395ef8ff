// Review of discovered leads: status machine, approval into lists (once, even concurrently), rejection
// reasons in the breakdown, batch partial results, counts agreeing with the list, ownership.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { Lead } from '../../db/entities/Lead.js';
import { Contact } from '../../db/entities/Contact.js';
import { App } from '../../db/entities/App.js';
import { DEMO_USER_ID, DEMO_WORKSPACE_ID } from '../../domain/demo/seed.js';
import { uuidv7 } from '../../lib/ids.js';
import { call, createTestApp, createUser, closeApi, type TestUser } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { addTeamMember } from '../helpers/db.js';
import { seedCampaign } from '../helpers/campaigns.js';
test.after.always(closeApi);

const auth = (u: TestUser, headers: Record<string, string> = {}) => ({ token: u.accessToken, headers });

interface Setup {
  u: TestUser;
  appId: string;
  agentId: string;
  listId: string;
  workspaceId: string;
}

async function setup(withList = true): Promise<Setup> {
  const u = await createOwner();
  const app = await createTestApp(u);
  let listId = '';
  if (withList)
    listId = (await call('POST', `/api/apps/${app.id}/lists`, { ...auth(u), body: { name: 'Inbox' } })).body.id;
  const agent = await call('POST', `/api/apps/${app.id}/agents`, {
    ...auth(u),
    body: { name: 'Scout', ...(withList ? { list_id: listId } : {}) },
  });
  if (agent.status !== 201) throw new Error(agent.text);
  return { u, appId: app.id, agentId: agent.body.id, listId, workspaceId: await workspaceIdOf(u.id) };
}

let seq = 0;
/** Inserts discovered leads directly (as a discovery run would). */
async function insertLeads(
  s: { workspaceId: string; appId: string; agentId: string },
  n: number,
  over: Record<string, unknown> = {},
): Promise<string[]> {
  const e = await em();
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = uuidv7();
    const k = `${Date.now()}-${seq++}-${Math.random().toString(36).slice(2)}`;
    const row = {
      full_name: `Person ${k}`,
      title: 'CTO',
      company: 'Acme',
      email: null,
      profile_url: `https://pronet.example/in/p-${k}`,
      signal_key: 'hiring',
      ...over,
    };
    await e.execute(
      `insert into discovered_leads (id, workspace_id, app_id, agent_id, signal_key, evidence_key, source, external_id, dedupe_key, profile_url, email,
         full_name, title, company, evidence, score, reasons, status, promoted, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, 'pronet', ?, ?, ?, ?, ?, ?, ?, '{}', 80, '[]', 'new', false, now(), now())`,
      [
        id,
        s.workspaceId,
        s.appId,
        s.agentId,
        row.signal_key,
        k.slice(0, 64),
        k,
        k,
        row.profile_url,
        row.email,
        row.full_name,
        row.title,
        row.company,
      ],
    );
    ids.push(id);
  }
  return ids;
}

const leadCount = async (listId: string) => (await em()).count(Lead, { list: listId });

test('approve: new → approved into the agent’s list with a new contact; approving again is 200 already_approved with one list member', async (t) => {
  const s = await setup();
  const [id] = await insertLeads(s, 1);
  const r = await call('POST', `/api/discovered-leads/${id}/approve`, { ...auth(s.u), body: {} });
  t.is(r.status, 200, r.text);
  t.like(r.body, {
    id,
    status: 'approved',
    result: 'approved',
    list_id: s.listId,
    created: true,
    approved_list_id: s.listId,
  });
  t.is(r.body.approved_lead_id, r.body.lead_id);
  t.truthy(r.body.reviewed_at);
  const again = await call('POST', `/api/discovered-leads/${id}/approve`, { ...auth(s.u), body: {} });
  t.is(again.status, 200, again.text);
  t.like(again.body, {
    result: 'already_approved',
    lead_id: r.body.lead_id,
    contact_id: r.body.contact_id,
    created: false,
  });
  t.is(await leadCount(s.listId), 1);
  // approved is terminal: reject is 409 invalid_transition
  const rej = await call('POST', `/api/discovered-leads/${id}/reject`, {
    ...auth(s.u),
    body: { reason: 'changed my mind' },
  });
  t.is(rej.status, 409);
  t.is(rej.body.error.code, 'invalid_transition');
  // sequence: the contact, no steps yet
  const sq = await call('GET', `/api/discovered-leads/${id}/sequence`, auth(s.u));
  t.deepEqual(sq.body, {
    discovered_lead_id: id,
    contact_id: r.body.contact_id,
    steps: [],
    planned_count: 0,
    past_count: 0,
  });
});

test('sequence: the contact’s planned and past scheduled actions across campaigns, by due time', async (t) => {
  const s = await setup();
  const [id] = await insertLeads(s, 1);
  const r = await call('POST', `/api/discovered-leads/${id}/approve`, { ...auth(s.u), body: {} });
  t.is(r.status, 200, r.text);
  const e = await em();
  const steps = [
    { type: 'invitation', config: {} },
    { type: 'message', config: { body: 'Hi' } },
  ];
  const campaigns = [
    await seedCampaign(s.workspaceId, { appId: s.appId, accountIds: [], steps }),
    await seedCampaign(s.workspaceId, { appId: s.appId, accountIds: [], steps }),
  ];
  const ids: string[] = [];
  for (const [n, c] of campaigns.entries()) {
    const enrollmentId = uuidv7();
    await e.execute(
      `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, run, enrolled_at, created_at, updated_at) values (?, ?, ?, ?, ?, 'active', 1, 1, now(), now(), now())`,
      [enrollmentId, s.workspaceId, c.id, r.body.lead_id, r.body.contact_id],
    );
    const actionId = uuidv7();
    const [state, due] =
      n === 0 ? ['executed', new Date(Date.now() - 86_400_000)] : ['planned', new Date(Date.now() + 86_400_000)];
    await e.execute(
      `insert into scheduled_actions (id, workspace_id, campaign_id, enrollment_id, lead_id, step_id, step_position, step_version, type, state, due_at, executed_at, attempts, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, 0, 1, 'invitation', ?, ?, ?, 0, now(), now())`,
      [
        actionId,
        s.workspaceId,
        c.id,
        enrollmentId,
        r.body.lead_id,
        c.stepIds[0],
        state,
        due,
        state === 'executed' ? due : null,
      ],
    );
    ids.push(actionId);
  }
  const sq = await call('GET', `/api/discovered-leads/${id}/sequence`, auth(s.u));
  t.is(sq.status, 200, sq.text);
  t.like(sq.body, { discovered_lead_id: id, contact_id: r.body.contact_id, planned_count: 1, past_count: 1 });
  t.deepEqual(
    sq.body.steps.map((x: any) => [x.action_id, x.campaign_id, x.kind, x.status, x.planned]),
    [
      [ids[0], campaigns[0]!.id, 'invitation', 'executed', false],
      [ids[1], campaigns[1]!.id, 'invitation', 'planned', true],
    ],
  );
  t.truthy(sq.body.steps[0].executed_at);
  // Another workspace: 404.
  const other = await createOwner();
  t.is((await call('GET', `/api/discovered-leads/${id}/sequence`, auth(other))).status, 404);
});

test('10 concurrent approvals of one discovered lead yield one lead; two discovered leads of one person share the contact', async (t) => {
  const s = await setup();
  const [id] = await insertLeads(s, 1);
  const rs = await Promise.all(
    Array.from({ length: 10 }, () => call('POST', `/api/discovered-leads/${id}/approve`, { ...auth(s.u), body: {} })),
  );
  t.true(
    rs.every((r) => r.status === 200),
    rs.map((r) => r.text).join('\n'),
  );
  t.is(rs.filter((r) => r.body.result === 'approved').length, 1);
  t.is(new Set(rs.map((r) => r.body.lead_id)).size, 1);
  t.is(await leadCount(s.listId), 1);
  // Same person (same email in another case, same profile URL with a trailing slash) from another agent: reuses the contact and the lead.
  const url = `https://pronet.example/in/shared-${randomUUID()}`;
  const other = (
    await call('POST', `/api/apps/${s.appId}/agents`, { ...auth(s.u), body: { name: 'Other', list_id: s.listId } })
  ).body.id;
  const [a] = await insertLeads(s, 1, { profile_url: url, email: 'Same.Person@Example.com' });
  const [b] = await insertLeads({ ...s, agentId: other }, 1, {
    profile_url: `${url}/`,
    email: 'same.person@example.com',
  });
  const ra = await call('POST', `/api/discovered-leads/${a}/approve`, { ...auth(s.u), body: {} });
  const rb = await call('POST', `/api/discovered-leads/${b}/approve`, { ...auth(s.u), body: {} });
  t.is(ra.body.contact_id, rb.body.contact_id);
  t.is(ra.body.lead_id, rb.body.lead_id);
  t.true(ra.body.created);
  t.false(rb.body.created);
  t.is(await (await em()).count(Contact, { workspace: s.workspaceId, emailNormalised: 'same.person@example.com' }), 1);
  t.is(await leadCount(s.listId), 2);
});

test('approve with list_id: same product accepted; another product’s or workspace’s list is 400 invalid_list_id; no list at all is 400 no_list', async (t) => {
  const s = await setup(false);
  const [id, id2] = await insertLeads(s, 2);
  const none = await call('POST', `/api/discovered-leads/${id}/approve`, { ...auth(s.u), body: {} });
  t.is(none.status, 400);
  t.is(none.body.error.code, 'no_list');
  const otherApp = await createTestApp(s.u, 'Other product');
  const foreign = (await call('POST', `/api/apps/${otherApp.id}/lists`, { ...auth(s.u), body: { name: 'X' } })).body.id;
  const s2 = await setup();
  for (const listId of [foreign, s2.listId, randomUUID()]) {
    const r = await call('POST', `/api/discovered-leads/${id}/approve`, { ...auth(s.u), body: { list_id: listId } });
    t.is(r.status, 400, listId);
    t.is(r.body.error.code, 'invalid_list_id');
  }
  const own = (await call('POST', `/api/apps/${s.appId}/lists`, { ...auth(s.u), body: { name: 'Chosen' } })).body.id;
  const ok = await call('POST', `/api/discovered-leads/${id}/approve`, { ...auth(s.u), body: { list_id: own } });
  t.is(ok.status, 200, ok.text);
  t.is(ok.body.list_id, own);
  const bad = await call('POST', `/api/discovered-leads/${id2}/approve`, { ...auth(s.u), body: { list_id: 'nope' } });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_body');
  // Nothing written by the refused attempts
  t.is((await call('GET', `/api/discovered-leads/${id2}`, auth(s.u))).body.status, 'new');
});

test('reject: new → rejected with the reason, counted in the agent’s rejection breakdown; repeat is already_rejected; restore by approving', async (t) => {
  const s = await setup();
  const [id, id2] = await insertLeads(s, 2);
  const r = await call('POST', `/api/discovered-leads/${id}/reject`, {
    ...auth(s.u),
    body: { reason: 'Wrong industry' },
  });
  t.is(r.status, 200, r.text);
  t.like(r.body, { status: 'rejected', reject_reason: 'Wrong industry', result: 'rejected' });
  await call('POST', `/api/discovered-leads/${id2}/reject`, { ...auth(s.u), body: { reason: 'Wrong industry' } });
  const again = await call('POST', `/api/discovered-leads/${id}/reject`, { ...auth(s.u), body: { reason: 'other' } });
  t.like(again.body, { result: 'already_rejected', reject_reason: 'Wrong industry' });
  const br = await call('GET', `/api/agents/${s.agentId}/rejections`, auth(s.u));
  t.is(br.status, 200);
  t.deepEqual(
    br.body.reasons.find((x: any) => x.reason === 'Wrong industry'),
    { reason: 'Wrong industry', count: 2 },
  );
  t.is(br.body.total, 2);
  // rejected → approved
  const ap = await call('POST', `/api/discovered-leads/${id}/approve`, { ...auth(s.u), body: {} });
  t.like(ap.body, { status: 'approved', reject_reason: null, result: 'approved' });
  t.is((await call('GET', `/api/agents/${s.agentId}/rejections`, auth(s.u))).body.total, 1);
  // reason rules
  for (const body of [{}, { reason: '' }, { reason: '   ' }, { reason: 'x'.repeat(201) }, { reason: 'ok', extra: 1 }]) {
    const b = await call('POST', `/api/discovered-leads/${id2}/reject`, { ...auth(s.u), body });
    t.is(b.status, 400, JSON.stringify(body));
    t.is(b.body.error.code, 'invalid_body');
  }
});

test('batch approve/reject: per-id partial results, idempotent, max 500 ids', async (t) => {
  const s = await setup();
  const ids = await insertLeads(s, 4);
  const other = await setup();
  const [foreign] = await insertLeads(other, 1);
  const missing = randomUUID();
  await call('POST', `/api/discovered-leads/${ids[0]}/approve`, { ...auth(s.u), body: {} });
  await call('POST', `/api/discovered-leads/${ids[1]}/reject`, { ...auth(s.u), body: { reason: 'meh' } });
  const rj = await call('POST', '/api/discovered-leads/batch-reject', {
    ...auth(s.u),
    body: { ids: [ids[0], ids[1], ids[2], missing, foreign], reason: 'bulk' },
  });
  t.is(rj.status, 200, rj.text);
  t.deepEqual(rj.body.results, [
    { id: ids[0], result: 'invalid_transition' },
    { id: ids[1], result: 'already_rejected' },
    { id: ids[2], result: 'rejected' },
    { id: missing, result: 'not_found' },
    { id: foreign, result: 'not_found' },
  ]);
  const ap = await call('POST', '/api/discovered-leads/batch-approve', {
    ...auth(s.u),
    body: { ids: [ids[0], ids[1], ids[2], ids[3], ids[3], missing, foreign] },
  });
  t.is(ap.status, 200, ap.text);
  t.deepEqual(ap.body.results, [
    { id: ids[0], result: 'already_approved' },
    { id: ids[1], result: 'approved' },
    { id: ids[2], result: 'approved' },
    { id: ids[3], result: 'approved' },
    { id: missing, result: 'not_found' },
    { id: foreign, result: 'not_found' },
  ]);
  const again = await call('POST', '/api/discovered-leads/batch-approve', { ...auth(s.u), body: { ids } });
  t.true(again.body.results.every((r: any) => r.result === 'already_approved'));
  t.is(await leadCount(s.listId), 4);
  t.is((await call('GET', `/api/discovered-leads/${foreign}`, auth(other.u))).body.status, 'new');
  for (const body of [{ ids: [] }, { ids: Array.from({ length: 501 }, () => randomUUID()) }, { ids: ['x'] }]) {
    const r = await call('POST', '/api/discovered-leads/batch-approve', { ...auth(s.u), body });
    t.is(r.status, 400);
    t.is(r.body.error.code, 'invalid_body');
  }
  const max = await call('POST', '/api/discovered-leads/batch-reject', {
    ...auth(s.u),
    body: { ids: Array.from({ length: 500 }, () => randomUUID()), reason: 'x' },
  });
  t.is(max.status, 200);
  t.is(max.body.results.length, 500);
  const noList = await setup(false);
  const [nl] = await insertLeads(noList, 1);
  const r = await call('POST', '/api/discovered-leads/batch-approve', { ...auth(noList.u), body: { ids: [nl] } });
  t.is(r.status, 400);
  t.is(r.body.error.code, 'no_list');
  const il = await call('POST', '/api/discovered-leads/batch-approve', {
    ...auth(noList.u),
    body: { ids: [nl], list_id: s.listId },
  });
  t.is(il.body.error.code, 'invalid_list_id');
});

test('list filters, newest-first cursor pagination, escaped text search; counts agree with the list', async (t) => {
  const s = await setup();
  const a2 = (await call('POST', `/api/apps/${s.appId}/agents`, { ...auth(s.u), body: { name: 'Second' } })).body.id;
  const ids = await insertLeads(s, 3, { company: 'Globex' });
  const pct = await insertLeads(s, 1, { company: '100% Growth_Co' });
  const other = await insertLeads({ ...s, agentId: a2 }, 2, { signal_key: 'funding' });
  await call('POST', `/api/discovered-leads/${ids[0]}/reject`, { ...auth(s.u), body: { reason: 'no' } });
  const all = await call('GET', '/api/discovered-leads?limit=2', auth(s.u));
  t.is(all.status, 200, all.text);
  t.deepEqual(
    all.body.items.map((x: any) => x.id),
    [other[1], other[0]],
  );
  const p2 = await call('GET', `/api/discovered-leads?limit=2&cursor=${all.body.next_cursor}`, auth(s.u));
  t.deepEqual(
    p2.body.items.map((x: any) => x.id),
    [pct[0], ids[2]],
  );
  const p3 = await call('GET', `/api/discovered-leads?limit=2&cursor=${p2.body.next_cursor}`, auth(s.u));
  t.deepEqual(
    p3.body.items.map((x: any) => x.id),
    [ids[1], ids[0]],
  );
  t.is(p3.body.next_cursor, null);
  const q = async (qs: string) =>
    (await call('GET', `/api/discovered-leads?${qs}`, auth(s.u))).body.items.map((x: any) => x.id);
  t.deepEqual(await q('q=100%25'), [pct[0]]);
  t.deepEqual(await q('q=%25'), [pct[0]]);
  t.deepEqual(await q('q=h_c'), [pct[0]]);
  t.deepEqual(await q('q=globex'), [ids[2], ids[1], ids[0]]);
  t.deepEqual(await q(`agent_id=${a2}`), [other[1], other[0]]);
  t.deepEqual(await q('signal_key=funding'), [other[1], other[0]]);
  t.deepEqual(await q('status=rejected'), [ids[0]]);
  t.deepEqual(await q(`app_id=${s.appId}&status=new&signal_key=hiring`), [pct[0], ids[2], ids[1]]);
  const bad = await call('GET', '/api/discovered-leads?status=maybe', auth(s.u));
  t.is(bad.body.error.code, 'invalid_query');
  // counts agree with the list under the same filters
  for (const qs of ['', `agent_id=${a2}`, 'status=new', 'q=globex', 'signal_key=hiring']) {
    const c = (await call('GET', `/api/discovered-leads/counts?${qs}`, auth(s.u))).body;
    const items = (await call('GET', `/api/discovered-leads?limit=200&${qs}`, auth(s.u))).body.items;
    t.is(c.total, items.length, qs);
    for (const st of ['new', 'approved', 'rejected'])
      t.is(c.by_status[st], items.filter((x: any) => x.status === st).length, `${qs} ${st}`);
    for (const a of c.by_agent) t.is(a.total, items.filter((x: any) => x.agent_id === a.agent_id).length);
  }
  const c = (await call('GET', '/api/discovered-leads/counts', auth(s.u))).body;
  t.deepEqual(c.by_status, { new: 5, approved: 0, rejected: 1 });
  t.is(c.by_agent.find((a: any) => a.agent_id === s.agentId).total, 4);
});

test('ownership: another workspace’s id is 404 on every id-taking route (and filter); a member without the product is 403 not_assigned', async (t) => {
  const s = await setup();
  const [id] = await insertLeads(s, 1);
  const stranger = await setup();
  const routes = [
    ['GET', `/api/discovered-leads/${id}`, undefined],
    ['GET', `/api/discovered-leads/${id}/sequence`, undefined],
    ['POST', `/api/discovered-leads/${id}/approve`, {}],
    ['POST', `/api/discovered-leads/${id}/reject`, { reason: 'x' }],
    ['GET', `/api/discovered-leads?agent_id=${s.agentId}`, undefined],
    ['GET', `/api/discovered-leads/counts?app_id=${s.appId}`, undefined],
  ] as const;
  for (const [method, path, body] of routes) {
    const r = await call(method, path, { ...auth(stranger.u), body });
    t.is(r.status, 404, `${method} ${path}`);
    t.is(r.body.error.code, 'not_found');
  }
  t.deepEqual((await call('GET', '/api/discovered-leads', auth(stranger.u))).body.items, []);
  const missing = await call('GET', `/api/discovered-leads/${randomUUID()}`, auth(s.u));
  t.is(missing.status, 404);
  const malformed = await call('GET', '/api/discovered-leads/nope', auth(s.u));
  t.is(malformed.body.error.code, 'invalid_id');
  // A member given another product only
  const member = await createUser();
  const otherApp = await createTestApp(s.u, 'Other');
  await addTeamMember(s.u.id, member.id, { appIds: [otherApp.id] });
  const asOwner = { 'x-acting-as': s.u.id };
  for (const [method, path, body] of routes) {
    const r = await call(method, path, { ...auth(member, asOwner), body });
    t.is(r.status, 403, `${method} ${path}`);
    t.is(r.body.error.code, 'not_assigned');
  }
  t.deepEqual((await call('GET', '/api/discovered-leads', auth(member, asOwner))).body.items, []);
  const br = await call('POST', '/api/discovered-leads/batch-approve', {
    ...auth(member, asOwner),
    body: { ids: [id] },
  });
  t.deepEqual(br.body.results, [{ id, result: 'not_found' }]);
  t.is((await call('GET', `/api/discovered-leads/${id}`, auth(s.u))).body.status, 'new');
});

test('the Demo workspace reads discovered leads but refuses review writes with 403 demo_read_only', async (t) => {
  const u = await createUser();
  const joined = await call('POST', '/api/me/workspaces/demo/join', auth(u));
  t.true(joined.status === 201 || joined.status === 200, joined.text);
  const inDemo = auth(u, { 'x-acting-as': DEMO_USER_ID });
  t.is((await call('GET', '/api/discovered-leads', inDemo)).status, 200);
  t.is((await call('GET', '/api/discovered-leads/counts', inDemo)).status, 200);
  const e = await em();
  t.truthy(await e.findOne(App, { workspace: DEMO_WORKSPACE_ID }));
  const id = randomUUID();
  for (const [path, body] of [
    [`/api/discovered-leads/${id}/approve`, {}],
    [`/api/discovered-leads/${id}/reject`, { reason: 'x' }],
    ['/api/discovered-leads/batch-approve', { ids: [id] }],
    ['/api/discovered-leads/batch-reject', { ids: [id], reason: 'x' }],
  ] as const) {
    const r = await call('POST', path, { ...inDemo, body });
    t.is(r.status, 403, path);
    t.is(r.body.error.code, 'demo_read_only');
  }
});

test('Operator tools list, approve and reject discovered leads through the domain rules', async (t) => {
  const { findTool } = await import('../../domain/tools/index.js');
  const { runTool, needsConfirmation } = await import('../../domain/tools/registry.js');
  const { resolveActor } = await import('../../domain/workspaces.js');
  const { api } = await import('../helpers/api.js');
  const { services } = await api();
  const s = await setup();
  const [a, b] = await insertLeads(s, 2);
  const e = services.orm.em.fork();
  const ctx = {
    em: e,
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(e as never, { userId: s.u.id, kind: 'session' }, undefined),
  };
  t.false(needsConfirmation(findTool('list_discovered_leads')!));
  t.true(needsConfirmation(findTool('approve_discovered_lead')!));
  t.true(needsConfirmation(findTool('reject_discovered_lead')!));
  const listed = (await runTool(findTool('list_discovered_leads')!, ctx, { agent_id: s.agentId })) as { id: string }[];
  t.deepEqual(
    listed.map((x) => x.id),
    [b, a],
  );
  t.like(await runTool(findTool('approve_discovered_lead')!, ctx, { discovered_lead_id: a }), {
    result: 'approved',
    list_id: s.listId,
    created: true,
  });
  t.like(await runTool(findTool('reject_discovered_lead')!, ctx, { discovered_lead_id: b, reason: 'too junior' }), {
    result: 'rejected',
  });
  const bad = await t.throwsAsync(
    runTool(findTool('reject_discovered_lead')!, ctx, { discovered_lead_id: a, reason: 'late' }),
  );
  t.like(bad, { code: 'invalid_transition' });
  const other = await setup();
  const oe = services.orm.em.fork();
  const otherCtx = {
    em: oe,
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(oe as never, { userId: other.u.id, kind: 'session' }, undefined),
  };
  t.like(await t.throwsAsync(runTool(findTool('approve_discovered_lead')!, otherCtx, { discovered_lead_id: b })), {
    status: 404,
  });
});
