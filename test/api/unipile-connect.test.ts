// The professional network over Unipile (issue 44), wired by configuration: the API built on a config
// whose connector provider is `unipile`, pointed at the stand-in (test/helpers/unipile). Through the
// public API: a network account connects with a hosted link from Unipile; the stand-in finishes the
// wizard and POSTs the notify callback to `/hooks/connector/accounts` → the account holds Unipile's
// id and is connected; Unipile's webhooks (registered by `ensureWebhooks`) come to `/hooks/connector`
// with our secret header: an AccountStatus CREDENTIALS disconnects the account, a request without the
// secret is 401 and stores nothing, a repeated event is a duplicate, an event we do not act on is
// acknowledged; a reconnect uses Unipile's `reconnect` link and keeps the id.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Services } from '../../api/services.js';
import { mailAccounts } from '../../domain/mailbox/accounts.js';
import type { Config } from '../../lib/config.js';
import { createConnector, unipileConnectorOf } from '../../lib/connectors/index.js';
import { hostedNotifyToken, provisionalAccountId, UNIPILE_SECRET_HEADER } from '../../lib/connectors/unipile/index.js';
import { api, call, closeApi, createUser, listen, type TestUser } from '../helpers/api.js';
import { addPerson, registerAccounts, type UnipileAccountsStandIn } from '../helpers/unipile/accounts.js';
import { startStandIn, type StandIn } from '../helpers/unipile/stand-in.js';

const SECRET = 'whsec-unipile-wiring-test';

let standIn: StandIn | undefined;
let unipile: UnipileAccountsStandIn | undefined;
test.after.always(async () => {
  await unipile?.settled();
  await standIn?.close();
  await closeApi();
});

const as = (u: TestUser, body?: unknown) => ({ token: u.accessToken, ...(body === undefined ? {} : { body }) });

/** The API on a unipile-configured copy of the test config, its connector made from that config by the factory. */
async function unipileApi() {
  const { services } = await api();
  standIn = await startStandIn();
  unipile = registerAccounts(standIn);
  const config: Config = {
    ...services.config,
    connector: {
      ...services.config.connector,
      provider: 'unipile',
      unipile: {
        baseUrl: standIn.url,
        apiKey: standIn.apiKey,
        webhookSecret: SECRET,
        searchAccountId: null,
        publicBaseUrl: 'http://placeholder.invalid',
        timeoutMs: 5_000,
      },
    },
  };
  const svc: Services = { ...services, config };
  const { base } = await listen(svc);
  // Unipile reaches our hooks at the API's own address (PUBLIC_BASE_URL).
  config.connector.unipile!.publicBaseUrl = base;
  const connector = createConnector(config.connector, config.sources.corpus, services.orm, {
    accounts: mailAccounts(() => services.orm.em.fork()),
    encryptionKey: config.encryptionKey,
    allowHosts: config.outboundAllowHosts,
  });
  svc.connector = connector;
  const hooked = await unipileConnectorOf(connector)!.ensureWebhooks();
  return {
    base,
    services,
    connector,
    hooked,
    standIn,
    unipile,
    em: () => services.orm.em.fork() as EntityManager,
  };
}

