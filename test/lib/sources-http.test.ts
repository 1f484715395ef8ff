// The sources' shared HTTP exchange (lib/sources/http-client.ts over lib/provider-http.ts), against
// local servers: statuses mapped to SourceError codes, bounded bodies, no redirects, deadlines, the
// caller's abort, the key header (or none, for a service without keys). The adapters' own formats
// are tested with their stand-ins (sources-unipile, sources-hn).
import test from 'ava';
import { parseRetryAfter, sourceClient, type HttpSourceOptions } from '../../lib/sources/http-client.js';
import { SourceError } from '../../lib/sources/index.js';
import { sendJson, startServer, type WireServer } from '../helpers/source-servers.js';

const KEY = 'k-test-123';

async function serve(
  t: { teardown(fn: () => Promise<void>): void },
  handler: Parameters<typeof startServer>[0],
): Promise<WireServer> {
  const server = await startServer(handler);
  t.teardown(server.close);
  return server;
}

function client(t: { teardown(fn: () => Promise<void>): void }, opts: HttpSourceOptions) {
  const http = sourceClient('newsforum', opts);
  t.teardown(() => http.close());
  return http;
}

async function failure(p: Promise<unknown>): Promise<SourceError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof SourceError) return err;
    throw err;
  }
  throw new Error('expected a SourceError');
}

test('the key goes in its header (Bearer by default, a named one, or none); a path prefix in the base URL is kept', async (t) => {
  const server = await serve(t, (_req, res) => sendJson(res, 200, { ok: true }));
  await client(t, { baseUrl: `${server.url}/api/v1`, apiKey: KEY }).json('GET', '/search', {
    query: new URLSearchParams({ q: 'a b' }),
  });
  await client(t, { baseUrl: server.url, apiKey: KEY, keyHeader: 'x-api-key' }).json('GET', '/x');
  t.deepEqual(await client(t, { baseUrl: server.url, apiKey: '', keyHeader: null }).json('GET', '/y'), { ok: true });
  const [bearer, named, none] = server.requests;
  t.is(bearer.url.pathname, '/api/v1/search');
  t.is(bearer.url.searchParams.get('q'), 'a b');
  t.is(bearer.headers.authorization, `Bearer ${KEY}`);
  t.is(bearer.headers.accept, 'application/json');
  t.is(named.headers['x-api-key'], KEY);
  t.is(named.headers.authorization, undefined);
  t.is(none.headers.authorization, undefined);
  t.false(Object.values(none.headers).includes(''), 'no empty credential header');
});

