import test from 'ava';
import { apiFieldNames } from '../../domain/contacts/contacts.js';
import { z } from 'zod';
import { defineOperation } from '../../api/operation.js';
import { allOperations } from '../../api/operations.js';
import { App } from '../../db/entities/App.js';
import { Enrichment } from '../../db/entities/Enrichment.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { DEMO_ROWS, DEMO_USER_ID, DEMO_WORKSPACE_ID, demoId, seedDemo } from '../../domain/demo/seed.js';
import { assertWritable } from '../../domain/demo/demo.js';
import { AppError } from '../../domain/errors.js';
import { api, call, createUser, listen, closeApi, type TestUser } from '../helpers/api.js';
import { em } from '../helpers/billing.js';
test.after.always(closeApi);

const seededApps = DEMO_ROWS.find((t) => t.table === 'apps')!.rows;
const inDemo = (u: TestUser) => ({ token: u.accessToken, headers: { 'x-acting-as': DEMO_USER_ID } });

async function joined(): Promise<TestUser> {
  const u = await createUser();
  const r = await call('POST', '/api/me/workspaces/demo/join', { token: u.accessToken });
  if (r.status !== 201) throw new Error(`join failed: ${r.status} ${r.text}`);
  return u;
}

test('POST /api/me/workspaces/demo/join adds the caller as a member, idempotently', async (t) => {
  const u = await createUser();
  const first = await call('POST', '/api/me/workspaces/demo/join', { token: u.accessToken });
  t.is(first.status, 201, first.text);
  t.like(first.body, {
    id: DEMO_WORKSPACE_ID,
    owner_id: DEMO_USER_ID,
    role: 'member',
    is_demo: true,
    name: 'Demo workspace',
  });
  const again = await call('POST', '/api/me/workspaces/demo/join', { token: u.accessToken });
  t.is(again.status, 200);
  t.is(again.body.member_id, first.body.member_id);
  const list = await call('GET', '/api/me/workspaces', { token: u.accessToken });
  t.deepEqual(
    list.body.filter((w: any) => w.is_demo),
    [first.body],
  );
  t.is((await call('POST', '/api/me/workspaces/demo/join')).status, 401);
});

test('parallel joins of one user make one membership', async (t) => {
  const u = await createUser();
  const rs = await Promise.all(
    Array.from({ length: 5 }, () => call('POST', '/api/me/workspaces/demo/join', { token: u.accessToken })),
  );
  t.true(
    rs.every((r) => r.status === 200 || r.status === 201),
    rs.map((r) => r.status).join(),
  );
  t.is(new Set(rs.map((r) => r.body.member_id)).size, 1);
});

test('reads in the Demo workspace answer 200 with the seeded data', async (t) => {
  const u = await joined();
  const r = await call('GET', '/api/apps', inDemo(u));
  t.is(r.status, 200, r.text);
  t.deepEqual(
    r.body.items.map((a: any) => a.name),
    seededApps.map((a) => a.name),
  );
  t.true(r.body.items.every((a: any) => a.workspace_id === DEMO_WORKSPACE_ID && a.description));
  const e = await call('GET', '/api/me/entitlement', inDemo(u));
  t.like(e.body, { workspace_id: DEMO_WORKSPACE_ID, is_demo: true });
  const f = await call('GET', '/api/features', inDemo(u));
  t.like(f.body, { is_demo: true, features: { writes: false, operator: false } });
  // The inbox and follow-ups show a working campaign: a reply, an out-of-office, a stranger.
  const inbox = (await call('GET', '/api/inbox/conversations', inDemo(u))).body.items;
  t.deepEqual(
    inbox.map((c: any) => [c.counterpart_name ?? c.counterpart, c.lead?.id ? 'lead' : 'unmatched', c.unread_count]),
    [
      ['hello@printshop.example', 'unmatched', 1],
      ['Lena Vogel', 'lead', 1],
      ['Jonas Becker', 'lead', 0],
    ],
  );
  const lena = (await call('GET', `/api/inbox/conversations/${inbox[1].id}`, inDemo(u))).body;
  t.deepEqual(
    lena.messages.map((m: any) => [m.direction, m.kind]),
    [
      ['out', 'sent'],
      ['in', 'reply'],
    ],
  );
  // Lena waits for an answer; the call with Jonas ended without an outcome.
  t.deepEqual(
    (await call('GET', '/api/follow-ups', inDemo(u))).body.items.map((f: any) => [f.kind, f.lead.first_name]),
    [
      ['reply_waiting', 'Lena'],
      ['meeting_outcome', 'Jonas'],
    ],
  );
  const meetings = (await call('GET', `/api/leads/${demoId(0x262)}/meetings`, inDemo(u))).body.items;
  t.deepEqual(meetings.map((m: any) => [m.title, m.status]).sort(), [
    ['Ledgerly demo (first slot)', 'canceled'],
    ['Ledgerly demo with Mara', 'scheduled'],
  ]);
  t.like((await call('GET', '/api/dashboard/next-event', inDemo(u))).body, {
    meeting: { title: 'Ledgerly demo with Mara' },
  });
  t.is((await call('GET', '/api/booking-provider-events/unmatched', inDemo(u))).body.items.length, 1);
  t.is(
    (await call('POST', `/api/inbox/conversations/${inbox[1].id}/reply`, { ...inDemo(u), body: { body: 'hi' } })).body
      .error.code,
    'demo_read_only',
  );
});

