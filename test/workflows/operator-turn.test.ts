// The Operator on the real dev server with the local model: streamed turns as workflows, read tools at
// once, risky tools behind a confirmation (exactly once; cancel leaves nothing), every documented code
// of POST /api/agent/messages and the capabilities route, cost records and credits, replay tests.
import test from 'ava';
import { AgentConfirmation } from '../../db/entities/AgentConfirmation.js';
import { AgentTurn } from '../../db/entities/AgentTurn.js';
import { CreditLedgerEntry } from '../../db/entities/CreditLedgerEntry.js';
import { creditBalance, debitCredits } from '../../domain/billing/credits.js';
import { rememberFacts } from '../../domain/operator/memory.js';
import { appendMessages } from '../../domain/operator/threads.js';
import { buildContext } from '../../domain/operator/turns.js';
import { resolveActor } from '../../domain/workspaces.js';
import { uuidv7 } from '../../lib/ids.js';
import { operatorWorkflowIds } from '../../lib/workflow-ids.js';
import { api, call, createTestApp, createUser, closeApi, type TestUser } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { failInserts } from '../helpers/db.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
import { postSse } from '../helpers/sse.js';
test.after.always(closeApi);

const auth = (u: TestUser) => ({ token: u.accessToken });

async function setup(owner?: TestUser) {
  const u = owner ?? (await createOwner());
  const app = await createTestApp(u);
  const agent = await call('POST', `/api/apps/${app.id}/agents`, { ...auth(u), body: { name: 'Scout' } });
  return { u, appId: app.id, agentId: agent.body.id as string, workspaceId: await workspaceIdOf(u.id) };
}

async function insertLead(s: { workspaceId: string; appId: string; agentId: string }): Promise<string> {
  const id = uuidv7();
  await (
    await em()
  ).execute(
    `insert into discovered_leads (id, workspace_id, app_id, agent_id, signal_key, evidence_key, source, external_id, dedupe_key, profile_url,
       full_name, evidence, score, reasons, status, promoted, created_at, updated_at)
     values (?, ?, ?, ?, 'sig', ?, 'pronet', ?, ?, ?, 'Ada Lovelace', '{}', 80, '[]', 'new', false, now(), now())`,
    [id, s.workspaceId, s.appId, s.agentId, id.slice(0, 32), id, `k:${id}`, `https://pronet.example/in/${id}`],
  );
  return id;
}

const names = (r: { events: { event: string }[] }) => r.events.map((e) => e.event);

test('a turn streams text, runs a read tool at once and completes with its cost recorded and one credit debited', async (t) => {
  const s = await setup();
  await insertLead(s);
  const before = await creditBalance(await em(), s.workspaceId);
  const r = await postSse('/api/agent/messages', s.u.accessToken, {
    app_id: s.appId,
    message: 'list discovered leads please',
  });
  t.is(r.status, 200);
  t.regex(r.contentType ?? '', /^text\/event-stream/);
  const ev = names(r);
  t.is(ev[0], 'turn');
  t.true(ev.includes('message_delta'));
  t.is(ev.at(-1), 'done', ev.join(','));
  const call1 = r.events.find((e) => e.event === 'tool_call')!;
  t.like(call1.data, { name: 'list_discovered_leads', risk: 'read', needs_confirmation: false });
  const result = r.events.find((e) => e.event === 'tool_result')!;
  t.like(result.data, { name: 'list_discovered_leads', status: 'ok' });
  t.is((result.data.result as unknown[]).length, 1);
  const { turn_id, thread_id, workflow_id } = r.events[0].data;
  t.is(workflow_id, operatorWorkflowIds.turn(thread_id, turn_id));
  const done = r.events.at(-1)!.data;
  t.like(done, { turn_id, credits: 1 });
  t.true(done.usage.model_calls >= 2);

  const turn = await (await em()).findOneOrFail(AgentTurn, turn_id);
  t.like(turn, { status: 'completed', credits: 1 });
  t.is(await creditBalance(await em(), s.workspaceId), before - 1);
  t.is(await (await em()).count(CreditLedgerEntry, { idempotencyKey: `operator-turn:${turn_id}` }), 1);

  // The history: user, assistant (tool call), tool, assistant.
  const history = await call('GET', `/api/agent/threads/${thread_id}/messages`, auth(s.u));
  t.is(history.status, 200);
  t.deepEqual(
    history.body.map((m: { role: string }) => m.role),
    ['user', 'assistant', 'tool', 'assistant'],
  );
  t.deepEqual(
    history.body.map((m: { seq: number }) => m.seq),
    [1, 2, 3, 4],
  );
  await replayLive((await api()).services.temporal, workflow_id);
  await replayFixture((await api()).services.temporal, 'operatorTurn', workflow_id);
});

