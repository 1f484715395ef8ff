// Promotion of rejected profiles on the real dev server: one at a time (201, then the same lead 200),
// in bulk as the `promote-profiles:<agentId>:<operationId>` workflow (exact counts, no duplicates,
// progress readable mid-way and at the end, an idempotent repeat, continue-as-new), every documented
// code, cross-workspace 404s, the Operator tools, and the replay tests.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { DiscoveredLead } from '../../db/entities/DiscoveredLead.js';
import { DiscoveryAgent } from '../../db/entities/DiscoveryAgent.js';
import { RejectedProfile } from '../../db/entities/RejectedProfile.js';
import { DEMO_USER_ID, demoId, seedDemo } from '../../domain/demo/seed.js';
import { selectForPromotion } from '../../domain/agents/promotion.js';
import { findTool } from '../../domain/tools/index.js';
import { runTool } from '../../domain/tools/registry.js';
import { resolveActor } from '../../domain/workspaces.js';
import { AppError } from '../../domain/errors.js';
import { uuidv7 } from '../../lib/ids.js';
import { promotionWorkflowIds } from '../../lib/workflow-ids.js';
import type { PromoteProfilesInput, PromotionProgress } from '../../workflows/agents-promotion.js';
import { api, call, createTestApp, createUser, closeApi, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { addTeamMember } from '../helpers/db.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
test.after.always(closeApi);

interface Setup {
  u: TestUser;
  agentId: string;
  appId: string;
}

async function setup(name = 'Promo Owner'): Promise<Setup> {
  const u = await createOwner(name);
  const app = await createTestApp(u, 'Pipeline Tool');
  const agent = await call('POST', `/api/apps/${app.id}/agents`, {
    token: u.accessToken,
    body: { name: 'Outbound talk' },
  });
  return { u, agentId: agent.body.id, appId: app.id };
}

/** Inserts `n` rejections of one reason (as a run stores them), returns their ids in id order. */
async function reject(agentId: string, n: number, reason: string): Promise<string[]> {
  const e = await em();
  const agent = await e.findOneOrFail(DiscoveryAgent, agentId);
  const now = new Date();
  const rows = Array.from({ length: n }, (_, i) => {
    const handle = `p-${reason}-${i}-${randomUUID().slice(0, 8)}`;
    return {
      id: uuidv7(),
      workspace: agent.workspace.id,
      app: agent.app.id,
      agent: agent.id,
      runId: null,
      signalKey: 'outbound-talk',
      dedupeKey: `profile:pronet.example/in/${handle}`,
      candidate: {
        source: 'pronet',
        externalId: handle,
        profileUrl: `https://pronet.example/in/${handle}`,
        fullName: `Person ${i}`,
        firstName: 'Person',
        lastName: String(i),
        title: 'Office Manager',
        headline: null,
        seniority: 'entry',
        company: { name: 'Acme', domain: 'acme.example', size: '11-50', industry: 'Retail' },
        country: 'FR',
        email: null,
        currentEmployer: true,
        evidence: { kind: 'people_search', id: handle, text: 'profile', url: null, date: now.toISOString() },
        signalKey: handle.padEnd(32, '0').slice(0, 32),
      },
      score: 20,
      primaryReason: reason,
      reasons: [`${reason}: does not match the ICP`],
      createdAt: now,
    };
  });
  await e.insertMany(RejectedProfile, rows as never);
  return rows.map((r) => r.id).sort();
}

const status = (s: Setup, rawId: string) =>
  call('GET', `/api/agents/${s.agentId}/rejected-profiles/${rawId}/promote-status`, { token: s.u.accessToken });
const handleOf = async (workflowId: string) => (await api()).services.temporal.workflow.getHandle(workflowId);

async function until<T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test.serial('promote one: 201 with a new promoted lead, the same lead 200 again; promote-status says so', async (t) => {
  const s = await setup('Ada Promoter');
  const [rawId] = await reject(s.agentId, 1, 'title');
  const path = `/api/agents/${s.agentId}/rejected-profiles/${rawId}/promote`;
  const first = await call('POST', path, { token: s.u.accessToken });
  t.is(first.status, 201, first.text);
  t.like(first.body, {
    agent_id: s.agentId,
    app_id: s.appId,
    status: 'new',
    promoted: true,
    score: 20,
    full_name: 'Person 0',
    country: 'FR',
    company: 'Acme',
  });
  t.deepEqual(first.body.reasons, ['title: does not match the ICP', 'promoted by Ada Promoter']);
  const again = await call('POST', path, { token: s.u.accessToken });
  t.is(again.status, 200);
  t.is(again.body.id, first.body.id);
  const e = await em();
  t.is(await e.count(DiscoveredLead, { agent: s.agentId }), 1);
  const row = await e.findOneOrFail(RejectedProfile, rawId);
  t.is(row.promotedLeadId, first.body.id);
  t.truthy(row.promotedAt);
  const st = await status(s, rawId);
  t.is(st.status, 200, st.text);
  t.like(st.body, { raw_id: rawId, promoted: true, lead_id: first.body.id, operation: null });
  // Promoted profiles leave the rejection lists.
  t.is((await call('GET', `/api/agents/${s.agentId}/rejections`, { token: s.u.accessToken })).body.total, 0);
});

test.serial(
  'bulk by reason: 450 rejections promoted in batches with exact counts, progress mid-way and at the end, idempotent repeat; replays',
  async (t) => {
    const s = await setup();
    const ids = await reject(s.agentId, 450, 'title');
    await reject(s.agentId, 20, 'country');
    const { services } = await api();
    // Hold the last row (third batch) so the operation is caught after two batches.
    const blocker = new pg.Client({ connectionString: services.config.databaseUrl });
    await blocker.connect();
    try {
      await blocker.query('begin');
      // FOR KEY SHARE lets the API's selection (a no-key update) through but holds the batch's FOR UPDATE.
      await blocker.query('select id from rejected_profiles where id = $1 for key share', [ids.at(-1)]);
      const operationId = randomUUID();
      const r = await call('POST', `/api/agents/${s.agentId}/rejected-profiles/bulk-promote`, {
        token: s.u.accessToken,
        body: { reason: 'title', operation_id: operationId },
      });
      t.is(r.status, 202, r.text);
      t.deepEqual(r.body, {
        operation_id: operationId,
        workflow_id: `promote-profiles:${s.agentId}:${operationId}`,
        status: 'running',
        total: 450,
      });
      const mid = await until(
        'two batches',
        () => status(s, ids[0]),
        (x) => x.body.operation?.promoted === 400,
      );
      t.like(mid.body, {
        promoted: true,
        operation: { operation_id: operationId, status: 'running', total: 450, promoted: 400, skipped: 0 },
      });
      const pending = await status(s, ids.at(-1)!);
      t.like(pending.body, { promoted: false, lead_id: null, operation: { status: 'running', promoted: 400 } });
      t.like(await (await handleOf(r.body.workflow_id)).query<PromotionProgress>('progress'), {
        total: 450,
        promoted: 400,
        done: false,
      });
      await blocker.query('commit');

      const result = (await (await handleOf(r.body.workflow_id)).result()) as PromotionProgress;
      t.deepEqual(result, { total: 450, promoted: 450, skipped: 0, done: true });
      const end = await status(s, ids.at(-1)!);
      t.like(end.body, {
        promoted: true,
        operation: { operation_id: operationId, status: 'completed', total: 450, promoted: 450, skipped: 0 },
      });
      t.truthy(end.body.lead_id);

      const e = await em();
      t.is(await e.count(DiscoveredLead, { agent: s.agentId }), 450);
      const [{ n }] = await e
        .getConnection()
        .execute(`select count(distinct dedupe_key) as n from discovered_leads where agent_id = ?`, [s.agentId]);
      t.is(Number(n), 450, 'no duplicates');
      t.is(await e.count(RejectedProfile, { agent: s.agentId, primaryReason: 'title', promotedAt: null }), 0);
      t.is(await e.count(RejectedProfile, { agent: s.agentId, promoteOperationId: operationId }), 450);
      t.is(await e.count(DiscoveredLead, { agent: s.agentId, promoted: true, status: 'new' }), 450);
      const rejections = await call('GET', `/api/agents/${s.agentId}/rejections`, { token: s.u.accessToken });
      t.deepEqual(rejections.body, { total: 20, reasons: [{ reason: 'country', count: 20 }] });

      // The same operation id again: the same operation (200), nothing new.
      const repeat = await call('POST', `/api/agents/${s.agentId}/rejected-profiles/bulk-promote`, {
        token: s.u.accessToken,
        body: { reason: 'title', operation_id: operationId },
      });
      t.is(repeat.status, 200, repeat.text);
      t.deepEqual(repeat.body, {
        operation_id: operationId,
        workflow_id: r.body.workflow_id,
        status: 'completed',
        total: 450,
      });
      t.is(await (await em()).count(DiscoveredLead, { agent: s.agentId }), 450);

      t.true((await replayLive(services.temporal, r.body.workflow_id)) > 0);
      await replayFixture(services.temporal, 'promoteProfiles', r.body.workflow_id);
    } finally {
      await blocker.end();
    }
  },
);

test('bulk by ids: only this agent’s rejections count; already promoted ones are skipped; a profile promoted by hand leaves the operation', async (t) => {
  const s = await setup();
  const mine = await reject(s.agentId, 20, 'country');
  const other = await setup();
  const [foreign] = await reject(other.agentId, 1, 'country');
  t.is(
    (await call('POST', `/api/agents/${s.agentId}/rejected-profiles/${mine[0]}/promote`, { token: s.u.accessToken }))
      .status,
    201,
  );
  const r = await call('POST', `/api/agents/${s.agentId}/rejected-profiles/bulk-promote`, {
    token: s.u.accessToken,
    body: { ids: [...mine, foreign, randomUUID()] },
  });
  t.is(r.status, 202, r.text);
  t.is(r.body.total, 20);
  t.regex(r.body.workflow_id, new RegExp(`^promote-profiles:${s.agentId}:`));
  const result = (await (await handleOf(r.body.workflow_id)).result()) as PromotionProgress;
  t.deepEqual(result, { total: 20, promoted: 19, skipped: 1, done: true });
  const e = await em();
  t.is(await e.count(DiscoveredLead, { agent: s.agentId }), 20);
  t.is(await e.count(DiscoveredLead, { agent: other.agentId }), 0, 'another agent’s rejection is untouched');
  t.is((await e.findOneOrFail(RejectedProfile, foreign)).promotedAt, null);
  const hand = await status(s, mine[0]);
  t.like(hand.body, { promoted: true, operation: null }, 'promoted by hand, not by the operation');
  const bulk = await status(s, mine[1]);
  t.like(bulk.body, {
    promoted: true,
    operation: { operation_id: r.body.operation_id, status: 'completed', total: 20, promoted: 19, skipped: 1 },
  });
});

test('a very large selection continues as new, keeping its counts', async (t) => {
  const s = await setup();
  await reject(s.agentId, 130, 'seniority');
  const { services } = await api();
  const operationId = randomUUID();
  const e = await em();
  const { total, skipped } = await selectForPromotion(e, s.agentId, operationId, { reason: 'seniority' });
  t.is(total, 130);
  const input: PromoteProfilesInput = {
    agentId: s.agentId,
    workspaceId: 'test',
    operationId,
    by: 'test',
    total,
    promoted: 0,
    skipped,
    cursor: null,
    batchSize: 20,
    batchesPerRun: 2,
  };
  const handle = await services.temporal.workflow.start('promoteProfiles', {
    taskQueue: services.config.temporal.taskQueue,
    workflowId: promotionWorkflowIds.bulk(s.agentId, operationId),
    args: [input],
  });
  t.deepEqual(await handle.result(), { total: 130, promoted: 130, skipped: 0, done: true });
  const first = await services.temporal.workflow
    .getHandle(handle.workflowId, handle.firstExecutionRunId)
    .fetchHistory();
  t.truthy(first.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes, 'the first run continued as new');
  t.is(await (await em()).count(DiscoveredLead, { agent: s.agentId }), 130);
});

test('codes: 400 invalid bodies and ids, 404 for another agent’s or workspace’s ids on every route, 403 not_assigned and demo_read_only', async (t) => {
  const s = await setup();
  const [rawId] = await reject(s.agentId, 1, 'title');
  const base = `/api/agents/${s.agentId}/rejected-profiles`;
  const tok = { token: s.u.accessToken };
  for (const body of [
    {},
    { ids: [rawId], reason: 'title' },
    { ids: [] },
    { ids: Array.from({ length: 1001 }, () => randomUUID()) },
    { reason: '' },
    { ids: ['nope'] },
    { reason: 'title', operation_id: 'x' },
  ]) {
    const r = await call('POST', `${base}/bulk-promote`, { ...tok, body });
    t.is(r.status, 400, JSON.stringify(body).slice(0, 80));
    t.is(r.body.error.code, 'invalid_body');
  }
  t.is((await call('POST', `${base}/nope/promote`, tok)).body.error.code, 'invalid_id');
  t.is((await call('GET', `${base}/nope/promote-status`, tok)).body.error.code, 'invalid_id');
  t.is((await call('POST', `${base}/${randomUUID()}/promote`, tok)).status, 404);
  t.is((await call('GET', `${base}/${randomUUID()}/promote-status`, tok)).status, 404);

  // Another agent of the same workspace: its rawId is not found under this agent.
  const agent2 = (await call('POST', `/api/apps/${s.appId}/agents`, { ...tok, body: { name: 'second' } })).body;
  t.is((await call('POST', `/api/agents/${agent2.id}/rejected-profiles/${rawId}/promote`, tok)).status, 404);
  t.is((await call('GET', `/api/agents/${agent2.id}/rejected-profiles/${rawId}/promote-status`, tok)).status, 404);

  const stranger = await createOwner();
  for (const [method, path, body] of [
    ['POST', `${base}/${rawId}/promote`, undefined],
    ['GET', `${base}/${rawId}/promote-status`, undefined],
    ['POST', `${base}/bulk-promote`, { ids: [rawId] }],
    ['POST', `/api/agents/${s.agentId}/preview`, { signal: { kind: 'people_search' } }],
  ] as [string, string, unknown][]) {
    const r = await call(method, path, { token: stranger.accessToken, body });
    t.is(r.status, 404, `${method} ${path}`);
    t.is(r.body.error.code, 'not_found');
  }
  t.is((await (await em()).findOneOrFail(RejectedProfile, rawId)).promotedAt, null, 'nothing promoted by the stranger');

  const other = await createTestApp(s.u, 'other');
  const member = await createUser();
  await addTeamMember(s.u.id, member.id, { appIds: [other.id] });
  const asMember = { token: member.accessToken, headers: { 'x-acting-as': s.u.id } };
  for (const [method, path, body] of [
    ['POST', `${base}/${rawId}/promote`, undefined],
    ['GET', `${base}/${rawId}/promote-status`, undefined],
    ['POST', `${base}/bulk-promote`, { reason: 'title' }],
  ] as [string, string, unknown][]) {
    const r = await call(method, path, { ...asMember, body });
    t.is(r.status, 403, `${method} ${path}`);
    t.is(r.body.error.code, 'not_assigned');
  }

  await seedDemo(await em());
  const demoUser = await createUser();
  await call('POST', '/api/me/workspaces/demo/join', { token: demoUser.accessToken });
  const demo = { token: demoUser.accessToken, headers: { 'x-acting-as': DEMO_USER_ID } };
  const demoBase = `/api/agents/${demoId(0x300)}/rejected-profiles`;
  for (const [path, body] of [
    [`${demoBase}/${randomUUID()}/promote`, undefined],
    [`${demoBase}/bulk-promote`, { reason: 'title' }],
  ] as [string, unknown][]) {
    const r = await call('POST', path, { ...demo, body });
    t.is(r.status, 403, path);
    t.is(r.body.error.code, 'demo_read_only');
  }
  t.is((await call('GET', `${demoBase}/${randomUUID()}/promote-status`, demo)).status, 404);
});

test('Operator tools: promote_rejected_profile (change) and preview_signal (read) run as the caller', async (t) => {
  const { services } = await api();
  const s = await setup();
  const [rawId] = await reject(s.agentId, 1, 'title');
  t.is(findTool('promote_rejected_profile')?.risk, 'change');
  t.is(findTool('preview_signal')?.risk, 'read');
  const e = services.orm.em.fork();
  const ctx = {
    em: e,
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(e as never, { userId: s.u.id, kind: 'session' }, undefined),
  };
  const out = (await runTool(findTool('promote_rejected_profile')!, ctx, { agent_id: s.agentId, raw_id: rawId })) as {
    lead_id: string;
    created: boolean;
  };
  t.true(out.created);
  const again = (await runTool(findTool('promote_rejected_profile')!, ctx, { agent_id: s.agentId, raw_id: rawId })) as {
    lead_id: string;
    created: boolean;
  };
  t.deepEqual(again, { ...out, created: false });
  await call('PUT', `/api/agents/${s.agentId}/sources/pronet`, { token: s.u.accessToken, body: { enabled: true } });
  const preview = (await runTool(findTool('preview_signal')!, ctx, {
    agent_id: s.agentId,
    signal: { kind: 'people_search', keywords: ['sales'] },
    limit: 3,
  })) as { candidates: unknown[] };
  t.is(preview.candidates.length, 3);
  const other = await createOwner();
  const otherEm = services.orm.em.fork();
  const otherCtx = {
    em: otherEm,
    jobs: services.jobs,
    config: services.config,
    providers: services,
    actor: await resolveActor(otherEm as never, { userId: other.id, kind: 'session' }, undefined),
  };
  const nf = await t.throwsAsync(
    runTool(findTool('promote_rejected_profile')!, otherCtx, { agent_id: s.agentId, raw_id: rawId }),
  );
  t.true(nf instanceof AppError && nf.status === 404);
});
