import test from 'ava';
import { Integration } from '../../db/entities/Integration.js';
import { WebhookDelivery } from '../../db/entities/WebhookDelivery.js';
import { WebhookSubscription } from '../../db/entities/WebhookSubscription.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { ACCEPTED_EVENTS } from '../../domain/webhooks/events.js';
import { decrypt } from '../../lib/crypto.js';
import { api, call, createPat, createUser, closeApi, type TestUser } from '../helpers/api.js';
import { addTeamMember } from '../helpers/db.js';
import { startReceiver, verifySignature } from '../helpers/receiver.js';
test.after.always(closeApi);

const BASE = '/api/webhooks/outbound';
const create = (u: TestUser, body: unknown) => call('POST', BASE, { token: u.accessToken, body });

async function workspaceOf(userId: string) {
  const em = (await api()).services.orm.em.fork();
  return em.findOneOrFail(Workspace, { owner: userId });
}

test('create returns the secret once (201); list and update show it masked; active defaults to true', async (t) => {
  const u = await createUser();
  const r = await create(u, { url: 'https://hooks.example.com/in', events: ['lead.discovered', 'message.received'] });
  t.is(r.status, 201, r.text);
  t.regex(r.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/); // base64 of 32 bytes: what Standard Webhooks libraries decode
  t.true(r.body.active);
  t.is(r.body.integration_id, null);
  t.deepEqual(r.body.events, ['lead.discovered', 'message.received']);
  const masked = `whsec_****${r.body.secret.slice(-4)}`;

  const list = await call('GET', BASE, { token: await createPat(u) });
  t.is(list.status, 200);
  t.deepEqual(
    list.body.items.map((s: any) => [s.id, s.secret]),
    [[r.body.id, masked]],
  );
  t.is(list.body.next_cursor, null);
  t.false(list.text.includes(r.body.secret));

  const up = await call('PUT', `${BASE}/${r.body.id}`, {
    token: u.accessToken,
    body: { url: 'https://other.example.com/x', events: ['account.disconnected'], active: false },
  });
  t.is(up.status, 200, up.text);
  t.deepEqual(
    [up.body.url, up.body.events, up.body.active, up.body.secret],
    ['https://other.example.com/x', ['account.disconnected'], false, masked],
  );
  // Partial update: only what is given changes.
  const up2 = await call('PUT', `${BASE}/${r.body.id}`, { token: u.accessToken, body: { active: true } });
  t.deepEqual(
    [up2.body.url, up2.body.events, up2.body.active],
    ['https://other.example.com/x', ['account.disconnected'], true],
  );

  // At rest the secret is encrypted, and decrypts to the one shown at creation.
  const em = (await api()).services.orm.em.fork();
  const row = await em.findOneOrFail(WebhookSubscription, r.body.id);
  t.false(row.secretEncrypted.includes(r.body.secret));
  t.is(decrypt(row.secretEncrypted, (await api()).services.config.encryptionKey), r.body.secret);

  const del = await call('DELETE', `${BASE}/${r.body.id}`, { token: u.accessToken });
  t.is(del.status, 200);
  t.deepEqual(del.body, { id: r.body.id, deleted: true });
  t.is((await call('DELETE', `${BASE}/${r.body.id}`, { token: u.accessToken })).status, 404);
  t.deepEqual((await call('GET', BASE, { token: u.accessToken })).body.items, []);
});

test('list pages with limit and cursor', async (t) => {
  const u = await createUser();
  const ids: string[] = [];
  for (let i = 0; i < 3; i++)
    ids.push((await create(u, { url: `https://h${i}.example.com/`, events: ['lead.approved'] })).body.id);
  const p1 = await call('GET', `${BASE}?limit=2`, { token: u.accessToken });
  const p2 = await call('GET', `${BASE}?limit=2&cursor=${p1.body.next_cursor}`, { token: u.accessToken });
  t.deepEqual(
    [...p1.body.items, ...p2.body.items].map((s: any) => s.id),
    ids,
  );
  t.is(p2.body.next_cursor, null);
  t.is((await call('GET', `${BASE}?limit=0`, { token: u.accessToken })).body.error.code, 'invalid_query');
});

