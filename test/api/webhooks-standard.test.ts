// Outbound deliveries verifiable by Standard Webhooks libraries (webhook-id / -timestamp / -signature)
// beside the spec's X-Service-Signature: real deliveries checked with the npm `standardwebhooks`
// package and with the spec's scheme.
import test from 'ava';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { WebhookDelivery } from '../../db/entities/WebhookDelivery.js';
import { WebhookEvent } from '../../db/entities/WebhookEvent.js';
import { WebhookSubscription } from '../../db/entities/WebhookSubscription.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { emitEvent, envelopeJson } from '../../domain/webhooks/events.js';
import {
  deliveryHeaders,
  standardSigningKey,
  toStandardSecret,
  webhookMessageId,
  WEBHOOK_DELIVERY_HEADERS,
} from '../../domain/webhooks/signing.js';
import { deliverToSubscription } from '../../domain/webhooks/webhooks.js';
import { encrypt, randomSecret } from '../../lib/crypto.js';
import { uuidv7 } from '../../lib/ids.js';
import { api, call, createUser, closeApi, type TestUser } from '../helpers/api.js';
import {
  startReceiver as startAnyReceiver,
  verifySignature,
  type Received,
  type Receiver,
} from '../helpers/receiver.js';
import { eventDelivery } from '../helpers/webhook-delivery.js';
test.after.always(closeApi);

const BASE = '/api/webhooks/outbound';

/** A receiver counting only its own path (another run may get a closed receiver's port). */
async function startReceiver(): Promise<Receiver> {
  const path = `/hook-${uuidv7()}`;
  const rx = await startAnyReceiver('ok', path);
  return {
    url: rx.url,
    port: rx.port,
    close: rx.close,
    get requests() {
      return rx.requests.filter((r) => r.url === path);
    },
  };
}

async function subscribe(u: TestUser, url: string, events: string[]) {
  const r = await call('POST', BASE, { token: u.accessToken, body: { url, events } });
  if (r.status !== 201) throw new Error(`subscribe failed: ${r.status} ${r.text}`);
  return r.body as { id: string; secret: string };
}

const headersOf = (r: Received) => r.headers as Record<string, string>;

/** Both schemes, as a receiver would check them; returns the parsed payload. */
function verifyBoth(secret: string, r: Received): unknown {
  if (!verifySignature(secret, r.raw, r.headers['x-service-signature']))
    throw new Error('X-Service-Signature does not verify');
  return new Webhook(secret).verify(r.raw.toString('utf8'), headersOf(r));
}

