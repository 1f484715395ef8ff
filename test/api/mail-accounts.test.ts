// An email account connected with its own mailbox (SMTP + IMAP on the real local mail server,
// GreenMail) through the HTTP API: connected at once, credentials sealed and never returned, every
// 400 code of a failed check, setup-status reading the mailbox live, the mailbox sync started.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { PlatformAccount } from '../../db/entities/PlatformAccount.js';
import { decrypt, encrypt } from '../../lib/crypto.js';
import { mailboxWorkflowIds } from '../../lib/workflow-ids.js';
import { mailAccounts } from '../../domain/mailbox/accounts.js';
import { MailConnector } from '../../lib/connectors/mailbox/connector.js';
import { RoutingConnector } from '../../lib/connectors/routing.js';
import { api, call, closeApi, listen, type TestUser } from '../helpers/api.js';
import { tcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../../scripts/children.js';
import { createOwner, em } from '../helpers/billing.js';
import { createMailbox, mailCredentials, mailServer, uniqueAddress } from '../helpers/mail-server.js';
test.after.always(closeApi);

const BASE = '/api/platform-accounts';
const as = (u: TestUser, body?: unknown) => ({ token: u.accessToken, ...(body === undefined ? {} : { body }) });

async function created(u: TestUser, channel: 'email' | 'network' = 'email') {
  const r = await call('POST', BASE, as(u, { channel, display_name: 'Ana Sender', time_zone: 'Europe/Paris' }));
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.text}`);
  return r.body as { id: string };
}

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

test('connect with mailbox credentials: connected at once on the mail connector, sealed, never returned; the mailbox sync starts; setup-status, enrich and delete work', async (t) => {
  const { services } = await api();
  const u = await createOwner();
  const password = `pw-${randomUUID()}`;
  const address = await createMailbox(uniqueAddress('ana', 'acme.test'), password);
  const a = await created(u);
  const credentials = mailCredentials(address, password);
  const c = await call('POST', `${BASE}/${a.id}/connect`, as(u, { credentials }));
  t.is(c.status, 200, c.text);
  t.like(c.body, {
    next: 'none',
    hosted_link: null,
    account: {
      status: 'connected',
      connector: 'mail',
      connector_account_id: `mail:${a.id}`,
      address,
      has_credentials: true,
    },
  });
  t.truthy(c.body.account.warmup.started_at);
  t.false(c.text.includes(password));
  const row = await (await em()).findOneOrFail(PlatformAccount, a.id);
  t.false(row.credentialsSealed!.includes(password), 'sealed in the column');
  t.deepEqual(JSON.parse(decrypt(row.credentialsSealed!, services.config.encryptionKey)), credentials);
  for (const path of [BASE, `${BASE}?channel=email`]) t.false((await call('GET', path, as(u))).text.includes(password));

  // Its INBOX follower was started.
  const sync = await services.temporal.workflow.getHandle(mailboxWorkflowIds.sync(a.id)).describe();
  t.is(sync.workflowId, `mailbox-sync:${a.id}`);

  const setup = await call('GET', `${BASE}/${a.id}/setup-status`, as(u));
  t.is(setup.status, 200, setup.text);
  t.like(setup.body, {
    status: 'connected',
    connector: { state: 'connected', reason: null, error: null },
    sending_domain: { domain: 'acme.test' },
  });
  t.false(setup.text.includes(password));
  const enriched = await call('POST', `${BASE}/${a.id}/enrich`, as(u));
  t.is(enriched.status, 200, enriched.text);
  t.like(enriched.body.profile, { name: 'Ana Sender', email: address });

  const again = await call('POST', `${BASE}/${a.id}/connect`, as(u, { credentials }));
  t.is(again.status, 409);
  t.is(again.body.error.code, 'already_connected');
  t.is((await call('DELETE', `${BASE}/${a.id}`, as(u, {}))).status, 204);
});

test('connect: each failed check is a 400 with its code and side; the account stays pending without credentials', async (t) => {
  const u = await createOwner();
  const right = `right-${randomUUID()}`;
  const wrong = `wrong-${randomUUID()}`;
  const address = await createMailbox(uniqueAddress('ana'), right);
  const m = mailServer();
  const closed = String(await closedPort());
  const { imap_host: _omitted, ...noImapHost } = mailCredentials(address, right);
  const cases: [Record<string, string>, string, string | null][] = [
    [noImapHost, 'invalid_credentials', null],
    [mailCredentials(address, right, { smtp_port: 'not-a-port' }), 'invalid_credentials', null],
    [mailCredentials(address, wrong), 'auth_failed', 'smtp'],
    [mailCredentials(address, wrong, { smtp_password: right }), 'auth_failed', 'imap'],
    [mailCredentials(address, right, { imap_port: closed }), 'host_unreachable', 'imap'],
    [mailCredentials(address, right, { smtp_port: String(m.smtpsPort), smtp_security: 'tls' }), 'tls_failed', 'smtp'],
    [
      mailCredentials(address, right, { smtp_host: '10.0.0.1', smtp_security: 'starttls' }),
      'blocked_destination',
      'smtp',
    ],
    // "none" (no TLS) on a host that is not allow-listed: the password would travel in clear.
    [mailCredentials(address, right, { imap_host: 'mail.example.com' }), 'invalid_credentials', 'imap'],
  ];
  const a = await created(u);
  for (const [credentials, code, side] of cases) {
    const r = await call('POST', `${BASE}/${a.id}/connect`, as(u, { credentials }));
    t.is(r.status, 400, `${code}: ${r.text}`);
    t.is(r.body.error.code, code, r.text);
    t.is(r.body.error.details?.side ?? null, side, r.text);
    t.false(r.text.includes(right) || r.text.includes(wrong), 'no password in the answer');
  }
  const row = await (await em()).findOneOrFail(PlatformAccount, a.id);
  t.like(row, { status: 'pending', connector: 'sandbox', connectorAccountId: null, credentialsSealed: null });

  const network = await created(u, 'network');
  const n = await call(
    'POST',
    `${BASE}/${network.id}/connect`,
    as(u, { credentials: mailCredentials(address, right) }),
  );
  t.is(n.status, 400);
  t.is(n.body.error.code, 'not_email_account');
});

test('connect: a malformed SMTP or IMAP host is 400 invalid_credentials naming the field, before any connection; well-formed hosts pass that check', async (t) => {
  const u = await createOwner();
  const password = `pw-${randomUUID()}`;
  const address = await createMailbox(uniqueAddress('ana'), password);
  const a = await created(u);
  const malformed = [
    '08.0.0.1',
    '1.2.3.999',
    '1.2.3',
    '01.2.3.4',
    '256.0.0.1',
    '1.2.3.4.5',
    'mail..example.com',
    '.example.com',
    'mail example.com',
    'example.123',
    'a.0x10',
    '-mail.example.com',
    'fe80::1%eth0',
    '[::1',
    '   ',
  ];
  for (const side of ['smtp', 'imap'] as const) {
    for (const host of malformed) {
      const r = await call(
        'POST',
        `${BASE}/${a.id}/connect`,
        as(u, { credentials: mailCredentials(address, password, { [`${side}_host`]: host }) }),
      );
      t.is(r.status, 400, `${side} ${host}: ${r.text}`);
      t.is(r.body.error.code, 'invalid_credentials', `${side} ${host}: ${r.text}`);
      t.is(r.body.error.details?.side ?? null, null, 'a field error');
      t.true(r.body.error.message.includes(`${side}_host must be a host name or an IP address`), r.body.error.message);
    }
  }
  t.like(await (await em()).findOneOrFail(PlatformAccount, a.id, { refresh: true }), {
    status: 'pending',
    connectorAccountId: null,
  });
  // Well-formed hosts get past the field check: a private IPv4 or IPv6 literal is then refused as a
  // destination (blocked_destination, on its side), not as a malformed field.
  for (const host of ['10.0.0.1', '[fd00::1]', 'fd00::1']) {
    const r = await call(
      'POST',
      `${BASE}/${a.id}/connect`,
      as(u, { credentials: mailCredentials(address, password, { smtp_host: host, smtp_security: 'starttls' }) }),
    );
    t.is(r.status, 400, r.text);
    t.like(r.body.error, { code: 'blocked_destination', details: { side: 'smtp' } }, host);
  }
  // And the local mail server (an allow-listed IPv4 literal) connects.
  const ok = await call('POST', `${BASE}/${a.id}/connect`, as(u, { credentials: mailCredentials(address, password) }));
  t.is(ok.status, 200, ok.text);
  t.is((await call('DELETE', `${BASE}/${a.id}`, as(u, {}))).status, 204);
});

test('setup-status reads the mailbox live: refused credentials disconnect it (credentials_invalid, announced); a reconnect with good ones connects again', async (t) => {
  const { services } = await api();
  const u = await createOwner();
  const address = await createMailbox(uniqueAddress('ana'), 'first');
  const a = await created(u);
  t.is(
    (await call('POST', `${BASE}/${a.id}/connect`, as(u, { credentials: mailCredentials(address, 'first') }))).status,
    200,
  );
  // The stored password no longer works (as after a password change at the provider).
  await (
    await em()
  ).nativeUpdate(
    PlatformAccount,
    { id: a.id },
    { credentialsSealed: encrypt(JSON.stringify(mailCredentials(address, 'changed')), services.config.encryptionKey) },
  );
  const s = await call('GET', `${BASE}/${a.id}/setup-status`, as(u));
  t.is(s.status, 200, s.text);
  t.like(s.body, {
    status: 'disconnected',
    connector: { state: 'disconnected', reason: 'credentials_invalid' },
    ready: false,
  });
  t.regex(s.body.steps[0], /reconnect the account \(credentials_invalid\)/);
  const events = await (
    await em()
  )
    .getConnection()
    .execute(`select body from webhook_events where name = 'account.disconnected' and body like ?`, [`%${a.id}%`]);
  t.is(events.length, 1);

  const back = await call('POST', `${BASE}/${a.id}/connect`, as(u, { credentials: mailCredentials(address, 'first') }));
  t.is(back.status, 200, back.text);
  t.like(back.body.account, { status: 'connected', connector: 'mail', status_reason: null });
});

test('setup-status: a host the outbound policy now refuses or a server that does not answer leaves the account connected, with the problem; it clears by itself when the host is back', async (t) => {
  const { services } = await api();
  const u = await createOwner();
  const address = await createMailbox(uniqueAddress('ana'), 'pw');
  const a = await created(u);
  const m = mailServer();
  const proxy = await tcpProxy({ host: m.host, port: m.imapPort });
  t.teardown(() => proxy.close());
  const credentials = mailCredentials(address, 'pw', { imap_port: String(proxy.port) });
  t.is((await call('POST', `${BASE}/${a.id}/connect`, as(u, { credentials }))).status, 200);
  // The mailbox sync (started by connect) has opened the INBOX once: its login would clear a problem.
  await waitFor(
    'the sync’s first pass',
    async () =>
      (
        await (
          await em()
        )
          .getConnection()
          .execute(`select 1 from mailbox_cursors where account_id = ? and uid_validity is not null`, [a.id])
      ).length > 0,
    60_000,
  );
  const setup = async (base?: string) => {
    const s = await call('GET', `${BASE}/${a.id}/setup-status`, { ...as(u), base });
    t.is(s.status, 200, s.text);
    return s.body;
  };

  // OUTBOUND_ALLOW_HOSTS narrowed: the local server is a private address again. Not final.
  const narrowed = new MailConnector({
    accounts: mailAccounts(() => services.orm.em.fork()),
    encryptionKey: services.config.encryptionKey,
    allowHosts: [],
  });
  t.teardown(() => narrowed.close());
  const { base } = await listen({ ...services, connector: new RoutingConnector(services.connector, narrowed) });
  const blocked = await setup(base);
  t.like(blocked, {
    status: 'connected',
    connector: { state: null },
    connection_problem: { reason: 'blocked_destination', detected_by: 'check' },
  });
  t.regex(blocked.connector.error, /private-network or local address/);
  t.truthy(Date.parse(blocked.connection_problem.at));
  t.true(blocked.steps.some((s: string) => s.includes('blocked_destination') && s.includes('retried')));

  // The server does not answer.
  await proxy.cut();
  const down = await setup();
  t.like(down, { status: 'connected', connection_problem: { reason: 'host_unreachable' } });
  // Found by this check, or by the mailbox sync's retry (it logs in through the same proxy).
  t.true(['check', 'sync'].includes(down.connection_problem.detected_by), down.connection_problem.detected_by);
  const row = await (await em()).findOneOrFail(PlatformAccount, a.id, { refresh: true });
  t.like(row, { status: 'connected', statusReason: null, disconnectedAt: null });
  const events = await (
    await em()
  )
    .getConnection()
    .execute(`select 1 from webhook_events where name = 'account.disconnected' and body like ?`, [`%${a.id}%`]);
  t.is(events.length, 0, 'nothing announced');

  // Back: the next check clears it.
  await proxy.restore();
  const back = await setup();
  t.like(back, { status: 'connected', connector: { state: 'connected', error: null }, connection_problem: null });
  t.false(back.steps.some((s: string) => s.includes('connection check failed')));
  t.is((await call('DELETE', `${BASE}/${a.id}`, as(u, {}))).status, 204);
});

test('setup-status warns when PUBLIC_BASE_URL is not https (one-click unsubscribe), and says when a Google or Microsoft mailbox on a password needs OAuth', async (t) => {
  const { services } = await api();
  const u = await createOwner();
  const address = await createMailbox(uniqueAddress('ana'), 'pw');
  const a = await created(u);
  t.is(
    (await call('POST', `${BASE}/${a.id}/connect`, as(u, { credentials: mailCredentials(address, 'pw') }))).status,
    200,
  );
  const codes = (body: { warnings: { code: string }[] }) => body.warnings.map((w) => w.code);

  // The test API's PUBLIC_BASE_URL is http://127.0.0.1:…
  const http = await call('GET', `${BASE}/${a.id}/setup-status`, as(u));
  t.is(http.status, 200, http.text);
  t.true(services.config.publicBaseUrl.startsWith('http://'));
  t.deepEqual(codes(http.body), ['unsubscribe_url_not_https']);
  t.regex(http.body.warnings[0].message, /RFC 8058/);
  t.like(http.body.mailbox, { provider: null, auth: 'password', imap_host: mailServer().host });

  const { base } = await listen({ ...services, config: { ...services.config, publicBaseUrl: 'https://app.example' } });
  const https = await call('GET', `${BASE}/${a.id}/setup-status`, { ...as(u), base });
  t.is(https.status, 200, https.text);
  t.deepEqual(codes(https.body), []);

  // The provider is read from the stored hosts. No server is asked: this API's mail connector resolves
  // no name (its check fails, and is retried: the account stays connected).
  const offline = new MailConnector({
    accounts: mailAccounts(() => services.orm.em.fork()),
    encryptionKey: services.config.encryptionKey,
    allowHosts: services.config.outboundAllowHosts,
    resolver: async () => [],
  });
  t.teardown(() => offline.close());
  const { base: offlineBase } = await listen({
    ...services,
    connector: new RoutingConnector(services.connector, offline),
    config: { ...services.config, publicBaseUrl: 'https://app.example' },
  });
  for (const [over, provider] of [
    [{ imap_host: 'outlook.office365.com', smtp_host: 'smtp.office365.com' }, 'microsoft'],
    [{ imap_host: 'imap.gmail.com', smtp_host: 'smtp.gmail.com' }, 'google'],
  ] as const) {
    await (
      await em()
    ).nativeUpdate(
      PlatformAccount,
      { id: a.id },
      {
        credentialsSealed: encrypt(
          JSON.stringify(
            mailCredentials(address, 'pw', {
              ...over,
              imap_security: 'tls',
              smtp_security: 'tls',
              imap_port: '993',
              smtp_port: '465',
            }),
          ),
          services.config.encryptionKey,
        ),
      },
    );
    const s = await call('GET', `${BASE}/${a.id}/setup-status`, { ...as(u), base: offlineBase });
    t.is(s.status, 200, s.text);
    t.like(s.body.mailbox, { provider, auth: 'password' });
    t.deepEqual(codes(s.body), ['provider_requires_oauth'], provider);
    t.regex(
      s.body.warnings[0].message,
      provider === 'microsoft' ? /Microsoft 365.*2022.*2026/ : /Google Workspace.*2025/,
    );
    t.is(s.body.status, 'connected', 'a host that cannot be reached from here disconnects nothing');
  }
  // A network account has neither.
  const n = await created(u, 'network');
  const ns = await call('GET', `${BASE}/${n.id}/setup-status`, as(u));
  t.like(ns.body, { mailbox: null, warnings: [] });
  t.is((await call('DELETE', `${BASE}/${a.id}`, as(u, {}))).status, 204);
});
