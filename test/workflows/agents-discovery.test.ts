// Discovery runs on the real Temporal dev server over the local corpus: a launch produces
// discovered leads and rejections with reasons, the funnel adds up, a repeated launch id
// duplicates nothing, max_signals and require_current_employer are honoured, cancelling keeps
// counts, and the workflow replays.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { DiscoveredLead } from '../../db/entities/DiscoveredLead.js';
import { RejectedProfile } from '../../db/entities/RejectedProfile.js';
import { DiscoveryRun } from '../../db/entities/DiscoveryRun.js';
import { discoveryWorkflowIds } from '../../lib/workflow-ids.js';
import { api, call, createTestApp, closeApi, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
import { waitFor } from '../../scripts/children.js';
test.after.always(closeApi);

interface Setup {
  u: TestUser;
  agentId: string;
  signalId: string;
}

async function setup(
  opts: { keywords?: string[]; maxSignals?: number | null; requireCurrentEmployer?: boolean; kind?: string } = {},
): Promise<Setup> {
  const u = await createOwner();
  const app = await createTestApp(u, 'Pipeline Tool');
  await call('PUT', `/api/apps/${app.id}`, {
    token: u.accessToken,
    body: {
      icp_description: 'Revenue leaders at software companies',
      icp_filters: { titles: ['Chief Revenue Officer', 'Account Executive'], keywords: ['outbound', 'cold email'] },
    },
  });
  const agent = await call('POST', `/api/apps/${app.id}/agents`, {
    token: u.accessToken,
    body: {
      name: 'Outbound talk',
      max_signals: opts.maxSignals ?? null,
      require_current_employer: opts.requireCurrentEmployer ?? false,
    },
  });
  const kind = opts.kind ?? 'post_keywords';
  const signals = await call('PUT', `/api/agents/${agent.body.id}/signals`, {
    token: u.accessToken,
    body: {
      signals: [
        {
          key: 'outbound-talk',
          kind,
          name: 'Talks about outbound',
          keywords: opts.keywords ?? ['cold email', 'outbound'],
        },
      ],
    },
  });
  for (const source of ['newsforum', 'pronet'])
    await call('PUT', `/api/agents/${agent.body.id}/sources/${source}`, {
      token: u.accessToken,
      body: { enabled: true },
    });
  return { u, agentId: agent.body.id, signalId: signals.body[0].id };
}

async function launch(s: Setup, launchId?: string) {
  return call('POST', `/api/agents/${s.agentId}/signals/${s.signalId}/launch`, {
    token: s.u.accessToken,
    body: launchId ? { launch_id: launchId } : {},
  });
}

const result = async (agentId: string, runId: string) =>
  (await api()).services.temporal.workflow.getHandle(discoveryWorkflowIds.run(agentId, runId)).result();

test.serial(
  'a launch on the local corpus produces discovered leads and rejections with reasons; the funnel adds up; replays',
  async (t) => {
    const s = await setup();
    const r = await launch(s);
    t.is(r.status, 202, r.text);
    t.like(r.body, { status: 'running', agent_id: s.agentId, signal_keys: ['outbound-talk'] });
    t.is(r.body.workflow_id, `discovery-run:${s.agentId}:${r.body.id}`);
    const totals = (await result(s.agentId, r.body.id)) as {
      candidates: number;
      qualified: number;
      rejected: number;
      duplicates: number;
    };
    t.true(totals.candidates > 0);
    t.true(totals.qualified > 0, 'the corpus has people matching the ICP');
    t.true(totals.rejected > 0, 'and people who do not');
    t.is(totals.candidates, totals.qualified + totals.rejected + totals.duplicates);

    const e = await em();
    t.is(await e.count(DiscoveredLead, { agent: s.agentId }), totals.qualified);
    t.is(await e.count(RejectedProfile, { agent: s.agentId }), totals.rejected);
    const lead = await e.findOneOrFail(DiscoveredLead, { agent: s.agentId }, { orderBy: { score: 'desc' } });
    t.true(lead.score >= 60);
    t.is(lead.signalKey, 'outbound-talk');
    t.true(lead.reasons.length > 0);
    const run = await call('GET', '/api/me/recent-signal-runs', { token: s.u.accessToken });
    t.like(run.body.items[0], { id: r.body.id, status: 'completed', qualified: totals.qualified });

    const funnel = await call('GET', `/api/agents/${s.agentId}/discovery-funnel`, { token: s.u.accessToken });
    t.is(funnel.status, 200, funnel.text);
    const c = funnel.body.cohort;
    t.is(c.candidates, c.qualified + c.rejected + c.pending);
    t.is(c.qualified, totals.qualified);
    t.is(c.rejected, totals.rejected);
    t.is(c.pending, 0);
    t.is(funnel.body.window_days, 30);
    t.deepEqual(funnel.body.by_signal, [
      { signal_key: 'outbound-talk', qualified: totals.qualified, rejected: totals.rejected },
    ]);
    t.like(funnel.body.current, { discovered_leads: totals.qualified, list_leads: 0, in_campaigns: 0 });

    const rejections = await call('GET', `/api/agents/${s.agentId}/rejections`, { token: s.u.accessToken });
    t.is(rejections.body.total, totals.rejected);
    t.is(
      rejections.body.reasons.reduce((n: number, x: any) => n + x.count, 0),
      totals.rejected,
    );
    const profiles = await call(
      'GET',
      `/api/agents/${s.agentId}/rejected-profiles?limit=5&reason=${encodeURIComponent(rejections.body.reasons[0].reason)}`,
      { token: s.u.accessToken },
    );
    t.is(profiles.status, 200, profiles.text);
    t.true(profiles.body.items.length > 0);
    t.true(
      profiles.body.items.every((p: any) => p.reason === rejections.body.reasons[0].reason && p.reasons.length > 0),
    );

    const { services } = await api();
    t.true((await replayLive(services.temporal, r.body.workflow_id)) > 0);
    await replayFixture(services.temporal, 'discoveryRun', r.body.workflow_id);
  },
);

test.serial(
  'a repeated launch id is idempotent; a new launch finds everyone already known and duplicates nothing',
  async (t) => {
    const s = await setup();
    const launchId = randomUUID();
    const first = await launch(s, launchId);
    t.is(first.status, 202);
    const again = await launch(s, launchId);
    t.is(again.status, 200);
    t.is(again.body.id, first.body.id);
    const totals = (await result(s.agentId, first.body.id)) as { qualified: number; rejected: number };
    const e = await em();
    t.is(await e.count(DiscoveryRun, { agent: s.agentId }), 1);
    const leads = await e.count(DiscoveredLead, { agent: s.agentId });
    t.is(leads, totals.qualified);
    // A later launch after completion with the same id: still the same run, nothing new.
    t.is((await launch(s, launchId)).status, 200);
    const second = await launch(s);
    const again2 = (await result(s.agentId, second.body.id)) as {
      candidates: number;
      qualified: number;
      rejected: number;
      duplicates: number;
    };
    t.is(again2.qualified, 0);
    t.is(again2.rejected, 0);
    t.is(again2.duplicates, again2.candidates);
    t.is(await (await em()).count(DiscoveredLead, { agent: s.agentId }), leads);
  },
);

test.serial(
  'launch ids are the workspace’s own: another agent of the workspace given one is 409 launch_id_in_use; another workspace’s same id is its own run',
  async (t) => {
    const first = await setup({ maxSignals: 1, kind: 'people_search', keywords: ['outbound'] });
    const launchId = randomUUID();
    const launched = await launch(first, launchId);
    t.is(launched.status, 202, launched.text);
    t.not(launched.body.id, launchId, 'the run has an id of its own');
    await result(first.agentId, launched.body.id);
    // Another agent of the same workspace given that id: 409, no run, no workflow.
    const app = await createTestApp(first.u, 'Second product');
    const agent = await call('POST', `/api/apps/${app.id}/agents`, {
      token: first.u.accessToken,
      body: { name: 'Second agent' },
    });
    const signals = await call('PUT', `/api/agents/${agent.body.id}/signals`, {
      token: first.u.accessToken,
      body: {
        signals: [
          { key: 'outbound-talk', kind: 'people_search', name: 'Talks about outbound', keywords: ['outbound'] },
        ],
      },
    });
    await call('PUT', `/api/agents/${agent.body.id}/sources/pronet`, {
      token: first.u.accessToken,
      body: { enabled: true },
    });
    const sibling: Setup = { u: first.u, agentId: agent.body.id, signalId: signals.body[0].id };
    const r = await launch(sibling, launchId);
    t.is(r.status, 409, r.text);
    t.is(r.body.error.code, 'launch_id_in_use');
    const e = await em();
    t.is(await e.count(DiscoveryRun, { agent: sibling.agentId }), 0);
    // Another workspace's launch with the same id neither collides with nor reveals the first: it is its own run.
    const stranger = await setup({ maxSignals: 1, kind: 'people_search', keywords: ['outbound'] });
    const theirs = await launch(stranger, launchId);
    t.is(theirs.status, 202, theirs.text);
    t.not(theirs.body.id, launched.body.id);
    await result(stranger.agentId, theirs.body.id);
    t.is((await launch(stranger, launchId)).body.id, theirs.body.id, 'and repeating it finds that run');
    const run = await (await em()).findOneOrFail(DiscoveryRun, launched.body.id, { refresh: true });
    t.like(run, { launchId });
    t.is(run.agent.id, first.agentId, 'the first run stays the first agent’s');
    t.is(await (await em()).count(DiscoveryRun, { launchId }), 2);
  },
);

test.serial(
  'max_signals stops a run; require_current_employer rejects former employers without a model call',
  async (t) => {
    const capped = await setup({ maxSignals: 3, kind: 'people_search', keywords: ['outbound'] });
    const r = await launch(capped);
    const totals = (await result(capped.agentId, r.body.id)) as { qualified: number };
    t.is(totals.qualified, 3);
    t.is(await (await em()).count(DiscoveredLead, { agent: capped.agentId }), 3);

    // The same search with and without require_current_employer: the strict one never sees people at a
    // former employer (the source filters them; the run rejects any a source lets through).
    const loose = await setup({ kind: 'people_search', keywords: ['outbound'] });
    const strict = await setup({ requireCurrentEmployer: true, kind: 'people_search', keywords: ['outbound'] });
    const [a, b] = await Promise.all([launch(loose), launch(strict)]);
    const [looseTotals, strictTotals] = (await Promise.all([
      result(loose.agentId, a.body.id),
      result(strict.agentId, b.body.id),
    ])) as { candidates: number }[];
    t.true(strictTotals.candidates > 0);
    t.true(strictTotals.candidates < looseTotals.candidates, `${strictTotals.candidates} < ${looseTotals.candidates}`);
  },
);

test.serial('cancelling a run stops it cleanly: status canceled, counts kept', async (t) => {
  const s = await setup({ kind: 'people_search', keywords: [] });
  const r = await launch(s);
  const handle = (await api()).services.temporal.workflow.getHandle(r.body.workflow_id);
  await handle.cancel();
  await t.throwsAsync(handle.result());
  const e = await em();
  const run = await e.findOneOrFail(DiscoveryRun, r.body.id, { refresh: true });
  t.is(run.status, 'canceled');
  t.is(await e.count(DiscoveredLead, { agent: s.agentId }), run.qualified);
  t.truthy(run.finishedAt);
});

test('launch rules: no enabled source is 400, an archived agent is 409, another workspace’s agent or signal is 404', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const agent = (await call('POST', `/api/apps/${app.id}/agents`, { token: u.accessToken, body: { name: 'x' } })).body;
  const sig = (
    await call('PUT', `/api/agents/${agent.id}/signals`, {
      token: u.accessToken,
      body: { signals: [{ kind: 'hiring', name: 'Hiring' }] },
    })
  ).body[0];
  const path = `/api/agents/${agent.id}/signals/${sig.id}/launch`;
  const none = await call('POST', path, { token: u.accessToken, body: {} });
  t.is(none.status, 400);
  t.is(none.body.error.code, 'no_enabled_source');
  t.is(
    (await call('POST', `/api/agents/${agent.id}/signals/${randomUUID()}/launch`, { token: u.accessToken, body: {} }))
      .status,
    404,
  );
  await call('PUT', `/api/agents/${agent.id}`, { token: u.accessToken, body: { status: 'archived' } });
  const archived = await call('POST', path, { token: u.accessToken, body: {} });
  t.is(archived.status, 409);
  t.is(archived.body.error.code, 'agent_archived');
  const stranger = await createOwner();
  for (const [method, p] of [
    ['POST', path],
    ['GET', `/api/agents/${agent.id}/discovery-funnel`],
    ['GET', `/api/agents/${agent.id}/rejections`],
    ['GET', `/api/agents/${agent.id}/rejected-profiles`],
  ]) {
    const r = await call(method, p, { token: stranger.accessToken, body: method === 'POST' ? {} : undefined });
    t.is(r.status, 404, `${method} ${p}`);
  }
  t.is(
    (await call('GET', `/api/agents/${agent.id}/discovery-funnel`, { token: u.accessToken })).body.cohort.candidates,
    0,
  );
});

