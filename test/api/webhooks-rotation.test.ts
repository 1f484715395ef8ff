// Secret rotation with an overlap (beyond the spec): POST /api/webhooks/outbound/{id}/rotate-secret shows
// the new secret once and stores it sealed; during the overlap every delivery (real events through the
// dispatcher, and the test route) carries two Standard Webhooks signatures, so a receiver verifying with
// the official `standardwebhooks` library and either secret accepts; after it, only the new one does.
import test from 'ava';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { WebhookSubscription } from '../../db/entities/WebhookSubscription.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { emitEvent } from '../../domain/webhooks/events.js';
import { newWebhookSecret } from '../../domain/webhooks/signing.js';
import { decrypt } from '../../lib/crypto.js';
import { uuidv7 } from '../../lib/ids.js';
import { api, call, createUser, closeApi, type TestUser } from '../helpers/api.js';
import { startReceiver, verifySignature, type Received } from '../helpers/receiver.js';
import { eventDelivery, payload } from '../helpers/webhook-delivery.js';
test.after.always(closeApi);

const BASE = '/api/webhooks/outbound';
const SIGNATURE = '[A-Za-z0-9+/]{43}=';

async function subscribe(u: TestUser, url: string) {
  const r = await call('POST', BASE, { token: u.accessToken, body: { url, events: ['lead.discovered'] } });
  if (r.status !== 201) throw new Error(`subscribe failed: ${r.status} ${r.text}`);
  return r.body as { id: string; secret: string };
}

/** One real event through the dispatcher; the request the receiver got for it. */
async function deliverEvent(u: TestUser, requests: () => Received[]): Promise<Received> {
  const { services } = await api();
  const em = services.orm.em.fork() as EntityManager;
  const ws = await em.findOneOrFail(Workspace, { owner: u.id });
  const before = requests().length;
  const eventId = await em.transactional((tx) =>
    emitEvent(tx as EntityManager, ws.id, 'lead.discovered', payload('lead.discovered')),
  );
  const summary = await eventDelivery(services.temporal, eventId);
  if (summary.succeeded !== 1) throw new Error(`delivery failed: ${JSON.stringify(summary)}`);
  const got = requests().slice(before);
  if (got.length !== 1) throw new Error(`expected one request, got ${got.length}`);
  return got[0];
}

/** What a receiver does with the official library: true when it accepts the request with `secret`. */
function accepts(secret: string, r: Received): boolean {
  try {
    new Webhook(secret).verify(r.raw.toString('utf8'), r.headers as Record<string, string>);
    return true;
  } catch (err) {
    if (err instanceof WebhookVerificationError) return false;
    throw err;
  }
}

