// The HTTP connector's account half against a local server speaking the v1 wire format
// (docs/providers.md "Connector (accounts)"): requests as documented, answers mapped, errors coded.
import test from 'ava';
import type { ServerResponse } from 'node:http';
import { ConnectorError, HttpConnector, signInbound } from '../../lib/connectors/index.js';
import { sendJson, startServer, type WireRequest, type WireServer } from '../helpers/source-servers.js';

const KEY = 'k-accounts-1';
const SECRET = 'whsec-http';
const T0 = '2026-11-22T10:00:00.000Z';

type Handler = (req: WireRequest, res: ServerResponse) => void;

async function connector(
  t: { teardown(fn: () => Promise<void> | void): void },
  handler: Handler,
): Promise<{ http: HttpConnector; server: WireServer }> {
  const server = await startServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${KEY}`) return sendJson(res, 401, {});
    handler(req, res);
  });
  const http = new HttpConnector({ baseUrl: `${server.url}/prefix`, apiKey: KEY }, { webhookSecret: SECRET });
  t.teardown(async () => {
    await http.close();
    await server.close();
  });
  return { http, server };
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

/** A tiny connector: one account `acc/1`, answers by route. */
const wire: Handler = (req, res) => {
  const path = req.url.pathname.replace(/^\/prefix/, '');
  const route = `${req.method} ${path}`;
  const msg = {
    id: 'm1',
    thread_id: 't1',
    direction: 'out',
    from: 'ada@example.test',
    body: 'Hello',
    sent_at: T0,
    attachments: [{ id: 'att1', name: 'a.txt', size: 2 }],
  };
  switch (route) {
    case 'POST /v1/accounts':
      return (req.body as { credentials: unknown }).credentials
        ? sendJson(res, 201, { id: 'acc/1', kind: 'connected' })
        : sendJson(res, 201, {
            id: 'acc/1',
            kind: 'hosted_link',
            url: 'https://connector.example/link/1',
            expires_at: T0,
          });
    case 'GET /v1/accounts/acc%2F1':
      return sendJson(res, 200, {
        id: 'acc/1',
        state: 'disconnected',
        reason: 'checkpoint',
        address: 'https://pronet.example/in/ada',
      });
    case 'POST /v1/accounts/statuses':
      return sendJson(res, 200, { items: [{ id: 'acc/1', state: 'connected', reason: null, address: null }] });
    case 'DELETE /v1/accounts/acc%2F1':
      return void res.writeHead(204).end();
    case 'GET /v1/accounts/acc%2F1/profile':
      return sendJson(res, 200, {
        name: ' Ada ',
        headline: null,
        profile_url: 'https://pronet.example/in/ada',
        picture_url: '',
      });
    case 'POST /v1/accounts/acc%2F1/emails':
    case 'POST /v1/accounts/acc%2F1/messages':
      return sendJson(res, 201, { message_id: 'm1', thread_id: 't1', sent_at: T0 });
    case 'POST /v1/accounts/acc%2F1/invitations':
      return sendJson(res, 201, { invitation_id: 'i1', sent_at: T0 });
    case 'GET /v1/accounts/acc%2F1/invitations':
      return sendJson(res, 200, {
        items: [{ invitation_id: 'i1', recipient: 'https://pronet.example/in/grace', sent_at: T0 }],
        next_cursor: req.url.searchParams.get('cursor') ? null : 'c2',
      });
    case 'DELETE /v1/accounts/acc%2F1/invitations/i1':
      return void res.writeHead(204).end();
    case 'GET /v1/accounts/acc%2F1/chats':
      return sendJson(res, 200, {
        items: [{ thread_id: 't1', counterpart: 'grace', last_message_at: T0 }],
        next_cursor: null,
      });
    case 'GET /v1/accounts/acc%2F1/chats/t%201/messages':
      return sendJson(res, 200, { items: [msg], next_cursor: null });
    case 'GET /v1/accounts/acc%2F1/messages/m1/attachments/att1':
      return void res
        .writeHead(200, {
          'content-type': 'text/plain',
          'content-disposition': 'attachment; filename="a.txt"',
          'content-length': '2',
        })
        .end('hi');
    default:
      return sendJson(res, 404, {});
  }
};

test('http accounts: every operation sends the documented request and maps the answer', async (t) => {
  const { http, server } = await connector(t, wire);
  t.deepEqual(
    await http.connect({
      channel: 'network',
      accountId: 'pa-1',
      displayName: 'Ada',
      returnUrl: 'https://app.example/back',
    }),
    {
      connectorAccountId: 'acc/1',
      kind: 'hosted_link',
      url: 'https://connector.example/link/1',
      expiresAt: new Date(T0),
    },
  );
  t.deepEqual(server.requests.at(-1)!.body, {
    channel: 'network',
    account_id: 'pa-1',
    display_name: 'Ada',
    credentials: null,
    return_url: 'https://app.example/back',
  });
  t.like(
    await http.connect({ channel: 'email', accountId: 'pa-2', displayName: 'Box', credentials: { email: 'a@b.test' } }),
    { kind: 'connected', url: null },
  );

  t.deepEqual(await http.status('acc/1'), {
    connectorAccountId: 'acc/1',
    state: 'disconnected',
    reason: 'checkpoint',
    address: 'https://pronet.example/in/ada',
  });
  t.deepEqual(await http.status('gone'), {
    connectorAccountId: 'gone',
    state: 'disconnected',
    reason: 'not_found',
    address: null,
  });
  t.deepEqual(await http.statuses(['acc/1', 'gone']), [
    { connectorAccountId: 'acc/1', state: 'connected', reason: null, address: null },
    { connectorAccountId: 'gone', state: 'disconnected', reason: 'not_found', address: null },
  ]);
  t.deepEqual(server.requests.at(-1)!.body, { ids: ['acc/1', 'gone'] });
  t.is((await failure(http.statuses(Array.from({ length: 101 }, (_, i) => String(i))))).code, 'invalid_request');
  await http.disconnect('acc/1');
  await http.disconnect('gone'); // 404: already removed
  t.deepEqual(await http.profile('acc/1'), {
    name: 'Ada',
    headline: null,
    profileUrl: 'https://pronet.example/in/ada',
    email: null,
    pictureUrl: null,
  });

  t.deepEqual(
    await http.sendEmail('acc/1', {
      idempotencyKey: 'action-1',
      to: 'grace@example.test',
      subject: 'Hi',
      body: 'Hello',
    }),
    { messageId: 'm1', threadId: 't1', sentAt: new Date(T0) },
  );
  const sent = server.requests.at(-1)!;
  t.is(sent.headers['idempotency-key'], 'action-1');
  t.is(sent.headers.authorization, `Bearer ${KEY}`);
  t.deepEqual(sent.body, { to: 'grace@example.test', subject: 'Hi', body: 'Hello', thread_id: null });
  await http.sendMessage('acc/1', { idempotencyKey: 'action-2', recipient: 'grace', body: 'Hi', threadId: 't1' });
  t.deepEqual(server.requests.at(-1)!.body, { recipient: 'grace', body: 'Hi', thread_id: 't1' });
  t.deepEqual(
    await http.sendInvitation('acc/1', { idempotencyKey: 'action-3', recipient: 'grace', body: 'Connect?' }),
    { invitationId: 'i1', sentAt: new Date(T0) },
  );
  t.is(server.requests.at(-1)!.headers['idempotency-key'], 'action-3');

  const p1 = await http.pendingInvitations('acc/1', null);
  t.deepEqual(p1, {
    items: [{ invitationId: 'i1', recipient: 'https://pronet.example/in/grace', sentAt: new Date(T0) }],
    cursor: 'c2',
  });
  t.is(server.requests.at(-1)!.url.search, '?status=pending');
  t.is((await http.pendingInvitations('acc/1', 'c2')).cursor, null);
  t.is(server.requests.at(-1)!.url.search, '?status=pending&cursor=c2');
  await http.withdrawInvitation('acc/1', 'i1');
  await http.withdrawInvitation('acc/1', 'i-gone');
  t.deepEqual(await http.chats('acc/1', null), {
    items: [{ threadId: 't1', counterpart: 'grace', lastMessageAt: new Date(T0) }],
    cursor: null,
  });
  t.deepEqual((await http.messages('acc/1', 't 1', null)).items, [
    {
      messageId: 'm1',
      threadId: 't1',
      direction: 'out',
      from: 'ada@example.test',
      body: 'Hello',
      sentAt: new Date(T0),
      attachments: [{ id: 'att1', name: 'a.txt', size: 2 }],
    },
  ]);
  const att = await http.attachment('acc/1', 'm1', 'att1', { maxBytes: 1024 });
  t.like(att, { name: 'a.txt', contentType: 'text/plain', size: 2 });
  t.deepEqual(await readAll(att.body), Buffer.from('hi'));
  // Over the cap: a declared length is refused before reading; an undeclared one fails the stream.
  await t.throwsAsync(http.attachment('acc/1', 'm1', 'att1', { maxBytes: 1 }), { message: /larger than 1 bytes/ });
});

test('http accounts: an unknown account, statuses and broken answers map to ConnectorError codes', async (t) => {
  let answer: Handler = () => {};
  const { http } = await connector(t, (req, res) => answer(req, res));
  const send = () => http.sendMessage('acc', { idempotencyKey: 'k', recipient: 'r', body: 'b' });
  const cases: [string, Handler, () => Promise<unknown>, string][] = [
    ['404 on a send', (_q, res) => sendJson(res, 404, {}), send, 'invalid_request'],
    ['404 on a profile', (_q, res) => sendJson(res, 404, {}), () => http.profile('acc'), 'invalid_request'],
    ['401', (_q, res) => sendJson(res, 401, {}), send, 'auth'],
    ['429', (_q, res) => sendJson(res, 429, {}, { 'retry-after': '7' }), send, 'rate_limited'],
    ['503', (_q, res) => sendJson(res, 503, {}), () => http.status('acc'), 'unavailable'],
    ['422', (_q, res) => sendJson(res, 422, {}), send, 'invalid_request'],
    [
      'send without a message id',
      (_q, res) => sendJson(res, 201, { thread_id: 't', sent_at: T0 }),
      send,
      'bad_response',
    ],
    [
      'send with a bad date',
      (_q, res) => sendJson(res, 201, { message_id: 'm', thread_id: 't', sent_at: 'yesterday' }),
      send,
      'bad_response',
    ],
    [
      'unknown state',
      (_q, res) => sendJson(res, 200, { id: 'acc', state: 'sleeping' }),
      () => http.status('acc'),
      'bad_response',
    ],
    [
      'hosted link without url',
      (_q, res) => sendJson(res, 201, { id: 'a', kind: 'hosted_link' }),
      () => http.connect({ channel: 'email', accountId: 'x', displayName: 'x' }),
      'bad_response',
    ],
    [
      'page without next_cursor',
      (_q, res) => sendJson(res, 200, { items: [] }),
      () => http.chats('acc', null),
      'bad_response',
    ],
    [
      'attachment growing past the cap',
      (_q, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(2048)),
      async () => readAll((await http.attachment('acc', 'm', 'a', { maxBytes: 100 })).body),
      'bad_response',
    ],
    [
      'attachment unknown',
      (_q, res) => sendJson(res, 404, {}),
      () => http.attachment('acc', 'm', 'a', { maxBytes: 100 }),
      'invalid_request',
    ],
    [
      'not JSON',
      (_q, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('nope'),
      () => http.profile('acc'),
      'bad_response',
    ],
  ];
  for (const [name, respond, run, code] of cases) {
    answer = respond;
    const err = await failure(run());
    t.is(err.code as string, code, name);
    t.is(err.provider, 'http', name);
  }
  answer = (_q, res) => sendJson(res, 429, {}, { 'retry-after': '7' });
  t.is((await failure(send())).retryAfterSeconds, 7);
});

test('http accounts: parseInbound verifies the signature and parses the event', async (t) => {
  const { http } = await connector(t, wire);
  const event = {
    id: 'evt_1',
    type: 'invitation.accepted',
    account_id: 'acc/1',
    data: { invitation_id: 'i1', recipient: 'grace', accepted_at: T0 },
  };
  const body = Buffer.from(JSON.stringify(event));
  t.deepEqual(http.parseInbound(body, { 'x-connector-signature': signInbound(SECRET, body) }), {
    type: 'invitation.accepted',
    eventId: 'evt_1',
    connectorAccountId: 'acc/1',
    invitationId: 'i1',
    recipient: 'grace',
    acceptedAt: new Date(T0),
  });
  const opened = Buffer.from(
    JSON.stringify({
      id: 'evt_2',
      type: 'message.opened',
      account_id: 'acc/1',
      data: { message_id: 'm1', opened_at: T0 },
    }),
  );
  t.deepEqual(http.parseInbound(opened, { 'x-connector-signature': signInbound(SECRET, opened) }), {
    type: 'message.opened',
    eventId: 'evt_2',
    connectorAccountId: 'acc/1',
    messageId: 'm1',
    openedAt: new Date(T0),
  });
  // Two v1 values (a secret being rotated): either may match.
  const rotated = `${signInbound('old-secret', body)},v1=${signInbound(SECRET, body).split('v1=')[1]}`;
  t.is(http.parseInbound(body, { 'x-connector-signature': rotated }).eventId, 'evt_1');
  const bad = t.throws(() => http.parseInbound(body, { 'x-connector-signature': signInbound('nope', body) }), {
    instanceOf: ConnectorError,
  });
  t.is(bad!.code, 'auth');
  const notEvent = Buffer.from('{"id":"e","type":"other"}');
  const err = t.throws(() => http.parseInbound(notEvent, { 'x-connector-signature': signInbound(SECRET, notEvent) }), {
    instanceOf: ConnectorError,
  });
  t.is(err!.code, 'invalid_request');
});

async function readAll(body: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c);
  return Buffer.concat(chunks);
}
