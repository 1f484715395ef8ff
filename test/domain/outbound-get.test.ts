// getGuarded: the destination policy holds at connect time and on every redirect hop; size and time are bounded.
import test from 'ava';
import { getGuarded, type Resolver } from '../../lib/outbound-http.js';
import { closeApi } from '../helpers/api.js';
import { startReceiver } from '../helpers/receiver.js';
test.after.always(closeApi);

test('a name resolving to a private address is refused at connect time; nothing reaches the server', async (t) => {
  const rx = await startReceiver((_q, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>hi</p>'));
  t.teardown(rx.close);
  for (const answer of ['127.0.0.1', '10.0.0.1', '::ffff:169.254.169.254']) {
    const resolver: Resolver = async () => [{ address: answer, family: answer.includes(':') ? 6 : 4 }];
    const r = await getGuarded(`https://pages.customer-example.com:${rx.port}/`, { allowHosts: [], resolver });
    t.like(r, { success: false, errorClass: 'blocked_destination', statusCode: null, body: null }, answer);
  }
  t.is(rx.requests.length, 0);
});

test('size and time: the body is cut at maxBytes; a silent server is a timeout within the deadline', async (t) => {
  const big = await startReceiver((_q, res) =>
    res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(50_000)),
  );
  t.teardown(big.close);
  const r = await getGuarded(big.url, { allowHosts: ['127.0.0.1'], maxBytes: 1000 });
  t.true(r.success);
  t.is(r.body!.length, 1000);
  t.true(r.truncated);
  const small = await getGuarded(big.url, { allowHosts: ['127.0.0.1'], maxBytes: 50_000 });
  t.false(small.truncated);
  const stall = await startReceiver('stall');
  t.teardown(stall.close);
  const started = Date.now();
  const s = await getGuarded(stall.url, { allowHosts: ['127.0.0.1'], timeoutMs: 300 });
  t.like(s, { success: false, errorClass: 'timeout' });
  // The given 300 ms bounded it, not the 10 s default (a wide margin for a loaded machine).
  t.true(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
});

test('redirects: none followed by default; a relative Location is resolved; each hop is checked', async (t) => {
  const rx = await startReceiver((req, res) => {
    if (req.url === '/a') res.writeHead(302, { location: '/b' }).end();
    else if (req.url === '/private') res.writeHead(301, { location: 'https://192.168.0.1/' }).end();
    else res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<p>b</p>');
  });
  t.teardown(rx.close);
  const base = `http://127.0.0.1:${rx.port}`;
  t.like(await getGuarded(`${base}/a`, { allowHosts: ['127.0.0.1'] }), {
    success: false,
    errorClass: 'http_status',
    statusCode: 302,
  });
  const followed = await getGuarded(`${base}/a`, { allowHosts: ['127.0.0.1'], maxRedirects: 1 });
  t.like(followed, { success: true, url: `${base}/b`, contentType: 'text/html; charset=utf-8' });
  t.like(await getGuarded(`${base}/private`, { allowHosts: ['127.0.0.1'], maxRedirects: 3 }), {
    success: false,
    errorClass: 'blocked_destination',
    url: 'https://192.168.0.1/',
  });
});
