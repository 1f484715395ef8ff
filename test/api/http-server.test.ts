// The API server's timeouts (api/http-server.ts): a keep-alive socket left idle longer than Node's
// default 5 s is still open for the next request, so a client reusing it never meets a reset.
import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpServer, SERVER_TIMEOUTS } from '../../api/http-server.js';

test('keep-alive outlives client and load-balancer idle timeouts; headers time out after it', (t) => {
  t.true(SERVER_TIMEOUTS.keepAliveMs > 60_000, 'above a 60 s load-balancer idle timeout');
  t.true(SERVER_TIMEOUTS.headersMs > SERVER_TIMEOUTS.keepAliveMs);
  t.true(SERVER_TIMEOUTS.requestMs >= SERVER_TIMEOUTS.headersMs);
  const s = createHttpServer(() => undefined);
  t.is(s.keepAliveTimeout, SERVER_TIMEOUTS.keepAliveMs);
  t.is(s.headersTimeout, SERVER_TIMEOUTS.headersMs);
});

test('a socket idle for longer than Node’s default keep-alive (5 s) serves the next request', async (t) => {
  const server = createHttpServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const port = (server.address() as AddressInfo).port;
  const get = () =>
    new Promise<{ body: string; socket: unknown }>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, agent, path: '/' }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ body, socket: req.socket }));
      });
      req.on('error', reject);
    });
  const first = await get();
  // The idle time is the behaviour under test: past Node's default 5 s keep-alive.
  await new Promise((r) => setTimeout(r, 5_500));
  const second = await get();
  t.is(second.body, 'ok');
  t.is(second.socket, first.socket, 'the same socket, kept open while idle');
});
