import test from 'ava';
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowNotFoundError } from '@temporalio/client';
import { WebhookDelivery } from '../../db/entities/WebhookDelivery.js';
import { WebhookEvent } from '../../db/entities/WebhookEvent.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { emitEvent, type EventName } from '../../domain/webhooks/events.js';
import { uuidv7 } from '../../lib/ids.js';
import { webhookWorkflowIds } from '../../lib/workflow-ids.js';
import {
  BATCHED_TARGETS_MAX,
  deliverWebhookChunk,
  PER_SUBSCRIPTION_MAX,
  type BatchSummary,
  type DeliverySummary,
} from '../../workflows/webhooks.js';
import { JobKind, WorkspaceId } from '../../workflows/search-attributes.js';
import { api, call, createUser, closeApi, type TestUser } from '../helpers/api.js';
import { startReceiver as startAnyReceiver, verifySignature, type Receiver } from '../helpers/receiver.js';
import { replayFixture, replayLive } from '../helpers/replay.js';
import { eventDelivery, eventWorkflow, payload } from '../helpers/webhook-delivery.js';
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

/** Waits for the dispatcher (in the worker process) to start the workflow carrying the event, then for the event's summary. */
async function delivered(eventId: string): Promise<DeliverySummary> {
  return eventDelivery((await api()).services.temporal, eventId);
}

/**
 * A local receiver on a path of its own, counting only the requests to that path: other test runs
 * share the machine, and a delivery to one of their receivers that has closed may reach ours when
 * the OS gives us its port.
 */
async function startReceiver(behaviour?: 'ok' | 'stall'): Promise<Receiver> {
  const path = `/hook-${uuidv7()}`;
  const rx = await startAnyReceiver(behaviour, path);
  return {
    url: rx.url,
    port: rx.port,
    close: rx.close,
    get requests() {
      return rx.requests.filter((r) => r.url === path || r.url.startsWith(`${path}/`));
    },
  };
}

/** Polls until `check` holds (up to 60 s; the dispatcher's sweep runs every 5 s). */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test.serial(
  'an emitted event reaches matching active subscriptions, signed over the raw bytes; inactive and non-matching get nothing; its batch workflow replays',
  async (t) => {
    const u = await createUser();
    const ws = await workspaceId(u.id);
    const [match, inactive, other] = await Promise.all([startReceiver(), startReceiver(), startReceiver()]);
    t.teardown(() => Promise.all([match, inactive, other].map((r) => r.close())).then(() => {}));
    const sub = await subscribe(u, match.url, ['lead.discovered', 'action.executed']);
    const off = await subscribe(u, inactive.url, ['lead.discovered'], false);
    await subscribe(u, other.url, ['message.received']);
    // An inactive subscription re-activated and deactivated again stays silent.
    await call('PUT', `${BASE}/${off.id}`, { token: u.accessToken, body: { active: false } });

    const data = {
      lead_id: uuidv7(),
      agent_id: uuidv7(),
      agent_name: 'Ägent "π"',
      first_name: 'Zoë',
      last_name: 'Ñuñez',
      company: 'Ünïcode ✓',
      headline: 'h',
      profile_url: 'https://x.example.com/p',
      signal_key: 's',
    };
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
    t.like(rows[0], {
      subscriptionId: sub.id,
      eventName: 'lead.discovered',
      success: true,
      statusCode: 200,
      errorClass: null,
      responseExcerpt: 'ok',
    });
    t.truthy((await em.findOneOrFail(WebhookEvent, eventId)).dispatchedAt);

    // One target: delivered by its outbox batch's workflow, not a workflow of its own.
    const client = (await api()).services.temporal;
    const wf = await eventWorkflow(client, eventId);
    if (wf.kind !== 'batch') return t.fail(`expected a batch, got ${wf.kind}`);
    t.is((await em.findOneOrFail(WebhookEvent, eventId)).batchId, wf.batchId);
    const desc = await client.workflow.getHandle(wf.workflowId).describe();
    t.is(desc.type, 'deliverWebhookEventBatch');
    t.is(desc.typedSearchAttributes.get(JobKind), 'webhook-batch');
    t.is(desc.typedSearchAttributes.get(WorkspaceId), ws);
    t.true(Number(desc.memo?.events) >= 1);
    await t.throwsAsync(client.workflow.getHandle(webhookWorkflowIds.event(eventId)).describe(), {
      instanceOf: WorkflowNotFoundError,
    });
    t.true((await replayLive(client, wf.workflowId)) > 0);
    await replayFixture(client, 'deliverWebhookEventBatch', wf.workflowId);
  },
);

