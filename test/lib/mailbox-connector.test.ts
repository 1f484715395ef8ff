// The mail connector against the real local mail server (GreenMail, started by `npm test`): connect
// checks both servers and names what failed; sends are RFC 5322 messages with the headers mailbox
// providers expect, filed in Sent, sent once across a retry, over one SMTP pool per account.
import test from 'ava';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { PlatformAccount } from '../../db/entities/PlatformAccount.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { mailAccounts } from '../../domain/mailbox/accounts.js';
import { ConnectorError } from '../../lib/connectors/types.js';
import { mailConnectorAccountId } from '../../lib/connectors/mailbox/account.js';
import { MailConnector, sendFailure } from '../../lib/connectors/mailbox/connector.js';
import { finalReason, MailConnectError } from '../../lib/connectors/mailbox/settings.js';
import { mailFailure } from '../../lib/connectors/mailbox/clients.js';
import { encrypt } from '../../lib/crypto.js';
import { api, closeApi, createUser } from '../helpers/api.js';
import { em, workspaceIdOf } from '../helpers/billing.js';
import {
  createMailbox,
  mailCredentials,
  mailServer,
  openMailbox,
  uniqueAddress,
  waitForMail,
} from '../helpers/mail-server.js';
import { imapAppendCutter } from '../helpers/imap-cut.js';
test.after.always(closeApi);

const LOCAL = ['127.0.0.1', 'localhost'];
/** The process's key: the worker's reconciliation reads these accounts too. */
const key = async () => (await api()).services.config.encryptionKey;

async function connector(opts: Partial<ConstructorParameters<typeof MailConnector>[0]> = {}) {
  const { services } = await api();
  return new MailConnector({
    accounts: mailAccounts(() => services.orm.em.fork()),
    encryptionKey: services.config.encryptionKey,
    allowHosts: LOCAL,
    ...opts,
  });
}

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

async function connectFailure(c: MailConnector, credentials: Record<string, string>): Promise<MailConnectError> {
  const err = await c.connect({ channel: 'email', accountId: randomUUID(), displayName: 'Ana', credentials }).then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof MailConnectError)) throw new Error(`expected a MailConnectError, got ${String(err)}`);
  return err;
}

