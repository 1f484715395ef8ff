import test from 'ava';
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowNotFoundError } from '@temporalio/client';
import { WebhookDelivery } from '../../db/entities/WebhookDelivery.js';
import { WebhookEvent } from '../../db/entities/WebhookEvent.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { emitEvent, type EventName } from '../../domain/webhook-events.js';
import { uuidv7 } from '../../lib/ids.js';
import { webhookWorkflowIds } from '../../workflows/ids.js';
import { deliverWebhookChunk, PER_SUBSCRIPTION_MAX, type DeliverySummary } from '../../workflows/webhooks.js';
import { jobSearchAttributes } from '../../workflows/search-attributes.js';
import { api, call, createUser, closeApi, type TestUser } from '../helpers/api.js';
import { startReceiver, verifySignature } from '../helpers/receiver.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
import { whenStarted } from '../helpers/workflows.js';
test.after.always(closeApi);

const taskQueue = process.env.TEMPORAL_TASK_QUEUE!;
const BASE = '/api/webhooks/outbound';

async function subscribe(u: TestUser, url: string, events: string[], active = true) {
  const r = await call('POST', BASE, { token: u.accessToken, body: { url, events, active } });
  if (r.status !== 201) throw new Error(`subscribe failed: ${r.status} ${r.text}`);
  return r.body as { id: string; secret: string };
}

async function workspaceId(userId: string): Promise<string> {
  return (await (await api()).services.orm.em.fork().findOneOrFail(Workspace, { owner: userId })).id;
}

/** Emits inside a committed transaction (as a domain would). */
async function emit(wsId: string, name: EventName, data: Record<string, unknown>): Promise<string> {
  const em = (await api()).services.orm.em.fork() as EntityManager;
  return em.transactional((tx) => emitEvent(tx as EntityManager, wsId, name, data));
}

/** Waits for the dispatcher (in the worker process) to start the event's workflow, then for its result. */
async function delivered(eventId: string): Promise<DeliverySummary> {
  const handle = await whenStarted((await api()).services.temporal.workflow.getHandle(webhookWorkflowIds.event(eventId)));
  return handle.result();
}

test.serial('an emitted event reaches matching active subscriptions, signed over the raw bytes; inactive and non-matching get nothing; replays', async (t) => {
  const u = await createUser();
  const ws = await workspaceId(u.id);
  const [match, inactive, other] = await Promise.all([startReceiver(), startReceiver(), startReceiver()]);
  t.teardown(() => Promise.all([match, inactive, other].map((r) => r.close())).then(() => {}));
  const sub = await subscribe(u, match.url, ['lead.discovered', 'action.executed']);
  const off = await subscribe(u, inactive.url, ['lead.discovered'], false);
  await subscribe(u, other.url, ['message.received']);
  // An inactive subscription re-activated and deactivated again stays silent.
  await call('PUT', `${BASE}/${off.id}`, { token: u.accessToken, body: { active: false } });

  const data = { lead_id: uuidv7(), agent_id: uuidv7(), agent_name: 'Ägent "π"', first_name: 'Zoë', last_name: 'Ñuñez', company: 'Ünïcode ✓', headline: 'h', profile_url: 'https://x.example.com/p', signal_key: 's' };
  const eventId = await emit(ws, 'lead.discovered', data);
  const summary = await delivered(eventId);
  t.deepEqual(summary, { targets: 1, succeeded: 1, failed: 0 });

  t.is(match.requests.length, 1);
  t.is(inactive.requests.length, 0);
  t.is(other.requests.length, 0);
  const req = match.requests[0];
  t.true(verifySignature(sub.secret, req.raw, req.headers['x-service-signature']));
  t.regex(String(req.headers['x-service-signature']), /^sha256=[0-9a-f]{64}$/);
  t.is(req.headers['x-service-event'], 'lead.discovered');
  t.is(req.headers['content-type'], 'application/json');
  const env = JSON.parse(req.raw.toString('utf8'));
  t.deepEqual(Object.keys(env), ['event', 'timestamp', 'data']);
  t.is(env.event, 'lead.discovered');
  t.deepEqual(env.data, data);
  t.is(new Date(env.timestamp).toISOString(), env.timestamp);

  const em = (await api()).services.orm.em.fork();
  const rows = await em.find(WebhookDelivery, { eventId });
  t.is(rows.length, 1);
  t.like(rows[0], { subscriptionId: sub.id, eventName: 'lead.discovered', success: true, statusCode: 200, errorClass: null, responseExcerpt: 'ok' });
  t.truthy((await em.findOneOrFail(WebhookEvent, eventId)).dispatchedAt);

  const client = (await api()).services.temporal;
  const desc = await client.workflow.getHandle(webhookWorkflowIds.event(eventId)).describe();
  t.deepEqual(desc.typedSearchAttributes.get(jobSearchAttributes({ kind: 'x' }).getAll()[0].key), 'webhook-event');
  t.true((await replayLive(client, webhookWorkflowIds.event(eventId))) > 0);
  await replayFixture(client, 'deliverWebhookEvent', webhookWorkflowIds.event(eventId));
});

