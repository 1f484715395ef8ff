// The Unipile connector (issue 44) against the stand-in speaking Unipile's REST API v1
// (test/helpers/unipile): every call sends the documented request (paths, query, JSON or multipart
// fields, X-API-KEY) and maps the answer; Unipile's error types map to our codes and reasons;
// webhook and notify payloads as documented parse to our events.
import test, { type ExecutionContext } from 'ava';
import { ConnectorError } from '../../lib/connectors/types.js';
import {
  accountLostReason,
  hostedNotifyToken,
  INVITATION_NOTE_MAX,
  parseHostedNotify,
  parseUnipileWebhook,
  UNIPILE_SECRET_HEADER,
  UnipileConnector,
  unipileErrorOf,
  webhookName,
} from '../../lib/connectors/unipile/index.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import {
  addPerson,
  registerAccounts,
  unipileId,
  type Person,
  type UnipileAccountsStandIn,
} from '../helpers/unipile/accounts.js';
import { startStandIn, unipileError, type StandIn, type StandInRequest } from '../helpers/unipile/stand-in.js';

const SECRET = 'whsec-unipile-test';

interface Setup {
  standIn: StandIn;
  unipile: UnipileAccountsStandIn;
  hooks: Receiver;
  origin: string;
  connector: UnipileConnector;
  /** Requests the stand-in received from this point on. */
  since(): () => StandInRequest[];
}

async function setup(
  t: ExecutionContext,
  opts: { searchAccountId?: string | null; apiKey?: string; dedupeWindowMs?: number } = {},
): Promise<Setup> {
  const standIn = await startStandIn();
  const unipile = registerAccounts(standIn);
  const hooks = await startReceiver('ok', '/');
  const origin = `http://127.0.0.1:${hooks.port}`;
  const connector = new UnipileConnector({
    baseUrl: standIn.url,
    apiKey: opts.apiKey ?? standIn.apiKey,
    publicBaseUrl: origin,
    searchAccountId: opts.searchAccountId ?? null,
    webhookSecret: SECRET,
    dedupeWindowMs: opts.dedupeWindowMs,
  });
  t.teardown(async () => {
    await unipile.settled();
    await connector.close();
    await standIn.close();
    await hooks.close();
  });
  return {
    standIn,
    unipile,
    hooks,
    origin,
    connector,
    since: () => {
      const n = standIn.requests.length;
      return () => standIn.requests.slice(n);
    },
  };
}

async function failure(p: Promise<unknown>): Promise<ConnectorError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ConnectorError) return err;
    throw err;
  }
  throw new Error('expected a ConnectorError');
}

const route = (r: StandInRequest) => `${r.method} ${r.path}`;
const member = (slug: string, extra: Partial<Person> = {}) =>
  addPerson({
    first_name: 'Ada',
    last_name: 'Lovelace',
    public_identifier: `${slug}-${unipileId(6).toLowerCase()}`,
    headline: 'Analyst',
    ...extra,
  });
const urlOf = (p: Person) => `https://www.linkedin.com/in/${p.public_identifier}/`;

async function readAll(body: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c);
  return Buffer.concat(chunks);
}

// ---------------------------------------------------------------------------------------------
// Accounts

test('unipile: connect asks a hosted link as documented; the notify callback names the account', async (t) => {
  const { standIn, unipile, hooks, origin, connector } = await setup(t);
  const start = await connector.connect({
    channel: 'network',
    accountId: 'pa-1',
    displayName: 'Ada',
    returnUrl: 'https://app.example/back',
  });
  const link = unipile.links.at(-1)!;
  t.deepEqual(start, {
    connectorAccountId: 'pending:pa-1',
    kind: 'hosted_link',
    url: link.url,
    expiresAt: start.expiresAt,
  });
  t.true(start.expiresAt!.getTime() > Date.now() + 50 * 60_000);
  const notifyUrl = `${origin}/hooks/connector/accounts?token=${hostedNotifyToken(SECRET, 'pa-1')}`;
  t.deepEqual(link.body, {
    type: 'create',
    providers: ['LINKEDIN'],
    api_url: standIn.url,
    expiresOn: start.expiresAt!.toISOString(),
    notify_url: notifyUrl,
    name: 'pa-1',
    success_redirect_url: 'https://app.example/back',
    failure_redirect_url: 'https://app.example/back',
  });
  const req = standIn.requests.at(-1)!;
  t.is(route(req), 'POST /hosted/accounts/link');
  t.is(req.headers['x-api-key'], standIn.apiKey);
  t.is(req.headers.authorization, undefined);
  t.regex(String(req.headers['content-type']), /application\/json/);

  // Until the wizard is finished the account is pending, without asking Unipile.
  const n = standIn.requests.length;
  t.deepEqual(await connector.status('pending:pa-1'), {
    connectorAccountId: 'pending:pa-1',
    state: 'pending',
    reason: null,
    address: null,
  });
  await connector.disconnect('pending:pa-1');
  t.is(standIn.requests.length, n);
  t.like(await failure(connector.sendMessage('pending:pa-1', { idempotencyKey: 'k', recipient: 'x', body: 'b' })), {
    code: 'invalid_request',
    details: { reason: 'not_connected' },
  });

  // The user finishes: the notify_url gets { status, account_id, name }.
  const { account, notify } = await unipile.finishHostedAuth('pa-1');
  t.is(notify.status, 200);
  const got = hooks.requests.at(-1)!;
  t.is(got.url, `/hooks/connector/accounts?token=${hostedNotifyToken(SECRET, 'pa-1')}`);
  const body = JSON.parse(got.raw.toString()) as unknown;
  t.deepEqual(body, { status: 'CREATION_SUCCESS', account_id: account.id, name: 'pa-1' });
  const token = new URL(got.url, origin).searchParams.get('token');
  t.deepEqual(parseHostedNotify(body, { secret: SECRET, token }), {
    accountId: 'pa-1',
    connectorAccountId: account.id,
    status: 'CREATION_SUCCESS',
    finished: true,
  });
  t.like(
    t.throws(() => parseHostedNotify(body, { secret: SECRET, token: hostedNotifyToken(SECRET, 'pa-2') })),
    {
      code: 'auth',
    },
  );
  t.like(
    t.throws(() => parseHostedNotify(body, { secret: SECRET, token: null })),
    { code: 'auth' },
  );
  t.like(
    t.throws(() => parseHostedNotify({ status: 'CREATION_SUCCESS', name: 'pa-1' })),
    {
      code: 'invalid_request',
    },
  );
  t.is(parseHostedNotify({ status: 'SOMETHING_NEW', account_id: 'a', name: 'n' }).finished, false);
  t.deepEqual(await connector.status(account.id), {
    connectorAccountId: account.id,
    state: 'connected',
    reason: null,
    address: null,
  });

  // Reconnecting an account that holds Unipile's id: the `reconnect` type, the id kept.
  await unipile.setAccountStatus(account.id, 'CREDENTIALS');
  const again = await connector.connect({
    channel: 'network',
    accountId: 'pa-1',
    displayName: 'Ada',
    connectorAccountId: account.id,
  } as Parameters<UnipileConnector['connect']>[0]);
  t.is(again.connectorAccountId, account.id);
  const relink = unipile.links.at(-1)!.body;
  t.is(relink.type, 'reconnect');
  t.is(relink.reconnect_account, account.id);
  t.false('providers' in relink);
  t.false('success_redirect_url' in relink);
  const re = await unipile.finishHostedAuth(unipile.links.at(-1)!.url);
  t.is(re.account.id, account.id);
  t.like(JSON.parse(hooks.requests.at(-1)!.raw.toString()), { status: 'RECONNECTED', account_id: account.id });
  t.is((await connector.status(account.id)).state, 'connected');

  // Not for mailboxes, nor with credentials.
  t.like(await failure(connector.connect({ channel: 'email', accountId: 'pa-2', displayName: 'Box' })), {
    code: 'invalid_request',
    details: { reason: 'unsupported_channel' },
  });
  t.like(
    await failure(
      connector.connect({ channel: 'network', accountId: 'pa-2', displayName: 'X', credentials: { user: 'u' } }),
    ),
    { code: 'invalid_request', details: { reason: 'credentials_not_supported' } },
  );
});

