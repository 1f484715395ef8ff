import test from 'ava';
import { PlatformAccount } from '../../db/entities/PlatformAccount.js';
import { DEMO_USER_ID } from '../../domain/demo/seed.js';
import { decrypt } from '../../lib/crypto.js';
import { requestSlot } from '../../domain/governor/governor.js';
import { sandboxDisconnect } from '../../lib/connectors/sandbox-network.js';
import {
  ConnectorError,
  SandboxNetwork,
  UnipileConnector,
  type ConnectorAccountStatus,
} from '../../lib/connectors/index.js';
import { api, call, closeApi, createTestApp, createUser, listen, type TestUser } from '../helpers/api.js';
import { seedCampaign } from '../helpers/campaigns.js';
import { createOwner, em } from '../helpers/billing.js';
import { startServer } from '../helpers/source-servers.js';
import { addMemberViaInvite } from '../helpers/team.js';
test.after.always(closeApi);

const BASE = '/api/platform-accounts';
const as = (u: TestUser, body?: unknown) => ({ token: u.accessToken, ...(body === undefined ? {} : { body }) });

async function created(u: TestUser, body: Record<string, unknown> = {}) {
  const r = await call(
    'POST',
    BASE,
    as(u, { channel: 'network', display_name: 'Ana', time_zone: 'Europe/Berlin', ...body }),
  );
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.text}`);
  return r.body as { id: string; [k: string]: any };
}

test('create: 201 with the canonical time zone and default working hours; the time zone is required and validated', async (t) => {
  const u = await createOwner();
  const a = await created(u, { channel: 'email', display_name: '  Ana (sales)  ', time_zone: 'america/new_york' });
  t.like(a, {
    channel: 'email',
    display_name: 'Ana (sales)',
    time_zone: 'America/New_York',
    status: 'pending',
    connector: 'sandbox',
    connector_account_id: null,
    has_credentials: false,
  });
  t.deepEqual(a.working_hours, { days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' });
  t.deepEqual(a.warmup, { started_at: null, skipped_at: null });

  const missing = await call('POST', BASE, as(u, { channel: 'email', display_name: 'x' }));
  t.is(missing.status, 400);
  t.is(missing.body.error.code, 'invalid_body');
  const unknown = await call(
    'POST',
    BASE,
    as(u, { channel: 'email', display_name: 'x', time_zone: 'Mars/Olympus_Mons' }),
  );
  t.is(unknown.status, 400);
  t.is(unknown.body.error.code, 'invalid_time_zone');
  const hours = await call(
    'POST',
    BASE,
    as(u, {
      channel: 'email',
      display_name: 'x',
      time_zone: 'UTC',
      working_hours: { days: [1], start: '18:00', end: '09:00' },
    }),
  );
  t.is(hours.status, 400);
  t.is(hours.body.error.code, 'invalid_body');
  const days = await call(
    'POST',
    BASE,
    as(u, {
      channel: 'email',
      display_name: 'x',
      time_zone: 'UTC',
      working_hours: { days: [1, 1], start: '08:00', end: '09:00' },
    }),
  );
  t.is(days.status, 400);
  const channel = await call('POST', BASE, as(u, { channel: 'fax', display_name: 'x', time_zone: 'UTC' }));
  t.is(channel.status, 400);
});

test('create: working hours may end at 24:00 (the end of the day), and only end there', async (t) => {
  const u = await createOwner();
  const late = await created(u, {
    time_zone: 'Europe/Berlin',
    working_hours: { days: [1, 2, 3, 4, 5, 6, 7], start: '18:00', end: '24:00' },
  });
  t.deepEqual(late.working_hours, { days: [1, 2, 3, 4, 5, 6, 7], start: '18:00', end: '24:00' });
  const allDay = await created(u, {
    channel: 'email',
    time_zone: 'UTC',
    working_hours: { days: [1], start: '00:00', end: '24:00' },
  });
  t.deepEqual(allDay.working_hours, { days: [1], start: '00:00', end: '24:00' });
  for (const working_hours of [
    { days: [1], start: '24:00', end: '24:00' },
    { days: [1], start: '09:00', end: '24:01' },
    { days: [1], start: '09:00', end: '24:30' },
    { days: [1], start: '09:00', end: '25:00' },
  ]) {
    const r = await call('POST', BASE, as(u, { channel: 'email', display_name: 'x', time_zone: 'UTC', working_hours }));
    t.is(r.status, 400, JSON.stringify(working_hours));
    t.is(r.body.error.code, 'invalid_body');
  }
  t.is(await (await em()).count(PlatformAccount, { workspace: { owner: u.id } }), 2);
});

test('create: the plan bounds the number of accounts; members may read but not manage; Demo is read-only', async (t) => {
  const free = await createUser();
  await created(free);
  const second = await call('POST', BASE, as(free, { channel: 'email', display_name: 'B', time_zone: 'UTC' }));
  t.is(second.status, 403);
  t.is(second.body.error.code, 'plan_limit_reached');
  t.like(second.body.error.details, { limit: 'platformAccounts', max: 1 });

  const owner = await createOwner();
  const a = await created(owner);
  const { user: member } = await addMemberViaInvite(owner, { role: 'member' });
  const actingAs = (body?: unknown) => ({ ...as(member, body), headers: { 'x-acting-as': owner.id } });
  const list = await call('GET', BASE, actingAs());
  t.is(list.status, 200, list.text);
  t.deepEqual(
    list.body.items.map((x: any) => x.id),
    [a.id],
  );
  const refused = await call('POST', BASE, actingAs({ channel: 'email', display_name: 'x', time_zone: 'UTC' }));
  t.is(refused.status, 403);
  t.is(refused.body.error.code, 'not_assigned');
  t.is((await call('PATCH', `${BASE}/${a.id}/warmup-skip`, actingAs())).body.error.code, 'not_assigned');

  const visitor = await createUser();
  t.is((await call('POST', '/api/me/workspaces/demo/join', as(visitor))).status, 201);
  const demo = await call('POST', BASE, {
    ...as(visitor, { channel: 'email', display_name: 'x', time_zone: 'UTC' }),
    headers: { 'x-acting-as': DEMO_USER_ID },
  });
  t.is(demo.status, 403);
  t.is(demo.body.error.code, 'demo_read_only');
});

test('list: oldest first with cursor pagination and channel/status filters', async (t) => {
  const u = await createOwner();
  const ids = [];
  for (const channel of ['email', 'network', 'email']) ids.push((await created(u, { channel })).id);
  const first = await call('GET', `${BASE}?limit=2`, as(u));
  t.deepEqual(
    first.body.items.map((a: any) => a.id),
    ids.slice(0, 2),
  );
  t.truthy(first.body.next_cursor);
  const rest = await call('GET', `${BASE}?limit=2&cursor=${first.body.next_cursor}`, as(u));
  t.deepEqual(
    rest.body.items.map((a: any) => a.id),
    ids.slice(2),
  );
  t.is(rest.body.next_cursor, null);
  const emails = await call('GET', `${BASE}?channel=email`, as(u));
  t.deepEqual(
    emails.body.items.map((a: any) => a.id),
    [ids[0], ids[2]],
  );
  t.is((await call('GET', `${BASE}?status=connected`, as(u))).body.items.length, 0);
  t.is((await call('GET', `${BASE}?status=nope`, as(u))).status, 400);
});

test('connect: a hosted link, finished at the connector, reads connected; credentials connect at once and are sealed, never returned; 409 when connected', async (t) => {
  const u = await createOwner();
  const hosted = await created(u);
  const r = await call('POST', `${BASE}/${hosted.id}/connect`, as(u, { return_url: 'https://app.example/done' }));
  t.is(r.status, 200, r.text);
  t.is(r.body.next, 'open_hosted_link');
  t.regex(r.body.hosted_link.url, /^http:\/\/sandbox\.invalid\/connect\//);
  t.like(r.body.account, { status: 'connecting' });
  t.truthy(r.body.account.connector_account_id);
  // The (simulated) user finishes at the link; setup-status asks the connector and applies it.
  const setup = await call('GET', `${BASE}/${hosted.id}/setup-status`, as(u));
  t.is(setup.status, 200, setup.text);
  t.like(setup.body, {
    status: 'connected',
    connector: { state: 'connected', error: null },
    sending_domain: null,
    ready: true,
  });
  const again = await call('POST', `${BASE}/${hosted.id}/connect`, as(u, {}));
  t.is(again.status, 409);
  t.is(again.body.error.code, 'already_connected');

  const direct = await created(u, { channel: 'email' });
  const password = 'hunter2-secret-value';
  const c = await call(
    'POST',
    `${BASE}/${direct.id}/connect`,
    as(u, { credentials: { email: 'ana@acme.example', password } }),
  );
  t.is(c.status, 200, c.text);
  t.like(c.body, { next: 'none', hosted_link: null, account: { status: 'connected', has_credentials: true } });
  // The answer carries the address the connector knows, before any status read.
  t.is(c.body.account.address, 'ana@acme.example');
  t.is((await (await em()).findOneOrFail(PlatformAccount, direct.id)).address, 'ana@acme.example');
  t.is(
    (await call('GET', `${BASE}?channel=email`, as(u))).body.items.find((a: any) => a.id === direct.id).address,
    'ana@acme.example',
  );
  t.truthy(c.body.account.warmup.started_at);
  t.false(c.text.includes(password));
  const row = await (await em()).findOneOrFail(PlatformAccount, direct.id);
  t.false(row.credentialsSealed!.includes(password));
  t.deepEqual(JSON.parse(decrypt(row.credentialsSealed!, (await api()).services.config.encryptionKey)), {
    email: 'ana@acme.example',
    password,
  });
  t.false((await call('GET', BASE, as(u))).text.includes(password));
});

test('setup-status of an email account: the connector, the sending domain’s records and what to fix', async (t) => {
  const u = await createOwner();
  const good = await created(u, { channel: 'email' });
  await call(
    'POST',
    `${BASE}/${good.id}/connect`,
    as(u, { credentials: { email: 'ana@acme.example', password: 'x' } }),
  );
  const ok = await call('GET', `${BASE}/${good.id}/setup-status`, as(u));
  t.like(ok.body, {
    ready: true,
    sending_domain: {
      domain: 'acme.example',
      ready: true,
      spf: { status: 'pass' },
      dkim: { status: 'pass', selector: 'sandbox' },
      dmarc: { status: 'pass' },
    },
  });
  t.deepEqual(ok.body.steps, []);

  const bad = await created(u, { channel: 'email' });
  await call(
    'POST',
    `${BASE}/${bad.id}/connect`,
    as(u, { credentials: { email: 'bo@nodmarc-shop.example', password: 'x' } }),
  );
  const missing = await call('GET', `${BASE}/${bad.id}/setup-status`, as(u));
  t.like(missing.body, { ready: false, sending_domain: { dmarc: { status: 'missing' }, spf: { status: 'pass' } } });
  t.is(missing.body.steps.length, 1);
  t.regex(missing.body.steps[0], /_dmarc\.nodmarc-shop\.example/);

  const pending = await created(u, { channel: 'email' });
  const p = await call('GET', `${BASE}/${pending.id}/setup-status`, as(u));
  t.like(p.body, { status: 'pending', ready: false, connector: { state: null }, sending_domain: null });
  t.regex(p.body.steps[0], /connect the account/);
});

test('setup-status sees a disconnection, announces it once, and says to reconnect', async (t) => {
  const u = await createOwner();
  const a = await created(u);
  const c = await call(
    'POST',
    `${BASE}/${a.id}/connect`,
    as(u, { credentials: { username: 'https://pronet.example/in/ana' } }),
  );
  await sandboxDisconnect(await em(), c.body.account.connector_account_id, 'checkpoint');
  const s = await call('GET', `${BASE}/${a.id}/setup-status`, as(u));
  t.like(s.body, { status: 'disconnected', connector: { state: 'disconnected', reason: 'checkpoint' }, ready: false });
  t.regex(s.body.steps[0], /reconnect the account \(checkpoint\)/);
  await call('GET', `${BASE}/${a.id}/setup-status`, as(u));
  const events = await (
    await em()
  )
    .getConnection()
    .execute(`select body from webhook_events where name = 'account.disconnected' and body like ?`, [`%${a.id}%`]);
  t.is(events.length, 1);
});

test('signature (email only), invite withdrawal (network only), enrich, warm-up skip', async (t) => {
  const u = await createOwner();
  const mail = await created(u, { channel: 'email' });
  const net = await created(u, { channel: 'network' });

  const sig = await call('PATCH', `${BASE}/${mail.id}/email-signature`, as(u, { signature: 'Ana\nAcme' }));
  t.is(sig.status, 200, sig.text);
  t.is(sig.body.signature, 'Ana\nAcme');
  t.is((await call('PATCH', `${BASE}/${mail.id}/email-signature`, as(u, { signature: null }))).body.signature, null);
  const notEmail = await call('PATCH', `${BASE}/${net.id}/email-signature`, as(u, { signature: 'x' }));
  t.is(notEmail.status, 400);
  t.is(notEmail.body.error.code, 'not_email_account');

  const w = await call('PATCH', `${BASE}/${net.id}/invite-withdrawal`, as(u, { enabled: true, after_days: 30 }));
  t.deepEqual(w.body.invite_withdrawal, { enabled: true, after_days: 30 });
  t.deepEqual(
    (await call('PATCH', `${BASE}/${net.id}/invite-withdrawal`, as(u, { enabled: false }))).body.invite_withdrawal,
    { enabled: false, after_days: null },
  );
  t.deepEqual(
    (await call('PATCH', `${BASE}/${net.id}/invite-withdrawal`, as(u, { enabled: true }))).body.invite_withdrawal,
    { enabled: true, after_days: 21 },
  );
  t.is(
    (await call('PATCH', `${BASE}/${net.id}/invite-withdrawal`, as(u, { enabled: true, after_days: 3 }))).status,
    400,
  );
  const notNet = await call('PATCH', `${BASE}/${mail.id}/invite-withdrawal`, as(u, { enabled: true }));
  t.is(notNet.status, 400);
  t.is(notNet.body.error.code, 'not_network_account');

  const early = await call('POST', `${BASE}/${net.id}/enrich`, as(u));
  t.is(early.status, 409);
  t.is(early.body.error.code, 'not_connected');
  await call('POST', `${BASE}/${net.id}/connect`, as(u, {}));
  await call('GET', `${BASE}/${net.id}/setup-status`, as(u)); // completes the hosted link
  const e = await call('POST', `${BASE}/${net.id}/enrich`, as(u));
  t.is(e.status, 200, e.text);
  t.truthy(e.body.profile_fetched_at);
  t.regex(e.body.profile.profile_url, /^https:\/\/pronet\.example\/in\//);
  t.is(e.body.address, e.body.profile.profile_url);

  const skip = await call('PATCH', `${BASE}/${net.id}/warmup-skip`, as(u));
  t.is(skip.status, 200);
  t.truthy(skip.body.warmup.skipped_at);
  t.is(
    (await call('PATCH', `${BASE}/${net.id}/warmup-skip`, as(u))).body.warmup.skipped_at,
    skip.body.warmup.skipped_at,
  );
});

test('delete: disconnects at the connector, then 204; reassign_to is validated; the account is gone', async (t) => {
  const u = await createOwner();
  const a = await created(u, { channel: 'network' });
  const other = await created(u, { channel: 'email' });
  const c = await call('POST', `${BASE}/${a.id}/connect`, as(u, { credentials: { username: 'x' } }));
  const badTarget = await call('DELETE', `${BASE}/${a.id}`, as(u, { on_campaigns: 'reassign', reassign_to: other.id }));
  t.is(badTarget.status, 400);
  t.is(badTarget.body.error.code, 'invalid_reassign_to');
  const noTarget = await call('DELETE', `${BASE}/${a.id}`, as(u, { on_campaigns: 'reassign' }));
  t.is(noTarget.status, 400);
  const self = await call('DELETE', `${BASE}/${a.id}`, as(u, { on_campaigns: 'reassign', reassign_to: a.id }));
  t.is(self.body.error.code, 'invalid_reassign_to');

  const d = await call('DELETE', `${BASE}/${a.id}`, as(u, { on_campaigns: 'pause' }));
  t.is(d.status, 204, d.text);
  t.is((await call('GET', `${BASE}/${a.id}/setup-status`, as(u))).status, 404);
  const status = await (await api()).services.connector.status(c.body.account.connector_account_id);
  t.is(status.state, 'disconnected');
  t.is((await call('DELETE', `${BASE}/${other.id}`, as(u))).status, 204); // never connected: nothing to disconnect
});

test('502 connector_unavailable on delete, connect and enrich when the connector fails (details: error_class, retryable); nothing changes', async (t) => {
  const u = await createOwner();
  // Connected through the sandbox connector; then the same accounts through a Unipile connector whose
  // service answers 503 to everything (and one that refuses our API key: 401).
  const net = await created(u, { channel: 'network' });
  const connected = await call('POST', `${BASE}/${net.id}/connect`, as(u, { credentials: { username: 'ana' } }));
  t.is(connected.status, 200, connected.text);
  const connectorAccountId = connected.body.account.connector_account_id as string;
  const pending = await created(u, { channel: 'network' });
  const before = (await call('GET', BASE, as(u))).body.items;

  const { services } = await api();
  const unipileError = (status: number, type: string) =>
    JSON.stringify({ title: type.replace(/_/g, ' '), type: `errors/${type}`, status });
  const down = await startServer(
    (_req, res) =>
      void res.writeHead(503, { 'content-type': 'application/json' }).end(unipileError(503, 'service_unavailable')),
  );
  const refusing = await startServer(
    (_req, res) =>
      void res.writeHead(401, { 'content-type': 'application/json' }).end(unipileError(401, 'missing_credentials')),
  );
  const unipile = (baseUrl: string) =>
    new UnipileConnector({ baseUrl, apiKey: 'k', publicBaseUrl: 'http://127.0.0.1:1', webhookSecret: 'x' });
  const downConnector = unipile(down.url);
  const refusingConnector = unipile(refusing.url);
  t.teardown(async () => {
    await Promise.all([downConnector.close(), refusingConnector.close()]);
    await Promise.all([down.close(), refusing.close()]);
  });
  const base = (await listen({ ...services, connector: downConnector })).base;
  const refusedBase = (await listen({ ...services, connector: refusingConnector })).base;

  const expect502 = (
    r: { status: number; text: string; body: any },
    what: string,
    details: { error_class: string; retryable: boolean },
  ) => {
    t.is(r.status, 502, `${what}: ${r.text}`);
    t.is(r.body.error.code, 'connector_unavailable', what);
    t.deepEqual(r.body.error.details, details, what);
  };
  const unavailable = { error_class: 'unavailable', retryable: true };
  expect502(await call('DELETE', `${BASE}/${net.id}`, { ...as(u), base }), 'delete', unavailable);
  expect502(await call('POST', `${BASE}/${pending.id}/connect`, { ...as(u, {}), base }), 'connect', unavailable);
  expect502(await call('POST', `${BASE}/${net.id}/enrich`, { ...as(u), base }), 'enrich', unavailable);
  expect502(
    await call('POST', `${BASE}/${pending.id}/connect`, { ...as(u, {}), base: refusedBase }),
    'connect, refused',
    { error_class: 'auth', retryable: false },
  );
  t.deepEqual(
    down.requests.map((r) => `${r.method} ${r.url.pathname}`),
    [`DELETE /api/v1/accounts/${connectorAccountId}`, 'POST /api/v1/hosted/accounts/link', 'GET /api/v1/users/me'],
    'the connector was asked each time',
  );
  t.is(refusing.requests.length, 1);

  // Nothing changed: the account kept (still connected, no profile), the other still pending, never linked.
  t.deepEqual((await call('GET', BASE, as(u))).body.items, before);
  const row = await (await em()).findOneOrFail(PlatformAccount, pending.id, { refresh: true });
  t.like(row, { status: 'pending', connectorAccountId: null, credentialsSealed: null });
  t.is((await (await em()).findOneOrFail(PlatformAccount, net.id, { refresh: true })).profileFetchedAt, null);
});

/** The sandbox network whose status reads fail (ConnectorError `unavailable`) while `down`; counts them. */
class StatusDownNetwork extends SandboxNetwork {
  down = true;
  reads = 0;
  override async status(connectorAccountId: string, signal?: AbortSignal): Promise<ConnectorAccountStatus> {
    this.reads++;
    if (this.down) throw new ConnectorError('sandbox', 'unavailable', 'HTTP 503');
    return super.status(connectorAccountId, signal);
  }
}

test('connect answered "connected" without an address: the address comes from one status read; a failed read still connects, the address filled in by the next read', async (t) => {
  const u = await createOwner();
  const { services } = await api();
  // The sandbox network connects at once with credentials and names no address in its answer.
  const connector = new StatusDownNetwork(services.config.sources.corpus, services.orm);
  const base = (await listen({ ...services, connector })).base;

  // The status read fails: still connected (the connector has the account), address unknown for now.
  const first = await created(u, { channel: 'email' });
  const c1 = await call('POST', `${BASE}/${first.id}/connect`, {
    ...as(u, { credentials: { email: 'a@b.example', password: 'x' } }),
    base,
  });
  t.is(c1.status, 200, c1.text);
  t.like(c1.body.account, { status: 'connected', address: null });
  t.truthy(c1.body.account.connector_account_id);
  t.is(connector.reads, 1, 'one status read');

  connector.down = false;
  const second = await created(u, { channel: 'email' });
  const c2 = await call('POST', `${BASE}/${second.id}/connect`, {
    ...as(u, { credentials: { email: 'c@d.example', password: 'x' } }),
    base,
  });
  t.is(c2.status, 200, c2.text);
  t.like(c2.body.account, { status: 'connected', address: 'c@d.example' });
  t.is(connector.reads, 2, 'one status read');
  // The first account's address arrives with its next status read.
  const setup = await call('GET', `${BASE}/${first.id}/setup-status`, { ...as(u), base });
  t.is(setup.status, 200, setup.text);
  t.is((await (await em()).findOneOrFail(PlatformAccount, first.id)).address, 'a@b.example');
});

test('every id-taking route answers 404 for another workspace’s account, and changes nothing', async (t) => {
  const owner = await createOwner();
  const stranger = await createOwner();
  const a = await created(owner, { channel: 'email' });
  const routes: [string, string, unknown?][] = [
    ['DELETE', `${BASE}/${a.id}`],
    ['POST', `${BASE}/${a.id}/connect`, {}],
    ['PATCH', `${BASE}/${a.id}/email-signature`, { signature: 'x' }],
    ['POST', `${BASE}/${a.id}/enrich`],
    ['PATCH', `${BASE}/${a.id}/invite-withdrawal`, { enabled: true }],
    ['PATCH', `${BASE}/${a.id}/limits`, { min_gap_seconds: 120 }],
    ['GET', `${BASE}/${a.id}/setup-status`],
    ['GET', `${BASE}/${a.id}/usage`],
    ['PATCH', `${BASE}/${a.id}/warmup-skip`],
  ];
  for (const [method, path, body] of routes) {
    const r = await call(method, path, as(stranger, body));
    t.is(r.status, 404, `${method} ${path}: ${r.text}`);
    t.is(r.body.error.code, 'not_found');
  }
  const row = await (await em()).findOneOrFail(PlatformAccount, a.id);
  t.like(row, { status: 'pending', signature: null, warmupSkippedAt: null, connectorAccountId: null });
  t.is((await call('GET', BASE, as(stranger))).body.items.length, 0);
});

test('limits within the plan’s bounds (400 invalid_limits with the allowed range), and usage counting the governor’s grants', async (t) => {
  const u = await createUser(); // free plan: email caps up to 50/250
  const a = await created(u, {
    channel: 'email',
    time_zone: 'Asia/Tokyo',
    working_hours: { days: [1, 2, 3, 4, 5, 6, 7], start: '00:00', end: '23:59' },
  });
  const ok = await call(
    'PATCH',
    `${BASE}/${a.id}/limits`,
    as(u, { caps: { email: { daily: 30, weekly: 120 } }, min_gap_seconds: 30, jitter_seconds: 0 }),
  );
  t.is(ok.status, 200, ok.text);
  t.deepEqual(ok.body.limits, { caps: { email: { daily: 30, weekly: 120 } }, min_gap_seconds: 30, jitter_seconds: 0 });
  const more = await call(
    'PATCH',
    `${BASE}/${a.id}/limits`,
    as(u, { caps: { invitation: { daily: 10, weekly: 50 } } }),
  );
  t.deepEqual(Object.keys(more.body.limits.caps).sort(), ['email', 'invitation']); // other types keep theirs

  const over = await call('PATCH', `${BASE}/${a.id}/limits`, as(u, { caps: { email: { daily: 51, weekly: 100 } } }));
  t.is(over.status, 400);
  t.is(over.body.error.code, 'invalid_limits');
  t.deepEqual(over.body.error.details, [
    { path: 'caps.email.daily', message: 'must be an integer from 1 to 50', min: 1, max: 50 },
  ]);
  const inverted = await call('PATCH', `${BASE}/${a.id}/limits`, as(u, { caps: { email: { daily: 20, weekly: 10 } } }));
  t.is(inverted.body.error.code, 'invalid_limits');
  t.is(inverted.body.error.details[0].path, 'caps.email.weekly');
  t.is((await call('PATCH', `${BASE}/${a.id}/limits`, as(u, { min_gap_seconds: 5 }))).status, 400);

  // Not connected: nothing can be granted, and usage says so.
  let usage = await call('GET', `${BASE}/${a.id}/usage`, as(u));
  t.is(usage.status, 200, usage.text);
  t.like(usage.body, { status: 'pending', time_zone: 'Asia/Tokyo', warmup: null });
  t.deepEqual(
    usage.body.actions.map((x: any) => x.action),
    ['email', 'invitation', 'message', 'profile_view'],
  );
  t.is(usage.body.actions[0].next_slot_at, null);

  await call('POST', `${BASE}/${a.id}/connect`, as(u, { credentials: { email: 'ana@acme.example', password: 'x' } }));
  await call('PATCH', `${BASE}/${a.id}/warmup-skip`, as(u));
  const e = await em();
  const grants = await Promise.all([0, 1, 2].map(() => requestSlot(e.fork(), a.id, 'email')));
  t.is(grants.filter((g) => g.granted).length, 1); // the 30 s gap lets one through at a time
  usage = await call('GET', `${BASE}/${a.id}/usage`, as(u));
  const email = usage.body.actions.find((x: any) => x.action === 'email');
  t.like(email, { today: 1, week: 1, caps: { daily: 30, weekly: 120 }, remaining_today: 29, remaining_week: 119 });
  t.true(new Date(email.next_slot_at).getTime() > Date.now());
});

test('delete with campaigns sending from the account: 409 account_in_use, or reassign / pause them', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const ws = (await (await em()).findOneOrFail(PlatformAccount, (await created(u)).id)).workspace.id;
  const [a, b, c] = [await created(u), await created(u), await created(u)];
  const active = await seedCampaign(ws, {
    appId: app.id,
    accountIds: [a.id],
    steps: [{ type: 'invitation' }],
    status: 'active',
  });
  const other = await seedCampaign(ws, {
    appId: app.id,
    accountIds: [b.id, c.id],
    steps: [{ type: 'invitation' }],
    status: 'active',
  });

  const refused = await call('DELETE', `${BASE}/${a.id}`, as(u));
  t.is(refused.status, 409);
  t.is(refused.body.error.code, 'account_in_use');
  t.deepEqual(refused.body.error.details, { campaign_ids: [active.id] });
  t.is((await call('DELETE', `${BASE}/${a.id}`, as(u, { on_campaigns: 'reassign', reassign_to: b.id }))).status, 204);
  const campaign = async (id: string) =>
    (await (await em()).getConnection().execute(`select status, account_ids from campaigns where id = ?`, [id]))[0];
  t.like(await campaign(active.id), { status: 'active', account_ids: [b.id] });

  t.is((await call('DELETE', `${BASE}/${b.id}`, as(u, { on_campaigns: 'pause' }))).status, 204);
  t.like(await campaign(active.id), { status: 'paused', account_ids: [] });
  t.like(await campaign(other.id), { status: 'paused', account_ids: [c.id] });
});
