import test from 'ava';
import { createHash } from 'node:crypto';
import { generateCorpus, getCorpus, VOCABULARY, type Corpus } from '../../lib/sources/local-corpus.js';
import { LocalNewsforum, LocalPronet } from '../../lib/sources/local.js';
import {
  createSources,
  signalKey,
  SourceError,
  type Candidate,
  type DiscoverySource,
  type SignalQuery,
} from '../../lib/sources/index.js';

// A fixed anchor keeps dates (and so `since` results) identical on every day the suite runs.
const anchor = new Date('2025-06-01T00:00:00Z');
const opts = { seed: 42, people: 12_000, anchor };
const corpus: Corpus = getCorpus(opts);
const newsforum = new LocalNewsforum(opts);
const pronet = new LocalPronet(opts);

const digest = (c: Corpus) =>
  createHash('sha256')
    .update(JSON.stringify([c.companies, c.people, c.posts, c.events, c.jobChanges]))
    .digest('hex');

async function all(source: DiscoverySource, query: SignalQuery, limit = 200): Promise<Candidate[]> {
  const out: Candidate[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = await source.search(query, { cursor, limit });
    if (page.candidates.length > limit) throw new Error(`page of ${page.candidates.length} > limit ${limit}`);
    out.push(...page.candidates);
    if (!page.nextCursor) return out;
    cursor = page.nextCursor;
  }
  throw new Error('paging did not end');
}

const words = (s: string) =>
  s
    .normalize('NFC')
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? [];
/** Brute force, independent of the indexes: the phrase's words occur consecutively in the text. */
const mentions = (text: string, keyword: string) =>
  ` ${words(text).join(' ')} `.includes(` ${words(keyword).join(' ')} `);

test('the corpus is deterministic: same seed same corpus, another seed another', (t) => {
  const again = generateCorpus(opts);
  t.is(digest(again), digest(corpus));
  const other = generateCorpus({ ...opts, seed: 7 });
  t.not(digest(other), digest(corpus));
  t.notDeepEqual(
    other.people.slice(0, 20).map((p) => p.fullName),
    corpus.people.slice(0, 20).map((p) => p.fullName),
  );
  // The anchor moves dates only: names, ids and texts stay.
  const later = generateCorpus({ ...opts, anchor: new Date('2025-07-01T00:00:00Z') });
  t.deepEqual(
    later.people.map((p) => p.id + p.fullName + p.title),
    corpus.people.map((p) => p.id + p.fullName + p.title),
  );
});

test('the corpus is big and spread out', (t) => {
  t.true(corpus.people.length >= 10_000);
  t.true(corpus.companies.length >= 1_000);
  t.true(new Set(corpus.people.map((p) => p.country)).size >= 20);
  t.true(new Set(corpus.companies.map((c) => c.industry)).size >= 15);
  t.true(new Set(corpus.people.map((p) => p.title)).size >= 50);
  t.is(new Set(corpus.people.map((p) => p.seniority)).size, 7);
  t.is(new Set(corpus.companies.map((c) => c.size)).size, 7);
  t.is(new Set(corpus.people.map((p) => p.profileUrl)).size, corpus.people.length);
  t.is(new Set(corpus.companies.map((c) => c.domain)).size, corpus.companies.length);
  const withEmail = corpus.people.filter((p) => p.email).length / corpus.people.length;
  t.true(withEmail > 0.2 && withEmail < 0.5, String(withEmail));
  const former = corpus.people.filter((p) => !p.current).length / corpus.people.length;
  t.true(former > 0.05 && former < 0.2, String(former));
  t.true(corpus.posts.filter((p) => p.kind === 'post').length >= 5_000);
  t.true(corpus.posts.filter((p) => p.kind === 'comment').length >= 5_000);
  // Every post mentions at least one vocabulary keyword, and most keywords are mentioned.
  t.true(corpus.posts.every((p) => VOCABULARY.some((k) => mentions(p.text, k))));
  t.true(VOCABULARY.filter((k) => corpus.posts.some((p) => mentions(p.text, k))).length >= VOCABULARY.length * 0.9);
  for (const kind of ['hiring', 'funding', 'launch', 'expansion', 'acquisition', 'partnership'])
    t.true(
      corpus.events.some((e) => e.kind === kind),
      kind,
    );
  t.true(corpus.jobChanges.length >= 500);
  // Dates are at most the anchor, newest first.
  t.true(
    corpus.posts.every(
      (p, i) => p.createdAt <= anchor.toISOString() && (i === 0 || corpus.posts[i - 1].createdAt >= p.createdAt),
    ),
  );
});