test('writes in the Demo workspace answer 403 demo_read_only and change nothing', async (t) => {
  const u = await joined();
  const r = await call('POST', '/api/apps', { ...inDemo(u), body: { name: 'vandalism' } });
  t.is(r.status, 403);
  t.is(r.body.error.code, 'demo_read_only');
  t.is(await (await em()).count(App, { workspace: DEMO_WORKSPACE_ID, name: 'vandalism' }), 0);
  // The same user's own workspace stays writable.
  t.is((await call('POST', '/api/apps', { token: u.accessToken, body: { name: 'mine' } })).status, 201);
});

test("an operation declaring demo: 'simulate' runs in the Demo workspace; others are refused before the handler", async (t) => {
  let ran = 0;
  const sim = defineOperation({
    method: 'POST',
    path: '/api/test/demo-simulated',
    summary: 'probe',
    tag: 'test',
    auth: 'user',
    demo: 'simulate',
    responses: { 200: z.object({ simulated: z.boolean() }) },
    handler: ({ actor }) => ({ simulated: actor.isDemo }),
  });
  const plain = defineOperation({
    method: 'DELETE',
    path: '/api/test/demo-plain',
    summary: 'probe',
    tag: 'test',
    auth: 'user',
    responses: { 204: null },
    handler: () => {
      ran++;
    },
  });
  const { services } = await api();
  const { base } = await listen(services, [...allOperations(), sim, plain]);
  const u = await joined();
  const s = await call('POST', '/api/test/demo-simulated', { base, ...inDemo(u) });
  t.is(s.status, 200, s.text);
  t.true(s.body.simulated);
  t.false((await call('POST', '/api/test/demo-simulated', { base, token: u.accessToken })).body.simulated);
  const p = await call('DELETE', '/api/test/demo-plain', { base, ...inDemo(u) });
  t.is(p.status, 403);
  t.is(p.body.error.code, 'demo_read_only');
  t.is(ran, 0);
  t.is((await call('DELETE', '/api/test/demo-plain', { base, token: u.accessToken })).status, 204);
});

test('the OpenAPI document lists demo_read_only for acting-as writes, not for reads or identity routes', async (t) => {
  const doc = (await call('GET', '/openapi.json')).body;
  t.true(doc.paths['/api/apps'].post['x-error-codes']['403'].includes('demo_read_only'));
  t.false(doc.paths['/api/apps'].get['x-error-codes']['403']?.includes('demo_read_only') ?? false);
  t.is(doc.paths['/api/me/workspaces/demo/join'].post.responses['403'], undefined);
});

test('assertWritable is the rule domain code calls', (t) => {
  t.notThrows(() => assertWritable({ isDemo: false }));
  const err = t.throws(() => assertWritable({ isDemo: true }));
  t.true(err instanceof AppError && err.status === 403 && err.code === 'demo_read_only');
});

test('the seed is deterministic and re-runnable: a second run changes nothing, a drifted row is repaired', async (t) => {
  await seedDemo(await em());
  const snapshot = async () => {
    const e = await em();
    const ws = await e.findOneOrFail(Workspace, DEMO_WORKSPACE_ID);
    const apps = await e.find(App, { workspace: DEMO_WORKSPACE_ID }, { orderBy: { id: 'asc' } });
    return {
      ws: [ws.name, ws.isDemo, ws.updatedAt.toISOString()],
      apps: apps.map((a) => [a.id, a.name, a.updatedAt.toISOString()]),
    };
  };
  const before = await snapshot();
  t.true(before.ws[1] as boolean);
  t.deepEqual(
    before.apps.map((a) => a[0]),
    seededApps.map((a) => a.id),
  );
  t.is((await seedDemo(await em())).changed, 0);
  t.deepEqual(await snapshot(), before);
  // A drifted column (here the system user's name, which no other test reads) is put back.
  const e = await em();
  await e.execute('update users set name = ? where id = ?', ['Drifted', DEMO_USER_ID]);
  // (At most 1: the admin CLI test may run seed-demo concurrently and repair it first.)
  t.true((await seedDemo(await em())).changed <= 1);
  t.is((await e.execute<{ name: string }[]>('select name from users where id = ?', [DEMO_USER_ID]))[0].name, 'Demo');
  t.is((await seedDemo(await em())).changed, 0);
});