test('a real event delivery verifies with standardwebhooks and the spec scheme; webhook-id is stable per event+subscription across attempts and differs across subscriptions', async (t) => {
  const { services } = await api();
  const u = await createUser();
  const ws = await services.orm.em.fork().findOneOrFail(Workspace, { owner: u.id });
  const [rxA, rxB] = await Promise.all([startReceiver(), startReceiver()]);
  t.teardown(() => Promise.all([rxA.close(), rxB.close()]).then(() => {}));
  const subA = await subscribe(u, rxA.url, ['lead.discovered']);
  const subB = await subscribe(u, rxB.url, ['lead.discovered']);
  t.regex(subA.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);

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
  const em = services.orm.em.fork() as EntityManager;
  const eventId = await em.transactional((tx) => emitEvent(tx as EntityManager, ws.id, 'lead.discovered', data));
  t.like(await eventDelivery(services.temporal, eventId), { targets: 2, succeeded: 2, failed: 0 });

  const [a, b] = [rxA.requests[0], rxB.requests[0]];
  t.truthy(a && b);
  for (const [secret, r] of [
    [subA.secret, a],
    [subB.secret, b],
  ] as const) {
    const payload = verifyBoth(secret, r) as { event: string; data: Record<string, unknown> };
    t.is(payload.event, 'lead.discovered');
    t.deepEqual(payload.data, data);
    t.is(r.headers['x-service-event'], 'lead.discovered');
    t.regex(String(r.headers['x-service-delivery']), /^[0-9a-f-]{36}$/);
    const ts = Number(r.headers['webhook-timestamp']);
    t.true(Number.isInteger(ts) && Math.abs(ts - Date.now() / 1000) < 120, String(ts));
    t.regex(String(r.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/);
  }
  // Another subscription's secret does not verify (the key is per subscription).
  t.throws(() => new Webhook(subB.secret).verify(a.raw.toString('utf8'), headersOf(a)), {
    instanceOf: WebhookVerificationError,
  });
  t.regex(String(a.headers['webhook-id']), /^msg_[A-Za-z0-9_-]{22}$/);
  t.is(a.headers['webhook-id'], webhookMessageId(eventId, subA.id));
  t.not(a.headers['webhook-id'], b.headers['webhook-id']);

  // A second attempt of the same event to A (what a retry after a lost record does): same webhook-id,
  // a new X-Service-Delivery, signed again for its own timestamp.
  await services.orm.em.fork().nativeDelete(WebhookDelivery, { subscriptionId: subA.id, eventId });
  const outbox = await services.orm.em.fork().findOneOrFail(WebhookEvent, eventId);
  const sub = await services.orm.em.fork().findOneOrFail(WebhookSubscription, subA.id);
  await new Promise((r) => setTimeout(r, 1100)); // a later second, so the timestamp moves
  const again = await deliverToSubscription(services.orm.em.fork(), { config: services.config }, sub, {
    id: eventId,
    name: outbox.name,
    body: outbox.body,
  });
  t.true(again.success);
  const a2 = rxA.requests[1];
  t.is(a2.headers['webhook-id'], a.headers['webhook-id']);
  t.not(a2.headers['x-service-delivery'], a.headers['x-service-delivery']);
  t.true(Number(a2.headers['webhook-timestamp']) > Number(a.headers['webhook-timestamp']));
  t.deepEqual(a2.raw, a.raw);
  t.deepEqual(verifyBoth(subA.secret, a2), verifyBoth(subA.secret, a));
  t.is(rxB.requests.length, 1);
});

test('timestamp tolerance: the library refuses a stale timestamp, and a fresh timestamp cannot be pasted onto an old signature', async (t) => {
  const u = await createUser();
  const rx = await startReceiver();
  t.teardown(rx.close);
  const sub = await subscribe(u, rx.url, ['lead.discovered']);
  t.true((await call('POST', `${BASE}/${sub.id}/test`, { token: u.accessToken })).body.success);
  const got = rx.requests[0];
  const body = got.raw.toString('utf8');
  const wh = new Webhook(sub.secret);
  t.like(wh.verify(body, headersOf(got)), { event: 'webhook.test' });

  // The same message signed (by the one signing function) 6 minutes ago: refused as too old; 4 minutes ago: accepted.
  const id = String(got.headers['webhook-id']);
  const signedAt = (minutesAgo: number) =>
    deliveryHeaders({
      secret: sub.secret,
      event: 'webhook.test',
      body,
      webhookId: id,
      at: new Date(Date.now() - minutesAgo * 60_000),
    });
  t.throws(() => wh.verify(body, signedAt(6)), {
    instanceOf: WebhookVerificationError,
    message: 'Message timestamp too old',
  });
  t.notThrows(() => wh.verify(body, signedAt(4)));
  // A replayed stale request with its timestamp header refreshed: the signature no longer matches.
  const stale = signedAt(6);
  t.throws(() => wh.verify(body, { ...stale, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) }), {
    instanceOf: WebhookVerificationError,
    message: 'No matching signature found',
  });
  // The body is part of what is signed.
  t.throws(() => wh.verify(body.replace('webhook.test', 'webhook.tesT'), headersOf(got)), {
    instanceOf: WebhookVerificationError,
  });
});

