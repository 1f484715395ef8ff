// The per-lead enrollment view, beyond the spec (docs/executor.md "Per-lead enrollment view"):
// `GET /api/campaigns/{campaignId}/enrollments`, `GET /api/enrollments/{id}` and the Operator tool
// `get_enrollments`. Mostly on seeded enrollments and actions (a read view of stored state); one test
// goes through a real enrollment started by the API and its workflow.
import test from 'ava';
import { ZodError } from 'zod';
import { enrollmentWaiting, TIMED_REASONS, WAITING_REASONS } from '../../domain/enrollments/view.js';
import { AppError } from '../../domain/errors.js';
import { findTool } from '../../domain/tools/index.js';
import { runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { uuidv7 } from '../../lib/ids.js';
import { waitFor } from '../../scripts/children.js';
import { enrollmentWorkflowIds } from '../../lib/workflow-ids.js';
import type { EnrollmentState } from '../../workflows/enrollments.js';
import { api, call, closeApi, createTestApp, createUser, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { campaignOwner, campaignWithAccount, seedCampaign } from '../helpers/campaigns.js';
import { addTeamMember } from '../helpers/db.js';
test.before(async () => void (await api()));
test.after.always(closeApi);

const as = (u: TestUser, headers: Record<string, string> = {}) => ({ token: u.accessToken, headers });
const NO_SUCH_ID = '0190f5d2-7c1a-7b3e-9a10-000000000000';
const STEPS = [
  { type: 'invitation', config: { note: 'Hi' } },
  { type: 'wait', config: { amount: 1, unit: 'hours' } },
  { type: 'message', config: { body: 'Hello' } },
];

interface EnrollmentSpec {
  status?: string;
  position?: number | null;
  stepId?: string | null;
  stopReason?: string | null;
  finishedAt?: Date | null;
}

async function enroll(
  workspaceId: string,
  campaignId: string,
  lead: { leadId: string; contactId: string },
  s: EnrollmentSpec = {},
) {
  const id = uuidv7();
  await (
    await em()
  ).execute(
    `insert into enrollments (id, workspace_id, campaign_id, lead_id, contact_id, status, step_version, current_position, current_step_id, stop_reason, run, enrolled_at, finished_at, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, 1, ?, ?, ?, 1, now(), ?, now(), now())`,
    [
      id,
      workspaceId,
      campaignId,
      lead.leadId,
      lead.contactId,
      s.status ?? 'active',
      s.position ?? null,
      s.stepId ?? null,
      s.stopReason ?? null,
      s.finishedAt ?? null,
    ],
  );
  return id;
}

async function action(
  workspaceId: string,
  campaignId: string,
  enrollmentId: string,
  leadId: string,
  s: { stepId: string; position: number; type?: string; state?: string; dueAt?: Date; reason?: string | null },
) {
  const id = uuidv7();
  await (
    await em()
  ).execute(
    `insert into scheduled_actions (id, workspace_id, campaign_id, enrollment_id, lead_id, step_id, step_position, step_version, type, state, due_at, waiting_reason, attempts, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, 0, now(), now())`,
    [
      id,
      workspaceId,
      campaignId,
      enrollmentId,
      leadId,
      s.stepId,
      s.position,
      s.type ?? 'invitation',
      s.state ?? 'planned',
      s.dueAt ?? new Date(Date.now() + 3600_000),
      s.reason ?? null,
    ],
  );
  return id;
}

async function setup(status = 'active') {
  const u = await createOwner();
  const o = await campaignOwner(u);
  const c = await seedCampaign(o.workspaceId, { appId: o.app.id, accountIds: [], steps: STEPS, status });
  return { u, o, c };
}

const list = (u: TestUser, campaignId: string, q = '', headers: Record<string, string> = {}) =>
  call('GET', `/api/campaigns/${campaignId}/enrollments${q}`, as(u, headers));
const one = (u: TestUser, id: string, headers: Record<string, string> = {}) =>
  call('GET', `/api/enrollments/${id}`, as(u, headers));

test('the waiting rule: ended → none; campaign paused, then enrollment paused; else the action’s reason, timed ones until its due time', (t) => {
  const dueAt = new Date('2030-01-07T09:00:00Z');
  const w = (enrollmentStatus: string, campaignStatus: string, waitingReason: string | null, withAction = true) =>
    enrollmentWaiting({ enrollmentStatus, campaignStatus, nextAction: withAction ? { waitingReason, dueAt } : null });
  for (const ended of ['completed', 'replied', 'stopped', 'removed', 'failed'])
    t.deepEqual(w(ended, 'paused', 'gap'), { reason: null, until: null }, ended);
  t.deepEqual(w('active', 'paused', 'gap'), { reason: 'campaign_paused', until: null });
  t.deepEqual(w('paused', 'paused', 'gap'), { reason: 'campaign_paused', until: null });
  t.deepEqual(w('paused', 'active', 'gap'), { reason: 'paused', until: null });
  t.deepEqual(w('paused', 'active', null, false), { reason: 'paused', until: null });
  for (const reason of WAITING_REASONS) {
    t.deepEqual(w('active', 'active', reason), { reason, until: TIMED_REASONS.has(reason) ? dueAt : null }, reason);
  }
  t.deepEqual(w('active', 'active', 'waiting_for_window'), { reason: 'waiting_for_window', until: dueAt });
  t.deepEqual(w('active', 'active', 'awaiting_review'), { reason: 'awaiting_review', until: null });
  t.deepEqual(w('active', 'active', null), { reason: null, until: null }, 'an executing action has no reason');
  t.deepEqual(w('active', 'active', null, false), { reason: null, until: null }, 'no action yet');
  t.deepEqual(
    w('active', 'active', 'something_new'),
    { reason: null, until: null },
    'an unknown stored reason reads as none',
  );
});

test('list: every field, filters by status, current step and lead; keyset pages cover everything once, in enrollment order', async (t) => {
  const { u, o, c } = await setup();
  const leads = await o.leads(5);
  const due = new Date('2030-01-07T09:00:00.000Z');
  // 0: step 1 planned, outside the window; 1: step 3 awaiting review; 2: completed; 3: at the wait step, no action; 4: step 1 executing.
  const e0 = await enroll(o.workspaceId, c.id, leads[0], { position: 0, stepId: c.stepIds[0] });
  const a0 = await action(o.workspaceId, c.id, e0, leads[0].leadId, {
    stepId: c.stepIds[0]!,
    position: 0,
    dueAt: due,
    reason: 'waiting_for_window',
  });
  const e1 = await enroll(o.workspaceId, c.id, leads[1], { position: 2, stepId: c.stepIds[2] });
  await action(o.workspaceId, c.id, e1, leads[1].leadId, {
    stepId: c.stepIds[0]!,
    position: 0,
    state: 'executed',
    dueAt: new Date('2030-01-01T00:00:00Z'),
  });
  const a1 = await action(o.workspaceId, c.id, e1, leads[1].leadId, {
    stepId: c.stepIds[2]!,
    position: 2,
    type: 'message',
    state: 'awaiting_approval',
    dueAt: due,
    reason: 'awaiting_review',
  });
  const finished = new Date('2030-01-02T00:00:00.000Z');
  const e2 = await enroll(o.workspaceId, c.id, leads[2], { status: 'completed', finishedAt: finished });
  await action(o.workspaceId, c.id, e2, leads[2].leadId, { stepId: c.stepIds[0]!, position: 0, state: 'executed' });
  const e3 = await enroll(o.workspaceId, c.id, leads[3], { position: 1, stepId: c.stepIds[1] });
  const e4 = await enroll(o.workspaceId, c.id, leads[4], { position: 0, stepId: c.stepIds[0] });
  await action(o.workspaceId, c.id, e4, leads[4].leadId, {
    stepId: c.stepIds[0]!,
    position: 0,
    state: 'executing',
    dueAt: due,
  });
  const ids = [e0, e1, e2, e3, e4];

  const all = await list(u, c.id);
  t.is(all.status, 200, all.text);
  t.deepEqual(
    all.body.items.map((x: any) => x.id),
    ids,
  );
  t.is(all.body.next_cursor, null);
  const [v0, v1, v2, v3, v4] = all.body.items;
  t.deepEqual(Object.keys(v0).sort(), [
    'campaign_id',
    'contact_id',
    'created_at',
    'current_step',
    'finished_at',
    'id',
    'lead_id',
    'next_action',
    'replied_at',
    'run',
    'status',
    'step_version',
    'stop_reason',
    'waiting',
  ]);
  t.like(v0, {
    campaign_id: c.id,
    lead_id: leads[0].leadId,
    contact_id: leads[0].contactId,
    status: 'active',
    stop_reason: null,
    run: 1,
    step_version: 1,
    replied_at: null,
    finished_at: null,
    current_step: { id: c.stepIds[0], position: 0, type: 'invitation' },
    next_action: {
      id: a0,
      type: 'invitation',
      state: 'planned',
      due_at: due.toISOString(),
      waiting_reason: 'waiting_for_window',
    },
    waiting: { reason: 'waiting_for_window', until: due.toISOString() },
  });
  t.like(v1, {
    current_step: { id: c.stepIds[2], position: 2, type: 'message' },
    next_action: { id: a1, type: 'message', state: 'awaiting_approval', waiting_reason: 'awaiting_review' },
    waiting: { reason: 'awaiting_review', until: null },
  });
  t.like(v2, {
    status: 'completed',
    current_step: null,
    next_action: null,
    finished_at: finished.toISOString(),
    waiting: { reason: null, until: null },
  });
  t.like(v3, {
    current_step: { id: c.stepIds[1], position: 1, type: 'wait' },
    next_action: null,
    waiting: { reason: null, until: null },
  });
  t.like(v4, { next_action: { state: 'executing', waiting_reason: null }, waiting: { reason: null, until: null } });

  const ofStatus = await list(u, c.id, '?status=completed');
  t.deepEqual(
    ofStatus.body.items.map((x: any) => x.id),
    [e2],
  );
  const atStep = await list(u, c.id, `?step_id=${c.stepIds[0]}`);
  t.deepEqual(
    atStep.body.items.map((x: any) => x.id),
    [e0, e4],
  );
  const ofLead = await list(u, c.id, `?lead_id=${leads[3].leadId}`);
  t.deepEqual(
    ofLead.body.items.map((x: any) => x.id),
    [e3],
  );
  t.deepEqual((await list(u, c.id, `?status=paused`)).body.items, []);
  t.deepEqual(
    (await list(u, c.id, `?status=active&step_id=${c.stepIds[0]}&lead_id=${leads[4].leadId}`)).body.items.map(
      (x: any) => x.id,
    ),
    [e4],
  );

  // Keyset pages of 2: 2 + 2 + 1, each enrollment once, in order; filters hold across pages.
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r = await list(u, c.id, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    t.is(r.status, 200, r.text);
    seen.push(...r.body.items.map((x: any) => x.id));
    cursor = r.body.next_cursor;
    if (cursor) t.regex(cursor, /^[A-Za-z0-9_-]{22}$/);
    pages++;
  } while (cursor);
  t.is(pages, 3);
  t.deepEqual(seen, ids);
  const active1 = await list(u, c.id, '?status=active&limit=1');
  const active2 = await list(u, c.id, `?status=active&limit=3&cursor=${active1.body.next_cursor}`);
  t.deepEqual(
    [...active1.body.items, ...active2.body.items].map((x: any) => x.id),
    [e0, e1, e3, e4],
  );
  t.is(active2.body.next_cursor, null);

  // The single read answers the same view as the list.
  for (const item of all.body.items) {
    const r = await one(u, item.id);
    t.is(r.status, 200, r.text);
    t.deepEqual(r.body, item);
  }
});

test('waiting reads the campaign’s pause before the enrollment’s and the action’s; an ended enrollment has none', async (t) => {
  const { u, o, c } = await setup('paused');
  const [a, b, d] = await o.leads(3);
  const ea = await enroll(o.workspaceId, c.id, a, { position: 0, stepId: c.stepIds[0] });
  await action(o.workspaceId, c.id, ea, a.leadId, { stepId: c.stepIds[0]!, position: 0, reason: 'gap' });
  const eb = await enroll(o.workspaceId, c.id, b, { status: 'paused', position: 0, stepId: c.stepIds[0] });
  await action(o.workspaceId, c.id, eb, b.leadId, { stepId: c.stepIds[0]!, position: 0, reason: 'waiting_for_window' });
  const ed = await enroll(o.workspaceId, c.id, d, {
    status: 'removed',
    stopReason: 'unenrolled',
    finishedAt: new Date(),
  });

  t.like((await one(u, ea)).body, {
    waiting: { reason: 'campaign_paused', until: null },
    next_action: { waiting_reason: 'gap' },
  });
  t.like((await one(u, eb)).body, { waiting: { reason: 'campaign_paused', until: null } });
  t.like((await one(u, ed)).body, {
    status: 'removed',
    stop_reason: 'unenrolled',
    waiting: { reason: null, until: null },
  });

  await (await em()).execute(`update campaigns set status = 'active' where id = ?`, [c.id]);
  t.like((await one(u, ea)).body, { waiting: { reason: 'gap' } });
  t.like((await one(u, eb)).body, { status: 'paused', waiting: { reason: 'paused', until: null } });
  const rows = (await list(u, c.id)).body.items;
  t.deepEqual(
    rows.map((x: any) => x.waiting.reason),
    ['gap', 'paused', null],
  );
});

test('another workspace’s campaign or enrollment is 404; a member without the campaign’s product is 403 not_assigned, one with it reads', async (t) => {
  const { u, o, c } = await setup();
  const [lead] = await o.leads(1);
  const e = await enroll(o.workspaceId, c.id, lead, { position: 0, stepId: c.stepIds[0] });

  const stranger = await createOwner();
  for (const r of [
    await list(stranger, c.id),
    await one(stranger, e),
    await list(u, NO_SUCH_ID),
    await one(u, NO_SUCH_ID),
  ]) {
    t.is(r.status, 404, r.text);
    t.is(r.body.error.code, 'not_found');
  }

  const other = await createTestApp(u, 'Other product');
  const limited = await createUser();
  await addTeamMember(u.id, limited.id, { appIds: [other.id] });
  const acting = { 'x-acting-as': u.id };
  for (const r of [await list(limited, c.id, '', acting), await one(limited, e, acting)]) {
    t.is(r.status, 403, r.text);
    t.is(r.body.error.code, 'not_assigned');
  }
  // The limited member's own workspace has neither: 404 without X-Acting-As.
  t.is((await one(limited, e)).status, 404);

  const assigned = await createUser();
  await addTeamMember(u.id, assigned.id, { appIds: [o.app.id] });
  const listed = await list(assigned, c.id, '', acting);
  t.is(listed.status, 200, listed.text);
  t.deepEqual(
    listed.body.items.map((x: any) => x.id),
    [e],
  );
  t.is((await one(assigned, e, acting)).body.id, e);
});

test('400 on malformed ids, filters, cursor and limit, and unknown query parameters', async (t) => {
  const { u, c } = await setup();
  for (const [path, code] of [
    ['/api/campaigns/nope/enrollments', 'invalid_id'],
    ['/api/enrollments/nope', 'invalid_id'],
    ['/api/enrollments/123', 'invalid_id'],
    [`/api/campaigns/${c.id}/enrollments?status=bogus`, 'invalid_query'],
    [`/api/campaigns/${c.id}/enrollments?step_id=nope`, 'invalid_query'],
    [`/api/campaigns/${c.id}/enrollments?lead_id=123`, 'invalid_query'],
    [`/api/campaigns/${c.id}/enrollments?cursor=not-a-cursor`, 'invalid_query'],
    [`/api/campaigns/${c.id}/enrollments?limit=0`, 'invalid_query'],
    [`/api/campaigns/${c.id}/enrollments?limit=201`, 'invalid_query'],
    [`/api/campaigns/${c.id}/enrollments?limit=1e1`, 'invalid_query'],
    [`/api/campaigns/${c.id}/enrollments?state=planned`, 'invalid_query'],
  ] as const) {
    const r = await call('GET', path, as(u));
    t.is(r.status, 400, `${path}: ${r.text}`);
    t.is(r.body.error.code, code, path);
  }
});

test('the OpenAPI document marks both operations x-beyond-spec', async (t) => {
  const doc = (await call('GET', '/openapi.json')).body;
  t.is(doc.paths['/api/campaigns/{campaignId}/enrollments'].get['x-beyond-spec'], true);
  t.is(doc.paths['/api/enrollments/{enrollmentId}'].get['x-beyond-spec'], true);
  t.is(doc.paths['/api/campaigns/{campaignId}/scheduled-actions'].get['x-beyond-spec'], undefined);
});

test('a real enrollment started by the API: the view follows its workflow (the wait before step 3, the campaign’s pause, the removal)', async (t) => {
  const { u, o, campaign } = await campaignWithAccount('network', [
    { type: 'invitation', config: { note: 'Hi {{first_name}}' } },
    { type: 'wait', config: { amount: 600 / 3600, unit: 'hours' } },
    { type: 'message', config: { body: 'Following up, {{first_name}}' } },
  ]);
  const [lead] = await o.leads(1);
  const r = await call('POST', `/api/campaigns/${campaign.id}/leads`, {
    token: u.accessToken,
    body: { lead_ids: [lead.leadId] },
  });
  t.is(r.status, 200, r.text);
  const id = r.body.items[0].enrollment_id as string;

  // Step 1 goes out; step 3 is planned after the wait: the view says so without asking the workflow.
  let view: any;
  await waitFor('the message planned after the wait', async () => {
    view = (await one(u, id)).body;
    return view.waiting?.reason === 'waiting_step_delay' && view.next_action?.type === 'message';
  });
  t.like(view, {
    status: 'active',
    lead_id: lead.leadId,
    current_step: { id: campaign.stepIds[2], position: 2, type: 'message' },
    next_action: { state: 'planned' },
  });
  t.is(view.waiting.until, view.next_action.due_at);
  t.true(Date.parse(view.waiting.until) > Date.now() + 500_000);
  // The same answer as the workflow's query (the live state).
  const handle = (await api()).services.temporal.workflow.getHandle(
    enrollmentWorkflowIds.enrollment(campaign.id, lead.leadId),
  );
  await waitFor(
    'the query to agree',
    async () => (await handle.query<EnrollmentState>('state')).reason === 'waiting_step_delay',
  );
  const listed = (await list(u, campaign.id, `?lead_id=${lead.leadId}`)).body.items;
  t.deepEqual(listed, [view]);

  // The campaign's pause is read from the campaign row at once.
  t.is(
    (await call('PATCH', `/api/campaigns/${campaign.id}/status`, { token: u.accessToken, body: { status: 'paused' } }))
      .status,
    200,
  );
  t.like((await one(u, id)).body, { status: 'active', waiting: { reason: 'campaign_paused', until: null } });

  // Removed: ended, nothing left to send, no reason.
  t.is(
    (await call('DELETE', `/api/campaigns/${campaign.id}/leads/${lead.leadId}`, { token: u.accessToken })).status,
    200,
  );
  await waitFor('the workflow to end', async () => (await handle.describe()).status.name !== 'RUNNING');
  t.like((await one(u, id)).body, {
    status: 'removed',
    stop_reason: 'unenrolled',
    current_step: null,
    next_action: null,
    waiting: { reason: null, until: null },
  });
});

test('Operator tool get_enrollments: the same view by campaign (filters, pages) or by id; ownership and product scope as over REST', async (t) => {
  const { services } = await api();
  const { u, o, c } = await setup();
  const leads = await o.leads(3);
  const ids: string[] = [];
  for (const l of leads) ids.push(await enroll(o.workspaceId, c.id, l, { position: 0, stepId: c.stepIds[0] }));
  await action(o.workspaceId, c.id, ids[0]!, leads[0].leadId, {
    stepId: c.stepIds[0]!,
    position: 0,
    reason: 'waiting_for_window',
  });
  const tool = findTool('get_enrollments')!;
  t.is(tool.risk, 'read');
  const ctxOf = async (userId: string, actingAs?: string) => {
    const e = services.orm.em.fork();
    return {
      em: e,
      jobs: services.jobs,
      config: services.config,
      providers: services,
      actor: await resolveActor(e as never, { userId, kind: 'session' }, actingAs),
    };
  };
  const ctx = await ctxOf(u.id);
  type Page = { items: { id: string; waiting: { reason: string | null } }[]; next_cursor: string | null };
  const first = (await runTool(tool, ctx, { campaign_id: c.id, limit: 2 })) as Page;
  t.deepEqual(
    first.items.map((x) => x.id),
    ids.slice(0, 2),
  );
  t.truthy(first.next_cursor);
  const rest = (await runTool(tool, ctx, { campaign_id: c.id, limit: 2, cursor: first.next_cursor })) as Page;
  t.deepEqual(
    rest.items.map((x) => x.id),
    ids.slice(2),
  );
  t.is(rest.next_cursor, null);
  const byLead = (await runTool(tool, ctx, {
    campaign_id: c.id,
    lead_id: leads[0].leadId,
    status: 'active',
    step_id: c.stepIds[0],
  })) as Page;
  t.deepEqual(
    byLead.items.map((x) => [x.id, x.waiting.reason]),
    [[ids[0], 'waiting_for_window']],
  );
  const single = (await runTool(tool, ctx, { enrollment_id: ids[0] })) as Page;
  t.deepEqual(single.items, byLead.items);
  t.deepEqual(single.items[0], (await one(u, ids[0]!)).body);

  await t.throwsAsync(runTool(tool, ctx, {}), { instanceOf: ZodError });
  await t.throwsAsync(runTool(tool, ctx, { campaign_id: c.id, enrollment_id: ids[0] }), { instanceOf: ZodError });
  await t.throwsAsync(runTool(tool, ctx, { campaign_id: c.id, status: 'bogus' }), { instanceOf: ZodError });

  const stranger = await createOwner();
  for (const input of [{ campaign_id: c.id }, { enrollment_id: ids[0] }]) {
    const nf = await t.throwsAsync(runTool(tool, await ctxOf(stranger.id), input));
    t.true(nf instanceof AppError && nf.status === 404 && nf.code === 'not_found');
  }
  const other = await createTestApp(u, 'Other product');
  const limited = await createUser();
  await addTeamMember(u.id, limited.id, { appIds: [other.id] });
  for (const input of [{ campaign_id: c.id }, { enrollment_id: ids[0] }]) {
    const na = await t.throwsAsync(runTool(tool, await ctxOf(limited.id, u.id), input));
    t.true(na instanceof AppError && na.status === 403 && na.code === 'not_assigned');
  }
});