test.serial(
  'a batch: several events of one transaction to several receivers, each (event, subscription) pair delivered once, signed with its own secret; another workspace gets its own batch; replays',
  async (t) => {
    const u = await createUser();
    const other = await createUser();
    const [ws, ws2] = await Promise.all([workspaceId(u.id), workspaceId(other.id)]);
    const rx = await Promise.all([startReceiver(), startReceiver(), startReceiver(), startReceiver()]);
    t.teardown(() => Promise.all(rx.map((r) => r.close())).then(() => {}));
    const lists = [
      ['lead.discovered', 'action.executed'],
      ['action.executed'],
      ['lead.discovered', 'message.received', 'action.executed'],
    ];
    const subs = [];
    for (const [i, events] of lists.entries()) subs.push(await subscribe(u, rx[i].url, events));
    const sub2 = await subscribe(other, rx[3].url, ['lead.discovered']);
    const names: EventName[] = [
      'lead.discovered',
      'action.executed',
      'message.received',
      'lead.discovered',
      'action.executed',
      'account.disconnected',
    ];
    // One transaction: committed together, so claimed together (one batch per workspace).
    const em = (await api()).services.orm.em.fork() as EntityManager;
    const { ids, otherId } = await em.transactional(async (tx) => {
      const ids: string[] = [];
      for (const [i, name] of names.entries())
        ids.push(await emitEvent(tx as EntityManager, ws, name, payload(name, { seq: i })));
      return {
        ids,
        otherId: await emitEvent(
          tx as EntityManager,
          ws2,
          'lead.discovered',
          payload('lead.discovered', { seq: 'other' }),
        ),
      };
    });
    const client = (await api()).services.temporal;
    const matching = (name: string) => [0, 1, 2].filter((i) => lists[i].includes(name));
    for (const [i, id] of ids.entries()) {
      const n = matching(names[i]).length;
      t.deepEqual(await delivered(id), { targets: n, succeeded: n, failed: 0 }, names[i]);
    }
    t.deepEqual(await delivered(otherId), { targets: 1, succeeded: 1, failed: 0 });

    // One batch for the workspace's events that have targets, another for the other workspace's; the
    // event without a target (account.disconnected: no subscription lists it) in none.
    const rows = await (await api()).services.orm.em.fork().find(WebhookEvent, { id: { $in: [...ids, otherId] } });
    const batchOf = new Map(rows.map((r) => [r.id, r.batchId ?? undefined]));
    const batched = ids.filter((_, i) => matching(names[i]).length > 0);
    t.is(batched.length, ids.length - 1);
    t.is(new Set(batched.map((id) => batchOf.get(id))).size, 1);
    const batchId = batchOf.get(batched[0])!;
    t.truthy(batchId);
    t.is(batchOf.get(ids[names.indexOf('account.disconnected')]), undefined);
    t.truthy(batchOf.get(otherId));
    t.not(batchOf.get(otherId), batchId);
    t.true(rows.every((r) => r.dispatchedAt));
    const handle = client.workflow.getHandle(webhookWorkflowIds.batch(batchId));
    const result = (await handle.result()) as BatchSummary;
    t.deepEqual(Object.keys(result.events).sort(), [...batched].sort());
    const desc = await handle.describe();
    t.is(desc.typedSearchAttributes.get(JobKind), 'webhook-batch');
    t.is(desc.typedSearchAttributes.get(WorkspaceId), ws);
    t.deepEqual(desc.memo, { events: batched.length });

    // Each receiver got exactly the events its subscription lists, once each, with its own secret.
    const bodyOf = (r: Receiver) => r.requests.map((q) => JSON.parse(q.raw.toString()).data.seq).sort();
    for (const i of [0, 1, 2]) {
      t.deepEqual(
        bodyOf(rx[i]),
        names.flatMap((name, seq) => (matching(name).includes(i) ? [seq] : [])).sort(),
        `receiver ${i}`,
      );
      for (const req of rx[i].requests) {
        t.true(verifySignature(subs[i].secret, req.raw, req.headers['x-service-signature']), `receiver ${i}`);
        t.is(req.headers['x-service-event'], JSON.parse(req.raw.toString()).event);
      }
    }
    t.deepEqual(bodyOf(rx[3]), ['other']);
    t.true(verifySignature(sub2.secret, rx[3].requests[0].raw, rx[3].requests[0].headers['x-service-signature']));
    // The event's bytes are what was stored: the same for every subscription.
    const stored = rows.find((r) => r.id === ids[0])!.body;
    for (const i of matching(names[0]))
      t.is(rx[i].requests.find((q) => JSON.parse(q.raw.toString()).data.seq === 0)!.raw.toString(), stored);

    // Every attempt recorded once, as a single delivery is.
    const records = await (await api()).services.orm.em.fork().find(WebhookDelivery, { eventId: { $in: ids } });
    t.is(
      records.length,
      ids.reduce((a, _, i) => a + matching(names[i]).length, 0),
    );
    t.is(new Set(records.map((r) => `${r.subscriptionId}:${r.eventId}`)).size, records.length);
    t.true(
      records.every(
        (r) =>
          r.success &&
          r.statusCode === 200 &&
          r.errorClass === null &&
          r.responseExcerpt === 'ok' &&
          r.workspaceId === ws,
      ),
    );
    t.true((await replayLive(client, webhookWorkflowIds.batch(batchId))) > 0);
  },
);