test('url validation: 400 invalid_url and blocked_destination at create and update', async (t) => {
  const u = await createUser();
  const invalid = [
    'http://hooks.example.com/',
    'ftp://hooks.example.com/',
    'not a url',
    '/relative/path',
    'https://user:pw@hooks.example.com/',
  ];
  const blocked = [
    'https://127.0.0.2/',
    'https://10.0.0.8/x',
    'https://192.168.0.1/',
    'https://169.254.169.254/latest/meta-data/',
    'https://[::1]/',
    'https://[::ffff:10.0.0.1]/',
    'https://[::a9fe:a9fe]/',
    'https://[64:ff9b::a9fe:a9fe]/',
    'https://[2002:c0a8:1::]/',
    'https://[fe80::1]/',
    'https://224.0.0.1/',
    'https://0.0.0.0/',
    'https://api.localhost/',
    'https://WWW.LOCALHOST:8443/',
    'https://db.internal/',
    'https://nas.local/',
  ];
  for (const url of invalid) {
    const r = await create(u, { url, events: ['lead.discovered'] });
    t.is(r.status, 400, url);
    t.is(r.body.error.code, 'invalid_url', url);
  }
  for (const url of blocked) {
    const r = await create(u, { url, events: ['lead.discovered'] });
    t.is(r.status, 400, url);
    t.is(r.body.error.code, 'blocked_destination', url);
  }
  const ok = await create(u, { url: 'https://hooks.example.com/', events: ['lead.discovered'] });
  const up = await call('PUT', `${BASE}/${ok.body.id}`, {
    token: u.accessToken,
    body: { url: 'https://169.254.169.254/' },
  });
  t.is(up.status, 400);
  t.is(up.body.error.code, 'blocked_destination');
  const up2 = await call('PUT', `${BASE}/${ok.body.id}`, {
    token: u.accessToken,
    body: { url: 'http://hooks.example.com/' },
  });
  t.is(up2.body.error.code, 'invalid_url');
  // (127.0.0.1 and localhost are allow-listed in tests, so the blocked examples above avoid them.)
  // Allow-listed hosts (OUTBOUND_ALLOW_HOSTS=127.0.0.1,localhost in tests) may use plain HTTP on any port.
  t.is((await create(u, { url: 'http://127.0.0.1:9/hook', events: ['lead.discovered'] })).status, 201);
});

test('event validation: 400 invalid_event for empty, unknown, reaction.received and repeated names; invalid_body for shapes', async (t) => {
  const u = await createUser();
  for (const events of [
    [],
    ['reaction.received'],
    ['lead.discovered', 'nope'],
    ['lead.discovered', 'lead.discovered'],
  ]) {
    const r = await create(u, { url: 'https://hooks.example.com/', events });
    t.is(r.status, 400, JSON.stringify(events));
    t.is(r.body.error.code, 'invalid_event');
  }
  const all = await create(u, { url: 'https://hooks.example.com/', events: [...ACCEPTED_EVENTS] });
  t.is(all.status, 201);
  const up = await call('PUT', `${BASE}/${all.body.id}`, {
    token: u.accessToken,
    body: { events: ['reaction.received'] },
  });
  t.is(up.body.error.code, 'invalid_event');
  for (const body of [
    {},
    { url: 'https://hooks.example.com/' },
    { url: 5, events: ['lead.discovered'] },
    { url: 'https://h.example.com/', events: 'lead.discovered' },
    { url: 'https://h.example.com/', events: ['lead.discovered'], secret: 'x' },
  ]) {
    const r = await create(u, body);
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, 'invalid_body');
  }
  // The update changes only url, events and active.
  for (const body of [{}, { secret: 'whsec_mine' }, { integration_id: null }]) {
    const r = await call('PUT', `${BASE}/${all.body.id}`, { token: u.accessToken, body });
    t.is(r.body.error.code, 'invalid_body', JSON.stringify(body));
  }
  t.is(
    (await call('PUT', `${BASE}/not-a-uuid`, { token: u.accessToken, body: { active: false } })).body.error.code,
    'invalid_id',
  );
});

