// The delivery log (beyond the spec): GET /api/webhooks/outbound/{id}/deliveries lists what each attempt
// of the real dispatcher (and of the test route) got from the receiver, newest first, in keyset pages.
import test from 'ava';
import type { EntityManager } from '@mikro-orm/postgresql';
import { WebhookDelivery } from '../../db/entities/WebhookDelivery.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { emitEvent } from '../../domain/webhooks/events.js';
import { insertDeliveries } from '../../domain/webhooks/webhooks.js';
import { uuidv7 } from '../../lib/ids.js';
import { api, call, createUser, closeApi, type TestUser } from '../helpers/api.js';
import { startReceiver, type Received } from '../helpers/receiver.js';
import { eventDelivery, payload } from '../helpers/webhook-delivery.js';
test.after.always(closeApi);

const BASE = '/api/webhooks/outbound';

async function subscribe(u: TestUser, url: string, events: string[]) {
  const r = await call('POST', BASE, { token: u.accessToken, body: { url, events } });
  if (r.status !== 201) throw new Error(`subscribe failed: ${r.status} ${r.text}`);
  return r.body as { id: string; secret: string };
}

async function emit(userId: string): Promise<string> {
  const { services } = await api();
  const em = services.orm.em.fork() as EntityManager;
  const ws = await em.findOneOrFail(Workspace, { owner: userId });
  const eventId = await em.transactional((tx) =>
    emitEvent(tx as EntityManager, ws.id, 'lead.discovered', payload('lead.discovered')),
  );
  await eventDelivery(services.temporal, eventId);
  return eventId;
}

type Mode = 'slow-ok' | 'error-500' | 'reset' | 'stall';

test('the delivery log shows what the receiver got (200 after a delay, 500, a reset, a timeout, a refused connection, a test delivery), newest first, across pages, with filters', async (t) => {
  t.timeout(120_000);
  const u = await createUser();
  let mode: Mode = 'slow-ok';
  const path = `/hook-${uuidv7()}`;
  const rx = await startReceiver((req, res) => {
    if (mode === 'slow-ok') setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'), 300);
    else if (mode === 'error-500') res.writeHead(500, { 'content-type': 'text/plain' }).end('boom');
    else if (mode === 'reset') req.socket.destroy();
    // 'stall': never answers
  }, path);
  let closed = false;
  t.teardown(() => (closed ? undefined : rx.close()));
  const mine = () => rx.requests.filter((r) => r.url === path);
  const sub = await subscribe(u, rx.url, ['lead.discovered']);

  // Oldest first: a test delivery, then real events through the dispatcher.
  const tested = await call('POST', `${BASE}/${sub.id}/test`, { token: u.accessToken });
  t.true(tested.body.success, tested.text);
  const events: string[] = [];
  for (const m of ['slow-ok', 'error-500', 'reset', 'stall'] as Mode[]) {
    mode = m;
    events.push(await emit(u.id));
  }
  const got: Received[] = mine();
  t.is(got.length, 5);
  await rx.close();
  closed = true;
  events.push(await emit(u.id)); // the port is closed now: connection refused

  const all = await call('GET', `${BASE}/${sub.id}/deliveries?limit=200`, { token: u.accessToken });
  t.is(all.status, 200, all.text);
  t.is(all.body.next_cursor, null);
  const items = all.body.items as any[];
  t.is(items.length, 6);
  // Newest first: refused, stall, reset, 500, 200, test.
  const [refused, stall, reset, e500, ok, test0] = items;
  t.deepEqual(
    items.map((d) => d.event_id),
    [...[...events].reverse(), null],
  );
  t.deepEqual(
    items.map((d) => d.event),
    ['lead.discovered', 'lead.discovered', 'lead.discovered', 'lead.discovered', 'lead.discovered', 'webhook.test'],
  );
  // Each listed attempt is the request the receiver got: its X-Service-Delivery header is the attempt's id.
  t.deepEqual(
    [test0, ok, e500, reset, stall].map((d) => d.id),
    got.map((r) => r.headers['x-service-delivery']),
  );
  t.like(test0, { success: true, status_code: 200, error_class: null, error: null });
  t.like(ok, { success: true, status_code: 200, error_class: null, error: null });
  t.true(ok.duration_ms >= 290 && ok.duration_ms < 5_000, String(ok.duration_ms));
  t.like(e500, { success: false, status_code: 500, error_class: 'http_status', error: 'HTTP 500' });
  t.like(reset, { success: false, status_code: null, error_class: 'connection_error' });
  t.like(stall, { success: false, status_code: null, error_class: 'timeout' });
  t.true(stall.duration_ms >= 9_900 && stall.duration_ms < 15_000, String(stall.duration_ms));
  t.like(refused, { success: false, status_code: null, error_class: 'connection_error' });
  t.regex(refused.error, /ECONNREFUSED/);
  for (const d of items) {
    t.deepEqual(Object.keys(d).sort(), [
      'delivered_at',
      'duration_ms',
      'error',
      'error_class',
      'event',
      'event_id',
      'id',
      'response_excerpt',
      'status_code',
      'success',
    ]);
    // The receiver is on OUTBOUND_ALLOW_HOSTS (loopback): its answers are not shown.
    t.is(d.response_excerpt, null);
    t.true(Math.abs(Date.parse(d.delivered_at) - Date.now()) < 120_000);
  }

  // Keyset pages of 2: three pages, the same rows in the same order.
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const p: any = await call('GET', `${BASE}/${sub.id}/deliveries?limit=2${cursor ? `&cursor=${cursor}` : ''}`, {
      token: u.accessToken,
    });
    t.is(p.status, 200, p.text);
    t.true(p.body.items.length <= 2);
    seen.push(...p.body.items.map((d: any) => d.id));
    cursor = p.body.next_cursor;
    pages++;
  } while (cursor);
  t.is(pages, 3);
  t.deepEqual(
    seen,
    items.map((d) => d.id),
  );

  // Filters.
  const ids = async (q: string) => {
    const r = await call('GET', `${BASE}/${sub.id}/deliveries?${q}`, { token: u.accessToken });
    t.is(r.status, 200, r.text);
    return r.body.items.map((d: any) => d.id);
  };
  t.deepEqual(await ids('success=false'), [refused.id, stall.id, reset.id, e500.id]);
  t.deepEqual(await ids('success=true'), [ok.id, test0.id]);
  t.deepEqual(await ids('event=webhook.test'), [test0.id]);
  t.deepEqual(await ids('event=lead.discovered&success=true'), [ok.id]);
  t.deepEqual(await ids('event=message.received'), []);
  // A filtered list pages too.
  const failed2 = await call('GET', `${BASE}/${sub.id}/deliveries?success=false&limit=2`, { token: u.accessToken });
  t.deepEqual(
    failed2.body.items.map((d: any) => d.id),
    [refused.id, stall.id],
  );
  t.deepEqual(await ids(`success=false&limit=2&cursor=${failed2.body.next_cursor}`), [reset.id, e500.id]);
});