test('leaving the Demo workspace works like any membership', async (t) => {
  const u = await createUser();
  const j = await call('POST', '/api/me/workspaces/demo/join', { token: u.accessToken });
  t.is((await call('DELETE', `/api/me/workspaces/${j.body.member_id}`, { token: u.accessToken })).status, 204);
  const r = await call('GET', '/api/apps', inDemo(u));
  t.is(r.status, 403);
  t.is(r.body.error.code, 'not_assigned');
  t.is(
    (await call('POST', '/api/me/workspaces/demo/join', { token: u.accessToken })).status,
    201,
    'and can join again',
  );
});

test('a newcomer sees the review and enrichment at work: new, approved and rejected discovered leads, enriched and promoted ones', async (t) => {
  await seedDemo(await em()); // (the join seeds only a missing Demo; this database may hold an older one)
  const u = await joined();
  const demo = inDemo(u);
  const agentId = demoId(0x300);

  // The counts agree with the list, status by status.
  const counts = await call('GET', '/api/discovered-leads/counts', demo);
  t.is(counts.status, 200, counts.text);
  const byStatus: Record<string, number> = counts.body.by_status;
  const items: Record<string, any[]> = {};
  for (const status of ['new', 'approved', 'rejected']) {
    t.true(byStatus[status] > 0, `${status}: ${byStatus[status]}`);
    const r = await call('GET', `/api/discovered-leads?status=${status}&limit=200`, demo);
    t.is(r.status, 200, r.text);
    t.is(r.body.next_cursor, null);
    t.true(r.body.items.every((l: any) => l.status === status));
    t.is(r.body.items.length, byStatus[status], status);
    items[status] = r.body.items;
  }
  const all = await call('GET', '/api/discovered-leads?limit=200', demo);
  t.is(all.body.items.length, counts.body.total);
  t.is(counts.body.total, byStatus.new + byStatus.approved + byStatus.rejected);

  // Approved: reviewed by the demo user, a member of the agent's list whose contact is the person.
  const agent = (await call('GET', `/api/agents/${agentId}`, demo)).body;
  for (const l of items.approved) {
    t.truthy(l.approved_lead_id);
    t.like(l, { approved_list_id: agent.list_id, reviewed_by: DEMO_USER_ID, reject_reason: null });
    t.truthy(l.reviewed_at);
  }
  const members = await call('GET', `/api/lists/${agent.list_id}/leads?limit=200`, demo);
  t.is(members.status, 200, members.text);
  for (const l of items.approved) {
    const member = members.body.items.find((m: any) => m.id === l.approved_lead_id);
    t.like(member, { name: l.full_name, profile_url: l.profile_url, source: 'discovery' }, l.full_name);
    t.is((await call('GET', `/api/discovered-leads/${l.id}/sequence`, demo)).body.contact_id, member.contact_id);
  }

  // Rejected: each with a reason, counted in the agent's rejection breakdown.
  const rejections = await call('GET', `/api/agents/${agentId}/rejections`, demo);
  t.is(rejections.status, 200, rejections.text);
  const breakdown = new Map<string, number>(rejections.body.reasons.map((r: any) => [r.reason, r.count]));
  const reasons = new Map<string, number>();
  for (const l of items.rejected) {
    t.truthy(l.reject_reason);
    t.like(l, { reviewed_by: DEMO_USER_ID, approved_lead_id: null });
    reasons.set(l.reject_reason, (reasons.get(l.reject_reason) ?? 0) + 1);
  }
  t.true(reasons.size >= 3, [...reasons.keys()].join());
  for (const [reason, n] of reasons) t.is(breakdown.get(reason), n, reason);

  // Enrichment: promoted leads are complete and enriched, never rejected; incomplete enriched ones are not promoted.
  const leads: any[] = all.body.items;
  const promoted = leads.filter((l) => l.enrichment_promoted_at);
  t.true(promoted.some((l) => l.enriched_fields.length > 0 && l.enriched_at));
  for (const l of promoted) {
    t.not(l.status, 'rejected');
    t.true(Boolean(l.first_name && l.last_name && l.company && (l.email || l.profile_url)), l.full_name);
  }
  t.true(
    leads.some((l) => l.enriched_fields.length > 0 && !l.enrichment_promoted_at),
    'an enriched lead not complete enough',
  );
  for (const l of leads.filter((x) => x.enriched_fields.length))
    for (const f of ['email', 'phone', 'headline'] as const)
      if (l.enriched_fields.includes(f)) t.truthy(l[f], `${l.full_name}.${f}`);

  // Their attempts: one completed per enriched target, promoted exactly for the promoted leads, and one failure.
  const attempts = await (await em()).find(Enrichment, { workspace: DEMO_WORKSPACE_ID });
  for (const l of leads.filter((x) => x.enriched_at)) {
    const done = attempts.find(
      (a) => a.targetKind === 'discovered-lead' && a.targetId === l.id && a.status === 'completed',
    );
    t.like(
      done,
      { found: true, provider: 'local', creditsCharged: 1, promoted: Boolean(l.enrichment_promoted_at) },
      l.full_name,
    );
    t.deepEqual(apiFieldNames(done?.fieldsFilled ?? []), l.enriched_fields, l.full_name);
  }
  t.true(attempts.some((a) => a.targetKind === 'contact' && a.status === 'completed'));
  t.like(
    attempts.find((a) => a.status === 'failed'),
    { errorCode: 'provider_unavailable', creditsCharged: 0, found: false },
  );
});

