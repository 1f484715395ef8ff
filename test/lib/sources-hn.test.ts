// newsforum as Hacker News search (lib/sources/hn-algolia.ts) against the stand-in that speaks the
// documented HN Search API (test/helpers/hn-algolia): the requests it sends (search_by_date,
// tags, numericFilters, page, hitsPerPage), stories and comments as candidates, Algolia's pages as
// our cursor, errors as our codes, the pace at the documented limit, and the configuration.
import test from 'ava';
import { newsforumSettings, refuseRemovedVariables } from '../../lib/config.js';
import { ProviderPace } from '../../lib/provider-pace.js';
import {
  HN_TAGS,
  HnAlgoliaNewsforum,
  hnErrorOf,
  hnItemUrl,
  hnPlainText,
  hnRate,
  usernameOf,
  type HnAlgoliaOptions,
} from '../../lib/sources/hn-algolia.js';
import { createSources, signalKey, SourceError, type Candidate, type SignalQuery } from '../../lib/sources/index.js';
import { generateHnFixture, type Topic } from '../helpers/hn-algolia/fixture.js';
import { searches, startHnStandIn } from '../helpers/hn-algolia/stand-in.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const NOW_S = NOW / 1000;
const DAY = 86_400;

async function setup(t: { teardown(fn: () => unknown): void }, opts: Partial<HnAlgoliaOptions> = {}) {
  const standIn = await startHnStandIn();
  t.teardown(() => standIn.close());
  const source = new HnAlgoliaNewsforum({ baseUrl: standIn.url, now: () => NOW, ...opts });
  t.teardown(() => source.close());
  return { standIn, source };
}

async function all(source: HnAlgoliaNewsforum, query: SignalQuery, limit: number) {
  const out: Candidate[] = [];
  const cursors: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await source.search(query, { cursor, limit });
    out.push(...page.candidates);
    cursor = page.nextCursor ?? undefined;
    if (cursor) cursors.push(cursor);
  } while (cursor);
  return { candidates: out, cursors };
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

const KEYWORDS: SignalQuery = { kind: 'post_keywords', keywords: ['kubernetes', 'cold email'] };

test('stories and comments become candidates: the author, the item page or link, the text as plain text, the time', async (t) => {
  const { standIn, source } = await setup(t);
  standIn.add(
    {
      id: 101,
      type: 'story',
      author: 'pg',
      createdAt: NOW_S - 3600,
      title: 'Ask HN: Kubernetes for a two-person team?',
      url: null,
      text: 'We&#x27;re two people.<p>Is <i>Kubernetes</i> worth it? See <a href="https://example.com/a/very/long/path" rel="nofollow">https://example.com/a/very/long/...</a>',
      points: 57,
    },
    {
      id: 102,
      type: 'comment',
      author: 'sama',
      createdAt: NOW_S - 1800,
      text: 'We ran Kubernetes &amp; regretted it &quot;a bit&quot;.',
      parentId: 101,
      storyId: 101,
    },
    {
      id: 103,
      type: 'story',
      author: 'dang',
      createdAt: NOW_S - 600,
      title: 'Kubernetes in practice',
      url: 'https://blog.example.com/k8s',
      points: 3,
    },
    // Found by the search engine, but its own text does not mention the keyword (its story's title does).
    {
      id: 104,
      type: 'comment',
      author: 'kragen',
      createdAt: NOW_S - 300,
      text: 'Nice write-up.',
      parentId: 103,
      storyId: 103,
    },
    // A deleted item: no author.
    { id: 105, type: 'comment', author: null, createdAt: NOW_S - 200, text: 'kubernetes', parentId: 103, storyId: 103 },
  );
  const page = await source.search({ kind: 'post_keywords', keywords: ['Kubernetes'] }, { limit: 50 });
  t.is(page.nextCursor, null);
  t.deepEqual(
    page.candidates.map((c) => [c.evidence.id, c.externalId, c.evidence.url]),
    [
      ['103', 'dang', 'https://blog.example.com/k8s'],
      ['102', 'sama', hnItemUrl('102')],
      ['101', 'pg', hnItemUrl('101')],
    ],
    'newest first; a comment at its item page, a link story at its link, a text story at its page',
  );
  const [story, comment] = [page.candidates[2], page.candidates[1]];
  t.deepEqual(story, {
    source: 'newsforum',
    externalId: 'pg',
    profileUrl: null,
    fullName: 'pg',
    firstName: null,
    lastName: null,
    title: null,
    headline: null,
    seniority: null,
    company: null,
    country: null,
    email: null,
    currentEmployer: null,
    evidence: {
      kind: 'post_keywords',
      id: '101',
      text: "Ask HN: Kubernetes for a two-person team?\n\nWe're two people.\n\nIs Kubernetes worth it? See https://example.com/a/very/long/...",
      url: 'https://news.ycombinator.com/item?id=101',
      date: new Date((NOW_S - 3600) * 1000).toISOString(),
    },
    signalKey: signalKey('post_keywords', { source: 'newsforum', evidenceId: '101', personId: 'pg' }),
  });
  t.is(comment.evidence.text, 'We ran Kubernetes & regretted it "a bit".');

  // The documented request: newest first, stories or comments, the window, Algolia's paging.
  const [req] = searches(standIn);
  t.is(req.path, '/search_by_date');
  t.deepEqual([...req.query.keys()].sort(), ['hitsPerPage', 'numericFilters', 'page', 'query', 'tags']);
  t.is(req.query.get('query'), 'kubernetes');
  t.is(req.query.get('tags'), '(story,comment)');
  t.is(req.query.get('tags'), HN_TAGS);
  t.is(req.query.get('numericFilters'), `created_at_i>=${NOW_S - 30 * DAY},created_at_i<${NOW_S}`);
  t.is(req.query.get('page'), '0');
  t.is(req.query.get('hitsPerPage'), '50');
  t.is(req.headers.authorization, undefined, 'no key: nothing to send');
  t.regex(String(req.headers['user-agent']), /outreach-api/);
});

