// The Operator when things go wrong: a worker killed while a turn waits for a confirmation (the turn
// completes on another worker, the tool runs once), a client that goes away (its read stops, the turn
// completes), heartbeats while idle, and a turn whose live events were lost (the row ends the stream).
import test from 'ava';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { AgentConfirmation } from '../../db/entities/AgentConfirmation.js';
import { AgentTurn } from '../../db/entities/AgentTurn.js';
import { dispatch, prepareMessage } from '../../domain/operator/turns.js';
import { resolveActor } from '../../domain/workspaces.js';
import { uuidv7 } from '../../lib/ids.js';
import { publishTurnEvent } from '../../lib/operator-stream.js';
import { operatorWorkflowIds } from '../../lib/workflow-ids.js';
import { streamTurn } from '../../api/operator/sse.js';
import { spawnTsx, stopChild, waitFor } from '../../scripts/children.js';
import { api, call, createTestApp, closeApi } from '../helpers/api.js';
import { withStart } from '../helpers/jobs.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { parseSse, postSse } from '../helpers/sse.js';
test.after.always(closeApi);

process.env.OPERATOR_HEARTBEAT_MS = '150';

async function setup() {
  const u = await createOwner();
  const app = await createTestApp(u);
  const agent = await call('POST', `/api/apps/${app.id}/agents`, { token: u.accessToken, body: { name: 'Scout' } });
  const workspaceId = await workspaceIdOf(u.id);
  const lead = uuidv7();
  await (
    await em()
  ).execute(
    `insert into discovered_leads (id, workspace_id, app_id, agent_id, signal_key, evidence_key, source, external_id, dedupe_key, profile_url,
       full_name, evidence, score, reasons, status, promoted, created_at, updated_at)
     values (?, ?, ?, ?, 'sig', ?, 'pronet', ?, ?, ?, 'Ada Lovelace', '{}', 80, '[]', 'new', false, now(), now())`,
    [
      lead,
      workspaceId,
      app.id,
      agent.body.id,
      lead.slice(0, 32),
      lead,
      `k:${lead}`,
      `https://pronet.example/in/${lead}`,
    ],
  );
  const e = await em();
  return {
    u,
    appId: app.id,
    lead,
    actor: await resolveActor(e as never, { userId: u.id, kind: 'session' }, undefined),
  };
}

const turnStatus = async (id: string) => (await (await em()).findOne(AgentTurn, id))?.status;

test('a worker killed while the turn waits for confirmation: another worker finishes it, the tool runs once', async (t) => {
  const s = await setup();
  const { services } = await api();
  const taskQueue = `operator-crash-${randomUUID()}`;
  const env = {
    TEMPORAL_TASK_QUEUE: taskQueue,
    TEMPORAL_SCHEDULES: 'off',
    WEBHOOK_DISPATCHER: 'off',
    MAILBOX_SESSIONS: 'off',
  };
  const prepared = await prepareMessage((await em()) as never, s.actor, {
    app_id: s.appId,
    message: `reject discovered lead ${s.lead} reason: "crash proof"`,
  });
  if (prepared.kind !== 'turn') throw new Error('expected a turn');
  const { turnId, threadId } = prepared.start;
  await services.temporal.workflow.start('operatorTurn', {
    taskQueue,
    workflowId: operatorWorkflowIds.turn(threadId, turnId),
    args: [{ turnId }],
  });

  const first = spawnTsx('workers/worker.ts', env, { quiet: true });
  await waitFor(
    'the turn to wait for confirmation',
    async () => (await turnStatus(turnId)) === 'awaiting_confirmation',
    120_000,
  );
  // The replacement starts before the crash (its start-up under a loaded CI machine is not what is tested).
  const second = spawnTsx('workers/worker.ts', env, { quiet: true });
  t.teardown(() => stopChild(second));
  await waitFor(
    'the replacement worker to poll',
    async () => {
      const r = await services.temporal.connection.workflowService.describeTaskQueue({
        namespace: 'default',
        taskQueue: { name: taskQueue },
        taskQueueType: 1,
      });
      return (r.pollers ?? []).length >= 2;
    },
    120_000,
  );
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));

  // The user confirms after the crash: the decision is recorded and signalled; the workflow resumes on the other worker.
  const decision = await prepareMessage((await em()) as never, s.actor, {
    app_id: s.appId,
    thread_id: threadId,
    confirmation_action: 'confirm',
  });
  await dispatch(services.jobs, decision, { em: (await em()) as never, redis: services.redis });
  await waitFor('the turn to complete', async () => (await turnStatus(turnId)) === 'completed', 150_000);
  t.like((await call('GET', `/api/discovered-leads/${s.lead}`, { token: s.u.accessToken })).body, {
    status: 'rejected',
    reject_reason: 'crash proof',
  });
  const conf = await (await em()).findOneOrFail(AgentConfirmation, { turn: turnId });
  t.like(conf, { status: 'confirmed' });
  t.truthy(conf.executedAt);
  const history = await call('GET', `/api/agent/threads/${threadId}/messages`, { token: s.u.accessToken });
  t.deepEqual(
    history.body.map((m: { role: string; tool_status: string | null }) => m.tool_status ?? m.role),
    ['user', 'assistant', 'ok', 'assistant'],
  );
});