test('a risky tool waits for confirmation; confirm runs it exactly once, a second confirm is 409', async (t) => {
  const s = await setup();
  const lead = await insertLead(s);
  const first = await postSse('/api/agent/messages', s.u.accessToken, {
    app_id: s.appId,
    message: `reject discovered lead ${lead} reason: "not a fit"`,
  });
  t.is(names(first).at(-1), 'approval_required', names(first).join(','));
  const approval = first.events.at(-1)!.data;
  t.like(approval, {
    name: 'reject_discovered_lead',
    risk: 'change',
    args: { discovered_lead_id: lead, reason: 'not a fit' },
  });
  t.regex(approval.confirmation_token, /^opc_/);
  // Nothing happened yet.
  t.is((await call('GET', `/api/discovered-leads/${lead}`, auth(s.u))).body.status, 'new');

  const confirmed = await postSse('/api/agent/messages', s.u.accessToken, {
    app_id: s.appId,
    thread_id: approval.thread_id,
    confirmation_action: 'confirm',
    confirmation_token: approval.confirmation_token,
  });
  t.is(names(confirmed)[0], 'turn');
  t.true(confirmed.events[0].data.resumed);
  t.is(names(confirmed).at(-1), 'done', names(confirmed).join(','));
  const tr = confirmed.events.find((e) => e.event === 'tool_result')!.data;
  t.like(tr, { name: 'reject_discovered_lead', status: 'ok' }, JSON.stringify(tr));
  t.like((await call('GET', `/api/discovered-leads/${lead}`, auth(s.u))).body, {
    status: 'rejected',
    reject_reason: 'not a fit',
  });

  const again = await postSse('/api/agent/messages', s.u.accessToken, {
    app_id: s.appId,
    confirmation_action: 'confirm',
    confirmation_token: approval.confirmation_token,
  });
  t.is(again.status, 409);
  t.is(again.error.error.code, 'confirmation_not_pending');
  const conf = await (await em()).findOneOrFail(AgentConfirmation, approval.confirmation_id);
  t.like(conf, { status: 'confirmed' });
  t.truthy(conf.executedAt);
  const wf = confirmed.events[0].data.workflow_id;
  await replayFixture((await api()).services.temporal, 'operatorTurn-confirmed', wf);
});

test('tools that need app_id default to the thread’s product: a read tool at once, a risky one once confirmed', async (t) => {
  const s = await setup();
  const other = await createTestApp(s.u, 'Other product');
  await call('POST', `/api/apps/${other.id}/agents`, { ...auth(s.u), body: { name: 'Elsewhere' } });
  // The local model passes no app_id (the message names none): list_agents runs for the thread's product.
  const r = await postSse('/api/agent/messages', s.u.accessToken, { app_id: s.appId, message: 'list agents' });
  t.is(names(r).at(-1), 'done', names(r).join(','));
  const asked = r.events.find((e) => e.event === 'tool_call')!.data;
  t.like(asked, { name: 'list_agents', args: {} });
  const listed = r.events.find((e) => e.event === 'tool_result')!.data;
  t.like(listed, { name: 'list_agents', status: 'ok' }, JSON.stringify(listed));
  t.deepEqual(
    (listed.result as { id: string }[]).map((a) => a.id),
    [s.agentId],
  );

  // A risky tool: confirmed with the arguments as given, run for the thread's product.
  const first = await postSse('/api/agent/messages', s.u.accessToken, {
    app_id: s.appId,
    message: 'create campaign name: "Q3 CFOs" time_zone: Europe/Berlin',
  });
  t.is(names(first).at(-1), 'approval_required', names(first).join(','));
  const approval = first.events.at(-1)!.data;
  t.like(approval, { name: 'create_campaign', args: { name: 'Q3 CFOs', time_zone: 'Europe/Berlin' } });
  t.false('app_id' in approval.args);
  const confirmed = await postSse('/api/agent/messages', s.u.accessToken, {
    app_id: s.appId,
    thread_id: approval.thread_id,
    confirmation_action: 'confirm',
    confirmation_token: approval.confirmation_token,
  });
  t.is(names(confirmed).at(-1), 'done', names(confirmed).join(','));
  const created = confirmed.events.find((e) => e.event === 'tool_result')!.data;
  t.like(
    created,
    { name: 'create_campaign', status: 'ok', result: { app_id: s.appId, name: 'Q3 CFOs' } },
    JSON.stringify(created),
  );
  t.deepEqual(
    (await call('GET', `/api/apps/${s.appId}/campaigns`, auth(s.u))).body.items.map((c: { name: string }) => c.name),
    ['Q3 CFOs'],
  );
  t.deepEqual((await call('GET', `/api/apps/${other.id}/campaigns`, auth(s.u))).body.items, []);
});