/** A stored mail account (as connect leaves it) with `credentials` sealed. */
async function storedAccount(
  credentials: Record<string, string>,
  displayName = 'Ana Sender',
  sealKey?: Buffer,
): Promise<{ id: string; connectorAccountId: string }> {
  const workspaceId = await workspaceIdOf((await createUser()).id);
  const e = await em();
  const id = randomUUID();
  e.create(PlatformAccount, {
    id,
    workspace: e.getReference(Workspace, workspaceId),
    channel: 'email',
    displayName,
    timeZone: 'Europe/Paris',
    workingHours: { days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' },
    connector: 'mail',
    connectorAccountId: mailConnectorAccountId(id),
    status: 'connected',
    connectedAt: new Date(),
    address: credentials.email,
    credentialsSealed: encrypt(JSON.stringify(credentials), sealKey ?? (await key())),
  });
  await e.flush();
  return { id, connectorAccountId: mailConnectorAccountId(id) };
}

const header = (m: ParsedMail, key: string) =>
  m.headerLines
    .find((h) => h.key === key)
    ?.line.replace(/^[^:]+:\s*/, '')
    .replace(/\r?\n\s+/g, ' ');

async function sentCopies(address: string, password: string): Promise<string[]> {
  const box = await openMailbox(address, password);
  try {
    const sent = (await box.list()).find((f) => f.specialUse === '\\Sent');
    if (!sent) return [];
    const lock = await box.getMailboxLock(sent.path);
    try {
      const out: string[] = [];
      if (box.mailbox && box.mailbox.exists)
        for await (const m of box.fetch('1:*', { source: true, flags: true }))
          out.push(`${[...(m.flags ?? [])].join(' ')}|${m.source?.toString() ?? ''}`);
      return out;
    } finally {
      lock.release();
    }
  } finally {
    await box.logout();
  }
}

test('connect: both servers checked; the account id, the connector and the address come back', async (t) => {
  const address = await createMailbox(uniqueAddress('sender'), 'pw-1');
  const c = await connector();
  const accountId = randomUUID();
  const start = await c.connect({
    channel: 'email',
    accountId,
    displayName: 'Ana',
    credentials: mailCredentials(address, 'pw-1'),
  });
  t.deepEqual(start, {
    connectorAccountId: `mail:${accountId}`,
    kind: 'connected',
    url: null,
    expiresAt: null,
    connector: 'mail',
    address,
  });
  await t.throwsAsync(
    c.connect({ channel: 'network', accountId, displayName: 'Ana', credentials: mailCredentials(address, 'pw-1') }),
    { instanceOf: ConnectorError, message: /only an email account/ },
  );
});

test('connect: a wrong password is auth_failed; a closed port host_unreachable; a self-signed certificate tls_failed, each naming its side', async (t) => {
  const address = await createMailbox(uniqueAddress('sender'), 'right');
  const m = mailServer();
  const c = await connector();
  t.like(await connectFailure(c, mailCredentials(address, 'wrong')), { reason: 'auth_failed', side: 'smtp' });
  // IMAP alone refusing it: the SMTP side given the right password.
  t.like(await connectFailure(c, mailCredentials(address, 'wrong', { smtp_password: 'right' })), {
    reason: 'auth_failed',
    side: 'imap',
  });
  const closed = String(await closedPort());
  t.like(await connectFailure(c, mailCredentials(address, 'right', { smtp_port: closed })), {
    reason: 'host_unreachable',
    side: 'smtp',
    code: 'unavailable',
  });
  t.like(await connectFailure(c, mailCredentials(address, 'right', { imap_port: closed })), {
    reason: 'host_unreachable',
    side: 'imap',
  });
  t.like(
    await connectFailure(
      c,
      mailCredentials(address, 'right', { smtp_port: String(m.smtpsPort), smtp_security: 'tls' }),
    ),
    { reason: 'tls_failed', side: 'smtp' },
  );
  t.like(
    await connectFailure(
      c,
      mailCredentials(address, 'right', { imap_port: String(m.imapsPort), imap_security: 'tls' }),
    ),
    { reason: 'tls_failed', side: 'imap' },
  );
  t.like(await connectFailure(c, mailCredentials(address, 'right', { imap_host: '' })), {
    reason: 'invalid_credentials',
    side: null,
  });
});

test('connect: private-network hosts are refused unless allow-listed, and "none" security only on an allow-listed host', async (t) => {
  const strict = await connector({
    allowHosts: [],
    resolver: async (host) => [{ address: host === 'public.example.com' ? '93.184.216.34' : '127.0.0.1', family: 4 }],
  });
  const creds = (over: Record<string, string>) => mailCredentials('ana@example.com', 'x', over);
  t.like(await connectFailure(strict, creds({ smtp_host: '10.0.0.1', smtp_security: 'starttls' })), {
    reason: 'blocked_destination',
    side: 'smtp',
  });
  t.like(await connectFailure(strict, creds({ smtp_security: 'starttls', imap_security: 'starttls' })), {
    reason: 'blocked_destination',
  });
  const rebound = await connectFailure(
    strict,
    creds({
      smtp_host: 'mail.example.com',
      smtp_security: 'starttls',
      imap_host: 'mail.example.com',
      imap_security: 'starttls',
    }),
  );
  t.like(rebound, { reason: 'blocked_destination', side: 'smtp' });
  t.regex(rebound.message, /resolves to a private-network address \(127\.0\.0\.1\)/);
  // A public host with "none": the password would cross the internet in clear.
  t.like(await connectFailure(strict, creds({ smtp_host: 'public.example.com', imap_host: 'public.example.com' })), {
    reason: 'invalid_credentials',
    side: 'smtp',
  });
});

test('sendEmail: the headers, text and HTML, footer and List-Unsubscribe; a follow-up in the thread; a copy in Sent; a retry sends nothing new; one pool', async (t) => {
  const sender = await createMailbox(uniqueAddress('sender', 'acme.test'), 'pw-s');
  const prospect = uniqueAddress('prospect', 'prospect.test');
  const c = await connector();
  t.teardown(() => c.close());
  const a = await storedAccount({ ...mailCredentials(sender, 'pw-s'), from_name: 'Ana from Acme' });
  const key = randomUUID();
  const first = await c.sendEmail(a.connectorAccountId, {
    idempotencyKey: key,
    to: prospect,
    subject: 'Hello Grace',
    body: 'Hi Grace,\n\nsee https://acme.test/offer?a=1&b=2 for details.\nBest, Ana',
    footer: 'Acme Inc., 1 Main Street, Springfield',
    unsubscribeUrl: 'https://app.acme.test/u/tok-123',
  });
  const domain = sender.split('@')[1];
  t.is(first.messageId, `<${key}@${domain}>`);
  t.is(first.threadId, first.messageId);
  const [got] = await waitForMail(prospect, 1);
  const m = await simpleParser(got.source);
  t.is(m.messageId, first.messageId);
  t.is(m.subject, 'Hello Grace');
  t.deepEqual(m.from?.value, [{ address: sender, name: 'Ana from Acme' }]);
  t.is(m.to && !Array.isArray(m.to) ? m.to.text : null, prospect);
  t.truthy(m.date);
  t.is(header(m, 'list-unsubscribe'), `<https://app.acme.test/u/tok-123>, <mailto:${sender}?subject=unsubscribe>`);
  t.is(header(m, 'list-unsubscribe-post'), 'List-Unsubscribe=One-Click');
  t.is(header(m, 'in-reply-to'), undefined);
  t.true(m.text!.startsWith('Hi Grace,\n\nsee https://acme.test/offer?a=1&b=2 for details.'));
  t.true(m.text!.trimEnd().endsWith('Acme Inc., 1 Main Street, Springfield'), 'the footer ends the text');
  t.true(
    typeof m.html === 'string' && m.html.includes('<a href="https://acme.test/offer?a=1&amp;b=2">'),
    'links clickable in the HTML part',
  );
  t.true((m.html as string).includes('Acme Inc., 1 Main Street, Springfield'));
  t.true(got.source.includes('multipart/alternative'));

  // The follow-up: in the thread, under "Re: " + the first subject, no unsubscribe URL → mailto only.
  const key2 = randomUUID();
  const second = await c.sendEmail(a.connectorAccountId, {
    idempotencyKey: key2,
    to: prospect,
    subject: 'Checking in',
    body: 'Any thoughts?',
    references: [first.messageId],
    threadSubject: 'Hello Grace',
  });
  t.is(second.threadId, first.messageId);
  const [, got2] = await waitForMail(prospect, 2);
  const f = await simpleParser(got2.source);
  t.is(f.subject, 'Re: Hello Grace');
  t.is(f.inReplyTo, first.messageId);
  t.is(header(f, 'references'), first.messageId);
  t.is(header(f, 'list-unsubscribe'), `<mailto:${sender}?subject=unsubscribe>`);
  t.is(header(f, 'list-unsubscribe-post'), undefined, 'one-click needs an https URL');

  // Both copies in Sent (made on first use: GreenMail has none), read, the same bytes as sent.
  const copies = await sentCopies(sender, 'pw-s');
  t.is(copies.length, 2);
  t.true(copies.every((x) => x.startsWith('\\Seen|')));
  t.true(copies[0].includes(`Message-ID: <${key}@${domain}>`));
  t.true(copies[0].includes('List-Unsubscribe-Post: List-Unsubscribe=One-Click'));

  // A retry of the first send finds it in Sent: the same ids, nothing sent. A marker sent after it
  // arrives as the third message, so no duplicate came before it.
  const again = await c.sendEmail(a.connectorAccountId, {
    idempotencyKey: key,
    to: prospect,
    subject: 'Hello Grace',
    body: 'Hi Grace',
    retry: true,
  });
  t.is(again.messageId, first.messageId);
  t.is(again.threadId, first.messageId);
  const marker = await c.sendEmail(a.connectorAccountId, {
    idempotencyKey: randomUUID(),
    to: prospect,
    subject: 'Marker',
    body: 'marker',
  });
  const all = await waitForMail(prospect, 3);
  t.is(all.length, 3);
  t.is((await simpleParser(all[2].source)).messageId, marker.messageId);
  // A retry whose first attempt never went out sends.
  const fresh = randomUUID();
  await c.sendEmail(a.connectorAccountId, {
    idempotencyKey: fresh,
    to: prospect,
    subject: 'Late',
    body: 'late',
    retry: true,
  });
  t.is((await simpleParser((await waitForMail(prospect, 4))[3].source)).messageId, `<${fresh}@${domain}>`);
  t.is((await sentCopies(sender, 'pw-s')).length, 4);

  t.is(c.pools.created, 1, 'one SMTP pool for every send of the account');
  t.is(c.sessions.logins, 1, 'one IMAP login for every Sent lookup and copy of the account');
  await c.disconnect(a.connectorAccountId);
  t.false(c.pools.has(a.id));
  await c.disconnect(a.connectorAccountId);
});

test('sendEmail: a Sent copy that fails on the kept IMAP session is retried once on a fresh one; failing twice, the send still succeeds and says the copy failed', async (t) => {
  const sender = await createMailbox(uniqueAddress('sender', 'acme.test'), 'pw-s');
  const prospect = uniqueAddress('prospect', 'prospect.test');
  const c = await connector();
  t.teardown(() => c.close());
  // The first APPEND's connection breaks under the command (as a kept session that died does).
  const once = await imapAppendCutter(1);
  t.teardown(() => once.close());
  const a = await storedAccount(mailCredentials(sender, 'pw-s', { imap_port: String(once.port) }));
  const first = await c.sendEmail(a.connectorAccountId, {
    idempotencyKey: randomUUID(),
    to: prospect,
    subject: 'Hello Grace',
    body: 'Hi Grace',
  });
  t.is(once.cut, 1, 'the first copy failed');
  t.is(once.appends, 2, 'and was tried again');
  t.is(first.sentCopyError ?? null, null, 'the retry filed it');
  t.is(c.sessions.logins, 2, 'on a fresh IMAP session');
  const copies = await sentCopies(sender, 'pw-s');
  t.is(copies.length, 1, 'one copy in Sent');
  t.true(copies[0].includes(`Message-ID: ${first.messageId}`));
  await waitForMail(prospect, 1);

  // Every APPEND fails: the email went out (the send succeeds), the result says the copy failed.
  const always = await imapAppendCutter(Infinity);
  t.teardown(() => always.close());
  const b = await storedAccount(mailCredentials(sender, 'pw-s', { imap_port: String(always.port) }));
  const second = await c.sendEmail(b.connectorAccountId, {
    idempotencyKey: randomUUID(),
    to: prospect,
    subject: 'Hello again',
    body: 'Hi again',
  });
  t.is(always.appends, 2, 'tried twice, no more');
  t.truthy(second.sentCopyError, 'the failed copy is reported');
  t.regex(second.sentCopyError!, /Sent/);
  const [, got] = await waitForMail(prospect, 2);
  t.is((await simpleParser(got.source)).messageId, second.messageId, 'the prospect received it');
  t.is((await sentCopies(sender, 'pw-s')).length, 1, 'no second copy in Sent');
});

test('sendEmail, tracked: the prospect’s copy carries the pixel and the redirects, the Sent copy neither (the sender reading it records nothing)', async (t) => {
  const sender = await createMailbox(uniqueAddress('tracker', 'acme.test'), 'pw-t');
  const prospect = uniqueAddress('reader', 'prospect.test');
  const c = await connector();
  t.teardown(() => c.close());
  const a = await storedAccount(mailCredentials(sender, 'pw-t'));
  const key = randomUUID();
  const tracking = {
    openUrl: 'https://t.acme.test/t/TOKEN/open.gif',
    clickUrl: (i: number) => `https://t.acme.test/t/TOKEN/l/${i}`,
  };
  const sent = await c.sendEmail(a.connectorAccountId, {
    idempotencyKey: key,
    to: prospect,
    subject: 'Tracked',
    body: 'See https://acme.test/offer today.',
    tracking,
  });
  const received = await simpleParser((await waitForMail(prospect, 1))[0].source);
  t.true((received.html as string).includes('src="https://t.acme.test/t/TOKEN/open.gif"'), 'the pixel');
  t.true((received.html as string).includes('href="https://t.acme.test/t/TOKEN/l/0"'), 'the redirect');
  const [copy] = await sentCopies(sender, 'pw-t');
  const filed = await simpleParser(copy.slice(copy.indexOf('|') + 1));
  t.is(filed.messageId, sent.messageId, 'the same message');
  t.is(filed.date?.toISOString(), received.date?.toISOString());
  t.is(filed.text, received.text);
  t.false((filed.html as string).includes('t.acme.test'), 'no tracking URL in the Sent copy');
  t.true((filed.html as string).includes('<a href="https://acme.test/offer">'), 'its link direct');
  // A retry still finds it by its Message-ID.
  t.is(
    (
      await c.sendEmail(a.connectorAccountId, {
        idempotencyKey: key,
        to: prospect,
        subject: 'Tracked',
        body: 'x',
        tracking,
        retry: true,
      })
    ).messageId,
    sent.messageId,
  );
  t.is((await sentCopies(sender, 'pw-t')).length, 1);
});

test('sendEmail: an unreachable SMTP server is retryable (unavailable); refusals map by class; a deleted account cannot send', async (t) => {
  const sender = await createMailbox(uniqueAddress('sender'), 'pw');
  const c = await connector();
  t.teardown(() => c.close());
  const a = await storedAccount(mailCredentials(sender, 'pw', { smtp_port: String(await closedPort()) }));
  const err = await t.throwsAsync(
    c.sendEmail(a.connectorAccountId, { idempotencyKey: randomUUID(), to: 'x@prospect.test', subject: 's', body: 'b' }),
    { instanceOf: ConnectorError },
  );
  t.like(err, { code: 'unavailable', retryable: true });
  t.false(c.pools.has(a.id), 'a network failure drops the pool');
  t.like(sendFailure(Object.assign(new Error('550 5.1.1 no such user'), { code: 'EENVELOPE', responseCode: 550 })), {
    code: 'invalid_request',
    retryable: false,
  });
  t.like(sendFailure(Object.assign(new Error('451 try later'), { code: 'EMESSAGE', responseCode: 451 })), {
    code: 'unavailable',
    retryable: true,
  });
  t.like(sendFailure(Object.assign(new Error('535 bad credentials'), { code: 'EAUTH', responseCode: 535 })), {
    code: 'auth',
    retryable: false,
  });
  t.like(sendFailure(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })), { code: 'unavailable' });
  // Only refused credentials and a revoked grant are final for a send too; a refused host or TLS is retried.
  for (const reason of ['blocked_destination', 'tls_failed', 'host_unreachable'] as const)
    t.like(sendFailure(new MailConnectError(reason, 'smtp', reason)), {
      code: 'unavailable',
      retryable: true,
      details: { reason },
    });
  t.like(sendFailure(new MailConnectError('oauth_revoked', null, 'revoked')), { retryable: false });
  t.like(sendFailure(new MailConnectError('auth_failed', 'smtp', 'refused')), { code: 'auth', retryable: false });
  await t.throwsAsync(
    c.sendEmail(mailConnectorAccountId(randomUUID()), {
      idempotencyKey: randomUUID(),
      to: 'x@prospect.test',
      subject: 's',
      body: 'b',
    }),
    { instanceOf: ConnectorError, message: /no stored credentials/ },
  );
});