test('a crash between the batch id commit and the dispatch marking: the sweep starts the same batch id again, and nothing is delivered twice', async (t) => {
  const u = await createUser();
  const ws = await workspaceId(u.id);
  const rx = await startReceiver();
  t.teardown(rx.close);
  const sub = await subscribe(u, rx.url, ['lead.approved', 'campaign.completed']);
  const { services } = await api();
  const em = services.orm.em.fork();
  const body = (name: string, seq: number) =>
    JSON.stringify({ event: name, timestamp: new Date().toISOString(), data: { seq } });
  // What a dispatcher that crashed after committing the batch ids leaves: rows with a batch id, not
  // dispatched (inserted without NOTIFY, so only a sweep finds them).
  // (a) it had started the batch workflow before crashing;
  const started = uuidv7();
  const a = [uuidv7(), uuidv7()];
  // (b) it had not.
  const neverStarted = uuidv7();
  const b = [uuidv7()];
  for (const [i, id] of a.entries())
    await em.insert(WebhookEvent, {
      id,
      workspaceId: ws,
      name: 'lead.approved',
      body: body('lead.approved', i),
      createdAt: new Date(),
      dispatchedAt: null,
      batchId: started,
    });
  await em.insert(WebhookEvent, {
    id: b[0],
    workspaceId: ws,
    name: 'campaign.completed',
    body: body('campaign.completed', 9),
    createdAt: new Date(),
    dispatchedAt: null,
    batchId: neverStarted,
  });
  const handle = await services.temporal.workflow
    .start('deliverWebhookEventBatch', {
      taskQueue,
      workflowId: webhookWorkflowIds.batch(started),
      args: [{ batchId: started, workspaceId: ws }],
    })
    .catch(async (err) => {
      // The dispatcher's sweep may have won the race; then it is its run we wait for.
      if (err?.name !== 'WorkflowExecutionAlreadyStartedError') throw err;
      return services.temporal.workflow.getHandle(webhookWorkflowIds.batch(started));
    });
  const firstRun = (await handle.describe()).runId;
  t.deepEqual(await handle.result(), {
    events: { [a[0]]: { targets: 1, succeeded: 1, failed: 0 }, [a[1]]: { targets: 1, succeeded: 1, failed: 0 } },
  });
  // The sweep marks (a) (its start answered "already started") and starts (b) under the same batch id.
  const dispatched = async (ids: string[]) =>
    (await services.orm.em.fork().count(WebhookEvent, { id: { $in: ids }, dispatchedAt: { $ne: null } })) ===
    ids.length;
  await until('the sweep', () => dispatched([...a, ...b]));
  t.deepEqual(await delivered(b[0]), { targets: 1, succeeded: 1, failed: 0 });
  t.is((await services.orm.em.fork().findOneOrFail(WebhookEvent, b[0])).batchId, neverStarted);
  // A later sweep finds nothing left to do: each pair was sent and recorded once. The proof that a later
  // pass has run: a marker row inserted now without NOTIFY (only a sweep finds it) is dispatched and
  // delivered (to a receiver of its own).
  const markerRx = await startReceiver();
  t.teardown(markerRx.close);
  await subscribe(u, markerRx.url, ['campaign.paused']);
  const marker = uuidv7();
  await em.insert(WebhookEvent, {
    id: marker,
    workspaceId: ws,
    name: 'campaign.paused',
    body: body('campaign.paused', 99),
    createdAt: new Date(),
    dispatchedAt: null,
  });
  t.deepEqual(await delivered(marker), { targets: 1, succeeded: 1, failed: 0 });
  t.is(markerRx.requests.length, 1);
  t.is(rx.requests.length, 3);
  t.deepEqual(rx.requests.map((q) => JSON.parse(q.raw.toString()).data.seq).sort(), [0, 1, 9]);
  for (const q of rx.requests) t.true(verifySignature(sub.secret, q.raw, q.headers['x-service-signature']));
  t.is(await services.orm.em.fork().count(WebhookDelivery, { eventId: { $in: [...a, ...b] } }), 3);
  // The sweep's start of the completed batch was refused (a closed workflow id never runs again).
  t.is((await services.temporal.workflow.getHandle(webhookWorkflowIds.batch(started)).describe()).runId, firstRun);
});