test('a newcomer sees a finished CSV import and a company import waiting for review, and can change neither', async (t) => {
  await seedDemo(await em());
  const demo = inDemo(await joined());
  const appId = demoId(0x101);

  // The import: four people created into the list, one row refused with its reason and values.
  const imp = await call('GET', `/api/apps/${appId}/lists/import-drafts/${demoId(0x700)}`, demo);
  t.is(imp.status, 200, imp.text);
  t.like(imp.body, { status: 'completed', list_id: demoId(0x201) });
  t.like(imp.body.progress, { created: 4, invalid: 1, duplicate: 0 });
  t.is(imp.body.invalid_rows.items.length, 1);
  t.like(imp.body.invalid_rows.items[0], { row: 5 });
  t.is(imp.body.invalid_rows.items[0].reasons[0].code, 'invalid_email');
  t.is(imp.body.sample.problems[0].row, 5); // the preview's own analysis of the file
  const leads = await call('GET', `/api/lists/${demoId(0x201)}/leads?limit=50`, demo);
  t.is(leads.status, 200, leads.text);
  t.is(leads.body.items.filter((l: any) => l.source === 'import').length, 4);

  // The company import: counts agree across progress and company outcomes.
  const base = `/api/company-decision-maker-imports/${demoId(0x710)}`;
  const progress = await call('GET', `${base}/progress`, demo);
  t.is(progress.status, 200, progress.text);
  t.is(progress.body.state, 'ready_for_review');
  t.like(progress.body.members, { found: 4, pending: 2, approved: 1, rejected: 1, added: 0 });
  const outcomes = await call('GET', `${base}/company-outcomes`, demo);
  t.is(outcomes.status, 200, outcomes.text);
  const failed = outcomes.body.items.filter((c: any) => c.status === 'failed');
  t.is(failed.length, 1);
  t.is(failed[0].reason, 'company_not_found');
  const approved = await call('GET', `${base}/approved-members`, demo);
  t.deepEqual(
    approved.body.items.map((m: any) => m.full_name),
    ['Marco Bianchi'],
  );

  // Reviewing or confirming in the Demo is refused, and nothing moves.
  const confirm = await call('POST', `${base}/confirm`, { ...demo, body: {} });
  t.is(confirm.status, 403);
  t.is(confirm.body.error.code, 'demo_read_only');
  t.is((await call('GET', `${base}/progress`, demo)).body.state, 'ready_for_review');
});

test('a newcomer sees the sender accounts: one connected with its domain checked, one disconnected; neither can be changed', async (t) => {
  await seedDemo(await em());
  const demo = inDemo(await joined());
  const list = await call('GET', '/api/platform-accounts', demo);
  t.is(list.status, 200, list.text);
  t.deepEqual(
    list.body.items.map((a: any) => [a.channel, a.status]),
    [
      ['email', 'connected'],
      ['network', 'disconnected'],
    ],
  );
  const setup = await call('GET', `/api/platform-accounts/${demoId(0x800)}/setup-status`, demo);
  t.like(setup.body, {
    status: 'connected',
    ready: true,
    connector: { state: null },
    sending_domain: { domain: 'ledgerly.example', ready: true },
  });
  const usage = await call('GET', `/api/platform-accounts/${demoId(0x800)}/usage`, demo);
  t.is(usage.status, 200, usage.text);
  t.like(usage.body.actions[0], { action: 'email', full_caps: { daily: 40, weekly: 180 } });
  const lost = await call('GET', `/api/platform-accounts/${demoId(0x801)}/setup-status`, demo);
  t.regex(lost.body.steps[0], /reconnect the account \(credentials_expired\)/);
  const refused = await call('PATCH', `/api/platform-accounts/${demoId(0x800)}/warmup-skip`, demo);
  t.is(refused.status, 403);
  t.is(refused.body.error.code, 'demo_read_only');
});