test('status: a live login: connected, credentials refused, unknown account, unreachable server (left out of statuses)', async (t) => {
  const address = await createMailbox(uniqueAddress('sender'), 'good');
  const c = await connector();
  const good = await storedAccount(mailCredentials(address, 'good'));
  const refused = await storedAccount(mailCredentials(address, 'stale'));
  const unreachable = await storedAccount(mailCredentials(address, 'good', { imap_port: String(await closedPort()) }));
  const unknown = mailConnectorAccountId(randomUUID());
  const otherKey = await storedAccount(mailCredentials(address, 'good'), 'Ana', randomBytes(32));
  t.like(
    await c.status(otherKey.connectorAccountId),
    { state: 'disconnected', reason: 'credentials_invalid' },
    'sealed under another key: new credentials needed',
  );
  t.deepEqual(await c.status(good.connectorAccountId), {
    connectorAccountId: good.connectorAccountId,
    state: 'connected',
    reason: null,
    address,
  });
  t.deepEqual(await c.status(refused.connectorAccountId), {
    connectorAccountId: refused.connectorAccountId,
    state: 'disconnected',
    reason: 'credentials_invalid',
    address,
  });
  t.like(await c.status(unknown), { state: 'disconnected', reason: 'not_found' });
  t.like(await t.throwsAsync(c.status(unreachable.connectorAccountId), { instanceOf: ConnectorError }), {
    code: 'unavailable',
  });
  const all = await c.statuses([
    good.connectorAccountId,
    refused.connectorAccountId,
    unreachable.connectorAccountId,
    unknown,
  ]);
  t.deepEqual(
    all.map((s) => `${s.connectorAccountId} ${s.state} ${s.reason} ${s.problem?.reason ?? '-'}`).sort(),
    [
      `${good.connectorAccountId} connected null -`,
      `${refused.connectorAccountId} disconnected credentials_invalid -`,
      // Not final: answered as `pending` (which changes nothing) with the problem, for reconciliation to record.
      `${unreachable.connectorAccountId} pending null host_unreachable`,
      `${unknown} disconnected not_found -`,
    ].sort(),
  );
  t.like(await c.statuses([unreachable.connectorAccountId]), [
    { state: 'pending', problem: { reason: 'host_unreachable' } },
  ]);
  t.deepEqual(await c.profile(good.connectorAccountId), {
    name: 'Ana Sender',
    headline: null,
    profileUrl: null,
    email: address,
    pictureUrl: null,
  });
});

