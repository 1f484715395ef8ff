// Discovery from Hacker News (issue 46), end to end through the public API: the API in this process
// and a worker process of its own, both configured as a deployment would be (NEWSFORUM_PROVIDER=hn,
// HN_SEARCH_BASE_URL, HN_SEARCH_WINDOW_DAYS) and pointed at the stand-in (test/helpers/hn-algolia),
// which answers the documented search API from a seeded fixture of stories and comments.
//
//   signal preview (the API's own source) → launch → the run pages through search_by_date, one
//   keyword after the other, Algolia's pages under our cursor, through a 429 and a 503 on the way
//   → discovered leads = exactly the authors of the posts that mention the ICP's keyword, once each;
//   the authors of the other keyword's posts rejected; a post made during the run stays out of it
//   → a second launch finds only that post's author new
import test from 'ava';
import { randomUUID } from 'node:crypto';
import type { Services } from '../../api/services.js';
import { temporalJobs } from '../../jobs/temporal.js';
import { newsforumSettings, type Config } from '../../lib/config.js';
import { HnAlgoliaNewsforum, hnItemUrl } from '../../lib/sources/hn-algolia.js';
import { createSources } from '../../lib/sources/index.js';
import { spawnTsx, stopChild, waitFor } from '../../scripts/children.js';
import { api, call, closeApi, createTestApp, listen, type Res } from '../helpers/api.js';
import { createOwner, grant } from '../helpers/billing.js';
import { generateHnFixture } from '../helpers/hn-algolia/fixture.js';
import { searches, startHnStandIn, type HnItem } from '../helpers/hn-algolia/stand-in.js';
import { startOwnWorker } from '../helpers/own-worker.js';

const WINDOW_DAYS = 14;

test.after.always(closeApi);