test('cancel leaves no side effect; the token is single use and bound to its user', async (t) => {
  const s = await setup();
  const lead = await insertLead(s);
  const first = await postSse('/api/agent/messages', s.u.accessToken, {
    app_id: s.appId,
    message: `reject discovered lead ${lead} reason: nope`,
  });
  const approval = first.events.at(-1)!.data;
  const other = await setup();
  const stolen = await postSse('/api/agent/messages', other.u.accessToken, {
    app_id: other.appId,
    confirmation_action: 'confirm',
    confirmation_token: approval.confirmation_token,
  });
  t.is(stolen.status, 404);
  t.is(stolen.error.error.code, 'confirmation_not_found');

  const canceled = await postSse('/api/agent/messages', s.u.accessToken, {
    app_id: s.appId,
    confirmation_action: 'cancel',
    confirmation_token: approval.confirmation_token,
  });
  t.is(names(canceled).at(-1), 'done', names(canceled).join(','));
  t.like(canceled.events.find((e) => e.event === 'tool_result')!.data, { status: 'canceled' });
  t.is((await call('GET', `/api/discovered-leads/${lead}`, auth(s.u))).body.status, 'new');
  const conf = await (await em()).findOneOrFail(AgentConfirmation, approval.confirmation_id);
  t.like(conf, { status: 'canceled', executedAt: null });
});

test('POST /api/agent/messages: every body rule with its code', async (t) => {
  const s = await setup();
  const post = (body: unknown, token = s.u.accessToken) => postSse('/api/agent/messages', token, body);
  const code = async (body: unknown, status: number, c: string, token?: string) => {
    const r = await post(body, token);
    t.is(r.status, status, `${JSON.stringify(body)} → ${JSON.stringify(r.error)}`);
    t.is(r.error?.error?.code, c, JSON.stringify(body));
  };
  const thread = await call('POST', '/api/agent/threads', { ...auth(s.u), body: { app_id: s.appId } });
  const tid = thread.body.id;
  await code({ message: 'hi' }, 400, 'invalid_body');
  await code({ app_id: s.appId }, 400, 'invalid_body');
  await code({ app_id: s.appId, message: 'hi', confirmation_token: 'x' }, 400, 'invalid_body');
  await code({ app_id: s.appId, confirmation_action: 'cancel' }, 400, 'invalid_body');
  await code({ app_id: s.appId, confirmation_action: 'maybe' }, 400, 'invalid_body');
  await code({ app_id: 'nope', message: 'hi' }, 400, 'invalid_app');
  await code({ app_id: s.appId, thread_id: 'nope', message: 'hi' }, 400, 'invalid_thread');
  await code({ app_id: s.appId, thread_id: tid, message: 'hi', attachment_ids: ['x'] }, 400, 'invalid_attachments');
  const a = uuidv7();
  await code({ app_id: s.appId, thread_id: tid, message: 'hi', attachment_ids: [a, a] }, 400, 'invalid_attachments');
  await code(
    { app_id: s.appId, thread_id: tid, message: 'hi', attachment_ids: [uuidv7(), uuidv7(), uuidv7(), uuidv7()] },
    400,
    'invalid_attachments',
  );
  await code({ app_id: s.appId, message: 'hi', attachment_ids: [uuidv7()] }, 400, 'invalid_attachments');
  await code(
    { app_id: s.appId, thread_id: tid, confirmation_action: 'confirm', attachment_ids: [uuidv7()] },
    400,
    'invalid_attachments',
  );
  await code(
    { app_id: s.appId, thread_id: tid, message: 'hi', attachment_ids: [uuidv7()] },
    404,
    'attachment_not_found',
  );
  await code({ app_id: s.appId, thread_id: uuidv7(), message: 'hi' }, 404, 'thread_not_found');
  const app2 = await createTestApp(s.u, 'Second');
  await code({ app_id: app2.id, thread_id: tid, message: 'hi' }, 400, 'thread_app_mismatch');
  const stranger = await setup();
  await code({ app_id: stranger.appId, message: 'hi' }, 403, 'app_not_owned');
  await code({ app_id: s.appId, thread_id: tid, confirmation_action: 'confirm' }, 404, 'confirmation_not_found');
  // No credits left: 402 insufficient_credits before any model call (no turn recorded).
  const broke = await setup();
  const be = await em();
  await debitCredits(be as never, broke.workspaceId, await creditBalance(be as never, broke.workspaceId), {
    reason: 'drain',
  });
  const turnsBefore = await be.count(AgentTurn, { workspace: broke.workspaceId });
  await code({ app_id: broke.appId, message: 'hi' }, 402, 'insufficient_credits', broke.u.accessToken);
  t.is(await (await em()).count(AgentTurn, { workspace: broke.workspaceId }), turnsBefore);
  // Plans without the Operator: 402 with an empty code.
  const free = await createUser();
  const freeApp = await createTestApp(free);
  const r = await post({ app_id: freeApp.id, message: 'hi' }, free.accessToken);
  t.is(r.status, 402);
  t.is(r.error.error.code, '');
});