test('delivery log: retention, response excerpts only for destinations not on OUTBOUND_ALLOW_HOSTS, 404 for another workspace, 400 for bad queries', async (t) => {
  const { services } = await api();
  const u = await createUser();
  const other = await createUser();
  const sub = await subscribe(u, 'https://hooks.example.com/in', ['lead.discovered']);
  const ws = await services.orm.em.fork().findOneOrFail(Workspace, { owner: u.id });
  const row = (id: string, excerpt: string | null, visible: boolean) => ({
    id,
    subscription_id: sub.id,
    workspace_id: ws.id,
    event_id: uuidv7(),
    event_name: 'lead.discovered',
    success: false,
    status_code: 422,
    duration_ms: 12,
    error_class: 'http_status',
    error: 'HTTP 422',
    response_excerpt: excerpt,
    response_excerpt_visible: visible,
    created_at: new Date().toISOString(),
  });
  const old = uuidv7(Date.now() - (services.config.webhookHistoryDays + 1) * 86_400_000);
  const [hidden, shown] = [uuidv7(Date.now() - 1000), uuidv7()]; // ids within one millisecond are unordered
  await insertDeliveries(services.orm.em.fork(), [
    row(old, 'too old', true),
    row(hidden, 'internal answer', false),
    row(shown, '{"error":"unknown lead"}', true),
  ]);
  const r = await call('GET', `${BASE}/${sub.id}/deliveries`, { token: u.accessToken });
  t.is(r.status, 200, r.text);
  // Past WEBHOOK_HISTORY_DAYS a row is not listed, even before the daily purge deletes it.
  t.deepEqual(
    r.body.items.map((d: any) => [d.id, d.response_excerpt, d.status_code, d.error]),
    [
      [shown, '{"error":"unknown lead"}', 422, 'HTTP 422'],
      [hidden, null, 422, 'HTTP 422'],
    ],
  );
  t.truthy(await services.orm.em.fork().findOne(WebhookDelivery, old));

  // Another workspace's subscription, an unknown id: 404 as on the other webhook routes; a bad id: 400.
  for (const [user, id] of [
    [other, sub.id],
    [u, uuidv7()],
  ] as const) {
    const x = await call('GET', `${BASE}/${id}/deliveries`, { token: user.accessToken });
    t.is(x.status, 404, x.text);
    t.is(x.body.error.code, 'not_found');
  }
  t.is((await call('GET', `${BASE}/not-a-uuid/deliveries`, { token: u.accessToken })).body.error.code, 'invalid_id');
  for (const q of [
    'success=yes',
    'event=nope',
    'limit=0',
    'limit=201',
    'cursor=abc',
    'since=1',
    'event=reaction.received',
  ]) {
    const x = await call('GET', `${BASE}/${sub.id}/deliveries?${q}`, { token: u.accessToken });
    t.is(x.status, 400, `${q}: ${x.text}`);
    t.is(x.body.error.code, 'invalid_query', q);
  }
  t.is((await call('GET', `${BASE}/${sub.id}/deliveries`)).status, 401);
  // A demo workspace may read its log (a GET).
  await services.orm.em.fork().nativeUpdate(Workspace, { id: ws.id }, { isDemo: true });
  t.is((await call('GET', `${BASE}/${sub.id}/deliveries`, { token: u.accessToken })).status, 200);
});
