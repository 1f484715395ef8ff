// What a connector's refusal of an account call means for the account (domain/accounts/refusals.ts),
// and the routing connector handing every refused account call to it before the caller sees it.
import test from 'ava';
import { refusalEffect, THROTTLE_DEFAULT_MS, THROTTLE_MAX_MS } from '../../domain/accounts/refusals.js';
import { ConnectorError, RoutingConnector, type Connector } from '../../lib/connectors/index.js';
import type { MailConnector } from '../../lib/connectors/mailbox/connector.js';
import { unipileErrorOf } from '../../lib/connectors/unipile/client.js';

const NOW = new Date('2026-11-24T15:00:00Z');

test('the table: a lost account, a rate limit (its Retry-After, a default, a bound), anything else nothing', (t) => {
  const restricted = unipileErrorOf(
    403,
    { type: 'errors/account_restricted', title: 'Account restricted', status: 403 },
    null,
  );
  t.deepEqual(refusalEffect(restricted, NOW), { kind: 'lost', reason: 'restricted' });
  const checkpoint = unipileErrorOf(401, { type: 'errors/checkpoint_error', title: 'Checkpoint', status: 401 }, null);
  t.deepEqual(refusalEffect(checkpoint, NOW), { kind: 'lost', reason: 'checkpoint' });
  // Our own key refused is our configuration, not the account.
  const key = unipileErrorOf(
    401,
    { type: 'errors/missing_credentials', title: 'Missing credentials', status: 401 },
    null,
  );
  t.is(refusalEffect(key, NOW), null);
  const limited = unipileErrorOf(429, { type: 'errors/too_many_requests', title: 'Too many', status: 429 }, 120);
  t.deepEqual(refusalEffect(limited, NOW), { kind: 'throttled', until: new Date(NOW.getTime() + 120_000) });
  const unnamed = unipileErrorOf(429, { type: 'errors/too_many_requests', title: 'Too many', status: 429 }, null);
  t.deepEqual(refusalEffect(unnamed, NOW), { kind: 'throttled', until: new Date(NOW.getTime() + THROTTLE_DEFAULT_MS) });
  // LinkedIn's quota for the account: a day unless Unipile names a time.
  const quota = unipileErrorOf(422, { type: 'errors/limit_exceeded', title: 'Limit exceeded', status: 422 }, null);
  t.deepEqual(refusalEffect(quota, NOW), { kind: 'throttled', until: new Date(NOW.getTime() + 86_400_000) });
  const huge = new ConnectorError('x', 'rate_limited', 'slow down', { retryAfterSeconds: 90 * 86_400 });
  t.deepEqual(refusalEffect(huge, NOW), { kind: 'throttled', until: new Date(NOW.getTime() + THROTTLE_MAX_MS) });
  const recipient = unipileErrorOf(
    422,
    { type: 'errors/invalid_recipient', title: 'Invalid recipient', status: 422 },
    null,
  );
  t.is(refusalEffect(recipient, NOW), null);
  t.is(refusalEffect(new ConnectorError('x', 'unavailable', 'down'), NOW), null);
  t.is(refusalEffect(new Error('not a provider'), NOW), null);
});

test('the routing connector tells the sink of every refused account call, then throws the refusal; a failing sink changes nothing', async (t) => {
  const refusal = new ConnectorError('x', 'rate_limited', 'slow down', { retryAfterSeconds: 5 });
  const fail = () => Promise.reject(refusal);
  const base = {
    name: 'x',
    findProfile: fail,
    connect: fail,
    status: fail,
    statuses: fail,
    disconnect: fail,
    profile: fail,
    sendEmail: fail,
    sendInvitation: fail,
    sendMessage: fail,
    pendingInvitations: fail,
    withdrawInvitation: fail,
    chats: fail,
    messages: fail,
    attachment: fail,
    parseInbound: () => null,
  } as unknown as Connector;
  const told: [string, unknown][] = [];
  let sinkFails = false;
  const routing = new RoutingConnector(base, {} as MailConnector, async (id, err) => {
    told.push([id, err]);
    if (sinkFails) throw new Error('database down');
  });
  const input = { idempotencyKey: 'k', recipient: 'r', body: 'b' };
  await t.throwsAsync(routing.sendInvitation('acc-1', input), { is: refusal });
  await t.throwsAsync(routing.sendMessage('acc-2', input), { is: refusal });
  await t.throwsAsync(routing.withdrawInvitation('acc-3', 'inv'), { is: refusal });
  await t.throwsAsync(routing.chats('acc-4', null), { is: refusal });
  sinkFails = true;
  await t.throwsAsync(routing.profile('acc-5'), { is: refusal });
  t.deepEqual(
    told.map(([id]) => id),
    ['acc-1', 'acc-2', 'acc-3', 'acc-4', 'acc-5'],
  );
  t.true(told.every(([, err]) => err === refusal));
  // A status read is not an account call that can be refused for the account: its answer is the status.
  await t.throwsAsync(routing.status('acc-6'));
  t.is(told.length, 5);
});