test('POST /api/agent/messages: 500 thread_create_failed when the new thread cannot be stored; no turn, no message, nothing charged', async (t) => {
  const s = await setup();
  const thread = await call('POST', '/api/agent/threads', { ...auth(s.u), body: { app_id: s.appId } });
  t.is(thread.status, 201, thread.text);
  // A real database failure of this product's thread inserts.
  const failing = await failInserts('agent_threads', `new.app_id = '${s.appId}'`);
  t.teardown(() => failing.remove());
  const before = await creditBalance(await em(), s.workspaceId);
  const r = await postSse('/api/agent/messages', s.u.accessToken, { app_id: s.appId, message: 'hello there' });
  t.is(r.status, 500, JSON.stringify(r.error));
  t.is(r.error?.error?.code, 'thread_create_failed');
  const e = await em();
  t.is(await e.count(AgentTurn, { workspace: s.workspaceId }), 0);
  t.is(
    (
      await e.execute(
        `select count(*)::int as n from agent_messages m join agent_threads th on th.id = m.thread_id where th.app_id = ?`,
        [s.appId],
      )
    )[0].n,
    0,
  );
  t.is(await creditBalance(e, s.workspaceId), before);
  // Only creating a thread fails: a message in an existing one runs; once the failure is gone, a new thread works again.
  const existing = await postSse('/api/agent/messages', s.u.accessToken, {
    app_id: s.appId,
    thread_id: thread.body.id,
    message: 'hello there',
  });
  t.is(existing.status, 200, JSON.stringify(existing.error));
  t.is(existing.events.at(-1)?.event, 'done');
  await failing.remove();
  const fresh = await postSse('/api/agent/messages', s.u.accessToken, { app_id: s.appId, message: 'hello there' });
  t.is(fresh.status, 200, JSON.stringify(fresh.error));
  t.not(fresh.events[0].data.thread_id, thread.body.id);
  t.is(fresh.events.at(-1)?.event, 'done');
});

test('capabilities: the registry without schemas, after the product is checked', async (t) => {
  const s = await setup();
  const r = await call('GET', `/api/agent/capabilities?app_id=${s.appId}`, auth(s.u));
  t.is(r.status, 200);
  t.is(r.body.app_id, s.appId);
  const enrich = r.body.capabilities.find((c: { name: string }) => c.name === 'enrich_discovered_lead');
  t.deepEqual(Object.keys(enrich).sort(), ['description', 'domain', 'name', 'needs_confirmation', 'risk']);
  t.like(enrich, { risk: 'change', needs_confirmation: true });
  t.is((await call('GET', '/api/agent/capabilities', auth(s.u))).body.error.code, 'invalid_scope');
  t.is((await call('GET', '/api/agent/capabilities?app_id=x', auth(s.u))).body.error.code, 'invalid_scope');
  const other = await setup();
  const r404 = await call('GET', `/api/agent/capabilities?app_id=${other.appId}`, auth(s.u));
  t.is(r404.status, 404);
  t.is(r404.body.error.code, 'not_found');
});

test('the model sees the last 20 turns and the user’s remembered facts; the history route returns every turn', async (t) => {
  const s = await setup();
  const e = await em();
  const actor = await resolveActor(e as never, { userId: s.u.id, kind: 'session' }, undefined);
  await rememberFacts(e as never, actor, [{ appId: s.appId, key: 'tone', value: 'always formal' }]);
  const thread = (await call('POST', '/api/agent/threads', { ...auth(s.u), body: { app_id: s.appId } })).body.id;
  for (let i = 1; i <= 25; i++) {
    const turn = e.create(AgentTurn, {
      thread,
      workspace: s.workspaceId,
      userId: s.u.id,
      appId: s.appId,
      status: 'completed',
      startedAt: new Date(Date.now() - (30 - i) * 1000),
    });
    await e.flush();
    await appendMessages(e as never, thread, [
      { turnId: turn.id, role: 'user', content: `question ${i}` },
      { turnId: turn.id, role: 'assistant', content: `answer ${i}` },
    ]);
  }
  const context = await buildContext(e as never, actor, thread, s.appId);
  t.is(context[0].role, 'system');
  t.regex(String(context[0].content), /tone: always formal/);
  const users = context.filter((m) => m.role === 'user').map((m) => m.content);
  t.is(users.length, 20);
  t.is(users[0], 'question 6');
  t.is(users.at(-1), 'question 25');
  const history = await call('GET', `/api/agent/threads/${thread}/messages`, auth(s.u));
  t.is(history.body.length, 50);
});