test('unipile: status reads sources[].status; statuses in order; disconnect deletes', async (t) => {
  const { unipile, connector, since } = await setup(t);
  const a = unipile.addAccount();
  const b = unipile.addAccount({ status: 'CONNECTING' });
  t.like(await connector.status(a.id), { state: 'connected', reason: null });
  const cases: [Parameters<typeof unipile.setAccountStatus>[1], string, string | null][] = [
    ['CREDENTIALS', 'disconnected', 'credentials_expired'],
    ['ERROR', 'disconnected', 'error'],
    ['STOPPED', 'disconnected', 'stopped'],
    ['PERMISSIONS', 'disconnected', 'permissions'],
    ['CONNECTING', 'pending', null],
    ['OK', 'connected', null],
  ];
  for (const [source, state, reason] of cases) {
    await unipile.setAccountStatus(a.id, source);
    t.like(await connector.status(a.id), { state, reason }, source);
  }
  const reqs = since();
  t.deepEqual(await connector.statuses([b.id, 'gone', a.id, 'pending:x']), [
    { connectorAccountId: b.id, state: 'pending', reason: null, address: null },
    { connectorAccountId: 'gone', state: 'disconnected', reason: 'not_found', address: null },
    { connectorAccountId: a.id, state: 'connected', reason: null, address: null },
    { connectorAccountId: 'pending:x', state: 'pending', reason: null, address: null },
  ]);
  t.deepEqual(
    reqs().map(route).sort(),
    [`GET /accounts/${a.id}`, `GET /accounts/${b.id}`, 'GET /accounts/gone'].sort(),
  );
  t.is((await failure(connector.statuses(Array.from({ length: 101 }, (_, i) => `a${i}`)))).code, 'invalid_request');

  // An account Unipile refuses to answer for (lost): that is its status.
  unipile.fault({ method: 'GET', path: /^\/accounts\// }, unipileError(401, 'disconnected_account'));
  t.like(await connector.status(a.id), { state: 'disconnected', reason: 'disconnected' });
  unipile.fault({ method: 'GET', path: /^\/accounts\// }, unipileError(503, 'network_down'));
  t.like(await failure(connector.status(a.id)), { code: 'unavailable' });

  const del = since();
  await connector.disconnect(a.id);
  t.deepEqual(del().map(route), [`DELETE /accounts/${a.id}`]);
  t.false(unipile.accounts.has(a.id));
  await connector.disconnect(a.id); // 404: already removed
  t.like(await connector.status(a.id), { state: 'disconnected', reason: 'not_found' });
});

test('unipile: profile is the account owner (GET /users/me)', async (t) => {
  const { standIn, unipile, connector } = await setup(t);
  const owner = member('owner', {
    first_name: 'Grace',
    last_name: 'Hopper',
    headline: 'Rear admiral',
    email: 'grace@navy.example',
    profile_picture_url: 'https://media.example/g.jpg',
  });
  const a = unipile.addAccount({ owner });
  t.deepEqual(await connector.profile(a.id), {
    name: 'Grace Hopper',
    headline: 'Rear admiral',
    profileUrl: urlOf(owner),
    email: 'grace@navy.example',
    pictureUrl: 'https://media.example/g.jpg',
  });
  const req = standIn.requests.at(-1)!;
  t.is(route(req), 'GET /users/me');
  t.is(req.query.get('account_id'), a.id);
});

// ---------------------------------------------------------------------------------------------
// Invitations

test('unipile: an invitation resolves the member to its provider id first, then invites; never twice', async (t) => {
  const { unipile, connector, since } = await setup(t);
  const a = unipile.addAccount();
  const ada = member('ada');
  const reqs = since();
  const r = await connector.sendInvitation(a.id, { idempotencyKey: 'act-1', recipient: urlOf(ada), body: ' Hi Ada ' });
  const [get, post] = reqs();
  t.is(route(get), `GET /users/${ada.public_identifier}`);
  t.is(get.query.get('account_id'), a.id);
  t.is(route(post), 'POST /users/invite');
  t.deepEqual(post.json, { provider_id: ada.provider_id, account_id: a.id, message: 'Hi Ada' });
  t.is(reqs().length, 2);
  t.is(r.recipientId, ada.provider_id);
  const inv = unipile.invitations.get(r.invitationId)!;
  t.like(inv, { provider_id: ada.provider_id, state: 'pending', message: 'Hi Ada' });

  // The same send again (a retry): the pending invitation is found, nothing is sent.
  const again = since();
  const r2 = await connector.sendInvitation(a.id, {
    idempotencyKey: 'act-1',
    recipient: ada.provider_id,
    body: 'Hi Ada',
  });
  t.is(r2.invitationId, r.invitationId);
  t.deepEqual(again().map(route), [`GET /users/${ada.provider_id}`, 'GET /users/invite/sent']);
  t.is([...unipile.invitations.values()].filter((i) => i.provider_id === ada.provider_id).length, 1);

  // Unipile says already invited though the profile did not: the pending invitation is the answer.
  unipile.fault(
    { method: 'GET', path: new RegExp(`^/users/${ada.provider_id}$`) },
    {
      status: 200,
      body: { object: 'UserProfile', provider: 'LINKEDIN', provider_id: ada.provider_id, public_identifier: null },
    },
  );
  const told = since();
  t.is(
    (await connector.sendInvitation(a.id, { idempotencyKey: 'act-1', recipient: ada.provider_id, body: 'Hi' }))
      .invitationId,
    r.invitationId,
  );
  t.deepEqual(told().map(route), [`GET /users/${ada.provider_id}`, 'POST /users/invite', 'GET /users/invite/sent']);

  // Without a note: no `message` field.
  const bob = member('bob');
  const plain = since();
  await connector.sendInvitation(a.id, { idempotencyKey: 'act-2', recipient: bob.public_identifier!, body: '' });
  t.deepEqual(plain().at(-1)!.json, { provider_id: bob.provider_id, account_id: a.id });

  // Already a relation; unknown member; not a recipient at all.
  const cy = member('cy');
  unipile.relate(a.id, cy.provider_id);
  t.like(await failure(connector.sendInvitation(a.id, { idempotencyKey: 'k', recipient: urlOf(cy), body: '' })), {
    code: 'invalid_request',
    details: { reason: 'already_connected' },
  });
  t.like(
    await failure(
      connector.sendInvitation(a.id, {
        idempotencyKey: 'k',
        recipient: 'https://www.linkedin.com/in/nobody-here/',
        body: '',
      }),
    ),
    { code: 'invalid_request', details: { reason: 'invalid_recipient' }, retryable: false },
  );
  const none = since();
  t.like(
    await failure(
      connector.sendInvitation(a.id, { idempotencyKey: 'k', recipient: 'https://example.com/about', body: '' }),
    ),
    { code: 'invalid_request', details: { reason: 'invalid_recipient' } },
  );
  t.is(none().length, 0);
});

test('unipile: an invitation note over 300 characters is refused before any call', async (t) => {
  const { unipile, connector, since } = await setup(t);
  const a = unipile.addAccount();
  const ada = member('note');
  const reqs = since();
  const tooLong = 'x'.repeat(INVITATION_NOTE_MAX + 1);
  t.like(await failure(connector.sendInvitation(a.id, { idempotencyKey: 'k', recipient: urlOf(ada), body: tooLong })), {
    code: 'invalid_request',
    details: { reason: 'note_too_long' },
    retryable: false,
  });
  t.is(reqs().length, 0);
  // 300 characters counted as characters, not UTF-16 units: 299 letters and an emoji pass.
  const edge = `${'y'.repeat(299)}🙂`;
  t.is(edge.length, 301);
  await connector.sendInvitation(a.id, { idempotencyKey: 'k', recipient: urlOf(ada), body: edge });
  t.is((reqs().at(-1)!.json as { message: string }).message, edge);
});

test('unipile: pending invitations are read in cursor pages and withdrawn with the account id', async (t) => {
  const { standIn, unipile, connector, since } = await setup(t);
  const a = unipile.addAccount();
  const invited: Person[] = [];
  for (let i = 0; i < 130; i++) {
    const p = member(`p${i}`);
    invited.push(p);
    await connector.sendInvitation(a.id, { idempotencyKey: `k${i}`, recipient: p.provider_id, body: '' });
  }
  const reqs = since();
  const first = await connector.pendingInvitations(a.id, null);
  t.is(first.items.length, 100);
  t.truthy(first.cursor);
  const req1 = reqs()[0];
  t.is(route(req1), 'GET /users/invite/sent');
  t.deepEqual(Object.fromEntries(req1.query), { account_id: a.id, limit: '100' });
  const second = await connector.pendingInvitations(a.id, first.cursor);
  t.is(second.items.length, 30);
  t.is(second.cursor, null);
  t.is(standIn.requests.at(-1)!.query.get('cursor'), first.cursor);
  const all = [...first.items, ...second.items];
  t.is(new Set(all.map((i) => i.invitationId)).size, 130);
  const one = all.find((i) => i.recipient === urlOf(invited[0]))!;
  t.truthy(one);
  t.true(Math.abs(one.sentAt.getTime() - Date.now()) < 60_000);

  const del = since();
  await connector.withdrawInvitation(a.id, one.invitationId);
  const [d] = del();
  t.is(route(d), `DELETE /users/invite/sent/${one.invitationId}`);
  t.is(d.query.get('account_id'), a.id);
  t.is(unipile.invitations.get(one.invitationId)!.state, 'canceled');
  await connector.withdrawInvitation(a.id, one.invitationId); // 404: already gone
  t.is((await connector.pendingInvitations(a.id, first.cursor)).items.length, 29);
});

// ---------------------------------------------------------------------------------------------
// Messages

test('unipile: a first message starts a chat (multipart fields as documented); a repeat is not sent again', async (t) => {
  const { unipile, connector, since } = await setup(t);
  const a = unipile.addAccount();
  const ada = member('chat');
  unipile.relate(a.id, ada.provider_id);
  const reqs = since();
  const r = await connector.sendMessage(a.id, { idempotencyKey: 'm-1', recipient: urlOf(ada), body: 'Hello Ada' });
  const sent = reqs();
  t.deepEqual(sent.map(route), [`GET /users/${ada.public_identifier}`, 'GET /chats', 'POST /chats']);
  const post = sent[2];
  t.regex(String(post.headers['content-type']), /^multipart\/form-data; boundary=/);
  t.deepEqual(post.form, { account_id: a.id, attendees_ids: ada.provider_id, text: 'Hello Ada' });
  t.is(post.json, undefined);
  const chat = [...unipile.chats.values()].find((c) => c.attendee_provider_id === ada.provider_id)!;
  t.is(r.threadId, chat.id);
  t.is(r.messageId, chat.messages[0].id);

  // The same send again (a retry): found in the chat, nothing sent.
  const again = since();
  const r2 = await connector.sendMessage(a.id, { idempotencyKey: 'm-1', recipient: urlOf(ada), body: 'Hello  Ada ' });
  t.deepEqual(r2, {
    messageId: r.messageId,
    threadId: r.threadId,
    sentAt: new Date(chat.messages[0].timestamp),
    recipientId: ada.provider_id,
  });
  t.is(r.recipientId, ada.provider_id);
  t.false(again().some((q) => q.method === 'POST'));
  t.is(chat.messages.length, 1);

  // A caller that says it is a first attempt skips the look-up; a provider id is not resolved again.
  const direct = since();
  const r3 = await connector.sendMessage(a.id, {
    idempotencyKey: 'm-2',
    recipient: ada.provider_id,
    body: 'Hello Ada',
    retry: false,
  } as Parameters<UnipileConnector['sendMessage']>[1]);
  t.deepEqual(direct().map(route), ['POST /chats']);
  t.is(r3.threadId, chat.id);
  t.not(r3.messageId, r.messageId);

  // In a known chat: POST /chats/{id}/messages (multipart text and account_id), after the look-up.
  const inChat = since();
  const r4 = await connector.sendMessage(a.id, {
    idempotencyKey: 'm-3',
    recipient: urlOf(ada),
    body: 'Following up',
    threadId: chat.id,
  });
  const q = inChat();
  t.deepEqual(q.map(route), [`GET /chats/${chat.id}/messages`, `POST /chats/${chat.id}/messages`]);
  t.regex(q[0].query.get('after') ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.deepEqual(q[1].form, { account_id: a.id, text: 'Following up' });
  t.is(r4.threadId, chat.id);
  t.is(chat.messages.at(-1)!.id, r4.messageId);
  const r5 = await connector.sendMessage(a.id, {
    idempotencyKey: 'm-3',
    recipient: urlOf(ada),
    body: 'Following up',
    threadId: chat.id,
  });
  t.is(r5.messageId, r4.messageId);
  t.is(chat.messages.length, 3);

  // Sent (201) but the answer names no message: looked up in the chat, never sent again.
  unipile.fault(
    { method: 'POST', path: /^\/chats\/[^/]+\/messages$/ },
    { status: 201, body: { object: 'MessageSent', message_id: null } },
  );
  const unnamed = since();
  const r6 = await connector.sendMessage(a.id, {
    idempotencyKey: 'm-6',
    recipient: urlOf(ada),
    body: 'Lost answer',
    threadId: chat.id,
    retry: false,
  } as Parameters<UnipileConnector['sendMessage']>[1]);
  t.deepEqual(r6.messageId, 'unnamed:m-6');
  t.is(r6.threadId, chat.id);
  t.deepEqual(unnamed().map(route), [`POST /chats/${chat.id}/messages`, `GET /chats/${chat.id}/messages`]);

  // Not a relation (no InMail): Unipile refuses, final for the action.
  const stranger = member('stranger');
  t.like(
    await failure(connector.sendMessage(a.id, { idempotencyKey: 'm-4', recipient: urlOf(stranger), body: 'Hi' })),
    {
      code: 'invalid_request',
      details: { reason: 'no_connection_with_recipient', status: 422 },
      retryable: false,
    },
  );
  t.like(await failure(connector.sendMessage(a.id, { idempotencyKey: 'm-5', recipient: urlOf(ada), body: '  ' })), {
    code: 'invalid_request',
    details: { reason: 'empty_message' },
  });
  t.like(await failure(connector.sendEmail(a.id, { idempotencyKey: 'e', to: 'x@y.z', subject: 's', body: 'b' })), {
    code: 'invalid_request',
  });
});

test('unipile: chats and messages are read in cursor pages; attachments stream', async (t) => {
  const { unipile, connector, since } = await setup(t);
  const a = unipile.addAccount();
  const other = unipile.addAccount();
  const ada = member('reader');
  const bob = member('reader2');
  const base = Date.now() - 3_600_000;
  for (let i = 0; i < 120; i++)
    await unipile.inboundMessage(a.id, ada, `message ${i}`, { at: new Date(base + i * 1000) });
  const { message: withFile } = await unipile.inboundMessage(a.id, bob, 'see attached', {
    attachments: [{ file_name: 'cv.pdf', mimetype: 'application/pdf', data: Buffer.from('%PDF-1.4 hello') }],
  });
  const chatA = [...unipile.chats.values()].find((c) => c.attendee_provider_id === ada.provider_id)!;

  const reqs = since();
  const chats = await connector.chats(a.id, null);
  t.deepEqual(
    chats.items.map((c) => c.counterpart),
    [bob.provider_id, ada.provider_id],
  );
  t.is(chats.cursor, null);
  t.deepEqual(Object.fromEntries(reqs()[0].query), { account_id: a.id, limit: '100' });
  t.true(chats.items[1].lastMessageAt instanceof Date);

  const p1 = await connector.messages(a.id, chatA.id, null);
  t.is(p1.items.length, 100);
  t.truthy(p1.cursor);
  t.deepEqual(p1.items[0], {
    messageId: chatA.messages[119].id,
    threadId: chatA.id,
    direction: 'in',
    from: ada.provider_id,
    body: 'message 119',
    sentAt: new Date(base + 119_000),
    attachments: [],
  });
  const p2 = await connector.messages(a.id, chatA.id, p1.cursor);
  t.is(p2.items.length, 20);
  t.is(p2.cursor, null);
  t.is(p2.items.at(-1)!.body, 'message 0');

  // Our own message in the chat reads as `out`.
  await connector.sendMessage(a.id, {
    idempotencyKey: 'own',
    recipient: ada.provider_id,
    body: 'Reply',
    threadId: chatA.id,
  });
  t.like((await connector.messages(a.id, chatA.id, null)).items[0], { direction: 'out', body: 'Reply' });

  const chatB = withFile.chat_id;
  const [m] = (await connector.messages(a.id, chatB, null)).items;
  const att = withFile.attachments[0];
  t.deepEqual(m.attachments, [{ id: att.id, name: 'cv.pdf', size: att.data.length }]);
  const stream = await connector.attachment(a.id, withFile.id, att.id, { maxBytes: 1024 });
  t.like(stream, { contentType: 'application/pdf', size: att.data.length, name: att.id });
  t.deepEqual(await readAll(stream.body), att.data);
  await t.throwsAsync(connector.attachment(a.id, withFile.id, att.id, { maxBytes: 4 }), { message: /larger than 4/ });
  t.like(await failure(connector.attachment(a.id, withFile.id, 'nope', { maxBytes: 10 })), {
    code: 'invalid_request',
    details: { reason: 'not_found' },
  });

  // Another account's chat is refused, an unknown chat is not found.
  t.like(await failure(connector.messages(other.id, chatA.id, null)), {
    code: 'invalid_request',
    details: { reason: 'wrong_account' },
  });
  t.like(await failure(connector.messages(a.id, 'no-chat', null)), { details: { reason: 'not_found' } });
});

// ---------------------------------------------------------------------------------------------
// Profiles

test('unipile: findProfile reads a profile URL as the search account', async (t) => {
  const { unipile, standIn, since } = await setup(t);
  const searcher = unipile.addAccount();
  const { connector } = await setupWith(t, standIn, searcher.id);
  const ada = member('find', {
    location: 'London, England, United Kingdom',
    work_experience: [
      { position: 'Former role', company: 'Old Co' },
      { position: 'Head of Analysis', company: 'Engines Ltd', current: true },
    ],
  });
  const reqs = since();
  t.deepEqual(
    await connector.findProfile(query({ profileUrl: `https://uk.linkedin.com/in/${ada.public_identifier}?trk=x` })),
    {
      profileUrl: urlOf(ada),
      providerId: ada.provider_id,
      fullName: 'Ada Lovelace',
      firstName: 'Ada',
      lastName: 'Lovelace',
      headline: 'Analyst',
      title: 'Head of Analysis',
      company: 'Engines Ltd',
      country: 'United Kingdom',
    },
  );
  const [get] = reqs();
  t.is(route(get), `GET /users/${ada.public_identifier}`);
  t.deepEqual(Object.fromEntries(get.query), { account_id: searcher.id, linkedin_sections: 'experience' });
  t.is(await connector.findProfile(query({ profileUrl: 'https://www.linkedin.com/in/no-such-member' })), null);
  const none = since();
  t.is(await connector.findProfile(query({ fullName: 'Ada Lovelace', company: 'Engines' })), null);
  t.is(await connector.findProfile(query({ profileUrl: 'https://example.com/team' })), null);
  t.is(none().length, 0);

  const { connector: unconfigured } = await setup(t);
  t.like(await failure(unconfigured.findProfile(query({ profileUrl: urlOf(ada) }))), {
    code: 'auth',
    details: { reason: 'no_search_account' },
  });
});

/** A second connector on the same stand-in with a search account. */
async function setupWith(t: ExecutionContext, standIn: StandIn, searchAccountId: string) {
  const connector = new UnipileConnector({
    baseUrl: standIn.url,
    apiKey: standIn.apiKey,
    publicBaseUrl: 'https://api.example',
    searchAccountId,
  });
  t.teardown(() => connector.close());
  return { connector };
}

const query = (q: Partial<Parameters<UnipileConnector['findProfile']>[0]>) => ({
  fullName: null,
  firstName: null,
  lastName: null,
  company: null,
  companyDomain: null,
  email: null,
  profileUrl: null,
  ...q,
});

// ---------------------------------------------------------------------------------------------
// Errors

test('unipile: error types map to codes and reasons (account lost, rate limited, recipient, outage)', async (t) => {
  const { unipile, connector } = await setup(t);
  const a = unipile.addAccount();
  const ada = member('errors');
  unipile.relate(a.id, ada.provider_id);
  const send = () =>
    connector.sendMessage(a.id, {
      idempotencyKey: 'k',
      recipient: ada.provider_id,
      body: 'Hi',
      retry: false,
    } as Parameters<UnipileConnector['sendMessage']>[1]);
  const post = { method: 'POST', path: /^\/chats$/ };
  const cases: [string, ReturnType<typeof unipileError>, string, string, number | null][] = [
    ['disconnected', unipileError(401, 'disconnected_account'), 'auth', 'disconnected', null],
    ['expired', unipileError(401, 'expired_credentials'), 'auth', 'credentials_expired', null],
    ['invalid credentials', unipileError(401, 'invalid_credentials'), 'auth', 'invalid_credentials', null],
    ['checkpoint', unipileError(401, 'checkpoint_error'), 'auth', 'checkpoint', null],
    ['restricted', unipileError(403, 'account_restricted'), 'auth', 'restricted', null],
    ['action required', unipileError(403, 'action_required'), 'auth', 'action_required', null],
    ['feature', unipileError(403, 'feature_not_subscribed'), 'invalid_request', 'feature_not_subscribed', null],
    ['limit', unipileError(422, 'limit_exceeded'), 'rate_limited', 'limit_exceeded', 86_400],
    ['resend', unipileError(422, 'cannot_resend_yet'), 'invalid_request', 'cannot_resend_yet', null],
    ['recent', unipileError(422, 'already_invited_recently'), 'invalid_request', 'already_invited_recently', null],
    ['recipient', unipileError(422, 'invalid_recipient'), 'invalid_request', 'invalid_recipient', null],
    ['unreachable', unipileError(422, 'user_unreachable'), 'invalid_request', 'user_unreachable', null],
    [
      'no relation',
      unipileError(422, 'no_connection_with_recipient'),
      'invalid_request',
      'no_connection_with_recipient',
      null,
    ],
    ['inmail credits', unipileError(422, 'insufficient_credits'), 'invalid_request', 'insufficient_credits', null],
    ['too long', unipileError(400, 'too_many_characters'), 'invalid_request', 'too_many_characters', null],
    ['not found', unipileError(404, 'resource_not_found'), 'invalid_request', 'not_found', null],
    ['network down', unipileError(503, 'network_down'), 'unavailable', 'network_down', null],
    ['provider error', unipileError(500, 'provider_error'), 'unavailable', 'provider_error', null],
    ['timeout', unipileError(504, 'request_timeout'), 'timeout', 'request_timeout', null],
    [
      'not implemented',
      unipileError(501, 'feature_not_implemented'),
      'invalid_request',
      'feature_not_implemented',
      null,
    ],
  ];
  for (const [name, reply, code, reason, retryAfter] of cases) {
    unipile.fault(post, reply);
    const err = await failure(send());
    t.is(err.code as string, code, name);
    t.is(err.details.reason, reason, name);
    t.is(err.details.status, reply.status, name);
    t.is(err.retryAfterSeconds, retryAfter, name);
    t.is(err.provider, 'unipile', name);
    t.is(err.retryable, ['rate_limited', 'unavailable', 'timeout'].includes(code), name);
    t.regex(err.message, new RegExp(`errors/${reply.body && (reply.body as { type: string }).type.slice(7)}`), name);
  }
  t.is(unipile.chats.size, 0);

  // 429 too_many_requests: rate limited, with Retry-After when Unipile sends one.
  unipile.tooManyRequests(post, 1, '30');
  t.like(await failure(send()), {
    code: 'rate_limited',
    retryable: true,
    retryAfterSeconds: 30,
    details: { reason: 'too_many_requests', status: 429 },
  });
  unipile.tooManyRequests(post);
  t.like(await failure(send()), { code: 'rate_limited', retryAfterSeconds: null });

  // LinkedIn restricts the account: every call on it says so.
  unipile.restrict(a.id);
  const lost = await failure(connector.profile(a.id));
  t.like(lost, { code: 'auth', details: { reason: 'restricted', status: 403 } });
  t.is(accountLostReason(lost), 'restricted');
  unipile.restrict(a.id, false);

  // The account's own invitation quota: Unipile's limit_exceeded from the invite call.
  unipile.accounts.get(a.id)!.invitesLeft = 0;
  t.like(
    await failure(
      connector.sendInvitation(a.id, { idempotencyKey: 'i', recipient: member('quota').provider_id, body: '' }),
    ),
    {
      code: 'rate_limited',
      details: { reason: 'limit_exceeded' },
      retryAfterSeconds: 86_400,
    },
  );

  // A body that is not Unipile's: judged by its status.
  unipile.fault(post, { status: 502, body: { message: 'bad gateway' } });
  t.like(await failure(send()), { code: 'unavailable' });
  unipile.fault(post, { status: 201, body: { object: 'ChatStarted', chat_id: 42 } });
  t.like(await failure(send()), { code: 'bad_response' });

  // A wrong API key is our configuration, not the account.
  const { connector: wrongKey } = await setup(t, { apiKey: 'not-the-key' });
  const refused = await failure(wrongKey.status('whatever'));
  t.like(refused, { code: 'auth', details: { reason: 'api_key_refused', status: 401 } });
  t.is(accountLostReason(refused), null);

  // The mapping itself, for a body with detail and a Retry-After date.
  const e = unipileErrorOf(
    429,
    { title: 'Too many', detail: 'slow down', type: 'errors/too_many_requests', status: 429 },
    12,
  )!;
  t.like(e, { code: 'rate_limited', retryAfterSeconds: 12 });
  t.regex(e.message, /Too many: slow down \(errors\/too_many_requests, HTTP 429\)/);
  t.is(unipileErrorOf(500, null, null), null);
  t.is(unipileErrorOf(500, { type: 'not a code!' }, null), null);
});

// ---------------------------------------------------------------------------------------------
// Webhooks

test('unipile: webhooks are registered once; their deliveries parse to our events', async (t) => {
  const { unipile, hooks, origin, connector, since } = await setup(t);
  const reqs = since();
  const first = await connector.ensureWebhooks();
  t.is(first.requestUrl, `${origin}/hooks/connector`);
  t.deepEqual(
    first.created.map((w) => w.source),
    ['messaging', 'users', 'account_status'],
  );
  const posts = reqs().filter((r) => r.method === 'POST');
  t.deepEqual(posts[0].json, {
    source: 'messaging',
    request_url: `${origin}/hooks/connector`,
    name: webhookName('messaging'),
    format: 'json',
    events: ['message_received'],
    headers: [
      { key: 'Content-Type', value: 'application/json' },
      { key: UNIPILE_SECRET_HEADER, value: SECRET },
    ],
  });
  t.like(posts[1].json, { source: 'users', name: 'outreach-users' });
  t.like(posts[2].json, { source: 'account_status', name: 'outreach-account_status' });
  const second = await connector.ensureWebhooks();
  t.is(second.created.length, 0);
  t.deepEqual(second.existing.map((w) => w.webhookId).sort(), first.created.map((w) => w.webhookId).sort());
  t.is(unipile.webhooks.size, 3);

  const a = unipile.addAccount();
  const ada = member('hook');
  const headersOf = (i: number) =>
    Object.fromEntries(Object.entries(hooks.requests[i].headers).map(([k, v]) => [k, String(v)]));
  const lastEvent = () => {
    const i = hooks.requests.length - 1;
    t.is(hooks.requests[i].url, '/hooks/connector');
    t.is(hooks.requests[i].headers[UNIPILE_SECRET_HEADER], SECRET);
    t.regex(String(hooks.requests[i].headers['content-type']), /application\/json/);
    return connector.parseInbound(hooks.requests[i].raw, headersOf(i))!;
  };

  // Account status: { AccountStatus: { account_id, account_type, message } }.
  const before = Date.now();
  await unipile.setAccountStatus(a.id, 'CREDENTIALS');
  const status = lastEvent();
  t.like(status, {
    type: 'account.status',
    connectorAccountId: a.id,
    state: 'disconnected',
    reason: 'credentials_expired',
    occurredAt: null,
  });
  t.regex(status.eventId, new RegExp(`^account_status:${a.id}:CREDENTIALS:\\d+$`));
  t.true(Number(status.eventId.split(':').at(-1)) >= before);
  await unipile.setAccountStatus(a.id, 'OK');
  t.like(lastEvent(), { type: 'account.status', state: 'connected', reason: null });

  // An invitation accepted: new_relation.
  const inv = await connector.sendInvitation(a.id, { idempotencyKey: 'i', recipient: urlOf(ada), body: '' });
  await unipile.acceptInvitation(inv.invitationId);
  const accepted = lastEvent();
  t.like(accepted, {
    type: 'invitation.accepted',
    eventId: `new_relation:${a.id}:${ada.provider_id}`,
    connectorAccountId: a.id,
    invitationId: ada.provider_id,
    recipient: urlOf(ada),
  });
  t.true(accepted.type === 'invitation.accepted' && accepted.acceptedAt.getTime() >= before);

  // A message in: message_received, direction from the account's own provider id.
  const { message } = await unipile.inboundMessage(a.id, ada, 'Thanks for connecting!', {
    attachments: [{ file_name: 'a.txt', mimetype: 'text/plain', data: Buffer.from('hi') }],
  });
  t.deepEqual(lastEvent(), {
    type: 'message.received',
    eventId: message.id,
    connectorAccountId: a.id,
    occurredAt: new Date(message.timestamp),
    message: {
      messageId: message.id,
      threadId: message.chat_id,
      direction: 'in',
      from: ada.provider_id,
      body: 'Thanks for connecting!',
      sentAt: new Date(message.timestamp),
      attachments: [{ id: message.attachments[0].id, name: 'a.txt', size: 2 }],
    },
  });
  // Our own send comes back as message_received too: `out`.
  const sent = await connector.sendMessage(a.id, {
    idempotencyKey: 's',
    recipient: ada.provider_id,
    body: 'Glad to',
    threadId: message.chat_id,
  });
  await unipile.settled();
  t.like(lastEvent(), {
    type: 'message.received',
    eventId: sent.messageId,
    message: { direction: 'out', body: 'Glad to' },
  });

  // The secret header is checked.
  const i = hooks.requests.length - 1;
  t.like(
    t.throws(() => connector.parseInbound(hooks.requests[i].raw, { ...headersOf(i), [UNIPILE_SECRET_HEADER]: 'nope' })),
    { code: 'auth' },
  );
  t.like(
    t.throws(() => connector.parseInbound(hooks.requests[i].raw, {})),
    { code: 'auth' },
  );

  // Webhooks can be listed and deleted.
  const list = (await connector.http.json('GET', 'webhooks')) as { items: { id: string }[] };
  t.is(list.items.length, 3);
  await connector.http.json('DELETE', `webhooks/${list.items[0].id}`);
  t.is(unipile.webhooks.size, 2);
  t.is((await connector.ensureWebhooks()).created.length, 1);
});

test('unipile: parseUnipileWebhook reads the documented payloads and ignores the rest', (t) => {
  const at = new Date('2026-01-01T10:00:00.000Z');
  // The docs' new-message example, verbatim (cleaned of comments).
  const docMessage = {
    account_id: 'dfXlh46vQYCsMbVarumWlg',
    account_type: 'LINKEDIN',
    account_info: { type: 'LINKEDIN', feature: 'classic', user_id: 'ACoAAAcDMMQBODyLwZrRcgYhrkCafURGqva0U4E' },
    event: 'message_received',
    chat_id: 'R8J-xM9WX7eoHLp6gSVtWQ',
    timestamp: '2023-09-24T13:49:07.965Z',
    webhook_name: 'Webhook demo',
    message_id: 'ykmhfXlRW0W_cqReJYrfBw',
    message: 'Hello World !',
    sender: {
      attendee_id: 'C8zaRZTlVcmfnke_Vai4Gg',
      attendee_name: 'Kim Unipile',
      attendee_provider_id: 'ACoAAAcDMMQBODyLwZrRcgYhrkCafURGqva0U4E',
      attendee_profile_url: 'https://www.linkedin.com/in/ACoAAAcDMMQBODyLwZrRcgYhrkCafURGqva0U4E/',
    },
    attendees: [],
    attachments: {
      id: 'att1',
      size: { height: '150', width: '150' },
      sticker: 'false',
      unavailable: 'false',
      mimetype: 'image/jpeg',
      type: 'img',
      url: 'att://att1',
    },
  };
  t.deepEqual(parseUnipileWebhook(docMessage, { receivedAt: at }), {
    type: 'message.received',
    eventId: 'ykmhfXlRW0W_cqReJYrfBw',
    connectorAccountId: 'dfXlh46vQYCsMbVarumWlg',
    occurredAt: new Date('2023-09-24T13:49:07.965Z'),
    message: {
      messageId: 'ykmhfXlRW0W_cqReJYrfBw',
      threadId: 'R8J-xM9WX7eoHLp6gSVtWQ',
      // The sender is the account itself (account_info.user_id).
      direction: 'out',
      from: 'ACoAAAcDMMQBODyLwZrRcgYhrkCafURGqva0U4E',
      body: 'Hello World !',
      sentAt: new Date('2023-09-24T13:49:07.965Z'),
      attachments: [{ id: 'att1', name: 'att1', size: 0 }],
    },
  });
  t.like(parseUnipileWebhook({ ...docMessage, account_info: { user_id: 'ACoSomeoneElse1234' } }, { receivedAt: at }), {
    message: { direction: 'in' },
  });
  // The docs' new-relation example.
  t.deepEqual(
    parseUnipileWebhook(
      {
        event: 'new_relation',
        account_id: 'SDF4tGaPSPSzNe1D1xsOs',
        account_type: 'LINKEDIN',
        webhook_name: '',
        user_full_name: 'Julien Crépieux',
        user_provider_id: 'ACoAAAh_Ffqss54sqAGQOD8u7sl5of04y9_3AwyM',
        user_public_identifier: 'julien-crepieux',
        user_profile_url: 'https://www.linkedin.com/in/julien-crepieux/',
        user_picture_url: 'https://media.licdn.com/x',
      },
      { receivedAt: at },
    ),
    {
      type: 'invitation.accepted',
      eventId: 'new_relation:SDF4tGaPSPSzNe1D1xsOs:ACoAAAh_Ffqss54sqAGQOD8u7sl5of04y9_3AwyM',
      connectorAccountId: 'SDF4tGaPSPSzNe1D1xsOs',
      occurredAt: null,
      invitationId: 'ACoAAAh_Ffqss54sqAGQOD8u7sl5of04y9_3AwyM',
      recipient: 'https://www.linkedin.com/in/julien-crepieux/',
      acceptedAt: at,
    },
  );
  // The docs' account status example, and each status.
  const status = (message: string) =>
    parseUnipileWebhook(
      { AccountStatus: { account_id: 'h_EKCy2lRLef5NzHp0iw4A', account_type: 'LINKEDIN', message } },
      { receivedAt: at },
    );
  t.deepEqual(status('CREDENTIALS'), {
    type: 'account.status',
    eventId: `account_status:h_EKCy2lRLef5NzHp0iw4A:CREDENTIALS:${at.getTime()}`,
    connectorAccountId: 'h_EKCy2lRLef5NzHp0iw4A',
    occurredAt: null,
    state: 'disconnected',
    reason: 'credentials_expired',
  });
  t.like(status('OK'), { state: 'connected', reason: null });
  t.like(status('ERROR'), { state: 'disconnected', reason: 'error' });
  t.like(status('STOPPED'), { state: 'disconnected', reason: 'stopped' });
  t.like(status('DELETED'), { state: 'disconnected', reason: 'deleted' });
  t.like(status('CONNECTING'), { state: 'pending' });
  t.like(status('CREATION_SUCCESS'), { state: 'pending' });
  t.is(status('SYNC_SUCCESS'), null);
  t.is(status('SOMETHING_NEW'), null);
  // Events we do not act on, and what is not an event at all.
  t.is(parseUnipileWebhook({ ...docMessage, event: 'message_read' }), null);
  t.is(parseUnipileWebhook({ ...docMessage, event: 'message_reaction', reaction: '😄' }), null);
  t.is(parseUnipileWebhook({ hello: 'world' }), null);
  t.is(parseUnipileWebhook([1, 2]), null);
  t.is(parseUnipileWebhook(null), null);
  // A known kind without its fields is refused.
  t.like(
    t.throws(() => parseUnipileWebhook({ event: 'message_received', account_id: 'a' })),
    { code: 'invalid_request' },
  );
  t.like(
    t.throws(() => parseUnipileWebhook({ event: 'new_relation', account_id: 'a' })),
    { code: 'invalid_request' },
  );
  t.like(
    t.throws(() => parseUnipileWebhook({ AccountStatus: { account_id: 'a' } })),
    { code: 'invalid_request' },
  );
  t.like(
    t.throws(() => parseUnipileWebhook({ ...docMessage, timestamp: '2030-01-01T00:00:00.000Z' }, { receivedAt: at })),
    { code: 'invalid_request' },
  );
  // Attachments as a list, with a file name and size.
  t.deepEqual(
    (
      parseUnipileWebhook(
        { ...docMessage, attachments: [{ id: 'f1', file_name: 'cv.pdf', file_size: 1234 }] },
        { receivedAt: at },
      ) as { message: { attachments: unknown } }
    ).message.attachments,
    [{ id: 'f1', name: 'cv.pdf', size: 1234 }],
  );
});