test('status: only refused credentials are final; a host the outbound policy now refuses, an unreachable one or a temporary authentication failure is retried (unavailable, with its reason)', async (t) => {
  const address = await createMailbox(uniqueAddress('sender'), 'good');
  const account = await storedAccount(mailCredentials(address, 'good'));
  // OUTBOUND_ALLOW_HOSTS narrowed: the local server is a private address again.
  const narrowed = await connector({ allowHosts: [] });
  const blocked = await t.throwsAsync(narrowed.status(account.connectorAccountId), { instanceOf: ConnectorError });
  t.like(blocked, { code: 'unavailable', details: { reason: 'blocked_destination' } });
  t.like(await narrowed.statuses([account.connectorAccountId]), [
    { state: 'pending', problem: { reason: 'blocked_destination' } },
  ]);
  // "none" security on a host no longer allow-listed is the policy too, not the credentials.
  const clear = await storedAccount(mailCredentials(address, 'good', { imap_host: 'mail.example.com' }));
  t.like(
    await t.throwsAsync(narrowed.status(clear.connectorAccountId), {
      instanceOf: ConnectorError,
    }),
    { code: 'unavailable', details: { reason: 'invalid_credentials' } },
  );
  // The allow-list back: connected, nothing changed.
  t.like(await (await connector()).status(account.connectorAccountId), { state: 'connected' });

  // A server that cannot check the credentials now is not refusing them.
  t.is(
    mailFailure(
      Object.assign(new Error('Temporary authentication failure'), { code: 'EAUTH', responseCode: 454 }),
      'smtp',
    ).reason,
    'host_unreachable',
  );
  t.is(
    mailFailure(
      Object.assign(new Error('Command failed'), { authenticationFailed: true, serverResponseCode: 'UNAVAILABLE' }),
      'imap',
    ).reason,
    'host_unreachable',
  );
  t.is(
    mailFailure(Object.assign(new Error('Invalid login'), { code: 'EAUTH', responseCode: 535 }), 'smtp').reason,
    'auth_failed',
  );
  t.is(
    mailFailure(
      Object.assign(new Error('Command failed'), {
        authenticationFailed: true,
        serverResponseCode: 'AUTHENTICATIONFAILED',
      }),
      'imap',
    ).reason,
    'auth_failed',
  );
  for (const [reason, side, final] of [
    ['auth_failed', 'imap', 'credentials_invalid'],
    ['oauth_revoked', 'imap', 'oauth_revoked'],
    ['invalid_credentials', null, 'credentials_invalid'],
    ['invalid_credentials', 'imap', null],
    ['blocked_destination', 'imap', null],
    ['host_unreachable', 'imap', null],
    ['tls_failed', 'imap', null],
  ] as const)
    t.is(finalReason(new MailConnectError(reason, side, 'x')), final, `${reason} ${side}`);
});

test('network-only methods are refused; chats and messages are empty (mail arrives through the mailbox sync); no inbound hook', async (t) => {
  const c = await connector();
  for (const p of [
    c.sendInvitation(),
    c.sendMessage(),
    c.pendingInvitations(),
    c.withdrawInvitation(),
    c.attachment(),
  ]) {
    t.like(await t.throwsAsync(p, { instanceOf: ConnectorError }), { code: 'invalid_request' });
  }
  t.deepEqual(await c.chats(), { items: [], cursor: null });
  t.deepEqual(await c.messages(), { items: [], cursor: null });
  t.like(
    t.throws(() => c.parseInbound(), { instanceOf: ConnectorError }),
    { code: 'invalid_request' },
  );
});