test('keywords: one search each, a phrase in quotes; an item mentioning two is one candidate; since and the window', async (t) => {
  const { standIn, source } = await setup(t, { windowDays: 10 });
  const fx = generateHnFixture({ seed: 46, now: NOW_S, count: 900, days: 9, older: 60 });
  standIn.add(...fx.items);
  const { candidates, cursors } = await all(source, KEYWORDS, 40);

  // Exactly the labelled mentions in the window, each once, kubernetes ones first (newest first), then cold email's.
  const expected = (topic: Topic, seen: Set<number>) =>
    fx.items
      .filter((i) => fx.mentions.get(i.id)?.includes(topic) && !seen.has(i.id))
      .sort((a, b) => b.createdAt - a.createdAt)
      .map((i) => (seen.add(i.id), String(i.id)));
  const seen = new Set<number>();
  const want = [...expected('kubernetes', seen), ...expected('cold email', seen)];
  t.true(want.length > 300, `${want.length} mentions`);
  t.true([...fx.mentions.values()].filter((m) => m.length === 2).length > 20, 'some items mention both');
  t.deepEqual(
    candidates.map((c) => c.evidence.id),
    want,
  );
  t.is(new Set(candidates.map((c) => c.signalKey)).size, candidates.length, 'no evidence twice');
  t.true(
    candidates.every((c) => c.externalId === fx.items.find((i) => String(i.id) === c.evidence.id)!.author),
    'the author of each item',
  );

  // What was asked: each keyword's pages in order, the phrase quoted, one pinned window, 40 per page.
  const reqs = searches(standIn);
  t.is(reqs.length, cursors.length + 1);
  const asked = reqs.map((r) => `${r.query.get('query')}#${r.query.get('page')}`);
  const kPages = asked.filter((a) => a.startsWith('kubernetes#')).length;
  const cPages = asked.filter((a) => a.startsWith('"cold email"#')).length;
  t.deepEqual(asked, [
    ...Array.from({ length: kPages }, (_, i) => `kubernetes#${i}`),
    ...Array.from({ length: cPages }, (_, i) => `"cold email"#${i}`),
  ]);
  t.true(kPages > 1 && cPages > 1, `${kPages} + ${cPages} pages`);
  t.true(
    reqs.every((r) => r.query.get('numericFilters') === `created_at_i>=${NOW_S - 10 * DAY},created_at_i<${NOW_S}`),
  );
  t.true(reqs.every((r) => r.query.get('hitsPerPage') === '40' && r.query.get('tags') === '(story,comment)'));

  // since: the window starts there (rounded up to the second: "at or after").
  const since = new Date((NOW_S - 3 * DAY) * 1000 + 500).toISOString();
  const mark = standIn.requests.length;
  const recent = await all(source, { ...KEYWORDS, filters: { since } }, 200);
  t.is(
    searches(standIn, mark)[0].query.get('numericFilters'),
    `created_at_i>=${NOW_S - 3 * DAY + 1},created_at_i<${NOW_S}`,
  );
  t.deepEqual(
    recent.candidates.map((c) => c.evidence.id),
    want.filter((id) => fx.items.find((i) => String(i.id) === id)!.createdAt > NOW_S - 3 * DAY),
  );
});

