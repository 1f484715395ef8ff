// The API's HTTP server and its timeouts, one place for the process (api/server.ts) and the tests.
// Keep-alive outlives the idle timeouts of clients and load balancers (undici 4 s, browsers ~60 s,
// AWS ALB 60 s by default): otherwise the server closes an idle socket just as a client reuses it and
// the request fails with a reset ("fetch failed"). Headers must time out after keep-alive (Node's
// rule, or it can cut a socket that is merely idle); the whole request stays bounded.
import { createServer, type RequestListener, type Server } from 'node:http';

export const SERVER_TIMEOUTS = { keepAliveMs: 65_000, headersMs: 66_000, requestMs: 120_000 };

export function createHttpServer(handler: RequestListener): Server {
  const server = createServer(handler);
  server.keepAliveTimeout = SERVER_TIMEOUTS.keepAliveMs;
  server.headersTimeout = SERVER_TIMEOUTS.headersMs;
  server.requestTimeout = SERVER_TIMEOUTS.requestMs;
  return server;
}
