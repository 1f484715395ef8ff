import test from 'ava';
import { WebhookDelivery } from '../../db/entities/WebhookDelivery.js';
import { WebhookSubscription } from '../../db/entities/WebhookSubscription.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { envelopeJson } from '../../domain/webhooks/events.js';
import { deliverToSubscription, newWebhookSecret } from '../../domain/webhooks/webhooks.js';
import { encrypt } from '../../lib/crypto.js';
import { uuidv7 } from '../../lib/ids.js';
import type { Resolver } from '../../lib/outbound-http.js';
import { api, createUser, closeApi } from '../helpers/api.js';
import { startReceiver } from '../helpers/receiver.js';
test.after.always(closeApi);

test('delivery re-checks the destination at connect time: a public-looking name resolving to 127.0.0.1 or 169.254.169.254 is refused and recorded', async (t) => {
  const { services } = await api();
  const u = await createUser();
  const rx = await startReceiver();
  t.teardown(rx.close);
  const em = services.orm.em.fork();
  const secret = newWebhookSecret();
  // Saved while the name looked public (not in OUTBOUND_ALLOW_HOSTS); its DNS now points inside.
  const sub = em.create(WebhookSubscription, {
    workspace: await em.findOneOrFail(Workspace, { owner: u.id }),
    url: `https://hooks.customer-example.com:${rx.port}/hook`,
    events: ['lead.discovered'],
    secretEncrypted: encrypt(secret, services.config.encryptionKey),
    secretLast4: secret.slice(-4),
  });
  await em.flush();
  for (const address of ['127.0.0.1', '169.254.169.254']) {
    const resolver: Resolver = async () => [{ address, family: 4 }];
    const eventId = uuidv7();
    const r = await deliverToSubscription(em, { config: services.config, resolver }, sub, {
      id: eventId,
      name: 'lead.discovered',
      body: envelopeJson('lead.discovered', {}),
    });
    t.false(r.success);
    t.is(r.errorClass, 'blocked_destination', address);
    const row = await services.orm.em.fork().findOneOrFail(WebhookDelivery, { eventId });
    t.like(row, { subscriptionId: sub.id, success: false, statusCode: null, errorClass: 'blocked_destination' });
    t.regex(row.error ?? '', new RegExp(address.replace(/\./g, '\\.')));
  }
  t.is(rx.requests.length, 0);
});
