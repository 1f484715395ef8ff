import test from 'ava';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { PlatformAccount } from '../../db/entities/PlatformAccount.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { SandboxNetwork, signInbound } from '../../lib/connectors/index.js';
import { connectorWorkflowIds } from '../../lib/workflow-ids.js';
import type { handleConnectorEvent } from '../../workflows/connectors.js';
import { api, call, closeApi, createUser, listen } from '../helpers/api.js';
import { replayFixture } from '../helpers/replay.js';
import { whenStarted } from '../helpers/workflows.js';
test.after.always(closeApi);

const SECRET = 'whsec-test-connector';

/** The in-process API with the sandbox network verifying with SECRET (as CONNECTOR_WEBHOOK_SECRET would). */
let app:
  Promise<{ base: string; em: () => EntityManager; services: Awaited<ReturnType<typeof api>>['services'] }> | undefined;
function hooked() {
  return (app ??= (async () => {
    const { services } = await api();
    const { base } = await listen({
      ...services,
      connector: new SandboxNetwork(services.config.sources.corpus, services.orm, SECRET),
    });
    return { base, services, em: () => services.orm.em.fork() as EntityManager };
  })());
}

function statusEvent(connectorAccountId: string, eventId = `evt_${randomUUID()}`) {
  return {
    id: eventId,
    type: 'account.status',
    account_id: connectorAccountId,
    created_at: new Date().toISOString(),
    data: { state: 'disconnected', reason: 'credentials_expired' },
  };
}

async function post(body: string, signature: string | null) {
  const { base } = await hooked();
  return call('POST', '/hooks/connector', {
    base,
    rawBody: body,
    headers: signature === null ? {} : { 'X-Connector-Signature': signature },
  });
}

const stored = async (eventId: string) =>
  Number(
    (await (await hooked()).em().execute(`select count(*) as n from connector_events where event_id = ?`, [eventId]))[0]
      .n,
  );

test('a signed event is stored with its platform account and handled by connector-event:<id>; a repeat is stored once; replays', async (t) => {
  const { services, em } = await hooked();
  const u = await createUser();
  const e = em();
  const ws = await e.findOneOrFail(Workspace, { owner: u.id });
  const connectorAccountId = `sbx_acc_${randomUUID()}`;
  const account = e.create(PlatformAccount, {
    workspace: ws,
    channel: 'network',
    displayName: 'Ada',
    timeZone: 'Europe/London',
    workingHours: { days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' },
    connector: 'sandbox',
    connectorAccountId,
  });
  await e.flush();

  const event = statusEvent(connectorAccountId);
  const body = JSON.stringify(event);
  const r = await post(body, signInbound(SECRET, body));
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, { received: true, duplicate: false });
  const handle = services.temporal.workflow.getHandle<typeof handleConnectorEvent>(
    connectorWorkflowIds.event(event.id),
  );
  t.deepEqual(await (await whenStarted(handle)).result(), { type: 'account.status', outcome: 'handled' });
  const [row] = await em().execute(`select * from connector_events where event_id = ?`, [event.id]);
  t.like(row, {
    type: 'account.status',
    connector: 'sandbox',
    connector_account_id: connectorAccountId,
    platform_account_id: account.id,
  });
  t.deepEqual(row.payload, event);
  t.truthy(row.handled_at);
  const described = await handle.describe();
  t.deepEqual(described.searchAttributes.WorkspaceId, [ws.id]);

  const again = await post(body, signInbound(SECRET, body));
  t.is(again.status, 200);
  t.deepEqual(again.body, { received: true, duplicate: true });
  t.is(await stored(event.id), 1);
  t.is((await handle.describe()).runId, described.runId, 'no second run');
  await replayFixture(services.temporal, 'handleConnectorEvent', connectorWorkflowIds.event(event.id));
});

test('an event of an unknown account is stored without a platform account and handled', async (t) => {
  const { services, em } = await hooked();
  const event = {
    id: `evt_${randomUUID()}`,
    type: 'message.received',
    account_id: 'acc-unknown',
    data: {
      message: {
        id: 'm1',
        thread_id: 't1',
        direction: 'in',
        from: 'grace@example.test',
        body: 'Hi',
        sent_at: new Date().toISOString(),
      },
    },
  };
  const body = JSON.stringify(event);
  const r = await post(body, signInbound(SECRET, body));
  t.is(r.status, 200, r.text);
  const handle = services.temporal.workflow.getHandle<typeof handleConnectorEvent>(
    connectorWorkflowIds.event(event.id),
  );
  t.like(await (await whenStarted(handle)).result(), { type: 'message.received', outcome: 'handled' });
  const [row] = await em().execute(`select platform_account_id from connector_events where event_id = ?`, [event.id]);
  t.is(row.platform_account_id, null);
});

test('bad, missing or stale signatures are 401 invalid_signature and store nothing', async (t) => {
  const event = statusEvent('acc-1');
  const body = JSON.stringify(event);
  const now = Date.now();
  const cases: [string, string | null][] = [
    ['no header', null],
    ['wrong secret', signInbound('another-secret', body)],
    ['another body', signInbound(SECRET, body.replace('disconnected', 'connected'))],
    ['stale (6 minutes old)', signInbound(SECRET, body, new Date(now - 6 * 60_000))],
    ['from the future', signInbound(SECRET, body, new Date(now + 6 * 60_000))],
    ['malformed', 't=abc,v1=zz'],
    ['no v1', `t=${Math.floor(now / 1000)}`],
  ];
  for (const [name, signature] of cases) {
    const r = await post(body, signature);
    t.is(r.status, 401, name);
    t.is(r.body.error.code, 'invalid_signature', name);
  }
  // A signature 4 minutes old is still fresh.
  const fresh = await post(body, signInbound(SECRET, body, new Date(now - 4 * 60_000)));
  t.is(fresh.status, 200);
  t.is(await stored(event.id), 1);
  const other = statusEvent('acc-1');
  const r = await post(JSON.stringify(other), signInbound('another-secret', JSON.stringify(other)));
  t.is(r.status, 401);
  t.is(await stored(other.id), 0);
});

test('a signed body that is not an event is 400 and stores nothing; an oversized one is 413', async (t) => {
  const bodies = [
    'not json',
    JSON.stringify({ id: 'evt_x1', type: 'message.deleted', account_id: 'a', data: {} }),
    JSON.stringify({ ...statusEvent('a', 'evt bad id') }),
  ];
  for (const body of bodies) {
    const r = await post(body, signInbound(SECRET, body));
    t.is(r.status, 400, body);
    t.is(r.body.error.code, 'invalid_body');
  }
  t.is(await stored('evt_x1'), 0);
  const huge = JSON.stringify({ ...statusEvent('a'), pad: 'x'.repeat(300 * 1024) });
  const r = await post(huge, signInbound(SECRET, huge));
  t.is(r.status, 413);
  t.is(r.body.error.code, 'payload_too_large');
});

test('without a configured secret every request is refused', async (t) => {
  const { services } = await api();
  const { base } = await listen({
    ...services,
    connector: new SandboxNetwork(services.config.sources.corpus, services.orm, null),
  });
  const body = JSON.stringify(statusEvent('a'));
  const r = await call('POST', '/hooks/connector', {
    base,
    rawBody: body,
    headers: { 'X-Connector-Signature': signInbound('', body) },
  });
  t.is(r.status, 401);
  t.is(r.body.error.code, 'invalid_signature');
});