test('an event with no target (reaction.received, which no subscription may list) is marked dispatched without any workflow', async (t) => {
  const u = await createUser();
  const ws = await workspaceId(u.id);
  const rx = await startReceiver();
  t.teardown(rx.close);
  await subscribe(u, rx.url, ['message.received', 'lead.discovered']);
  const eventId = await emit(ws, 'reaction.received', payload('reaction.received'));
  const client = (await api()).services.temporal;
  t.like(await eventWorkflow(client, eventId), { kind: 'none' });
  t.deepEqual(await delivered(eventId), { targets: 0, succeeded: 0, failed: 0 });
  const row = await (await api()).services.orm.em.fork().findOneOrFail(WebhookEvent, eventId);
  t.truthy(row.dispatchedAt);
  t.is(row.batchId, null);
  t.is(rx.requests.length, 0);
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
      rolledBack = await emitEvent(tx as EntityManager, ws, 'account.disconnected', {
        platform_account_id: uuidv7(),
        connector_account_id: 'c',
        reason: 'rolled back',
      });
      throw new Error('abort the business change');
    }),
    { message: 'abort the business change' },
  );
  // A committed event after it goes through; by then the dispatcher has seen everything committed before.
  const committed = await emit(ws, 'account.disconnected', {
    platform_account_id: uuidv7(),
    connector_account_id: 'c',
    reason: 'committed',
  });
  t.deepEqual(await delivered(committed), { targets: 1, succeeded: 1, failed: 0 });
  t.is(rx.requests.length, 1);
  t.is(JSON.parse(rx.requests[0].raw.toString()).data.reason, 'committed');
  t.is(await (await api()).services.orm.em.fork().count(WebhookEvent, { id: rolledBack }), 0);
  await t.throwsAsync(
    (await api()).services.temporal.workflow.getHandle(webhookWorkflowIds.event(rolledBack)).describe(),
    { instanceOf: WorkflowNotFoundError },
  );
});

