// `npm test` shares servers with a running `npm start` but no work: its own database, Redis
// database, task queue and outbox dispatcher (scripts/test.ts, scripts/stack-env.ts).
import test from 'ava';
import pg from 'pg';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Workspace } from '../../db/entities/Workspace.js';
import { emitEvent } from '../../domain/webhooks/events.js';
import { uuidv7 } from '../../lib/ids.js';
import { api, call, createUser, closeApi } from '../helpers/api.js';
import { startReceiver } from '../helpers/receiver.js';
import { eventDelivery, eventWorkflow, payload } from '../helpers/webhook-delivery.js';
test.after.always(closeApi);

test('the test run has its own database, Redis database and task queue', (t) => {
  t.regex(new URL(process.env.DATABASE_URL!).pathname, /_test(_\w+)?$/);
  t.is(new URL(process.env.REDIS_URL!).pathname, '/1');
  t.regex(process.env.TEMPORAL_TASK_QUEUE!, /^test-\d+$/);
});

test('an event emitted by a test is dispatched and delivered by the test worker only', async (t) => {
  const { services } = await api();
  const u = await createUser();
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const sub = await call('POST', '/api/webhooks/outbound', {
    token: u.accessToken,
    body: { url: receiver.url, events: ['lead.discovered'] },
  });
  t.is(sub.status, 201);
  const em = services.orm.em.fork() as EntityManager;
  const ws = await em.findOneOrFail(Workspace, { owner: u.id });
  const eventId = await em.transactional((tx) =>
    emitEvent(tx as EntityManager, ws.id, 'lead.discovered', payload('lead.discovered', { lead_id: uuidv7() })),
  );

  t.deepEqual(await eventDelivery(services.temporal, eventId), { targets: 1, succeeded: 1, failed: 0 });
  t.is(receiver.requests.length, 1);
  // The workflow that carried it (its outbox batch's).
  const wf = await eventWorkflow(services.temporal, eventId);
  if (!wf.workflowId) return t.fail('no workflow carried the event');
  const handle = services.temporal.workflow.getHandle(wf.workflowId);
  // Started on this run's queue, i.e. by this run's dispatcher, and run by this run's worker.
  const described = await handle.describe();
  t.is(described.taskQueue, process.env.TEMPORAL_TASK_QUEUE!);
  // The dispatcher runs inside the test worker process: the start and every task carry its identity.
  const history = await handle.fetchHistory();
  const identities = (history.events ?? [])
    .map(
      (e) =>
        e.workflowExecutionStartedEventAttributes?.identity ??
        e.workflowTaskStartedEventAttributes?.identity ??
        e.activityTaskStartedEventAttributes?.identity,
    )
    .filter((i): i is string => !!i);
  t.true(identities.length >= 3);
  for (const identity of identities) t.true(identity.startsWith(`${process.env.TEST_WORKER_PID}@`), String(identity));

  // The service's own database (the same server, without the suffix) never saw the event, so its
  // dispatcher cannot take it.
  const serviceUrl = new URL(process.env.DATABASE_URL!);
  serviceUrl.pathname = serviceUrl.pathname.replace(/_test(_\w+)?$/, '');
  const client = new pg.Client({ connectionString: serviceUrl.toString() });
  await client.connect();
  try {
    const exists = await client.query(`select to_regclass('public.webhook_events') as t`);
    if (exists.rows[0].t) {
      const { rowCount } = await client.query('select 1 from webhook_events where id = $1', [eventId]);
      t.is(rowCount, 0);
    }
  } finally {
    await client.end();
  }
});