test('the window is pinned by the first page: items posted meanwhile neither appear nor shift the pages', async (t) => {
  let now = NOW;
  const { standIn, source } = await setup(t, { now: () => now });
  const fx = generateHnFixture({ seed: 7, now: NOW_S, count: 300, days: 20 });
  standIn.add(...fx.items);
  let next = 50_000_000;
  // After every search, a fresh mention arrives and the clock moves on.
  standIn.afterSearch = () => {
    now += 60_000;
    standIn.add({
      id: next++,
      type: 'comment',
      author: 'newcomer',
      createdAt: Math.floor(now / 1000) - 1,
      text: 'Kubernetes!',
      parentId: fx.items[0].id,
      storyId: fx.items[0].id,
    });
  };
  const query: SignalQuery = { kind: 'post_keywords', keywords: ['kubernetes'] };
  const { candidates } = await all(source, query, 20);
  const ids = candidates.map((c) => c.evidence.id);
  t.is(new Set(ids).size, ids.length, 'no duplicates across pages');
  t.false(candidates.some((c) => c.externalId === 'newcomer'));
  t.is(ids.length, [...fx.mentions.values()].filter((m) => m.includes('kubernetes')).length);
  // A new search (no cursor) sees them.
  const fresh = await source.search(query, { limit: 200 });
  t.true(fresh.candidates.some((c) => c.externalId === 'newcomer'));
});

test('cursors: refused with another query or another page size; a kind newsforum does not serve is refused before any request', async (t) => {
  const { standIn, source } = await setup(t);
  standIn.add(...generateHnFixture({ seed: 3, now: NOW_S, count: 200, days: 10 }).items);
  const first = await source.search(KEYWORDS, { limit: 10 });
  t.truthy(first.nextCursor);
  const code = async (p: Promise<unknown>) => (await failure(p)).code;
  t.is(
    await code(source.search({ ...KEYWORDS, keywords: ['other'] }, { limit: 10, cursor: first.nextCursor! })),
    'invalid_request',
  );
  t.is(await code(source.search(KEYWORDS, { limit: 5, cursor: first.nextCursor! })), 'invalid_request');
  t.is(await code(source.search(KEYWORDS, { limit: 10, cursor: 'garbage' })), 'invalid_request');
  const before = standIn.requests.length;
  t.is(await code(source.search({ kind: 'people_search' }, { limit: 10 })), 'invalid_request');
  t.is(await code(source.search(KEYWORDS, { limit: 500 })), 'invalid_request');
  t.is(standIn.requests.length, before);
  // Keywords without a word match nothing, without a request.
  t.deepEqual(await source.search({ kind: 'post_keywords', keywords: ['!!!'] }, { limit: 10 }), {
    candidates: [],
    nextCursor: null,
  });
  t.is(standIn.requests.length, before);
  // The caller's abort comes back as its reason.
  await t.throwsAsync(source.search(KEYWORDS, { limit: 10 }, AbortSignal.abort(new Error('stop'))), {
    message: 'stop',
  });
});