test('discovery from Hacker News search, through the API, on a worker of its own', async (t) => {
  t.timeout(300_000);
  const started = Date.now();
  const { services } = await api();
  const standIn = await startHnStandIn();
  t.teardown(() => standIn.close());
  // 13 days of posts (the window is 14) and some older ones the window leaves out.
  const fx = generateHnFixture({
    seed: 46,
    now: Math.floor(Date.now() / 1000),
    count: 1500,
    days: WINDOW_DAYS - 1,
    older: 80,
    authors: 60,
  });
  standIn.add(...fx.items);

  // The process configuration both sides read, from the variables a deployment sets (lib/config.ts).
  const taskQueue = `hn-discovery-${randomUUID()}`;
  const hnEnv = {
    NEWSFORUM_PROVIDER: 'hn',
    HN_SEARCH_BASE_URL: standIn.url,
    HN_SEARCH_WINDOW_DAYS: String(WINDOW_DAYS),
  };
  const settings = newsforumSettings(hnEnv);
  t.like(settings, { provider: 'hn', hn: { baseUrl: standIn.url, windowDays: WINDOW_DAYS, requestsPerHour: 10_000 } });
  const config: Config = { ...services.config, sources: { ...services.config.sources, newsforum: settings } };
  const sources = createSources(config.sources);
  t.teardown(() => sources.close());
  t.true(sources.newsforum instanceof HnAlgoliaNewsforum, 'newsforum is Hacker News search');
  const svc: Services = { ...services, config, sources, jobs: temporalJobs(services.temporal, taskQueue) };
  const { base } = await listen(svc);

  // The worker, started now: it bundles its workflows while the test prepares the agent.
  const worker = startOwnWorker(t, services.temporal, taskQueue, { ...hnEnv });

  // What the run must find, from the fixture's labels: the posts mentioning kubernetes (the ICP's
  // keyword), newest first, then those mentioning cold email and not kubernetes.
  const byId = new Map(fx.items.map((i) => [String(i.id), i]));
  const newestFirst = (xs: HnItem[]) => [...xs].sort((a, b) => b.createdAt - a.createdAt);
  const K = newestFirst(fx.items.filter((i) => fx.mentions.get(i.id)?.includes('kubernetes')));
  const C = newestFirst(fx.items.filter((i) => fx.mentions.get(i.id)?.join() === 'cold email'));
  const kAuthors = new Set(K.map((i) => i.author!));
  const cAuthors = new Set(C.map((i) => i.author!).filter((a) => !kAuthors.has(a)));
  t.true(K.length > 400 && C.length > 100 && kAuthors.size >= 30 && cAuthors.size >= 10, `${K.length} ${C.length}`);
  const itemUrl = (i: HnItem) => (i.type === 'comment' ? hnItemUrl(String(i.id)) : (i.url ?? hnItemUrl(String(i.id))));

  const u = await createOwner();
  await grant(u.id, 100);
  const as = (body?: unknown) => ({ base, token: u.accessToken, ...(body === undefined ? {} : { body }) });
  const app = await createTestApp(u, 'HN discovery');
  const agent = await call(
    'POST',
    `/api/apps/${app.id}/agents`,
    as({ name: 'Kubernetes people on HN', icp_filters: { keywords: ['kubernetes'] } }),
  );
  t.is(agent.status, 201, agent.text);
  const agentId = agent.body.id as string;
  const signals = await call(
    'PUT',
    `/api/agents/${agentId}/signals`,
    as({
      signals: [
        {
          key: 'hn-mentions',
          kind: 'post_keywords',
          name: 'Kubernetes or cold email',
          keywords: ['kubernetes', 'cold email'],
        },
      ],
    }),
  );
  t.is(signals.status, 200, signals.text);
  const signalId = signals.body[0].id as string;
  const source = await call('PUT', `/api/agents/${agentId}/sources/newsforum`, as({ enabled: true }));
  t.is(source.status, 200, source.text);

  // The preview runs in the API process, on its own source: the newest kubernetes posts among one
  // page of 10 hits, each author once.
  let mark = standIn.requests.length;
  const preview = await call('POST', `/api/agents/${agentId}/preview`, as({ signal_id: signalId, limit: 10 }));
  t.is(preview.status, 200, preview.text);
  const previewed = preview.body.candidates as Record<string, any>[];
  t.true(previewed.length >= 1 && previewed.length <= 10, String(previewed.length));
  t.deepEqual(
    previewed.map((c) => [c.name, c.profile_url, c.evidence.url, c.evidence.date, c.known, c.verdict]),
    K.filter((i, n) => K.findIndex((x) => x.author === i.author) === n) // a person once, as in a run
      .slice(0, previewed.length)
      .map((i) => [i.author, null, itemUrl(i), new Date(i.createdAt * 1000).toISOString(), false, 'qualified']),
  );
  t.deepEqual(
    searches(standIn, mark).map((r) => [r.path, r.query.get('query'), r.query.get('page'), r.query.get('hitsPerPage')]),
    [['/search_by_date', 'kubernetes', '0', '10']],
  );

  // The run, on the worker. After its first search, HN answers 429 (Retry-After: 1) then 503 once,
  // and someone posts about kubernetes: the run's window, pinned at its first page, leaves it out.
  mark = standIn.requests.length;
  const late: HnItem = {
    id: 60_000_001,
    type: 'comment',
    author: 'latecomer',
    createdAt: 0,
    text: 'We just moved to Kubernetes.',
    parentId: K[0].id,
    storyId: K[0].type === 'comment' ? K[0].storyId! : K[0].id,
  };
  standIn.afterSearch = () => {
    standIn.afterSearch = undefined;
    standIn.fail({ status: 429, retryAfter: '1' }, { status: 503 });
    standIn.add({ ...late, createdAt: Math.floor(Date.now() / 1000) + 1 });
  };
  const launchedAt = Math.floor(Date.now() / 1000);
  const launched = await call('POST', `/api/agents/${agentId}/signals/${signalId}/launch`, as({}));
  t.is(launched.status, 202, launched.text);
  const runOf = async (id: string) =>
    ((await call('GET', '/api/me/recent-signal-runs?limit=20', as())).body.items as Record<string, any>[]).find(
      (r) => r.id === id,
    );
  // The first wait includes the worker's start (bundling its workflows on a busy machine).
  await waitFor('the discovery run to end', async () => (await runOf(launched.body.id))?.status !== 'running', 200_000);
  t.log(
    `first run done after ${Math.round((Date.now() - started) / 1000)} s: ${K.length} kubernetes and ${C.length} other cold email posts, ${kAuthors.size} leads, ${cAuthors.size} rejected`,
  );

  // What the worker asked: search_by_date for each keyword's pages in order (the phrase quoted),
  // stories or comments, one window of 14 days pinned at the run's start, 200 per page, no key;
  // the page refused by the 429 and the 503 asked again.
  const runSearches = searches(standIn, mark);
  const asked = runSearches.map((r) => `${r.query.get('query')}#${r.query.get('page')}`);
  const distinct = asked.filter((a, i) => asked.indexOf(a) === i);
  const kPages = distinct.filter((a) => a.startsWith('kubernetes#')).length;
  t.deepEqual(distinct, [
    ...Array.from({ length: kPages }, (_, i) => `kubernetes#${i}`),
    ...Array.from({ length: distinct.length - kPages }, (_, i) => `"cold email"#${i}`),
  ]);
  t.true(kPages >= 3 && distinct.length > kPages, asked.join(' '));
  t.deepEqual(asked.slice(0, 4), ['kubernetes#0', 'kubernetes#1', 'kubernetes#1', 'kubernetes#1']);
  t.is(asked.length, distinct.length + 2);
  const window = runSearches[0].query.get('numericFilters')!;
  const [, lo, hi] = /^created_at_i>=(\d+),created_at_i<(\d+)$/.exec(window)!.map(Number);
  t.true(hi >= launchedAt && hi <= launchedAt + 30, `${hi} vs ${launchedAt}`);
  t.is(lo, hi - WINDOW_DAYS * 86_400);
  t.true(
    runSearches.every(
      (r) =>
        r.path === '/search_by_date' &&
        r.query.get('tags') === '(story,comment)' &&
        r.query.get('numericFilters') === window &&
        r.query.get('hitsPerPage') === '200' &&
        r.headers.authorization === undefined,
    ),
  );

  // The run's counts: every mention once, kubernetes authors qualified once each, cold email's rejected.
  t.like(await runOf(launched.body.id), {
    status: 'completed',
    error: null,
    signal_keys: ['hn-mentions'],
    candidates: K.length + C.length,
    qualified: kAuthors.size,
    rejected: cAuthors.size,
    duplicates: K.length + C.length - kAuthors.size - cAuthors.size,
    pages: distinct.length,
  });

  // The leads: each kubernetes author once, with their newest kubernetes post as the evidence.
  const leads: Record<string, any>[] = [];
  let cursor: string | null = null;
  do {
    const page: Res = await call(
      'GET',
      `/api/discovered-leads?agent_id=${agentId}&limit=50${cursor ? `&cursor=${cursor}` : ''}`,
      as(),
    );
    t.is(page.status, 200, page.text);
    leads.push(...page.body.items);
    cursor = page.body.next_cursor;
  } while (cursor);
  t.is(new Set(leads.map((l) => l.external_id)).size, leads.length, 'no person twice');
  const newestOf = (author: string) => K.find((i) => i.author === author)!;
  t.deepEqual(
    leads
      .map((l) => [l.external_id, l.full_name, l.profile_url, l.source, l.evidence.id, l.evidence.url, l.evidence.date])
      .sort(),
    [...kAuthors]
      .map((a) => {
        const i = newestOf(a);
        return [a, a, null, 'newsforum', String(i.id), itemUrl(i), new Date(i.createdAt * 1000).toISOString()];
      })
      .sort(),
  );
  t.true(
    leads.every(
      (l) =>
        l.signal_key === 'hn-mentions' &&
        l.run_id === launched.body.id &&
        l.status === 'new' &&
        l.evidence.kind === 'post_keywords' &&
        /kubernetes/i.test(l.evidence.text) &&
        !/[<>]|&#x27;/.test(l.evidence.text),
    ),
    'plain text that mentions the keyword',
  );
  t.false(
    leads.some((l) => l.external_id === 'latecomer'),
    'the post made during the run is not in it',
  );
  t.true(
    leads.every((l) => byId.get(l.evidence.id)!.createdAt >= lo),
    'nothing older than the window',
  );
  const rejections = await call('GET', `/api/agents/${agentId}/rejections`, as());
  t.is(rejections.status, 200, rejections.text);
  t.like(rejections.body, { total: cAuthors.size, reasons: [{ reason: 'keywords', count: cAuthors.size }] });

  // A second launch: a new window; the latecomer's post is the one new person.
  mark = standIn.requests.length;
  const again = await call('POST', `/api/agents/${agentId}/signals/${signalId}/launch`, as({}));
  t.is(again.status, 202, again.text);
  await waitFor('the second run to end', async () => (await runOf(again.body.id))?.status !== 'running', 90_000);
  t.like(await runOf(again.body.id), {
    status: 'completed',
    candidates: K.length + C.length + 1,
    qualified: 1,
    rejected: 0,
    duplicates: K.length + C.length,
  });
  t.is(searches(standIn, mark).length, distinct.length);
  const counts = await call('GET', `/api/discovered-leads/counts?agent_id=${agentId}`, as());
  t.like(counts.body, { total: kAuthors.size + 1, by_status: { new: kAuthors.size + 1 } }, counts.text);
  t.log(`done after ${Math.round((Date.now() - started) / 1000)} s`);
});