test("integration association: own integration accepted; another workspace's is 400 invalid_integration", async (t) => {
  const a = await createUser();
  const b = await createUser();
  const em = (await api()).services.orm.em.fork();
  const mine = em.create(Integration, {
    workspace: await em.findOneOrFail(Workspace, { owner: a.id }),
    provider: 'hubspot',
    name: 'CRM',
  });
  const theirs = em.create(Integration, {
    workspace: await em.findOneOrFail(Workspace, { owner: b.id }),
    provider: 'hubspot',
    name: 'CRM',
  });
  await em.flush();
  const ok = await create(a, {
    url: 'https://hooks.example.com/',
    events: ['lead.discovered'],
    integration_id: mine.id,
  });
  t.is(ok.status, 201, ok.text);
  t.is(ok.body.integration_id, mine.id);
  for (const id of [theirs.id, '0190f5d2-7c1a-7b3e-9a10-000000000000']) {
    const r = await create(a, { url: 'https://hooks.example.com/', events: ['lead.discovered'], integration_id: id });
    t.is(r.status, 400);
    t.is(r.body.error.code, 'invalid_integration');
  }
  t.is(
    (await create(a, { url: 'https://hooks.example.com/', events: ['lead.discovered'], integration_id: 'x' })).body
      .error.code,
    'invalid_body',
  );
});

test('cross-workspace ids are 404 not_found on update, delete and test; members act in the owner workspace', async (t) => {
  const owner = await createUser();
  const other = await createUser();
  const sub = await create(owner, { url: 'https://hooks.example.com/', events: ['lead.discovered'] });
  for (const [method, path, body] of [
    ['PUT', `${BASE}/${sub.body.id}`, { active: false }],
    ['POST', `${BASE}/${sub.body.id}/test`, undefined],
    ['DELETE', `${BASE}/${sub.body.id}`, undefined],
  ] as const) {
    const r = await call(method, path, { token: other.accessToken, body });
    t.is(r.status, 404, `${method} ${path}`);
    t.is(r.body.error.code, 'not_found');
  }
  t.deepEqual((await call('GET', BASE, { token: other.accessToken })).body.items, []);
  // A team member acting as the owner sees and manages the owner's subscriptions.
  const member = await createUser();
  await addTeamMember(owner.id, member.id, { role: 'admin' });
  const asOwner = { 'x-acting-as': owner.id };
  const list = await call('GET', BASE, { token: member.accessToken, headers: asOwner });
  t.deepEqual(
    list.body.items.map((s: any) => s.id),
    [sub.body.id],
  );
  t.is(
    (
      await call('PUT', `${BASE}/${sub.body.id}`, {
        token: member.accessToken,
        headers: asOwner,
        body: { active: false },
      })
    ).status,
    200,
  );
  // Without the header the member is in their own workspace, where the id does not exist.
  t.is(
    (await call('PUT', `${BASE}/${sub.body.id}`, { token: member.accessToken, body: { active: false } })).status,
    404,
  );
  t.is(
    (await call('GET', BASE, { token: member.accessToken, headers: { 'x-acting-as': other.id } })).body.error.code,
    'not_assigned',
  );
});