test('errors: 429 rate_limited with its reset (and the pace pauses), 5xx unavailable, 400 invalid_request with Algolia’s message, 403 auth, 404 and bad bodies bad_response', async (t) => {
  let clock = NOW;
  const slept: number[] = [];
  const pace = new ProviderPace(
    hnRate(10_000),
    () => clock,
    async (ms) => {
      slept.push(ms);
      clock += ms;
    },
  );
  const { standIn, source } = await setup(t, { now: () => clock, pace });
  standIn.add({
    id: 1,
    type: 'story',
    author: 'pg',
    createdAt: NOW_S - 10,
    title: 'Kubernetes',
    url: null,
    text: null,
  });
  const q: SignalQuery = { kind: 'post_keywords', keywords: ['kubernetes'] };

  standIn.fail({ status: 429, retryAfter: '7' });
  const limited = await failure(source.search(q, { limit: 10 }));
  t.like(limited, { code: 'rate_limited', retryable: true, details: { status: 429, retryAfterSeconds: 7 } });
  t.regex(limited.message, /Too many requests/);
  // The next call waits for the reset instead of being refused again.
  t.is((await source.search(q, { limit: 10 })).candidates.length, 1);
  t.deepEqual(slept, [7000]);

  standIn.fail({ status: 429 });
  t.like(await failure(source.search(q, { limit: 10 })), {
    code: 'rate_limited',
    details: { retryAfterSeconds: null },
  });
  for (const status of [500, 502, 503]) {
    standIn.fail({ status });
    t.like(await failure(source.search(q, { limit: 10 })), { code: 'unavailable', retryable: true }, String(status));
  }
  standIn.fail({ status: 503, retryAfter: '30' });
  t.like(await failure(source.search(q, { limit: 10 })), { code: 'unavailable', details: { retryAfterSeconds: 30 } });
  standIn.fail({ status: 403, message: 'Forbidden' });
  t.like(await failure(source.search(q, { limit: 10 })), { code: 'auth', retryable: false });
  standIn.fail({ status: 404 });
  t.like(await failure(source.search(q, { limit: 10 })), { code: 'bad_response' });

  // The stand-in refuses what Algolia refuses; the message says why.
  const other = new HnAlgoliaNewsforum({ baseUrl: `${standIn.url}/..`, now: () => clock, pace });
  t.teardown(() => other.close());
  t.like(await failure(other.search(q, { limit: 10 })), { code: 'bad_response', details: { status: 404 } });

  // A 200 whose body is not the documented answer.
  standIn.fail({ status: 200, message: 'not a search answer' });
  const odd = await failure(source.search(q, { limit: 10 }));
  t.like(odd, { code: 'bad_response' });
  t.regex(odd.message, /unexpected response shape at hits/);
  // And after all that, it works.
  t.is((await source.search(q, { limit: 10 })).candidates.length, 1);
});

test('a refused parameter is invalid_request carrying Algolia’s message', async (t) => {
  const { standIn } = await setup(t);
  const res = await fetch(`${standIn.url}/search_by_date?query=x&numericFilters=${encodeURIComponent('karma>3')}`);
  t.is(res.status, 400);
  t.deepEqual(await res.json(), { message: 'invalid numericFilters: karma>3', status: 400 });
  const err = hnErrorOf(400, { message: 'invalid numericFilters: karma>3', status: 400 }, null)!;
  t.like(err, { code: 'invalid_request', source: 'newsforum' });
  t.regex(err.message, /invalid numericFilters: karma>3/);
});