test('HTTP statuses map to SourceError codes', async (t) => {
  let answer: (res: Parameters<typeof sendJson>[0]) => void = () => {};
  const server = await serve(t, (_req, res) => answer(res));
  const http = client(t, { baseUrl: server.url, apiKey: KEY });
  const cases: [string, (res: Parameters<typeof sendJson>[0]) => void, string, number | null][] = [
    ['401', (res) => sendJson(res, 401, { error: 'no' }), 'auth', null],
    ['403', (res) => sendJson(res, 403, { error: 'no' }), 'auth', null],
    ['429 seconds', (res) => sendJson(res, 429, {}, { 'retry-after': '7' }), 'rate_limited', 7],
    ['429 bare', (res) => sendJson(res, 429, {}), 'rate_limited', null],
    ['500', (res) => sendJson(res, 500, {}), 'unavailable', null],
    ['503 retry-after', (res) => sendJson(res, 503, {}, { 'retry-after': '30' }), 'unavailable', 30],
    ['408', (res) => sendJson(res, 408, {}), 'timeout', null],
    ['400', (res) => sendJson(res, 400, { error: 'bad q' }), 'invalid_request', null],
    ['404', (res) => sendJson(res, 404, {}), 'bad_response', null],
    [
      'malformed JSON',
      (res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"items": ['),
      'bad_response',
      null,
    ],
    [
      'not JSON',
      (res) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hi</html>'),
      'bad_response',
      null,
    ],
  ];
  for (const [name, respond, code, retryAfter] of cases) {
    answer = respond;
    const err = await failure(http.json('GET', '/search'));
    t.is(err.code as string, code, name);
    t.is(err.source, 'newsforum', name);
    t.is(err.retryAfterSeconds, retryAfter, name);
    t.is(err.retryable, ['rate_limited', 'unavailable', 'timeout'].includes(err.code), name);
  }
  // A 429 with an HTTP date: seconds from now.
  answer = (res) => sendJson(res, 429, {}, { 'retry-after': new Date(Date.now() + 120_000).toUTCString() });
  const dated = await failure(http.json('GET', '/search'));
  t.true(dated.retryAfterSeconds! > 100 && dated.retryAfterSeconds! <= 121, String(dated.retryAfterSeconds));
  // A 404 where absence is an answer.
  answer = (res) => sendJson(res, 404, {});
  t.is(await http.json('GET', '/users/nobody', { notFoundIsNull: true }), null);
});

test('oversized bodies are refused, with or without Content-Length', async (t) => {
  const big = JSON.stringify({ items: [], next: null, pad: 'x'.repeat(10_000) });
  let chunked = false;
  const server = await serve(t, (_req, res) => {
    if (chunked) {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < 10; i++) res.write(big.slice(i * 1000, (i + 1) * 1000));
      res.end(big.slice(10_000));
    } else sendJson(res, 200, JSON.parse(big));
  });
  const http = client(t, { baseUrl: server.url, apiKey: KEY, maxResponseBytes: 4096 });
  t.is((await failure(http.json('GET', '/search'))).code, 'bad_response');
  chunked = true;
  const err = await failure(http.json('GET', '/search'));
  t.is(err.code, 'bad_response');
  t.regex(err.message, /larger than 4096 bytes/);
});

test('redirects are not followed', async (t) => {
  const elsewhere = await serve(t, (_req, res) => sendJson(res, 200, { items: [] }));
  const server = await serve(t, (_req, res) => void res.writeHead(307, { location: `${elsewhere.url}/search` }).end());
  const err = await failure(client(t, { baseUrl: server.url, apiKey: KEY }).json('GET', '/search'));
  t.is(err.code, 'bad_response');
  t.regex(err.message, /redirects are not followed/);
  t.is(elsewhere.requests.length, 0);
});

test('timeouts, refused connections and the caller’s abort', async (t) => {
  let mode: 'stall' | 'slow-body' = 'stall';
  const server = await serve(t, (_req, res) => {
    if (mode === 'slow-body') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"items": [');
    } // 'stall': never answers
  });
  const http = client(t, { baseUrl: server.url, apiKey: KEY, timeoutMs: 300 });
  t.is((await failure(http.json('GET', '/search'))).code, 'timeout');
  mode = 'slow-body';
  t.is((await failure(http.json('GET', '/search'))).code, 'timeout');

  // The caller's own abort comes back as its reason, not as a source failure.
  const controller = new AbortController();
  const slow = client(t, { baseUrl: server.url, apiKey: KEY, timeoutMs: 10_000 });
  mode = 'stall';
  setTimeout(() => controller.abort(new Error('activity cancelled')), 50);
  await t.throwsAsync(slow.json('GET', '/search', { signal: controller.signal }), { message: 'activity cancelled' });

  const closed = await startServer(() => {});
  await closed.close();
  t.is((await failure(client(t, { baseUrl: closed.url, apiKey: KEY }).json('GET', '/search'))).code, 'unavailable');
});

test('Retry-After parsing', (t) => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  t.is(parseRetryAfter('120', now), 120);
  t.is(parseRetryAfter(' 0 ', now), 0);
  t.is(parseRetryAfter('Wed, 01 Jan 2025 00:01:00 GMT', now), 60);
  t.is(parseRetryAfter('Tue, 31 Dec 2024 00:00:00 GMT', now), 0);
  t.is(parseRetryAfter('soon', now), null);
  t.is(parseRetryAfter('-5', now), null);
  t.is(parseRetryAfter(undefined, now), null);
});