test('paging returns every person exactly once, in a stable order, with cursors', async (t) => {
  const a = await all(pronet, { kind: 'people_search' }, 200);
  t.is(a.length, corpus.people.length);
  t.is(new Set(a.map((c) => c.externalId)).size, a.length);
  const b = await all(new LocalPronet(opts), { kind: 'people_search' }, 137);
  t.deepEqual(
    b.map((c) => c.signalKey),
    a.map((c) => c.signalKey),
  );
  const first = await pronet.search({ kind: 'people_search' }, { limit: 3 });
  t.deepEqual(
    first.candidates.map((c) => c.externalId),
    a.slice(0, 3).map((c) => c.externalId),
  );
  const second = await pronet.search({ kind: 'people_search' }, { limit: 3, cursor: first.nextCursor! });
  t.deepEqual(
    second.candidates.map((c) => c.externalId),
    a.slice(3, 6).map((c) => c.externalId),
  );
  // The same cursor again gives the same page.
  const again = await pronet.search({ kind: 'people_search' }, { limit: 3, cursor: first.nextCursor! });
  t.deepEqual(again, second);
});

test('post_keywords: exactly the posts and comments mentioning any keyword, newest first', async (t) => {
  const keywords = ['cold email', 'CI/CD', 'Kubernetes'];
  const got = await all(newsforum, { kind: 'post_keywords', keywords }, 150);
  const expected = corpus.posts.filter((p) => keywords.some((k) => mentions(p.text, k)));
  t.true(expected.length > 100);
  t.deepEqual(
    got.map((c) => c.evidence.id),
    expected.map((p) => p.id),
  );
  t.true(got.some((c) => c.evidence.id.startsWith('nf_c')) && got.some((c) => c.evidence.id.startsWith('nf_p')));
  const c = got[0];
  const author = corpus.people[expected[0].author];
  t.is(c.source, 'newsforum');
  t.is(c.externalId, author.forumId);
  t.is(c.profileUrl, author.profileUrl); // the author's linked network profile
  t.is(c.evidence.kind, 'post_keywords');
  t.is(c.evidence.text, expected[0].text);
  t.is(c.evidence.date, expected[0].createdAt);
  // A phrase matches as a phrase, case-insensitively; unknown words find nothing.
  const phrase = await all(newsforum, { kind: 'post_keywords', keywords: ['EMAIL COLD'] });
  t.is(phrase.length, 0);
  const none = await newsforum.search({ kind: 'post_keywords', keywords: ['blockchain'] }, { limit: 50 });
  t.deepEqual(none, { candidates: [], nextCursor: null });
});

test('post_keywords: since keeps only newer evidence', async (t) => {
  const since = new Date(anchor.getTime() - 30 * 86_400_000).toISOString();
  const got = await all(newsforum, { kind: 'post_keywords', keywords: ['outbound'], filters: { since } });
  const expected = corpus.posts.filter((p) => mentions(p.text, 'outbound') && p.createdAt >= since);
  t.true(expected.length > 0);
  t.deepEqual(
    got.map((c) => c.evidence.id),
    expected.map((p) => p.id),
  );
});

