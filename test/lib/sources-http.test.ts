import test from 'ava';
import { HttpNewsforum } from '../../lib/sources/http-newsforum.js';
import { parseRetryAfter } from '../../lib/sources/http-client.js';
import { getCorpus } from '../../lib/sources/local-corpus.js';
import { LocalNewsforum } from '../../lib/sources/local.js';
import {
  createSources,
  SourceError,
  type Candidate,
  type DiscoverySource,
  type SignalQuery,
} from '../../lib/sources/index.js';
import { newsforumHandler, sendJson, startServer, type WireServer } from '../helpers/source-servers.js';

const corpusOpts = { seed: 42, people: 12_000, anchor: new Date('2025-06-01T00:00:00Z') };
const KEY = 'k-test-123';

async function all(source: DiscoverySource, query: SignalQuery, limit: number): Promise<Candidate[]> {
  const out: Candidate[] = [];
  let cursor: string | undefined;
  do {
    const page = await source.search(query, { cursor, limit });
    out.push(...page.candidates);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return out;
}

async function serve(
  t: { teardown(fn: () => Promise<void>): void },
  handler: Parameters<typeof startServer>[0],
): Promise<WireServer> {
  const server = await startServer(handler);
  t.teardown(server.close);
  return server;
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

const SEARCH: SignalQuery = { kind: 'post_keywords', keywords: ['outbound'] };

test('newsforum: pages through the wire format with the key, and matches the local source', async (t) => {
  const local = new LocalNewsforum(corpusOpts);
  const server = await serve(t, newsforumHandler(local, KEY, '/api'));
  const http = new HttpNewsforum({ baseUrl: `${server.url}/api`, apiKey: KEY });
  t.teardown(() => http.close());
  const since = '2025-03-01T00:00:00Z';
  const query: SignalQuery = { kind: 'post_keywords', keywords: ['cold email', 'SEO'], filters: { since } };
  const got = await all(http, query, 40);
  const expected = await all(local, query, 200);
  t.true(expected.length > 80);
  const wireFields = (c: Candidate) => [
    c.source,
    c.externalId,
    c.profileUrl,
    c.fullName,
    c.title,
    c.headline,
    c.company?.name,
    c.country,
    c.evidence,
    c.signalKey,
  ];
  t.deepEqual(got.map(wireFields), expected.map(wireFields));
  t.is(got[0].firstName, expected[0].fullName.split(' ')[0]);
  // Every request: the bearer key, the keywords as repeated q, since, limit; `after` from the second page on.
  t.is(server.requests.length, Math.ceil(expected.length / 40));
  t.true(
    server.requests.every((r) => r.headers.authorization === `Bearer ${KEY}` && r.url.pathname === '/api/v1/search'),
  );
  t.deepEqual(server.requests[0].url.searchParams.getAll('q'), ['cold email', 'SEO']);
  t.is(server.requests[0].url.searchParams.get('since'), '2025-03-01T00:00:00.000Z');
  t.is(server.requests[0].url.searchParams.get('limit'), '40');
  t.is(server.requests[0].url.searchParams.get('after'), null);
  t.truthy(server.requests[1].url.searchParams.get('after'));
  // Profile lookup by the forum user URL; unknown → null (404).
  const author = getCorpus(corpusOpts).people[0];
  const found = await http.profile(author.forumUrl);
  t.is(found?.externalId, author.forumId);
  t.is(found?.profileUrl, author.profileUrl);
  t.is(await http.profile('https://newsforum.example/u/nobody'), null);
});

test('HTTP statuses map to SourceError codes', async (t) => {
  let answer: (res: Parameters<typeof sendJson>[0]) => void = () => {};
  const server = await serve(t, (_req, res) => answer(res));
  const http = new HttpNewsforum({ baseUrl: server.url, apiKey: KEY });
  t.teardown(() => http.close());
  const cases: [string, (res: Parameters<typeof sendJson>[0]) => void, string, number | null][] = [
    ['401', (res) => sendJson(res, 401, { error: 'no' }), 'auth', null],
    ['403', (res) => sendJson(res, 403, { error: 'no' }), 'auth', null],
    ['429 seconds', (res) => sendJson(res, 429, {}, { 'retry-after': '7' }), 'rate_limited', 7],
    ['429 bare', (res) => sendJson(res, 429, {}), 'rate_limited', null],
    ['500', (res) => sendJson(res, 500, {}), 'unavailable', null],
    ['503 retry-after', (res) => sendJson(res, 503, {}, { 'retry-after': '30' }), 'unavailable', 30],
    ['400', (res) => sendJson(res, 400, { error: 'bad q' }), 'invalid_request', null],
    ['404 on search', (res) => sendJson(res, 404, {}), 'bad_response', null],
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
    ['wrong shape', (res) => sendJson(res, 200, { items: [{ id: 'x' }], next: null }), 'bad_response', null],
    [
      'bad date',
      (res) =>
        sendJson(res, 200, {
          items: [
            { id: 'x', kind: 'post', author: { id: 'u', name: 'U' }, text: 't', url: null, created_at: 'yesterday' },
          ],
          next: null,
        }),
      'bad_response',
      null,
    ],
  ];
  for (const [name, respond, code, retryAfter] of cases) {
    answer = respond;
    const err = await failure(http.search(SEARCH, { limit: 10 }));
    t.is(err.code as string, code, name);
    t.is(err.source, 'newsforum', name);
    t.is(err.retryAfterSeconds, retryAfter, name);
    t.is(err.retryable, ['rate_limited', 'unavailable', 'timeout'].includes(err.code), name);
  }
  // A 429 with an HTTP date: seconds from now.
  answer = (res) => sendJson(res, 429, {}, { 'retry-after': new Date(Date.now() + 120_000).toUTCString() });
  const dated = await failure(http.search(SEARCH, { limit: 10 }));
  t.true(dated.retryAfterSeconds! > 100 && dated.retryAfterSeconds! <= 121, String(dated.retryAfterSeconds));
  // Lenient where it does not matter: unknown extra fields and unknown seniorities are ignored.
  answer = (res) =>
    sendJson(res, 200, {
      items: [
        {
          id: 1,
          kind: 'post',
          author: { id: 2, name: 'Ada Lovelace', extra: true, country: 'Atlantis' },
          text: 't',
          url: null,
          created_at: '2025-01-01T00:00:00+02:00',
        },
      ],
      next: null,
      more: 1,
    });
  const ok = await http.search(SEARCH, { limit: 10 });
  t.like(ok.candidates[0], {
    externalId: '2',
    firstName: 'Ada',
    lastName: 'Lovelace',
    country: null,
    evidence: { id: '1', date: '2024-12-31T22:00:00.000Z' },
  });
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
  const http = new HttpNewsforum({ baseUrl: server.url, apiKey: KEY, maxResponseBytes: 4096 });
  t.teardown(() => http.close());
  t.is((await failure(http.search(SEARCH, { limit: 10 }))).code, 'bad_response');
  chunked = true;
  const err = await failure(http.search(SEARCH, { limit: 10 }));
  t.is(err.code, 'bad_response');
  t.regex(err.message, /larger than 4096 bytes/);
});

test('redirects are not followed', async (t) => {
  const elsewhere = await serve(t, (_req, res) => sendJson(res, 200, { items: [], next: null }));
  const server = await serve(
    t,
    (_req, res) => void res.writeHead(307, { location: `${elsewhere.url}/v1/search` }).end(),
  );
  const http = new HttpNewsforum({ baseUrl: server.url, apiKey: KEY });
  t.teardown(() => http.close());
  const err = await failure(http.search(SEARCH, { limit: 10 }));
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
  const http = new HttpNewsforum({ baseUrl: server.url, apiKey: KEY, timeoutMs: 300 });
  t.teardown(() => http.close());
  t.is((await failure(http.search(SEARCH, { limit: 10 }))).code, 'timeout');
  mode = 'slow-body';
  t.is((await failure(http.search(SEARCH, { limit: 10 }))).code, 'timeout');

  // The caller's own abort comes back as its reason, not as a source failure.
  const controller = new AbortController();
  const slow = new HttpNewsforum({ baseUrl: server.url, apiKey: KEY, timeoutMs: 10_000 });
  t.teardown(() => slow.close());
  mode = 'stall';
  setTimeout(() => controller.abort(new Error('activity cancelled')), 50);
  await t.throwsAsync(slow.search(SEARCH, { limit: 10 }, controller.signal), { message: 'activity cancelled' });

  const closed = await startServer(() => {});
  await closed.close();
  const refused = new HttpNewsforum({ baseUrl: closed.url, apiKey: KEY });
  t.teardown(() => refused.close());
  t.is((await failure(refused.search(SEARCH, { limit: 10 }))).code, 'unavailable');
});

test('adapters validate the page request before sending anything', async (t) => {
  const server = await serve(t, (_req, res) => sendJson(res, 200, { items: [], next: null }));
  const http = new HttpNewsforum({ baseUrl: server.url, apiKey: KEY });
  t.teardown(() => http.close());
  t.is((await failure(http.search(SEARCH, { limit: 500 }))).code, 'invalid_request');
  t.is((await failure(http.search({ kind: 'people_search' }, { limit: 10 }))).code, 'invalid_request');
  t.is(
    (await failure(http.search({ ...SEARCH, filters: { since: '2025-13-01' } }, { limit: 10 }))).code,
    'invalid_request',
  );
  t.is(server.requests.length, 0);
});

test('createSources picks HTTP when a base URL is configured', async (t) => {
  const s = createSources({
    corpus: { seed: 42, people: 12_000 },
    timeoutMs: 1000,
    newsforum: { baseUrl: 'http://127.0.0.1:9/', apiKey: 'k' },
    pronet: { profileHosts: ['pronet.example'] },
  });
  t.teardown(() => s.close());
  t.deepEqual(s.modes, { newsforum: 'http', pronet: 'local' });
  t.true(s.newsforum instanceof HttpNewsforum);
  t.throws(
    () =>
      createSources({
        corpus: { seed: 1, people: 10 },
        timeoutMs: 1,
        newsforum: { baseUrl: 'ftp://x', apiKey: 'k' },
        pronet: { profileHosts: [] },
      }),
    { message: /NEWSFORUM_BASE_URL must be an absolute http\(s\) URL/ },
  );
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