test.serial(
  'an active agent has a schedule; paused it does not fire; archived or deleted it has none; scheduled runs replay',
  async (t) => {
    const s = await setup();
    const { services } = await api();
    const put = (body: object) => call('PUT', `/api/agents/${s.agentId}`, { token: s.u.accessToken, body });
    // Schedule changes reach Temporal's scheduler asynchronously (within milliseconds, slower on a loaded
    // machine): poll until the expected state (up to 60 s), then return the last answer for the assertions.
    const next = async (until: (b: any) => boolean = () => true) => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const body = (await call('GET', `/api/agents/${s.agentId}/next-launches`, { token: s.u.accessToken })).body;
        if (until(body) || Date.now() > deadline) return body;
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    t.like(await next(), { scheduled: false, next_launches: [] }, 'a draft agent has no schedule');
    t.is((await put({ status: 'active', config: { schedule: 'hourly' } })).status, 200);
    const active = await next((b) => b.scheduled && b.next_launches.length > 0);
    t.like(active, { scheduled: true, paused: false, interval: 'hourly' });
    t.true(active.next_launches.length > 0);
    t.true(new Date(active.next_launches[0]).getTime() - Date.now() <= 3600_000);

    // A scheduled launch: the schedule's own workflow plans from the agent as it is and runs a child.
    const schedule = services.temporal.schedule.getHandle(discoveryWorkflowIds.schedule(s.agentId));
    await schedule.trigger();
    const e = await em();
    const completedRun = () =>
      e.fork().findOne(DiscoveryRun, { agent: s.agentId, trigger: 'schedule', status: 'completed' });
    await waitFor('the triggered schedule to run discovery', async () => (await completedRun()) !== null, 120_000);
    const run = await completedRun();
    t.truthy(run, 'the triggered schedule ran discovery');
    const recent = await call('GET', '/api/me/recent-signal-runs', { token: s.u.accessToken });
    t.is(recent.body.items[0].trigger, 'schedule');
    await replayLive(services.temporal, discoveryWorkflowIds.run(s.agentId, run!.id));

    t.is((await put({ status: 'paused' })).status, 200);
    t.like(await next((b) => b.paused), { scheduled: true, paused: true, next_launches: [] }, 'paused after pause');
    t.true((await schedule.describe()).state.paused);
    // Even if it fired, a paused agent plans nothing.
    const direct = await services.temporal.workflow.execute('scheduledDiscovery', {
      taskQueue: process.env.TEMPORAL_TASK_QUEUE!,
      workflowId: `${discoveryWorkflowIds.scheduled(s.agentId)}-test-${randomUUID()}`,
      args: [{ agentId: s.agentId, workspaceId: (await e.fork().findOneOrFail(DiscoveryRun, run!.id)).workspace.id }],
    });
    t.is(direct, null);
    t.is(await e.fork().count(DiscoveryRun, { agent: s.agentId }), 1);
    const firstDescribe = await services.temporal.workflow.list({
      query: `WorkflowType = 'scheduledDiscovery' AND WorkflowId STARTS_WITH '${discoveryWorkflowIds.scheduled(s.agentId)}-test-'`,
    });
    for await (const wf of firstDescribe) await replayFixture(services.temporal, 'scheduledDiscovery', wf.workflowId);

    t.is((await put({ status: 'archived' })).status, 200);
    t.like(await next((b) => !b.scheduled), { scheduled: false });
    await put({ status: 'paused' });
    t.like(await next((b) => b.scheduled), { scheduled: true, paused: true }, 'restored paused');
    t.is((await call('DELETE', `/api/agents/${s.agentId}`, { token: s.u.accessToken })).status, 204);
    await t.throwsAsync(schedule.describe());
  },
);