test('people_search: filters find exactly the matching people', async (t) => {
  const filters = {
    titles: ['Head Sales', 'vp of marketing'],
    countries: ['de', 'US', 'gb'],
    companySizes: ['51-200', '201-500'] as const,
    currentEmployerOnly: true,
  };
  const got = await all(pronet, {
    kind: 'people_search',
    filters: { ...filters, companySizes: [...filters.companySizes] },
  });
  const expected = corpus.people.filter((p) => {
    const co = corpus.companies[p.company];
    const title = ` ${words(p.title).join(' ')} `;
    return (
      p.current &&
      ['DE', 'US', 'GB'].includes(p.country) &&
      ['51-200', '201-500'].includes(co.size) &&
      [
        ['head', 'sales'],
        ['vp', 'marketing'],
      ].some((ws) => ws.every((w) => title.includes(` ${w} `)))
    );
  });
  t.true(expected.length > 5, String(expected.length));
  t.deepEqual(
    got.map((c) => c.externalId),
    expected.map((p) => p.id),
  );
  t.true(
    got.every((c) => c.currentEmployer === true && (c.title === 'Head of Sales' || c.title === 'VP of Marketing')),
  );

  const bySeniorityIndustry = await all(pronet, {
    kind: 'people_search',
    filters: { seniorities: ['cxo', 'founder'], industries: ['fintech', 'SOFTWARE'] },
  });
  const expected2 = corpus.people.filter(
    (p) =>
      ['cxo', 'founder'].includes(p.seniority) &&
      ['Fintech', 'Software'].includes(corpus.companies[p.company].industry),
  );
  t.true(expected2.length > 50);
  t.deepEqual(
    bySeniorityIndustry.map((c) => c.externalId),
    expected2.map((p) => p.id),
  );

  const byKeyword = await all(pronet, {
    kind: 'people_search',
    keywords: ['zero trust'],
    filters: { countries: ['FR'] },
  });
  const expected3 = corpus.people.filter((p) => p.country === 'FR' && mentions(p.headline, 'zero trust'));
  t.true(expected3.length > 0);
  t.deepEqual(
    byKeyword.map((c) => c.externalId),
    expected3.map((p) => p.id),
  );
});

test('company events and job changes: the event, then the matching current employees', async (t) => {
  const hiring = await all(pronet, { kind: 'hiring', filters: { seniorities: ['vp', 'cxo'] } });
  const expected: string[] = [];
  for (const e of corpus.events) {
    if (e.kind !== 'hiring') continue;
    corpus.people.forEach((p, i) => {
      if (p.company === e.company && p.current && ['vp', 'cxo'].includes(p.seniority)) expected.push(`${e.id}/${i}`);
    });
  }
  t.true(expected.length > 50);
  t.deepEqual(
    hiring.map((c) => `${c.evidence.id}/${c.externalId.slice(3)}`),
    expected,
  );
  t.true(
    hiring.every(
      (c) => c.evidence.kind === 'hiring' && / is hiring /.test(c.evidence.text) && c.currentEmployer === true,
    ),
  );

  const funding = await all(pronet, { kind: 'funding', keywords: ['Series A'] });
  t.true(funding.length > 0 && funding.every((c) => c.evidence.text.includes('Series A')));
  const news = await all(pronet, { kind: 'company_event' });
  const newsKinds = new Set(news.map((c) => corpus.events.find((e) => e.id === c.evidence.id)!.kind));
  t.deepEqual([...newsKinds].sort(), ['acquisition', 'expansion', 'launch', 'partnership']);

  const changes = await all(pronet, { kind: 'job_change', filters: { countries: ['US'] } });
  const expectedChanges = corpus.jobChanges.filter((j) => corpus.people[j.person].country === 'US');
  t.true(expectedChanges.length > 20);
  t.deepEqual(
    changes.map((c) => c.evidence.id),
    expectedChanges.map((j) => j.id),
  );
  t.true(
    changes.every(
      (c) => c.company!.name === corpus.companies[corpus.jobChanges.find((j) => j.id === c.evidence.id)!.to].name,
    ),
  );
});