test('test route: signs with the saved secret; generic webhook.test or the named sample; receiver failure is 200 success:false', async (t) => {
  const u = await createUser();
  const rx = await startReceiver();
  t.teardown(rx.close);
  const sub = await create(u, { url: rx.url, events: ['lead.discovered'] });
  t.is(sub.status, 201, sub.text);

  const r = await call('POST', `${BASE}/${sub.body.id}/test`, { token: u.accessToken });
  t.is(r.status, 200, r.text);
  t.is(r.body.success, true);
  t.is(r.body.status_code, 200);
  t.is(r.body.error, null);
  t.true(Number.isInteger(r.body.duration_ms));
  const got = rx.requests[0];
  t.true(verifySignature(sub.body.secret, got.raw, got.headers['x-service-signature']));
  t.is(got.headers['x-service-event'], 'webhook.test');
  t.is(got.headers['content-type'], 'application/json');
  const env = JSON.parse(got.raw.toString());
  t.deepEqual(Object.keys(env), ['event', 'timestamp', 'data']);
  t.is(env.event, 'webhook.test');
  t.is(env.data.subscription_id, sub.body.id);
  t.is(new Date(env.timestamp).toISOString(), env.timestamp);

  // A named event (any accepted name, even one the subscription does not list) sends its sample.
  const named = await call('POST', `${BASE}/${sub.body.id}/test?event=campaign.paused`, { token: u.accessToken });
  t.true(named.body.success);
  t.is(rx.requests[1].headers['x-service-event'], 'campaign.paused');
  t.is(JSON.parse(rx.requests[1].raw.toString()).event, 'campaign.paused');
  t.true(verifySignature(sub.body.secret, rx.requests[1].raw, rx.requests[1].headers['x-service-signature']));

  for (const q of ['reaction.received', 'nope']) {
    const bad = await call('POST', `${BASE}/${sub.body.id}/test?event=${q}`, { token: u.accessToken });
    t.is(bad.status, 400);
    t.is(bad.body.error.code, 'invalid_event');
  }
  t.is(rx.requests.length, 2);

  // Test deliveries are recorded like real ones (event_id null).
  const em = (await api()).services.orm.em.fork();
  t.is(await em.count(WebhookDelivery, { subscriptionId: sub.body.id, eventId: null }), 2);

  const failing = await startReceiver((_req, res) => res.writeHead(503).end('down'));
  t.teardown(failing.close);
  const sub2 = await create(u, { url: failing.url, events: ['lead.discovered'] });
  const f = await call('POST', `${BASE}/${sub2.body.id}/test`, { token: u.accessToken });
  t.is(f.status, 200);
  t.deepEqual([f.body.success, f.body.status_code, f.body.error], [false, 503, 'HTTP 503']);
});

test('test-url: unsaved destination, same validation, returns the temporary secret it signed with', async (t) => {
  const u = await createUser();
  const rx = await startReceiver();
  t.teardown(rx.close);
  const r = await call('POST', `${BASE}/test-url`, {
    token: u.accessToken,
    body: { url: rx.url, event: 'message.received' },
  });
  t.is(r.status, 200, r.text);
  t.true(r.body.success);
  t.is(r.body.status_code, 200);
  t.regex(r.body.secret, /^whsec_/);
  t.true(verifySignature(r.body.secret, rx.requests[0].raw, rx.requests[0].headers['x-service-signature']));
  t.is(JSON.parse(rx.requests[0].raw.toString()).data.is_first_reply, true);

  const generic = await call('POST', `${BASE}/test-url`, { token: u.accessToken, body: { url: rx.url } });
  t.is(rx.requests[1].headers['x-service-event'], 'webhook.test');
  t.not(generic.body.secret, r.body.secret);

  const blocked = await call('POST', `${BASE}/test-url`, {
    token: u.accessToken,
    body: { url: 'https://169.254.169.254/' },
  });
  t.deepEqual([blocked.status, blocked.body.error.code], [400, 'blocked_destination']);
  t.is(
    (await call('POST', `${BASE}/test-url`, { token: u.accessToken, body: { url: 'http://hooks.example.com/' } })).body
      .error.code,
    'invalid_url',
  );
  t.is(
    (
      await call('POST', `${BASE}/test-url`, {
        token: u.accessToken,
        body: { url: rx.url, event: 'reaction.received' },
      })
    ).body.error.code,
    'invalid_event',
  );
  t.is((await call('POST', `${BASE}/test-url`, { token: u.accessToken, body: {} })).body.error.code, 'invalid_body');

  // Nobody listening: 200 with success false and no status code.
  const gone = await startReceiver();
  await gone.close();
  const down = await call('POST', `${BASE}/test-url`, { token: u.accessToken, body: { url: gone.url } });
  t.is(down.status, 200);
  t.false(down.body.success);
  t.is(down.body.status_code, null);
  t.truthy(down.body.error);
});

