// Agents' Temporal Schedules follow changes made from any process: the Operator's set_agent_status
// runs in the worker (a confirmed turn's activity), and the Schedule `schedule:discovery:<agentId>`
// is created, paused, resumed and deleted from there. A sync that was lost converges: on the next
// read of next-launches (a missing Schedule of an active agent is created) and on the next scheduled
// run (a Schedule still running for a paused agent is paused). docs/discovery.md, "Schedules".
//
// Agent Schedules are not behind TEMPORAL_SCHEDULES (that switch only keeps the worker from creating
// the recurring maintenance Schedules on a test queue): they always target this run's task queue,
// and each test deletes its own at the end.
import test, { type ExecutionContext } from 'ava';
import { ScheduleNotFoundError, type ScheduleDescription } from '@temporalio/client';
import { discoveryWorkflowIds } from '../../lib/workflow-ids.js';
import { api, call, closeApi, createTestApp, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { postSse } from '../helpers/sse.js';
test.after.always(closeApi);

const HOUR_MS = 3_600_000;

async function setup(t: ExecutionContext) {
  const u = await createOwner();
  const app = await createTestApp(u);
  const agent = await call('POST', `/api/apps/${app.id}/agents`, {
    token: u.accessToken,
    body: { name: 'Scout', config: { schedule: 'hourly' } },
  });
  t.is(agent.status, 201, agent.text);
  const signals = await call('PUT', `/api/agents/${agent.body.id}/signals`, {
    token: u.accessToken,
    body: { signals: [{ key: 'talk', kind: 'people_search', name: 'Sales leaders', keywords: ['sales'] }] },
  });
  t.is(signals.status, 200, signals.text);
  const { services } = await api();
  const handle = services.temporal.schedule.getHandle(discoveryWorkflowIds.schedule(agent.body.id));
  t.teardown(() => handle.delete().catch(() => {}));
  return { u, appId: app.id, agentId: agent.body.id as string, handle };
}

type Handle = Awaited<ReturnType<typeof setup>>['handle'];

/** The Schedule's description, or null when there is none. */
const describe = (handle: Handle): Promise<ScheduleDescription | null> =>
  handle.describe().catch((err) => {
    if (err instanceof ScheduleNotFoundError) return null;
    throw err;
  });

/** Polls until `ok` holds (the scheduler applies an accepted change within milliseconds); returns the last description. */
async function until(
  handle: Handle,
  ok: (d: ScheduleDescription | null) => boolean,
  what: string,
  ms = 10_000,
): Promise<ScheduleDescription | null> {
  const deadline = Date.now() + ms;
  for (;;) {
    const d = await describe(handle);
    if (ok(d)) return d;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(d?.state ?? null)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One Operator exchange: the message proposes set_agent_status, the user confirms, the worker runs it. */
async function operatorSetsStatus(
  t: ExecutionContext,
  s: { u: TestUser; appId: string; agentId: string },
  status: string,
  beforeConfirm?: () => Promise<void>,
): Promise<void> {
  const first = await postSse('/api/agent/messages', s.u.accessToken, {
    app_id: s.appId,
    message: `set agent status ${s.agentId} status: ${status}`,
  });
  const names = first.events.map((e) => e.event);
  t.is(names.at(-1), 'approval_required', names.join(','));
  const approval = first.events.at(-1)!.data;
  t.like(approval, { name: 'set_agent_status', risk: 'change', args: { agent_id: s.agentId, status } });
  await beforeConfirm?.();
  const confirmed = await postSse('/api/agent/messages', s.u.accessToken, {
    app_id: s.appId,
    thread_id: approval.thread_id,
    confirmation_action: 'confirm',
    confirmation_token: approval.confirmation_token,
  });
  t.is(confirmed.events.at(-1)?.event, 'done', confirmed.events.map((e) => e.event).join(','));
  const result = confirmed.events.find((e) => e.event === 'tool_result')!.data;
  t.like(
    result,
    { name: 'set_agent_status', status: 'ok', result: { id: s.agentId, status, simulated: false } },
    JSON.stringify(result),
  );
}

test('the Operator activates, pauses, resumes and archives an agent from the worker; its Schedule follows each time', async (t) => {
  const s = await setup(t);
  const queue = process.env.TEMPORAL_TASK_QUEUE;

  await operatorSetsStatus(t, s, 'active', async () => {
    // Proposed, not confirmed yet: nothing changed, no Schedule.
    t.like((await call('GET', `/api/agents/${s.agentId}`, { token: s.u.accessToken })).body, { status: 'draft' });
    t.is(await describe(s.handle), null);
  });
  const created = await until(s.handle, (d) => d !== null && !d.state.paused, 'the Schedule created, running');
  t.like(created!.action, { type: 'startWorkflow', workflowType: 'scheduledDiscovery', taskQueue: queue });
  t.like((created!.action as { args: unknown[] }).args[0], { agentId: s.agentId });
  t.is(created!.spec.intervals?.[0]?.every, HOUR_MS);
  t.true(created!.info.nextActionTimes.length > 0);
  t.like((await call('GET', `/api/agents/${s.agentId}`, { token: s.u.accessToken })).body, { status: 'active' });

  await operatorSetsStatus(t, s, 'paused');
  const paused = await until(s.handle, (d) => d?.state.paused === true, 'the Schedule paused');
  t.is(paused!.state.note, 'agent paused');
  t.like((await call('GET', `/api/agents/${s.agentId}/next-launches`, { token: s.u.accessToken })).body, {
    scheduled: true,
    paused: true,
    next_launches: [],
  });

  await operatorSetsStatus(t, s, 'active');
  const resumed = await until(s.handle, (d) => d?.state.paused === false, 'the Schedule resumed');
  t.is(resumed!.state.note, 'agent active');

  await operatorSetsStatus(t, s, 'archived');
  await until(s.handle, (d) => d === null, 'the Schedule deleted');
});

test('a lost sync converges: next-launches creates the missing Schedule of an active agent, and the next scheduled run pauses the Schedule of a paused agent', async (t) => {
  const s = await setup(t);
  t.is(
    (await call('PUT', `/api/agents/${s.agentId}`, { token: s.u.accessToken, body: { status: 'active' } })).status,
    200,
  );
  await until(s.handle, (d) => d !== null && !d.state.paused, 'the Schedule created');

  // The Schedule call after a commit failed (here: the Schedule is removed behind the agent's back).
  await s.handle.delete();
  await until(s.handle, (d) => d === null, 'the Schedule gone');
  const read = await call('GET', `/api/agents/${s.agentId}/next-launches`, { token: s.u.accessToken });
  t.like(read.body, { scheduled: true, paused: false, interval: 'hourly' });
  t.true(read.body.next_launches.length > 0);
  t.false((await describe(s.handle))!.state.paused);

  // The agent is paused by a write that never reached Temporal: its Schedule still runs. The next
  // scheduled run plans nothing and pauses the Schedule.
  await (await em()).execute(`update discovery_agents set status = 'paused' where id = ?`, [s.agentId]);
  await s.handle.trigger();
  const paused = await until(
    s.handle,
    (d) => d?.state.paused === true,
    'the Schedule paused by the scheduled run',
    30_000,
  );
  t.is(paused!.state.note, 'agent paused');
  t.is(
    (await (await em()).execute(`select count(*)::int as n from discovery_runs where agent_id = ?`, [s.agentId]))[0].n,
    0,
    'no run was planned',
  );
});