test('an event emitted in a rolled-back transaction is never delivered', async (t) => {
  const u = await createUser();
  const ws = await workspaceId(u.id);
  const rx = await startReceiver();
  t.teardown(rx.close);
  await subscribe(u, rx.url, ['account.disconnected']);
  const em = (await api()).services.orm.em.fork() as EntityManager;
  let rolledBack = '';
  await t.throwsAsync(
    em.transactional(async (tx) => {
      rolledBack = await emitEvent(tx as EntityManager, ws, 'account.disconnected', { platform_account_id: uuidv7(), connector_account_id: 'c', reason: 'rolled back' });
      throw new Error('abort the business change');
    }),
    { message: 'abort the business change' },
  );
  // A committed event after it goes through; by then the dispatcher has seen everything committed before.
  const committed = await emit(ws, 'account.disconnected', { platform_account_id: uuidv7(), connector_account_id: 'c', reason: 'committed' });
  t.deepEqual(await delivered(committed), { targets: 1, succeeded: 1, failed: 0 });
  t.is(rx.requests.length, 1);
  t.is(JSON.parse(rx.requests[0].raw.toString()).data.reason, 'committed');
  t.is(await (await api()).services.orm.em.fork().count(WebhookEvent, { id: rolledBack }), 0);
  await t.throwsAsync((await api()).services.temporal.workflow.getHandle(webhookWorkflowIds.event(rolledBack)).describe(), { instanceOf: WorkflowNotFoundError });
});

test('a demo workspace produces no delivery', async (t) => {
  const u = await createUser();
  const ws = await workspaceId(u.id);
  const rx = await startReceiver();
  t.teardown(rx.close);
  await subscribe(u, rx.url, ['message.received']);
  await (await api()).services.orm.em.fork().nativeUpdate(Workspace, { id: ws }, { isDemo: true });
  const eventId = await emit(ws, 'message.received', { conversation_id: uuidv7(), lead_id: uuidv7() });
  t.deepEqual(await delivered(eventId), { targets: 0, succeeded: 0, failed: 0 });
  t.is(rx.requests.length, 0);
  t.is(await (await api()).services.orm.em.fork().count(WebhookDelivery, { eventId }), 0);
});

test('a receiver that never answers fails after ~10 s with exactly one request, and does not hold up the others', async (t) => {
  const u = await createUser();
  const ws = await workspaceId(u.id);
  const stalled = await startReceiver('stall');
  const fine = await startReceiver();
  t.teardown(() => Promise.all([stalled.close(), fine.close()]).then(() => {}));
  const s1 = await subscribe(u, stalled.url, ['action.executed']);
  const s2 = await subscribe(u, fine.url, ['action.executed']);
  const eventId = await emit(ws, 'action.executed', { action_id: uuidv7(), action_type: 'send_message', lead_id: uuidv7(), campaign_id: uuidv7() });
  t.deepEqual(await delivered(eventId), { targets: 2, succeeded: 1, failed: 1 });
  t.is(stalled.requests.length, 1, 'exactly one attempt: no retry');
  t.is(fine.requests.length, 1);
  const em = (await api()).services.orm.em.fork();
  const bad = await em.findOneOrFail(WebhookDelivery, { eventId, subscriptionId: s1.id });
  t.is(bad.success, false);
  t.is(bad.errorClass, 'timeout');
  t.is(bad.statusCode, null);
  t.true(bad.durationMs >= 9_500, `took ${bad.durationMs} ms`);
  const good = await em.findOneOrFail(WebhookDelivery, { eventId, subscriptionId: s2.id });
  t.true(good.success);
  // The fast receiver was not made to wait for the stalled one.
  t.true(good.createdAt.getTime() < bad.createdAt.getTime());
});