async function waitFor<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('unipile: connect through the hosted link and the notify callback; status webhooks disconnect; the secret is required; repeats are duplicates; reconnect', async (t) => {
  const { base, em, hooked, unipile, standIn } = await unipileApi();
  t.is(hooked.requestUrl, `${base}/hooks/connector`);
  t.is(unipile.webhooks.size, 3);
  const u = await createUser();
  const opts = (o: Parameters<typeof call>[2] = {}) => ({ ...o, base });

  // A network account on the Unipile connector.
  const created = await call(
    'POST',
    '/api/platform-accounts',
    opts(as(u, { channel: 'network', display_name: 'Ada', time_zone: 'Europe/London' })),
  );
  t.is(created.status, 201, created.text);
  t.like(created.body, { connector: 'unipile', status: 'pending', connector_account_id: null });
  const id = created.body.id as string;
  const account = async () =>
    ((await call('GET', '/api/platform-accounts', opts(as(u)))).body.items as { id: string }[]).find(
      (a) => a.id === id,
    ) as Record<string, any> | undefined;

  // Connect: a hosted link of the stand-in, whose notify URL is our route with the account's token.
  const connect = await call('POST', `/api/platform-accounts/${id}/connect`, opts(as(u, {})));
  t.is(connect.status, 200, connect.text);
  t.is(connect.body.next, 'open_hosted_link');
  t.true(String(connect.body.hosted_link.url).startsWith(`${standIn.url}/hosted/`));
  t.like(connect.body.account, { status: 'connecting', connector_account_id: provisionalAccountId(id) });
  const link = unipile.links.at(-1)!;
  t.like(link.body, { type: 'create', providers: ['LINKEDIN'], name: id });
  t.is(link.body.notify_url, `${base}/hooks/connector/accounts?token=${hostedNotifyToken(SECRET, id)}`);

  // A callback with a wrong token changes nothing; one for an unknown account is 404.
  const notifyBody = { status: 'CREATION_SUCCESS', account_id: 'someone-else', name: id };
  const forged = await call('POST', `/hooks/connector/accounts?token=${hostedNotifyToken('nope', id)}`, {
    base,
    body: notifyBody,
  });
  t.is(forged.status, 401, forged.text);
  t.is(forged.body.error.code, 'invalid_signature');
  const untokened = await call('POST', '/hooks/connector/accounts', { base, body: notifyBody });
  t.is(untokened.status, 401);
  const other = randomUUID();
  const unknown = await call('POST', `/hooks/connector/accounts?token=${hostedNotifyToken(SECRET, other)}`, {
    base,
    body: { ...notifyBody, name: other },
  });
  t.is(unknown.status, 404, unknown.text);
  const bad = await call('POST', `/hooks/connector/accounts?token=${hostedNotifyToken(SECRET, id)}`, {
    base,
    body: { status: 'CREATION_SUCCESS', name: id },
  });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_body');
  t.like(await account(), { status: 'connecting', connector_account_id: provisionalAccountId(id) });

  // The user finishes the wizard: the stand-in POSTs the notify callback to our route.
  const owner = addPerson({ first_name: 'Ada', last_name: 'Lovelace', public_identifier: `ada-${randomUUID()}` });
  const { account: remote, notify } = await unipile.finishHostedAuth(undefined, { owner });
  t.is(notify.status, 200);
  t.like(await account(), { status: 'connected', connector_account_id: remote.id, status_reason: null });
  // A repeated callback is harmless; a callback naming another Unipile account is refused.
  const again = await call('POST', `/hooks/connector/accounts?token=${hostedNotifyToken(SECRET, id)}`, {
    base,
    body: { status: 'CREATION_SUCCESS', account_id: remote.id, name: id },
  });
  t.is(again.status, 200, again.text);
  t.deepEqual(again.body, { received: true, status: 'connected' });
  const stolen = await call('POST', `/hooks/connector/accounts?token=${hostedNotifyToken(SECRET, id)}`, {
    base,
    body: { status: 'CREATION_SUCCESS', account_id: 'another-unipile-account', name: id },
  });
  t.is(stolen.status, 409, stolen.text);
  t.is(stolen.body.error.code, 'already_linked');
  t.like(await account(), { connector_account_id: remote.id });

  const events = async () =>
    Number(
      (await em().execute(`select count(*) as n from connector_events where connector_account_id = ?`, [remote.id]))[0]
        .n,
    );

  // Unipile's AccountStatus CREDENTIALS, delivered by the stand-in to /hooks/connector with our secret header.
  const [delivery] = await unipile.setAccountStatus(remote.id, 'CREDENTIALS');
  t.is(delivery.url, `${base}/hooks/connector`);
  t.is(delivery.headers[UNIPILE_SECRET_HEADER], SECRET);
  t.is(delivery.status, 200);
  const lost = await waitFor('the disconnection', account, (a) => a?.status === 'disconnected');
  t.is(lost!.status_reason, 'credentials_expired');
  const [stored] = await em().execute(
    `select type, connector, platform_account_id, payload from connector_events where connector_account_id = ? and type = 'account.status' order by received_at desc limit 1`,
    [remote.id],
  );
  t.like(stored, { type: 'account.status', connector: 'unipile', platform_account_id: id });
  t.like(stored.payload, { type: 'account.status', account_id: remote.id, data: { state: 'disconnected' } });

  // The same without the secret (or with a wrong one): 401, nothing stored, nothing changed.
  const before = await events();
  const ok = JSON.stringify({ AccountStatus: { account_id: remote.id, account_type: 'LINKEDIN', message: 'OK' } });
  const noSecret = await call('POST', '/hooks/connector', { base, rawBody: ok });
  t.is(noSecret.status, 401, noSecret.text);
  t.is(noSecret.body.error.code, 'invalid_signature');
  const wrong = await call('POST', '/hooks/connector', {
    base,
    rawBody: ok,
    headers: { [UNIPILE_SECRET_HEADER]: `${SECRET}x` },
  });
  t.is(wrong.status, 401);
  t.is(await events(), before);
  t.like(await account(), { status: 'disconnected' });

  // A repeated event (the same message delivered twice) is stored once.
  const ben = addPerson({ first_name: 'Ben', public_identifier: `ben-${randomUUID()}` });
  const { message, deliveries } = await unipile.inboundMessage(remote.id, ben, 'Hello Ada');
  t.is(deliveries[0].status, 200);
  const repeat = await call('POST', '/hooks/connector', {
    base,
    rawBody: JSON.stringify(deliveries[0].body),
    headers: { [UNIPILE_SECRET_HEADER]: SECRET },
  });
  t.is(repeat.status, 200, repeat.text);
  t.deepEqual(repeat.body, { received: true, duplicate: true });
  const [msg] = await em().execute(`select count(*) as n from connector_events where event_id = ?`, [message.id]);
  t.is(Number(msg.n), 1);

  // An event we do not act on is acknowledged (200), and nothing is stored.
  const stored2 = await events();
  const read = await call('POST', '/hooks/connector', {
    base,
    rawBody: JSON.stringify({ event: 'message_read', account_id: remote.id, message_id: 'm-read' }),
    headers: { [UNIPILE_SECRET_HEADER]: SECRET },
  });
  t.is(read.status, 200, read.text);
  t.deepEqual(read.body, { received: true, duplicate: false, ignored: true });
  t.is(await events(), stored2);

  // Reconnect: Unipile's `reconnect` link for the id the account holds; the callback connects it again.
  const reconnect = await call('POST', `/api/platform-accounts/${id}/connect`, opts(as(u, {})));
  t.is(reconnect.status, 200, reconnect.text);
  t.like(reconnect.body.account, { status: 'connecting', connector_account_id: remote.id });
  t.like(unipile.links.at(-1)!.body, { type: 'reconnect', reconnect_account: remote.id, name: id });
  const back = await unipile.finishHostedAuth();
  t.is(back.account.id, remote.id);
  t.is(back.notify.status, 200);
  t.like(await account(), { status: 'connected', connector_account_id: remote.id, status_reason: null });
});

test('unipile: the notify route refuses every callback when the connector is not Unipile', async (t) => {
  const id = randomUUID();
  const r = await call('POST', `/hooks/connector/accounts?token=${hostedNotifyToken(SECRET, id)}`, {
    body: { status: 'CREATION_SUCCESS', account_id: 'x', name: id },
  });
  t.is(r.status, 401, r.text);
  t.is(r.body.error.code, 'invalid_signature');
});