test('signal keys are stable and distinguish evidence and person', async (t) => {
  t.is(
    signalKey('post_keywords', { source: 'newsforum', evidenceId: 'nf_p1', personId: 'nf_u2' }),
    signalKey('post_keywords', { source: 'newsforum', evidenceId: 'nf_p1', personId: 'nf_u2' }),
  );
  t.regex(signalKey('hiring', { source: 'pronet', evidenceId: 'ev_1', personId: 'pn_1' }), /^[0-9a-f]{32}$/);
  // A golden value: changing the recipe would orphan every stored key.
  t.is(
    signalKey('hiring', { source: 'pronet', evidenceId: 'ev_1', personId: 'pn_1' }),
    createHash('sha256').update('hiring\npronet\nev_1\npn_1').digest('hex').slice(0, 32),
  );
  const keys = new Set([
    signalKey('hiring', { source: 'pronet', evidenceId: 'ev_1', personId: 'pn_1' }),
    signalKey('hiring', { source: 'pronet', evidenceId: 'ev_1', personId: 'pn_2' }),
    signalKey('hiring', { source: 'pronet', evidenceId: 'ev_2', personId: 'pn_1' }),
    signalKey('funding', { source: 'pronet', evidenceId: 'ev_1', personId: 'pn_1' }),
  ]);
  t.is(keys.size, 4);
  // The same query on a fresh source (another process, another day) gives the same keys.
  const a = await pronet.search({ kind: 'hiring' }, { limit: 50 });
  const b = await new LocalPronet(opts).search({ kind: 'hiring' }, { limit: 50 });
  t.deepEqual(
    a.candidates.map((c) => c.signalKey),
    b.candidates.map((c) => c.signalKey),
  );
  t.is(new Set(a.candidates.map((c) => c.signalKey)).size, a.candidates.length);
});

test('profile lookups accept any form of the profile URL', async (t) => {
  const p = corpus.people.find((x) => x.profileUrl.includes('%') && x.slug.toUpperCase().toLowerCase() === x.slug)!;
  const decoded = decodeURIComponent(p.profileUrl);
  for (const url of [
    p.profileUrl,
    decoded.toUpperCase().replace('HTTPS://PRONET.EXAMPLE', 'http://www.pronet.example') + '/',
    `${decoded.normalize('NFD')}?trk=1`,
  ]) {
    const c = await pronet.profile(url);
    t.is(c?.externalId, p.id, url);
  }
  t.is(await pronet.profile('https://pronet.example/in/nobody-here'), null);
  t.is(await pronet.profile('not a url'), null);
  const forum = await newsforum.profile(p.forumUrl);
  t.is(forum?.externalId, p.forumId);
});

test('companyPeople: a company by domain or name, its current employees matching the roles, most senior first, paged', async (t) => {
  // A company with enough current employees to page through.
  const index = corpus.index.employees.findIndex((e) => e.length >= 12);
  const co = corpus.companies[index];
  const employees = corpus.index.employees[index].map((i) => corpus.people[i]);
  const rank = ['founder', 'cxo', 'vp', 'director', 'manager', 'senior', 'entry'];

  const byDomain = await pronet.companyPeople(
    { domain: `https://www.${co.domain.toUpperCase()}/about` },
    {},
    { limit: 200 },
  );
  t.deepEqual(byDomain?.company, { name: co.name, domain: co.domain, size: co.size, industry: co.industry });
  t.deepEqual(byDomain?.people.map((p) => p.externalId).sort(), employees.map((p) => p.id).sort());
  t.true(
    byDomain!.people.every(
      (p) => p.currentEmployer === true && p.company?.name === co.name && p.evidence.kind === 'people_search',
    ),
  );
  const ranks = byDomain!.people.map((p) => rank.indexOf(p.seniority!));
  t.deepEqual(
    ranks,
    [...ranks].sort((a, b) => a - b),
  );

  // By name, any case and spacing; an unknown domain falls back to the name.
  const byName = await pronet.companyPeople(
    { name: `  ${co.name.toLowerCase().replace(' ', '   ')} `, domain: 'unknown-company.example' },
    {},
    { limit: 200 },
  );
  t.deepEqual(
    byName?.people.map((p) => p.externalId),
    byDomain?.people.map((p) => p.externalId),
  );

  // Roles: seniorities and titles both apply.
  const seniorities = ['director', 'vp', 'cxo', 'founder'] as const;
  const senior = await pronet.companyPeople({ domain: co.domain }, { seniorities: [...seniorities] }, { limit: 200 });
  t.deepEqual(
    senior?.people.map((p) => p.externalId).sort(),
    employees
      .filter((p) => (seniorities as readonly string[]).includes(p.seniority as string))
      .map((p) => p.id)
      .sort(),
  );
  const someone = employees[0];
  const titled = await pronet.companyPeople({ domain: co.domain }, { titles: [someone.title] }, { limit: 200 });
  t.true(titled!.people.some((p) => p.externalId === someone.id));
  const needed = words(someone.title).filter((w) => !['of', 'and', 'the', 'for', 'at', 'in'].includes(w));
  t.true(titled!.people.every((p) => needed.every((w) => (words(p.title!) as string[]).includes(w))));

  // Paging: every person once, in the same order; a cursor belongs to its company and roles.
  const paged: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await pronet.companyPeople({ domain: co.domain }, {}, { cursor, limit: 5 });
    t.true(page!.people.length <= 5);
    paged.push(...page!.people.map((p) => p.externalId));
    cursor = page!.nextCursor ?? undefined;
  } while (cursor);
  t.deepEqual(
    paged,
    byDomain!.people.map((p) => p.externalId),
  );
  const first = await pronet.companyPeople({ domain: co.domain }, {}, { limit: 5 });
  await t.throwsAsync(
    pronet.companyPeople({ domain: co.domain }, { seniorities: ['vp'] }, { cursor: first!.nextCursor!, limit: 5 }),
    { instanceOf: SourceError },
  );

  // Unknown companies are null; a reference needs a name or a domain.
  t.is(await pronet.companyPeople({ name: 'Nonexistent Widgets Incorporated' }, {}, { limit: 10 }), null);
  t.is(await pronet.companyPeople({ domain: 'nonexistent-widgets.example' }, {}, { limit: 10 }), null);
  const bad = await t.throwsAsync(pronet.companyPeople({ name: '  ' }, {}, { limit: 10 }), { instanceOf: SourceError });
  t.is((bad as SourceError).code, 'invalid_request');
});