test('sample-payload: one envelope per accepted event with the documented data fields', async (t) => {
  const u = await createUser();
  const r = await call('GET', `${BASE}/sample-payload`, { token: u.accessToken });
  t.is(r.status, 200, r.text);
  t.deepEqual(Object.keys(r.body.samples).sort(), [...ACCEPTED_EVENTS].sort());
  t.deepEqual(r.body.events, [...ACCEPTED_EVENTS]);
  const fields: Record<string, string[]> = {
    'lead.discovered': [
      'lead_id',
      'agent_id',
      'agent_name',
      'first_name',
      'last_name',
      'company',
      'headline',
      'profile_url',
      'signal_key',
    ],
    'message.received': [
      'conversation_id',
      'lead_id',
      'campaign_id',
      'sender_name',
      'sender_provider_id',
      'message',
      'is_first_reply',
      'first_name',
      'last_name',
    ],
    'action.executed': ['action_id', 'action_type', 'lead_id', 'campaign_id'],
    'account.disconnected': ['platform_account_id', 'connector_account_id', 'reason'],
  };
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  for (const [event, names] of Object.entries(fields)) {
    const s = r.body.samples[event];
    t.deepEqual(Object.keys(s), ['event', 'timestamp', 'data']);
    t.is(s.event, event);
    for (const f of names) t.true(f in s.data, `${event}.${f}`);
    for (const f of names.filter(
      (n) => n.endsWith('_id') && n !== 'sender_provider_id' && n !== 'connector_account_id',
    ))
      t.regex(s.data[f], uuid, `${event}.${f}`);
  }
  for (const event of ['lead.approved', 'campaign.completed', 'campaign.paused'])
    t.true(Object.keys(r.body.samples[event].data).length > 0);
  t.is(r.body.test_event.event, 'webhook.test');
});

test('demo workspaces cannot configure or test destinations (403 demo_read_only)', async (t) => {
  const u = await createUser();
  const sub = await create(u, { url: 'https://hooks.example.com/', events: ['lead.discovered'] });
  const em = (await api()).services.orm.em.fork();
  const ws = await workspaceOf(u.id);
  await em.nativeUpdate(Workspace, { id: ws.id }, { isDemo: true });
  for (const [method, path, body] of [
    ['POST', BASE, { url: 'https://hooks.example.com/', events: ['lead.discovered'] }],
    ['PUT', `${BASE}/${sub.body.id}`, { active: false }],
    ['POST', `${BASE}/${sub.body.id}/test`, undefined],
    ['POST', `${BASE}/test-url`, { url: 'https://hooks.example.com/' }],
    ['DELETE', `${BASE}/${sub.body.id}`, undefined],
  ] as const) {
    const r = await call(method, path, { token: u.accessToken, body });
    t.is(r.status, 403, `${method} ${path}`);
    t.is(r.body.error.code, 'demo_read_only');
  }
  t.is((await call('GET', BASE, { token: u.accessToken })).status, 200);
});

test('webhook routes require authentication', async (t) => {
  for (const [method, path] of [
    ['GET', BASE],
    ['POST', BASE],
    ['GET', `${BASE}/sample-payload`],
    ['POST', `${BASE}/test-url`],
  ] as const) {
    const r = await call(method, path, { body: method === 'POST' ? {} : undefined });
    t.is(r.status, 401, `${method} ${path}`);
    t.is(r.body.error.code, 'unauthorized');
  }
});