test('a client that goes away stops its read; the turn still completes and the history shows it', async (t) => {
  const s = await setup();
  const abort = new AbortController();
  let turn: { turn_id: string; thread_id: string } | undefined;
  await postSse(
    '/api/agent/messages',
    s.u.accessToken,
    { app_id: s.appId, message: 'list discovered leads' },
    {
      signal: abort.signal,
      onEvent: (e) => {
        if (e.event === 'turn') {
          turn = e.data;
          abort.abort();
        }
      },
    },
  ).catch(() => undefined);
  t.truthy(turn);
  await waitFor('the turn to complete', async () => (await turnStatus(turn!.turn_id)) === 'completed');
  const history = await call('GET', `/api/agent/threads/${turn!.thread_id}/messages`, { token: s.u.accessToken });
  t.is(history.body.at(-1).role, 'assistant');
  // The stream's reader connection was closed with the client.
  const { services } = await api();
  await waitFor(
    'the reader connections to close',
    async () => !String(await services.redis.client('LIST')).includes('name=operator-sse'),
    10_000,
  );
  t.pass();
});

test('idle streams get heartbeats; a turn whose final event was lost ends from its row', async (t) => {
  const s = await setup();
  const { services } = await api();
  const prepared = await prepareMessage((await em()) as never, s.actor, { app_id: s.appId, message: 'hello' });
  const turnId = prepared.start.turnId;
  /** A bare Koa app streaming one turn, as the messages route does. */
  const serve = async (id: string) => {
    const koa = new Koa();
    koa.use(async (ctx) => streamTurn(ctx, services, id, '0'));
    const server = koa.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    t.teardown(() => server.close());
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  };
  const url = await serve(turnId);

  // Live events pass through; silence is filled with heartbeat comments. The stream is read as it
  // arrives, and each event is published once the stream has shown the idle time before it.
  const res = await fetch(url);
  const decoder = new TextDecoder();
  let text = '';
  const reading = (async () => {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
      text += decoder.decode(chunk, { stream: true });
  })();
  const complete = (from = 0) => parseSse(text.slice(from, text.lastIndexOf('\n\n') + 2));
  await waitFor('two heartbeats on the idle stream', async () => complete().comments >= 2, 30_000);
  await publishTurnEvent(services.redis, turnId, 'message', { message_id: 'm', content: 'hi' });
  await waitFor('the message on the stream', async () => complete().events.some((e) => e.event === 'message'), 30_000);
  const afterMessage = text.indexOf('event: message');
  await waitFor('a heartbeat after the message', async () => complete(afterMessage).comments >= 1, 30_000);
  await publishTurnEvent(services.redis, turnId, 'done', { turn_id: turnId });
  await reading;
  const live = parseSse(text);
  t.deepEqual(
    live.events.map((e) => e.event),
    ['message', 'done'],
  );
  t.true(live.comments >= 3, `heartbeats: ${live.comments}`);

  // No final event ever comes, but the row says the turn completed: the stream ends with `done` from the row.
  const lost = (await prepareMessage((await em()) as never, s.actor, { app_id: s.appId, message: 'again' })).start
    .turnId;
  await (await em()).execute(`update agent_turns set status = 'completed', credits = 1 where id = ?`, [lost]);
  const fromRow = parseSse(await (await fetch(await serve(lost))).text());
  t.deepEqual(
    fromRow.events.map((e) => e.event),
    ['done'],
  );
  t.like(fromRow.events[0].data, { turn_id: lost, credits: 1 });
});

test('an unanswered confirmation expires: the tool never runs, the turn completes, a late confirm is 409', async (t) => {
  const s = await setup();
  const { services } = await api();
  const taskQueue = `operator-expiry-${randomUUID()}`;
  const worker = spawnTsx(
    'workers/worker.ts',
    {
      TEMPORAL_TASK_QUEUE: taskQueue,
      TEMPORAL_SCHEDULES: 'off',
      WEBHOOK_DISPATCHER: 'off',
      MAILBOX_SESSIONS: 'off',
      OPERATOR_CONFIRMATION_TTL_MS: '1500',
    },
    { quiet: true },
  );
  t.teardown(() => stopChild(worker));
  const prepared = await prepareMessage((await em()) as never, s.actor, {
    app_id: s.appId,
    message: `reject discovered lead ${s.lead} reason: late`,
  });
  const { turnId, threadId } = prepared.start;
  await services.temporal.workflow.start('operatorTurn', {
    taskQueue,
    workflowId: operatorWorkflowIds.turn(threadId, turnId),
    args: [{ turnId }],
  });
  await waitFor(
    'the turn to complete after the expiry',
    async () => (await turnStatus(turnId)) === 'completed',
    150_000,
  );
  const conf = await (await em()).findOneOrFail(AgentConfirmation, { turn: turnId });
  t.like(conf, { status: 'expired', executedAt: null });
  t.is((await call('GET', `/api/discovered-leads/${s.lead}`, { token: s.u.accessToken })).body.status, 'new');
  const late = await postSse('/api/agent/messages', s.u.accessToken, {
    app_id: s.appId,
    thread_id: threadId,
    confirmation_action: 'confirm',
  });
  t.is(late.status, 404, JSON.stringify(late.error)); // no pending confirmation left in the thread
  const history = await call('GET', `/api/agent/threads/${threadId}/messages`, { token: s.u.accessToken });
  t.true(history.body.some((m: { tool_status: string | null }) => m.tool_status === 'expired'));
});

test('a turn whose workflow could not be started (Temporal down) is marked failed, not left running', async (t) => {
  const s = await setup();
  const { services } = await api();
  const prepared = await prepareMessage((await em()) as never, s.actor, { app_id: s.appId, message: 'list products' });
  t.is(prepared.kind, 'turn');
  const down = withStart(services.jobs, 'operator-turn', async () =>
    Promise.reject(new Error('14 UNAVAILABLE: connection refused')),
  );
  await t.throwsAsync(dispatch(down, prepared, { em: (await em()) as never, redis: services.redis }), {
    message: /UNAVAILABLE/,
  });
  const turn = await (await em()).findOneOrFail(AgentTurn, prepared.start.turnId);
  t.like(turn, { status: 'failed', errorCode: 'dispatch_failed' });
});
