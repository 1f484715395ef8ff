import test from 'ava';
import {
  checkDestination,
  DestinationError,
  guardedLookup,
  isAllowedHost,
  isBlockedAddress,
  postGuarded,
  type Resolver,
} from '../../lib/outbound-http.js';
import { closeApi } from '../helpers/api.js';
import { startReceiver } from '../helpers/receiver.js';
test.after.always(closeApi);

const NO_ALLOW = { allowHosts: [] as string[] };
const LOCAL_ALLOW = { allowHosts: ['127.0.0.1', 'localhost'] };

test('address classification: only global unicast passes (v4, v6, mapped, compatible, NAT64, 6to4)', (t) => {
  for (const ip of [
    '127.0.0.1',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '198.18.0.1',
    '192.0.2.1',
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd12::1',
    'ff02::1',
    '2001:db8::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::7f00:1',
    '::a9fe:a9fe',
    '64:ff9b::7f00:1',
    '64:ff9b::a9fe:a9fe',
    '2002:7f00:1::',
    '2002:c0a8:101::1',
    'not-an-ip',
  ])
    t.true(isBlockedAddress(ip), ip);
  for (const ip of [
    '8.8.8.8',
    '1.1.1.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])
    t.false(isBlockedAddress(ip), ip);
});

test('destination check: https required, private literals and local names blocked, allow list exempts', (t) => {
  const code = (url: string, policy = NO_ALLOW) => {
    try {
      checkDestination(url, policy);
      return 'ok';
    } catch (err) {
      return (err as DestinationError).code;
    }
  };
  t.is(code('https://hooks.example.com/x'), 'ok');
  t.is(code('https://8.8.8.8/x'), 'ok');
  t.is(code('http://hooks.example.com/x'), 'invalid_url');
  t.is(code('ftp://hooks.example.com/x'), 'invalid_url');
  t.is(code('/relative'), 'invalid_url');
  t.is(code('https://user:pw@hooks.example.com/'), 'invalid_url');
  for (const u of [
    'https://127.0.0.1/',
    'https://10.1.2.3/',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[64:ff9b::a9fe:a9fe]/',
    'https://[2002:a00:1::]/',
    'https://[fe80::1]/',
    'https://0x7f.1/',
    'https://2130706433/',
    'https://localhost/',
    'https://api.localhost/',
    'https://printer.local/',
    'https://metadata.google.internal/',
    'https://intranet/',
  ])
    t.is(code(u), 'blocked_destination', u);
  // Allow list: host-only entries match any port and also lift the HTTPS requirement.
  t.is(code('http://127.0.0.1:4567/hook', LOCAL_ALLOW), 'ok');
  t.is(code('http://localhost:9/hook', LOCAL_ALLOW), 'ok');
  t.is(code('http://10.0.0.5:8080/', { allowHosts: ['10.0.0.5:8080'] }), 'ok');
  t.is(code('https://10.0.0.5:8081/', { allowHosts: ['10.0.0.5:8080'] }), 'blocked_destination');
  t.true(isAllowedHost(new URL('http://[::1]:80/'), ['[::1]:80']));
  t.true(isAllowedHost(new URL('http://[::1]:8080/'), ['::1']));
});

test('postGuarded: POSTs the exact bytes, reads at most 1 KiB of the answer', async (t) => {
  const rx = await startReceiver((_req, res) => res.writeHead(201).end('x'.repeat(100_000)));
  t.teardown(rx.close);
  const body = '{"event":"a",  "data":{}}';
  const r = await postGuarded(rx.url, body, { 'X-Test': '1' }, LOCAL_ALLOW);
  t.true(r.success);
  t.is(r.statusCode, 201);
  t.is(r.errorClass, null);
  t.is(r.responseExcerpt!.length, 1024);
  t.is(rx.requests.length, 1);
  t.is(rx.requests[0].raw.toString(), body);
  t.is(rx.requests[0].headers['content-type'], 'application/json');
  t.is(rx.requests[0].headers['x-test'], '1');
});

test('postGuarded: a name resolving to 127.0.0.1 or 169.254.169.254 is refused at connect time (not allow-listed)', async (t) => {
  const rx = await startReceiver();
  t.teardown(rx.close);
  for (const answer of ['127.0.0.1', '169.254.169.254', '::ffff:127.0.0.1']) {
    const resolver: Resolver = async () => [{ address: answer, family: answer.includes(':') ? 6 : 4 }];
    const r = await postGuarded(
      `https://hooks.customer-example.com:${rx.port}/hook`,
      '{}',
      {},
      { ...NO_ALLOW, resolver },
    );
    t.false(r.success);
    t.is(r.errorClass, 'blocked_destination', answer);
    t.is(r.statusCode, null);
  }
  // One private address among public ones is enough to refuse.
  const mixed: Resolver = async () => [
    { address: '8.8.8.8', family: 4 },
    { address: '10.0.0.1', family: 4 },
  ];
  t.is(
    (await postGuarded(`https://mixed.customer-example.com:${rx.port}/`, '{}', {}, { ...NO_ALLOW, resolver: mixed }))
      .errorClass,
    'blocked_destination',
  );
  t.is(rx.requests.length, 0);
});

test('DNS rebinding: each connection resolves once and connects to exactly the validated address', async (t) => {
  const rx = await startReceiver();
  t.teardown(rx.close);
  let calls = 0;
  // First answer public, every later one private: a check-then-connect client (two lookups) would
  // validate the first and connect to the second.
  const rebinding: Resolver = async () =>
    ++calls === 1 ? [{ address: '8.8.8.8', family: 4 }] : [{ address: '127.0.0.1', family: 4 }];
  // The socket's lookup (no network needed to observe it): what it hands to connect() is the answer it checked.
  const lookup = guardedLookup(rebinding, false);
  const handed = await new Promise<unknown>((res, rej) =>
    lookup('rebind.customer-example.com', { all: true }, (err, addr) => (err ? rej(err) : res(addr))),
  );
  t.deepEqual(handed, [{ address: '8.8.8.8', family: 4 }]);
  t.is(calls, 1);
  // The next connection resolves again, gets the private answer, and is refused: nothing reaches 127.0.0.1.
  const r = await postGuarded(
    `https://rebind.customer-example.com:${rx.port}/`,
    '{}',
    {},
    { ...NO_ALLOW, resolver: rebinding },
  );
  t.is(r.errorClass, 'blocked_destination');
  t.is(calls, 2, 'postGuarded resolves once per connection, inside connect (no separate pre-check lookup)');
  t.is(rx.requests.length, 0);
  // The single-address form (options without `all`) behaves the same.
  const single = await new Promise<unknown[]>((res) =>
    guardedLookup(async () => [{ address: '10.0.0.1', family: 4 }], false)('x.customer-example.com', {}, (err, a, f) =>
      res([err?.message, a, f]),
    ),
  );
  t.regex(String(single[0]), /private-network/);
});

test('postGuarded: redirects are not followed (3xx = failure), even towards a private address', async (t) => {
  const target = await startReceiver();
  t.teardown(target.close);
  for (const location of ['http://169.254.169.254/latest/meta-data/', target.url]) {
    const rx = await startReceiver((_req, res) => res.writeHead(302, { location }).end());
    t.teardown(rx.close);
    const r = await postGuarded(rx.url, '{}', {}, LOCAL_ALLOW);
    t.false(r.success);
    t.is(r.statusCode, 302);
    t.is(r.errorClass, 'http_status');
    t.is(rx.requests.length, 1);
  }
  t.is(target.requests.length, 0);
});

test('postGuarded: a receiver that never answers is a timeout; a closed port a connection error; one request only', async (t) => {
  const rx = await startReceiver('stall');
  t.teardown(rx.close);
  const r = await postGuarded(rx.url, '{}', {}, { ...LOCAL_ALLOW, timeoutMs: 800 });
  t.false(r.success);
  t.is(r.errorClass, 'timeout');
  t.is(r.statusCode, null);
  t.true(r.durationMs >= 700);
  t.is(rx.requests.length, 1);

  const closed = await startReceiver();
  await closed.close();
  const c = await postGuarded(closed.url, '{}', {}, LOCAL_ALLOW);
  t.is(c.errorClass, 'connection_error');
  t.is(c.statusCode, null);
});

test('postGuarded: non-2xx is an http_status failure with a response excerpt', async (t) => {
  const rx = await startReceiver((_req, res) => res.writeHead(500).end('boom'));
  t.teardown(rx.close);
  const r = await postGuarded(rx.url, '{}', {}, LOCAL_ALLOW);
  t.deepEqual([r.success, r.statusCode, r.errorClass, r.responseExcerpt], [false, 500, 'http_status', 'boom']);
});

test('postGuarded: a receiver’s NUL bytes are stored as U+FFFD (PostgreSQL text holds none)', async (t) => {
  const rx = await startReceiver((_req, res) => res.writeHead(400).end('bad\0input'));
  t.teardown(rx.close);
  const r = await postGuarded(rx.url, '{}', {}, LOCAL_ALLOW);
  t.is(r.responseExcerpt, 'bad\uFFFDinput');
});

test('postGuarded: attempts to one destination reuse a kept-alive connection; concurrent ones get their own', async (t) => {
  const ports: number[] = [];
  const rx = await startReceiver((req, res) => {
    ports.push(req.socket.remotePort!);
    res.writeHead(204).end();
  });
  t.teardown(rx.close);
  for (let i = 0; i < 20; i++) t.true((await postGuarded(rx.url, `{"n":${i}}`, {}, LOCAL_ALLOW)).success);
  // (An attempt that starts while the last one's socket is being handed back may open another.)
  t.log(`${new Set(ports).size} connections for 20 attempts in a row`);
  t.true(new Set(ports).size <= 10, 'connections are reused');
  // Five at once: no attempt waits for another's socket (each has its own 10 s deadline).
  ports.length = 0;
  const slow = await startReceiver((req, res) => {
    ports.push(req.socket.remotePort!);
    setTimeout(() => res.writeHead(204).end(), 200);
  });
  t.teardown(slow.close);
  const all = await Promise.all(Array.from({ length: 5 }, () => postGuarded(slow.url, '{}', {}, LOCAL_ALLOW)));
  t.true(all.every((r) => r.success));
  t.is(new Set(ports).size, 5);
});