test('bad requests are SourceError invalid_request', async (t) => {
  const code = async (p: Promise<unknown>) =>
    ((await t.throwsAsync(p, { instanceOf: SourceError })) as SourceError).code;
  t.is(await code(pronet.search({ kind: 'people_search' }, { limit: 0 })), 'invalid_request');
  t.is(await code(pronet.search({ kind: 'people_search' }, { limit: 201 })), 'invalid_request');
  t.is(await code(pronet.search({ kind: 'post_keywords' }, { limit: 10 })), 'invalid_request');
  t.is(await code(newsforum.search({ kind: 'hiring' }, { limit: 10 })), 'invalid_request');
  t.is(
    await code(pronet.search({ kind: 'hiring', filters: { since: 'yesterday' } }, { limit: 10 })),
    'invalid_request',
  );
  t.is(
    await code(pronet.search({ kind: 'hiring', filters: { countries: ['USA'] } }, { limit: 10 })),
    'invalid_request',
  );
  t.is(await code(pronet.search({ kind: 'nope' } as never, { limit: 10 })), 'invalid_request');
  const first = await pronet.search({ kind: 'hiring' }, { limit: 10 });
  t.is(await code(pronet.search({ kind: 'funding' }, { limit: 10, cursor: first.nextCursor! })), 'invalid_request');
  t.is(await code(pronet.search({ kind: 'hiring' }, { limit: 10, cursor: 'garbage' })), 'invalid_request');
  const aborted = AbortSignal.abort(new Error('stop'));
  await t.throwsAsync(pronet.search({ kind: 'hiring' }, { limit: 10 }, aborted), { message: 'stop' });
});

test('createSources: local by default, one source per kind', (t) => {
  const s = createSources({
    corpus: { seed: 42, people: 12_000 },
    timeoutMs: 1000,
    newsforum: { provider: 'local', hn: null },
    pronet: { profileHosts: ['pronet.example'] },
  });
  t.deepEqual(s.modes, { newsforum: 'local', pronet: 'local' });
  t.deepEqual(
    s.forKind('post_keywords').map((x) => x.name),
    ['newsforum'],
  );
  for (const kind of ['people_search', 'job_change', 'hiring', 'funding', 'company_event'] as const)
    t.deepEqual(
      s.forKind(kind).map((x) => x.name),
      ['pronet'],
    );
  t.throws(
    () =>
      createSources({
        corpus: { seed: 1, people: 0 },
        timeoutMs: 1,
        newsforum: { provider: 'local', hn: null },
        pronet: { profileHosts: [] },
      }),
    { message: /CORPUS_PEOPLE must be from 1/ },
  );
});