test('the dispatcher treats "already started" as success: a row whose workflow already runs is marked, not doubled', async (t) => {
  const u = await createUser();
  const ws = await workspaceId(u.id);
  const rx = await startReceiver();
  t.teardown(rx.close);
  await subscribe(u, rx.url, ['lead.approved']);
  const { services } = await api();
  // Simulate a crash between "workflow started" and "row marked": the row is committed without a
  // NOTIFY and its workflow is started by hand; the dispatcher's sweep must then just mark it.
  const id = uuidv7();
  const em = services.orm.em.fork();
  await em.insert(WebhookEvent, { id, workspaceId: ws, name: 'lead.approved', body: JSON.stringify({ event: 'lead.approved', timestamp: new Date().toISOString(), data: {} }), createdAt: new Date(), dispatchedAt: null });
  const summary = await services.temporal.workflow.execute('deliverWebhookEvent', {
    taskQueue,
    workflowId: webhookWorkflowIds.event(id),
    args: [{ eventId: id, workspaceId: ws }],
  }).catch(async (err) => {
    // The dispatcher may have won the race; then it is its run we wait for.
    if (err?.name !== 'WorkflowExecutionAlreadyStartedError') throw err;
    return delivered(id);
  });
  t.deepEqual(summary, { targets: 1, succeeded: 1, failed: 0 });
  const deadline = Date.now() + 30_000;
  while (!(await services.orm.em.fork().findOneOrFail(WebhookEvent, id)).dispatchedAt && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  t.truthy((await services.orm.em.fork().findOneOrFail(WebhookEvent, id)).dispatchedAt);
  t.is(rx.requests.length, 1);
});

test.serial('deliverWebhookChunk (the fan-out child) delivers its slice in parallel; replays', async (t) => {
  const u = await createUser();
  const ws = await workspaceId(u.id);
  const rx = await startReceiver();
  t.teardown(rx.close);
  const subs = await Promise.all([1, 2, 3].map(() => subscribe(u, rx.url, ['campaign.completed'])));
  const id = uuidv7();
  const em = (await api()).services.orm.em.fork();
  // Already marked dispatched, so only this test's run handles it.
  await em.insert(WebhookEvent, { id, workspaceId: ws, name: 'campaign.completed', body: '{"event":"campaign.completed","timestamp":"2026-01-01T00:00:00.000Z","data":{}}', createdAt: new Date(), dispatchedAt: new Date() });
  const workflowId = webhookWorkflowIds.chunk(id, 0);
  const client = (await api()).services.temporal;
  const r = await client.workflow.execute(deliverWebhookChunk, { taskQueue, workflowId, args: [{ eventId: id, subscriptionIds: subs.map((s) => s.id) }] });
  t.deepEqual(r, { targets: 3, succeeded: 3, failed: 0 });
  t.is(rx.requests.length, 3);
  t.true(await replayLive(client, workflowId) > 0);
  await replayFixture(client, 'deliverWebhookChunk', workflowId);
});

test('above the per-subscription limit, deliveries go out in batch activities: one signed request each, a stalled one fails alone', async (t) => {
  const u = await createUser();
  const ws = await workspaceId(u.id);
  const rx = await startReceiver();
  const stalled = await startReceiver('stall');
  t.teardown(() => Promise.all([rx.close(), stalled.close()]).then(() => {}));
  const subs = [];
  for (let i = 0; i < PER_SUBSCRIPTION_MAX + 5; i++) subs.push(await subscribe(u, `${rx.url}/${i}`, ['campaign.paused']));
  const slow = await subscribe(u, stalled.url, ['campaign.paused']);
  const eventId = await emit(ws, 'campaign.paused', { campaign_id: uuidv7() });
  t.deepEqual(await delivered(eventId), { targets: subs.length + 1, succeeded: subs.length, failed: 1 });
  t.is(rx.requests.length, subs.length);
  t.is(stalled.requests.length, 1);
  for (const [i, s] of subs.entries()) {
    const req = rx.requests.find((r) => r.url === `/hook/${i}`)!;
    t.true(verifySignature(s.secret, req.raw, req.headers['x-service-signature']), `subscription ${i}`);
  }
  const em = (await api()).services.orm.em.fork();
  t.is(await em.count(WebhookDelivery, { eventId, success: true }), subs.length);
  t.is((await em.findOneOrFail(WebhookDelivery, { eventId, subscriptionId: slow.id })).errorClass, 'timeout');
});