test('both test routes send the same headers: /{id}/test with the saved secret, test-url with the temporary secret it returns', async (t) => {
  const u = await createUser();
  const rx = await startReceiver();
  t.teardown(rx.close);
  const sub = await subscribe(u, rx.url, ['lead.discovered']);
  t.true((await call('POST', `${BASE}/${sub.id}/test?event=message.received`, { token: u.accessToken })).body.success);
  t.true((await call('POST', `${BASE}/${sub.id}/test?event=message.received`, { token: u.accessToken })).body.success);
  const r = await call('POST', `${BASE}/test-url`, {
    token: u.accessToken,
    body: { url: rx.url, event: 'message.received' },
  });
  t.true(r.body.success, r.text);
  t.regex(r.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);

  const [t1, t2, tu] = rx.requests;
  t.like(verifyBoth(sub.secret, t1), { event: 'message.received' });
  t.like(verifyBoth(sub.secret, t2), { event: 'message.received' });
  t.like(verifyBoth(r.body.secret, tu), { event: 'message.received' });
  // Each test delivery is a message of its own.
  t.not(t1.headers['webhook-id'], t2.headers['webhook-id']);
  t.truthy(t1.headers['x-service-delivery']);
  t.is(tu.headers['x-service-delivery'], undefined); // test-url records nothing
  for (const r of [t1, tu])
    for (const h of WEBHOOK_DELIVERY_HEADERS.filter((h) => h.required))
      t.truthy(r.headers[h.name.toLowerCase()], h.name);
});

test('a secret issued before (whsec_ + unpadded base64url) still gets every header: spec signature as before; Standard Webhooks signature with the same 32 bytes, verifiable once the secret is rewritten to base64', async (t) => {
  const { services } = await api();
  const u = await createUser();
  const rx = await startReceiver();
  t.teardown(rx.close);
  const em = services.orm.em.fork();
  let legacy = randomSecret('whsec_', 32); // the old generator
  // One with `-` or `_` (3 in 4 are): those are the ones the libraries cannot read as is.
  while (!/[-_]/.test(legacy.slice('whsec_'.length))) legacy = randomSecret('whsec_', 32);
  const sub = em.create(WebhookSubscription, {
    workspace: await em.findOneOrFail(Workspace, { owner: u.id }),
    url: rx.url,
    events: ['lead.discovered'],
    secretEncrypted: encrypt(legacy, services.config.encryptionKey),
    secretLast4: legacy.slice(-4),
  });
  await em.flush();
  const r = await deliverToSubscription(em, { config: services.config }, sub, {
    id: uuidv7(),
    name: 'lead.discovered',
    body: envelopeJson('lead.discovered', {}),
  });
  t.true(r.success);
  const got = rx.requests[0];
  t.true(verifySignature(legacy, got.raw, got.headers['x-service-signature']));
  t.throws(() => new Webhook(legacy)); // the library's decoder refuses `-` and `_`
  const converted = toStandardSecret(legacy);
  t.regex(converted, /^whsec_[A-Za-z0-9+/]{43}=$/);
  t.deepEqual(standardSigningKey(converted).key, standardSigningKey(legacy).key);
  t.like(new Webhook(converted).verify(got.raw.toString('utf8'), headersOf(got)), { event: 'lead.discovered' });
  // The documented conversion is the same one-liner as in the docs.
  t.is(converted, `whsec_${Buffer.from(legacy.slice(6), 'base64url').toString('base64')}`);
});

test('signing key forms: new secrets decode as base64; unparseable ones use the raw secret (the libraries\u2019 raw-key mode)', (t) => {
  const bytes = Buffer.alloc(32, 7);
  t.deepEqual(standardSigningKey(`whsec_${bytes.toString('base64')}`), { key: bytes, form: 'base64' });
  t.deepEqual(standardSigningKey(`whsec_${bytes.toString('base64url')}`), { key: bytes, form: 'legacy_base64url' });
  t.deepEqual(standardSigningKey('whsec_not base64!'), { key: Buffer.from('whsec_not base64!'), form: 'raw' });
  const body = '{"event":"x"}';
  const h = deliveryHeaders({ secret: 'whsec_not base64!', event: 'x', body, webhookId: 'msg_1' });
  t.like(new Webhook('whsec_not base64!', { format: 'raw' }).verify(body, h), { event: 'x' });
  // Ours and the library's signer agree byte for byte.
  const secret = `whsec_${bytes.toString('base64')}`;
  const at = new Date(1_735_689_600_000);
  t.is(
    deliveryHeaders({ secret, event: 'x', body, webhookId: 'msg_1', at })['webhook-signature'],
    new Webhook(secret).sign('msg_1', at, body),
  );
});