test('rotation with an overlap: the new secret is shown once and sealed; during the overlap receivers with either secret accept, after it only the new one', async (t) => {
  t.timeout(120_000);
  const { services } = await api();
  const u = await createUser();
  const path = `/hook-${uuidv7()}`;
  const rx = await startReceiver('ok', path);
  t.teardown(rx.close);
  const requests = () => rx.requests.filter((r) => r.url === path);
  const sub = await subscribe(u, rx.url);
  const old = sub.secret;
  const stranger = newWebhookSecret();

  const before = await deliverEvent(u, requests);
  t.regex(String(before.headers['webhook-signature']), new RegExp(`^v1,${SIGNATURE}$`));
  t.true(accepts(old, before));

  const OVERLAP = 15;
  const r = await call('POST', `${BASE}/${sub.id}/rotate-secret`, {
    token: u.accessToken,
    body: { overlap_seconds: OVERLAP },
  });
  t.is(r.status, 200, r.text);
  t.deepEqual(Object.keys(r.body).sort(), ['id', 'previous_secret_expires_at', 'rotated_at', 'secret']);
  const fresh: string = r.body.secret;
  t.is(r.body.id, sub.id);
  t.regex(fresh, /^whsec_[A-Za-z0-9+/]{43}=$/);
  t.not(fresh, old);
  const expiresAt = Date.parse(r.body.previous_secret_expires_at);
  t.is(expiresAt - Date.parse(r.body.rotated_at), OVERLAP * 1000);
  t.true(Math.abs(Date.parse(r.body.rotated_at) - Date.now()) < 60_000);

  // Shown once: the list shows it masked (its last 4 characters), nothing shows it in full again.
  const list = await call('GET', BASE, { token: u.accessToken });
  t.deepEqual(
    list.body.items.map((s: any) => s.secret),
    [`whsec_****${fresh.slice(-4)}`],
  );
  t.false(list.text.includes(fresh));
  // Stored sealed (AES-256-GCM, like the first); the previous one too, until the overlap ends.
  const row = await services.orm.em.fork().findOneOrFail(WebhookSubscription, sub.id);
  t.false(row.secretEncrypted.includes(fresh.slice(6, 30)));
  t.is(decrypt(row.secretEncrypted, services.config.encryptionKey), fresh);
  t.is(decrypt(row.previousSecretEncrypted!, services.config.encryptionKey), old);
  t.is(row.previousSecretExpiresAt?.getTime(), expiresAt);

  // During the overlap: two signatures, new first; the library accepts with either secret, not with another.
  const during = await deliverEvent(u, requests);
  const test1 = await call('POST', `${BASE}/${sub.id}/test`, { token: u.accessToken });
  t.true(test1.body.success, test1.text);
  const duringTest = requests().at(-1)!;
  t.true(Date.now() < expiresAt, 'the deliveries happened within the overlap');
  for (const got of [during, duringTest]) {
    const sigs = String(got.headers['webhook-signature']);
    t.regex(sigs, new RegExp(`^v1,${SIGNATURE} v1,${SIGNATURE}$`));
    t.true(accepts(fresh, got), 'a receiver with the new secret accepts');
    t.true(accepts(old, got), 'a receiver still on the old secret accepts');
    t.false(accepts(stranger, got));
    const [first, second] = sigs.split(' ');
    t.is(`${first} ${second}`, sigs);
    // The spec's single-valued X-Service-Signature stays on the previous secret until the overlap ends.
    t.true(verifySignature(old, got.raw, got.headers['x-service-signature']));
    t.false(verifySignature(fresh, got.raw, got.headers['x-service-signature']));
  }
  // Each signature is the library's own for its secret.
  const ts = new Date(Number(during.headers['webhook-timestamp']) * 1000);
  const id = String(during.headers['webhook-id']);
  t.is(
    String(during.headers['webhook-signature']),
    `${new Webhook(fresh).sign(id, ts, during.raw.toString('utf8'))} ${new Webhook(old).sign(id, ts, during.raw.toString('utf8'))}`,
  );

  // A second rotation during the overlap is refused: it would drop a secret receivers may still use.
  const again = await call('POST', `${BASE}/${sub.id}/rotate-secret`, { token: u.accessToken, body: {} });
  t.is(again.status, 409, again.text);
  t.is(again.body.error.code, 'rotation_in_progress');
  t.true(again.body.error.message.includes(new Date(expiresAt).toISOString()));
  t.is(
    decrypt(
      (await services.orm.em.fork().findOneOrFail(WebhookSubscription, sub.id)).secretEncrypted,
      services.config.encryptionKey,
    ),
    fresh,
  );

  // After the overlap: one signature, the new secret's; the old one no longer verifies.
  await new Promise((res) => setTimeout(res, Math.max(0, expiresAt - Date.now() + 200)));
  const after = await deliverEvent(u, requests);
  t.regex(String(after.headers['webhook-signature']), new RegExp(`^v1,${SIGNATURE}$`));
  t.true(accepts(fresh, after));
  t.false(accepts(old, after));
  t.true(verifySignature(fresh, after.raw, after.headers['x-service-signature']));
  t.false(verifySignature(old, after.raw, after.headers['x-service-signature']));

  // Once the overlap has ended a rotation is accepted again; overlap 0 replaces the secret at once.
  const now = await call('POST', `${BASE}/${sub.id}/rotate-secret`, {
    token: u.accessToken,
    body: { overlap_seconds: 0 },
  });
  t.is(now.status, 200, now.text);
  t.is(now.body.previous_secret_expires_at, null);
  const row2 = await services.orm.em.fork().findOneOrFail(WebhookSubscription, sub.id);
  t.falsy(row2.previousSecretEncrypted);
  t.is(row2.previousSecretExpiresAt, null);
  const test2 = await call('POST', `${BASE}/${sub.id}/test`, { token: u.accessToken });
  t.true(test2.body.success);
  const last = requests().at(-1)!;
  t.regex(String(last.headers['webhook-signature']), new RegExp(`^v1,${SIGNATURE}$`));
  t.true(accepts(now.body.secret, last));
  t.false(accepts(fresh, last));
});