test('the stand-in speaks the documented format: hits like the docs’ example, tags with OR groups, numeric filters, 1,000 reachable hits', async (t) => {
  const { standIn } = await setup(t);
  standIn.add(
    {
      id: 1,
      type: 'story',
      author: 'pg',
      createdAt: 1160418111,
      title: 'Y Combinator',
      url: 'http://ycombinator.com',
      points: 57,
    },
    {
      id: 15,
      type: 'comment',
      author: 'sama',
      createdAt: 1160423461,
      text: '&#34;the rising star of venture capital&#34; -unknown VC eating lunch on SHR',
      parentId: 1,
      storyId: 1,
    },
    {
      id: 17,
      type: 'comment',
      author: 'pg',
      createdAt: 1160423565,
      text: 'Is there anywhere to eat on Sandhill Road?',
      parentId: 15,
      storyId: 1,
    },
    { id: 20, type: 'poll', author: 'pg', createdAt: 1160423600, title: 'A poll', points: 2 },
  );
  const get = async (path: string) => {
    const res = await fetch(`${standIn.url}${path}`);
    t.is(res.headers.get('content-type'), 'application/json; charset=utf-8');
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const pg = await get('/search?query=pg');
  t.like(pg.body, { page: 0, nbHits: 3, nbPages: 1, hitsPerPage: 20, query: 'pg', params: 'query=pg' });
  t.like(pg.body.hits[0], {
    title: 'Y Combinator',
    url: 'http://ycombinator.com',
    author: 'pg',
    points: 57,
    story_text: null,
    comment_text: null,
    _tags: ['story', 'author_pg', 'story_1'],
    num_comments: 2,
    objectID: '1',
    created_at: '2006-10-09T18:21:51.000Z',
    created_at_i: 1160418111,
    _highlightResult: {
      title: { value: 'Y Combinator', matchLevel: 'none', matchedWords: [] },
      author: { value: '<em>pg</em>', matchLevel: 'full', matchedWords: ['pg'] },
    },
  });
  const ids = (r: { body: Record<string, any> }) => (r.body.hits as { objectID: string }[]).map((h) => h.objectID);
  t.deepEqual(ids(await get('/search_by_date?tags=author_pg,(story,poll)')), ['20', '1']);
  t.deepEqual(ids(await get('/search_by_date?tags=comment,story_1')), ['17', '15']);
  t.deepEqual(
    ids(
      await get('/search_by_date?tags=(story,comment)&numericFilters=created_at_i>1160418111,created_at_i<1160423565'),
    ),
    ['15'],
  );
  t.deepEqual(ids(await get('/search?tags=story&numericFilters=points>=57')), ['1']);
  const comment = (await get('/search_by_date?query=sandhill&tags=comment')).body.hits[0];
  t.like(comment, {
    objectID: '17',
    parent_id: 15,
    story_id: 1,
    story_title: 'Y Combinator',
    title: null,
    points: null,
  });
  t.like(await get('/items/1'), {
    status: 200,
    body: { id: 1, author: 'pg', children: [{ id: 15, children: [{ id: 17 }] }] },
  });
  standIn.users.set('pg', { about: 'PG&#x27;s bio', karma: 99999 });
  t.deepEqual((await get('/users/pg')).body, { username: 'pg', about: 'PG&#x27;s bio', karma: 99999 });
  t.like(await get('/users/nobody'), { status: 404 });
  t.like(await get('/search?query=x&restrictSearchableAttributes=url&foo=1'), { status: 400 });

  // Paging: `page` and `hitsPerPage`; beyond 1,000 hits nothing more is reachable.
  standIn.add(
    ...Array.from({ length: 1100 }, (_, i) => ({
      id: 1000 + i,
      type: 'comment' as const,
      author: 'bulk',
      createdAt: 1_700_000_000 + i,
      text: 'bulk',
      parentId: 1,
      storyId: 1,
    })),
  );
  const p = await get('/search_by_date?tags=author_bulk&hitsPerPage=300&page=3');
  t.like(p.body, { nbHits: 1100, nbPages: 4, page: 3, hitsPerPage: 300 });
  t.is(p.body.hits.length, 100);
  t.is((await get('/search_by_date?tags=author_bulk&hitsPerPage=300&page=4')).body.hits.length, 0);
});

test('profile: a Hacker News user page → GET /users/{username}; unknown → null; other URLs → null without a request', async (t) => {
  const { standIn, source } = await setup(t);
  standIn.users.set('patio11', { about: 'I write about <i>software</i> &amp; business.', karma: 120000 });
  const c = await source.profile('https://news.ycombinator.com/user?id=patio11');
  t.like(c, {
    source: 'newsforum',
    externalId: 'patio11',
    fullName: 'patio11',
    profileUrl: null,
    headline: 'I write about software & business.',
    evidence: { kind: 'people_search', id: 'patio11', url: 'https://news.ycombinator.com/user?id=patio11' },
  });
  t.is(standIn.requests.at(-1)!.path, '/users/patio11');
  t.is(await source.profile('news.ycombinator.com/user?id=nobody'), null);
  const before = standIn.requests.length;
  t.is(await source.profile('https://pronet.example/in/ada'), null);
  t.is(await source.profile('https://news.ycombinator.com/item?id=1'), null);
  t.is(await source.profile('https://news.ycombinator.com/user?id=a'), null, 'not an HN username');
  t.is(standIn.requests.length, before);
  t.is(usernameOf('https://news.ycombinator.com.evil.example/user?id=dang'), null, 'not the HN host');
  t.is(usernameOf('https://www.news.ycombinator.com/user/?id=dang'), 'dang');
  t.is(usernameOf('http://news.ycombinator.com/user?id=dang'), 'dang');
});

test('plain text from HN’s HTML', (t) => {
  t.is(hnPlainText(null), '');
  t.is(
    hnPlainText('I&#x27;ve tried <i>this</i>.<p>Second &gt; first.<p><pre><code>  code\n</code></pre>'),
    "I've tried this.\n\nSecond > first.\n\n  code",
  );
  t.is(
    hnPlainText('<a href="https://x.example/long" rel="nofollow">https://x.example/lo...</a>'),
    'https://x.example/lo...',
  );
});

test('the pace: at most 10,000 calls in any hour; a burst of 50, then one every 362 ms', async (t) => {
  t.deepEqual(hnRate(10_000), { burst: 50, everyMs: 362 });
  const rate = hnRate(10_000);
  t.true(rate.burst + 3_600_000 / rate.everyMs <= 10_000);
  t.deepEqual(hnRate(100), { burst: 1, everyMs: 36_364 });
  // Through the source: the 51st call of a burst waits.
  let clock = NOW;
  const slept: number[] = [];
  const pace = new ProviderPace(
    rate,
    () => clock,
    async (ms) => void (slept.push(ms), (clock += ms)),
  );
  const { standIn, source } = await setup(t, { now: () => clock, pace });
  standIn.add({ id: 1, type: 'story', author: 'pg', createdAt: NOW_S - 10, title: 'Kubernetes', url: null });
  for (let i = 0; i < 52; i++) await source.search({ kind: 'post_keywords', keywords: ['kubernetes'] }, { limit: 5 });
  t.deepEqual(slept, [362, 362]);
});

test('configuration: local by default; NEWSFORUM_PROVIDER=hn with HN_SEARCH_*; the removed variables name their replacement', (t) => {
  t.deepEqual(newsforumSettings({}), { provider: 'local', hn: null });
  t.deepEqual(newsforumSettings({ NEWSFORUM_PROVIDER: 'hn' }), {
    provider: 'hn',
    hn: { baseUrl: 'https://hn.algolia.com/api/v1', requestsPerHour: 10_000, windowDays: 30 },
  });
  t.deepEqual(
    newsforumSettings({
      NEWSFORUM_PROVIDER: 'HN',
      HN_SEARCH_BASE_URL: 'http://127.0.0.1:9/api/v1',
      HN_SEARCH_REQUESTS_PER_HOUR: '2500',
      HN_SEARCH_WINDOW_DAYS: '7',
    }).hn,
    { baseUrl: 'http://127.0.0.1:9/api/v1', requestsPerHour: 2500, windowDays: 7 },
  );
  t.throws(() => newsforumSettings({ NEWSFORUM_PROVIDER: 'reddit' }), {
    message: /NEWSFORUM_PROVIDER must be one of local, hn/,
  });
  t.throws(() => newsforumSettings({ HN_SEARCH_BASE_URL: 'https://hn.algolia.com/api/v1' }), {
    message: /HN_SEARCH_BASE_URL is set but NEWSFORUM_PROVIDER is not hn/,
  });
  t.throws(() => newsforumSettings({ NEWSFORUM_PROVIDER: 'hn', HN_SEARCH_BASE_URL: 'ftp://x' }), {
    message: /HN_SEARCH_BASE_URL must be/,
  });
  t.throws(() => newsforumSettings({ NEWSFORUM_PROVIDER: 'hn', HN_SEARCH_REQUESTS_PER_HOUR: '20000' }), {
    message: /HN_SEARCH_REQUESTS_PER_HOUR must be an integer from 1 to 10000/,
  });
  t.throws(() => refuseRemovedVariables({ NEWSFORUM_BASE_URL: 'https://forum.example' }), {
    message: /NEWSFORUM_BASE_URL is no longer supported .*NEWSFORUM_PROVIDER=hn/,
  });
  t.throws(() => refuseRemovedVariables({ NEWSFORUM_API_KEY: 'k' }), {
    message: /NEWSFORUM_API_KEY is no longer supported .*no key/,
  });

  const s = createSources({
    corpus: { seed: 42, people: 100 },
    timeoutMs: 1000,
    newsforum: newsforumSettings({ NEWSFORUM_PROVIDER: 'hn', HN_SEARCH_BASE_URL: 'http://127.0.0.1:9/api/v1' }),
    pronet: { profileHosts: ['pronet.example'] },
  });
  t.teardown(() => s.close());
  t.deepEqual(s.modes, { newsforum: 'http', pronet: 'local' });
  t.true(s.newsforum instanceof HnAlgoliaNewsforum);
  t.deepEqual(s.forKind('post_keywords'), [s.newsforum]);
});