test('a demo workspace produces no delivery', async (t) => {
  const u = await createUser();
  const ws = await workspaceId(u.id);
  const rx = await startReceiver();
  t.teardown(rx.close);
  await subscribe(u, rx.url, ['message.received']);
  await (await api()).services.orm.em.fork().nativeUpdate(Workspace, { id: ws }, { isDemo: true });
  const eventId = await emit(
    ws,
    'message.received',
    payload('message.received', { conversation_id: uuidv7(), lead_id: uuidv7() }),
  );
  t.deepEqual(await delivered(eventId), { targets: 0, succeeded: 0, failed: 0 });
  t.like(await eventWorkflow((await api()).services.temporal, eventId), { kind: 'none' });
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
  const eventId = await emit(ws, 'action.executed', {
    action_id: uuidv7(),
    action_type: 'send_message',
    lead_id: uuidv7(),
    campaign_id: uuidv7(),
  });
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

test('the dispatcher treats "already started" as success: a row whose own workflow already runs is marked, not doubled', async (t) => {
  const u = await createUser();
  const ws = await workspaceId(u.id);
  const rx = await startReceiver();
  t.teardown(rx.close);
  await subscribe(u, rx.url, ['lead.approved']);
  const { services } = await api();
  // Simulate a crash between "workflow started" and "row marked": the row is committed without a
  // NOTIFY, its decision committed (batch id = its own id: its own workflow, as for a large fan-out)
  // and its workflow started by hand; the dispatcher's sweep must then just mark it.
  const id = uuidv7();
  const em = services.orm.em.fork();
  await em.insert(WebhookEvent, {
    id,
    workspaceId: ws,
    name: 'lead.approved',
    body: JSON.stringify({ event: 'lead.approved', timestamp: new Date().toISOString(), data: {} }),
    createdAt: new Date(),
    dispatchedAt: null,
    batchId: id,
  });
  const handle = await services.temporal.workflow
    .start('deliverWebhookEvent', {
      taskQueue,
      workflowId: webhookWorkflowIds.event(id),
      args: [{ eventId: id, workspaceId: ws }],
    })
    .catch(async (err) => {
      // The dispatcher may have won the race; then it is its run we wait for.
      if (err?.name !== 'WorkflowExecutionAlreadyStartedError') throw err;
      return services.temporal.workflow.getHandle(webhookWorkflowIds.event(id));
    });
  const firstRun = (await handle.describe()).runId;
  t.deepEqual(await handle.result(), { targets: 1, succeeded: 1, failed: 0 });
  await until(
    'the sweep to mark the row',
    async () => !!(await services.orm.em.fork().findOneOrFail(WebhookEvent, id)).dispatchedAt,
  );
  // Marked after its start was answered "already started" — also once the run had completed: the
  // closed workflow id is not run a second time, so there is no second attempt.
  t.is((await services.temporal.workflow.getHandle(webhookWorkflowIds.event(id)).describe()).runId, firstRun);
  // That one run has completed and no other exists (the row is marked, so no later pass starts one):
  // nothing more can be sent.
  t.is(rx.requests.length, 1);
  t.is(await services.orm.em.fork().count(WebhookDelivery, { eventId: id }), 1);
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
  await em.insert(WebhookEvent, {
    id,
    workspaceId: ws,
    name: 'campaign.completed',
    body: '{"event":"campaign.completed","timestamp":"2026-01-01T00:00:00.000Z","data":{}}',
    createdAt: new Date(),
    dispatchedAt: new Date(),
  });
  const workflowId = webhookWorkflowIds.chunk(id, 0);
  const client = (await api()).services.temporal;
  const r = await client.workflow.execute(deliverWebhookChunk, {
    taskQueue,
    workflowId,
    args: [{ eventId: id, subscriptionIds: subs.map((s) => s.id) }],
  });
  t.deepEqual(r, { targets: 3, succeeded: 3, failed: 0 });
  t.is(rx.requests.length, 3);
  t.true((await replayLive(client, workflowId)) > 0);
  await replayFixture(client, 'deliverWebhookChunk', workflowId);
});

test.serial(
  'above the per-subscription limit, an event keeps its own workflow, whose deliveries go out in batch activities: one signed request each, a stalled one fails alone; replays',
  async (t) => {
    const u = await createUser();
    const ws = await workspaceId(u.id);
    const rx = await startReceiver();
    const stalled = await startReceiver('stall');
    t.teardown(() => Promise.all([rx.close(), stalled.close()]).then(() => {}));
    const subs = [];
    for (let i = 0; i < PER_SUBSCRIPTION_MAX + 5; i++)
      subs.push(await subscribe(u, `${rx.url}/${i}`, ['campaign.paused']));
    const slow = await subscribe(u, stalled.url, ['campaign.paused']);
    const eventId = await emit(ws, 'campaign.paused', payload('campaign.paused', { campaign_id: uuidv7() }));
    t.deepEqual(await delivered(eventId), { targets: subs.length + 1, succeeded: subs.length, failed: 1 });
    t.is(rx.requests.length, subs.length);
    t.is(stalled.requests.length, 1);
    for (const [i, s] of subs.entries()) {
      const req = rx.requests.find((r) => r.url === `${new URL(rx.url).pathname}/${i}`)!;
      t.true(verifySignature(s.secret, req.raw, req.headers['x-service-signature']), `subscription ${i}`);
    }
    const em = (await api()).services.orm.em.fork();
    t.is(await em.count(WebhookDelivery, { eventId, success: true }), subs.length);
    t.is((await em.findOneOrFail(WebhookDelivery, { eventId, subscriptionId: slow.id })).errorClass, 'timeout');
    // A large fan-out (more than BATCHED_TARGETS_MAX targets) is not batched: its own workflow, as before.
    t.true(subs.length + 1 > BATCHED_TARGETS_MAX);
    const client = (await api()).services.temporal;
    t.deepEqual(await eventWorkflow(client, eventId), { kind: 'event', workflowId: webhookWorkflowIds.event(eventId) });
    t.is((await em.findOneOrFail(WebhookEvent, eventId)).batchId, eventId);
    const desc = await client.workflow.getHandle(webhookWorkflowIds.event(eventId)).describe();
    t.is(desc.type, 'deliverWebhookEvent');
    t.is(desc.typedSearchAttributes.get(JobKind), 'webhook-event');
    t.is(desc.typedSearchAttributes.get(WorkspaceId), ws);
    t.true((await replayLive(client, webhookWorkflowIds.event(eventId))) > 0);
    await replayFixture(client, 'deliverWebhookEvent', webhookWorkflowIds.event(eventId));
  },
);

test('a batch tried again after a lost worker sends only the pairs not yet recorded; each request names its attempt', async (t) => {
  const u = await createUser();
  const ws = await workspaceId(u.id);
  const rx = await startReceiver();
  t.teardown(rx.close);
  const sub = await subscribe(u, rx.url, ['lead.approved']);
  const { services } = await api();
  const em = services.orm.em.fork();
  const batch = uuidv7();
  const [sent, unsent] = [uuidv7(), uuidv7()];
  // What the first try left: both rows of the batch, one pair recorded as delivered before the worker was lost.
  for (const [seq, id] of [sent, unsent].entries()) {
    const body = JSON.stringify({ event: 'lead.approved', timestamp: new Date().toISOString(), data: { seq } });
    await em.insert(WebhookEvent, {
      id,
      workspaceId: ws,
      name: 'lead.approved',
      body,
      createdAt: new Date(),
      dispatchedAt: new Date(),
      batchId: batch,
    });
  }
  await em.insert(WebhookDelivery, {
    id: uuidv7(),
    subscriptionId: sub.id,
    workspaceId: ws,
    eventId: sent,
    eventName: 'lead.approved',
    success: true,
    statusCode: 200,
    durationMs: 5,
    errorClass: null,
    error: null,
    responseExcerpt: 'ok',
    createdAt: new Date(),
  });
  const result = (await services.temporal.workflow.execute('deliverWebhookEventBatch', {
    taskQueue,
    workflowId: webhookWorkflowIds.batch(batch),
    args: [{ batchId: batch, workspaceId: ws }],
  })) as BatchSummary;
  t.deepEqual(result, {
    events: { [sent]: { targets: 1, succeeded: 1, failed: 0 }, [unsent]: { targets: 1, succeeded: 1, failed: 0 } },
  });
  t.deepEqual(
    rx.requests.map((q) => JSON.parse(q.raw.toString()).data.seq),
    [1],
    'the recorded pair is not sent again',
  );
  const record = await services.orm.em.fork().findOneOrFail(WebhookDelivery, { eventId: unsent });
  t.is(rx.requests[0].headers['x-service-delivery'], record.id);
});