test('rotate-secret: the default overlap is a day; bounds and shapes are 400 invalid_body; another workspace 404; demo 403; unauthenticated 401', async (t) => {
  const { services } = await api();
  const u = await createUser();
  const other = await createUser();
  const sub = await subscribe(u, 'https://hooks.example.com/in');
  const path = `${BASE}/${sub.id}/rotate-secret`;

  for (const body of [
    { overlap_seconds: -1 },
    { overlap_seconds: 604_801 },
    { overlap_seconds: 1.5 },
    { overlap_seconds: '60' },
    { overlap_seconds: null },
    { secret: 'whsec_mine' },
    [],
  ]) {
    const x = await call('POST', path, { token: u.accessToken, body });
    t.is(x.status, 400, `${JSON.stringify(body)}: ${x.text}`);
    t.is(x.body.error.code, 'invalid_body');
  }
  for (const [user, id] of [
    [other, sub.id],
    [u, uuidv7()],
  ] as const) {
    const x = await call('POST', `${BASE}/${id}/rotate-secret`, { token: user.accessToken });
    t.is(x.status, 404, x.text);
    t.is(x.body.error.code, 'not_found');
  }
  t.is((await call('POST', `${BASE}/nope/rotate-secret`, { token: u.accessToken })).body.error.code, 'invalid_id');
  t.is((await call('POST', path, {})).status, 401);

  // No body at all: the default overlap, a day; the maximum is accepted once that one has ended.
  const r = await call('POST', path, { token: u.accessToken });
  t.is(r.status, 200, r.text);
  t.is(Date.parse(r.body.previous_secret_expires_at) - Date.parse(r.body.rotated_at), 86_400_000);
  const em = services.orm.em.fork();
  await em.nativeUpdate(WebhookSubscription, { id: sub.id }, { previousSecretExpiresAt: new Date(Date.now() - 1000) });
  const max = await call('POST', path, { token: u.accessToken, body: { overlap_seconds: 604_800 } });
  t.is(max.status, 200, max.text);
  t.is(Date.parse(max.body.previous_secret_expires_at) - Date.parse(max.body.rotated_at), 604_800_000);
  // The previous secret is now the one the first rotation issued (the expired one was dropped).
  const row = await services.orm.em.fork().findOneOrFail(WebhookSubscription, sub.id);
  t.is(decrypt(row.previousSecretEncrypted!, services.config.encryptionKey), r.body.secret);

  // With an Idempotency-Key, a retry after a lost answer gets the same (shown-once) secret back, not a 409.
  await em.nativeUpdate(WebhookSubscription, { id: sub.id }, { previousSecretExpiresAt: new Date(Date.now() - 1000) });
  const key = { 'Idempotency-Key': `rotate-${uuidv7()}` };
  const first = await call('POST', path, { token: u.accessToken, headers: key, body: { overlap_seconds: 60 } });
  t.is(first.status, 200, first.text);
  const retry = await call('POST', path, { token: u.accessToken, headers: key, body: { overlap_seconds: 60 } });
  t.is(retry.status, 200, retry.text);
  t.is(retry.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(retry.body, first.body);
  const stored = await services.orm.em.fork().findOneOrFail(WebhookSubscription, sub.id);
  t.is(decrypt(stored.secretEncrypted, services.config.encryptionKey), first.body.secret);
  t.is(decrypt(stored.previousSecretEncrypted!, services.config.encryptionKey), max.body.secret);

  // The update route still refuses a secret (rotation is the way to replace it).
  const put = await call('PUT', `${BASE}/${sub.id}`, { token: u.accessToken, body: { secret: 'whsec_x' } });
  t.is(put.body.error.code, 'invalid_body');

  const ws = await em.findOneOrFail(Workspace, { owner: u.id });
  await em.nativeUpdate(Workspace, { id: ws.id }, { isDemo: true });
  const demo = await call('POST', path, { token: u.accessToken, body: { overlap_seconds: 0 } });
  t.is(demo.status, 403);
  t.is(demo.body.error.code, 'demo_read_only');
});
