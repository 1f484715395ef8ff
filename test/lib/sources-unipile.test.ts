import test, { type ExecutionContext } from 'ava';
import {
  LEVEL_WORDS,
  SEARCH_LIMIT_MAX,
  seniorityOf,
  UnipilePronetSource,
  unipileErrorOf,
  type UnipilePronetOptions,
} from '../../lib/sources/unipile-pronet.js';
import {
  SENIORITIES,
  SENIORITY_RANK,
  SourceError,
  type Candidate,
  type CompanyRef,
  type RoleFilters,
  type Seniority,
  type SignalQuery,
} from '../../lib/sources/index.js';
import { tokenize } from '../../lib/sources/words.js';
import {
  generateSearchFixture,
  registerSearch,
  type FixtureCompany,
  type FixturePerson,
  type FixturePosition,
  type SearchStandInOptions,
} from '../helpers/unipile/search.js';
import { startStandIn, unipileError, type StandIn } from '../helpers/unipile/stand-in.js';

const ACCOUNT = 'acc_Lk9sEarch01';
const fixture = generateSearchFixture({ seed: 44, people: 600, companies: 40 });
const STOP = new Set(['of', 'and', 'the', 'for', 'at', 'in']);

async function setup(
  t: ExecutionContext,
  opts: {
    api?: 'classic' | 'sales_navigator';
    standIn?: SearchStandInOptions;
    source?: Partial<UnipilePronetOptions>;
  } = {},
) {
  const standIn = await startStandIn();
  t.teardown(() => standIn.close());
  const control = registerSearch(standIn, fixture, opts.standIn);
  const source = new UnipilePronetSource({
    baseUrl: standIn.url,
    apiKey: standIn.apiKey,
    accountId: ACCOUNT,
    api: opts.api,
    dailyProfiles: 1_000_000,
    ...opts.source,
  });
  t.teardown(() => source.close());
  return { standIn, control, source };
}

const searchRequests = (s: StandIn) => s.requests.filter((r) => r.path === '/linkedin/search');
const parameterRequests = (s: StandIn) => s.requests.filter((r) => r.path === '/linkedin/search/parameters');

async function all(source: UnipilePronetSource, query: SignalQuery, limit: number): Promise<Candidate[]> {
  const out: Candidate[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await source.search(query, { cursor, limit });
    out.push(...page.candidates);
    cursor = page.nextCursor ?? undefined;
    if (++pages > 500) throw new Error('paging does not end');
  } while (cursor);
  return out;
}

async function allCompanyPeople(source: UnipilePronetSource, ref: CompanyRef, roles: RoleFilters, limit: number) {
  const people: Candidate[] = [];
  let cursor: string | undefined;
  let company;
  do {
    const page = await source.companyPeople(ref, roles, { cursor, limit });
    if (!page) return null;
    company = page.company;
    people.push(...page.people);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return { company, people };
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

// The fixture read with our filters' meaning (independently of the adapter).
const norm = (text: string) => ` ${tokenize(text).join(' ')} `;
const hasPhrase = (text: string, phrase: string) => norm(text).includes(` ${tokenize(phrase).join(' ')} `);
const titleHas = (role: string, title: string) =>
  tokenize(title)
    .filter((w) => !STOP.has(w))
    .every((w) => norm(role).includes(` ${w} `));
const primary = (p: FixturePerson): FixturePosition | undefined => p.positions[0];
const byLevel = (levels: readonly Seniority[], people: FixturePerson[]) =>
  [...levels]
    .sort((a, b) => SENIORITY_RANK[a] - SENIORITY_RANK[b])
    .flatMap((l) => people.filter((p) => primary(p)?.level === l));
const startIso = (x: FixturePosition) => new Date(Date.UTC(x.start.year, x.start.month - 1, 1)).toISOString();
const ids = (cs: Candidate[]) => cs.map((c) => c.externalId);

test('seniorityOf reads every fixture title as its level; a few real-world titles', (t) => {
  for (const p of fixture.people) for (const x of p.positions) t.is(seniorityOf(x.role), x.level, x.role);
  t.is(seniorityOf('Vice President of Sales'), 'vp');
  t.is(seniorityOf('President & CEO'), 'cxo');
  t.is(seniorityOf('Co-founder and CTO'), 'founder');
  t.is(seniorityOf('Head of Growth'), 'director');
  t.is(seniorityOf('Account Executive'), 'entry');
  t.is(seniorityOf(''), null);
  t.is(seniorityOf(null), null);
});

test('classic search: each filter becomes the documented body and finds the matching people', async (t) => {
  const { standIn, source } = await setup(t);

  // Keywords: any of them, each a phrase, in LinkedIn's Boolean syntax.
  const kw = await all(source, { kind: 'people_search', keywords: ['cold email', 'SEO'] }, 50);
  const kwExpected = fixture.people.filter((p) => hasPhrase(p.headline, 'cold email') || hasPhrase(p.headline, 'seo'));
  t.true(kwExpected.length > 20);
  t.deepEqual(
    ids(kw),
    kwExpected.map((p) => p.providerId),
  );
  const first = searchRequests(standIn)[0];
  t.deepEqual(first.json, { api: 'classic', category: 'people', keywords: '"cold email" OR "seo"' });
  t.is(first.query.get('account_id'), ACCOUNT);
  t.is(first.query.get('limit'), '50');
  t.is(first.headers['x-api-key'], standIn.apiKey);
  t.is(first.headers.authorization, undefined);

  // One candidate in full.
  const p = kwExpected[0];
  const pos = primary(p)!;
  t.deepEqual(kw[0], {
    source: 'pronet',
    externalId: p.providerId,
    profileUrl: p.publicIdentifier
      ? `https://www.linkedin.com/in/${p.publicIdentifier}`
      : `https://www.linkedin.com/in/${p.providerId}`,
    fullName: `${p.firstName} ${p.lastName}`,
    firstName: p.firstName,
    lastName: p.lastName,
    title: pos.role,
    headline: p.headline,
    seniority: pos.level,
    company: { name: pos.company.name, domain: null, size: null, industry: pos.company.industry.title },
    country: p.country,
    email: null,
    currentEmployer: true,
    evidence: {
      kind: 'people_search',
      id: p.providerId,
      text: p.headline,
      url: kw[0].profileUrl,
      date: startIso(pos),
    },
    signalKey: kw[0].signalKey,
  });
  t.regex(kw[0].signalKey, /^[0-9a-f]{32}$/);

  // Titles: any title, every word of it, in the title search.
  const before = searchRequests(standIn).length;
  const titled = await all(
    source,
    { kind: 'people_search', filters: { titles: ['head of sales', 'VP Marketing'] } },
    50,
  );
  t.deepEqual(
    ids(titled),
    fixture.people
      .filter((x) => x.positions.some((y) => titleHas(y.role, 'head of sales') || titleHas(y.role, 'vp marketing')))
      .map((x) => x.providerId),
  );
  t.deepEqual(searchRequests(standIn)[before].json, {
    api: 'classic',
    category: 'people',
    advanced_keywords: { title: '("head" AND "sales") OR ("vp" AND "marketing")' },
  });

  // Seniorities: one level at a time, most senior first, each person's level read from the title.
  const beforeLevels = searchRequests(standIn).length;
  const senior = await all(source, { kind: 'people_search', filters: { seniorities: ['director', 'vp'] } }, 200);
  const seniorExpected = byLevel(['director', 'vp'], fixture.people);
  t.true(seniorExpected.length > 60);
  t.deepEqual(
    ids(senior),
    seniorExpected.map((x) => x.providerId),
  );
  t.deepEqual(
    senior.map((c) => c.seniority),
    seniorExpected.map((x) => primary(x)!.level),
  );
  t.deepEqual(searchRequests(standIn)[beforeLevels].json, {
    api: 'classic',
    category: 'people',
    advanced_keywords: { title: '"vp" OR "svp" OR "evp" OR "vice president"' },
  });
  // Entry with a title: "none of the other levels' words", as a NOT next to the title.
  const entry = await all(
    source,
    { kind: 'people_search', filters: { titles: ['sales'], seniorities: ['entry'] } },
    50,
  );
  t.deepEqual(
    ids(entry),
    fixture.people
      .filter((x) => primary(x)?.level === 'entry' && titleHas(primary(x)!.role, 'sales'))
      .map((x) => x.providerId),
  );
  const entryBody = searchRequests(standIn).at(-1)!.json as { advanced_keywords: { title: string } };
  t.regex(entryBody.advanced_keywords.title, /^\("sales"\) AND NOT \("founder" OR .*"staff"\)$/);
  t.true(LEVEL_WORDS.vp.every((w) => entryBody.advanced_keywords.title.includes(`"${w}"`)));

  // Industries and countries: names to ids through search/parameters, exact titles only.
  const params = parameterRequests(standIn).length;
  const beforeIndustry = searchRequests(standIn).length;
  const industry = await all(
    source,
    {
      kind: 'people_search',
      filters: { industries: ['software development', 'Space Mining'], countries: ['de', 'GB'] },
    },
    50,
  );
  t.deepEqual(
    ids(industry),
    fixture.people
      .filter((x) => x.industry.title === 'Software Development' && ['DE', 'GB'].includes(x.country))
      .map((x) => x.providerId),
  );
  t.true(industry.every((c) => c.country === 'DE' || c.country === 'GB'));
  const lookups = parameterRequests(standIn).slice(params);
  t.deepEqual(
    lookups.map((r) => [r.query.get('type'), r.query.get('keywords'), r.query.get('account_id')]),
    [
      ['INDUSTRY', 'software development', ACCOUNT],
      ['INDUSTRY', 'Space Mining', ACCOUNT],
      ['LOCATION', 'Germany', ACCOUNT],
      ['LOCATION', 'United Kingdom', ACCOUNT],
    ],
  );
  t.deepEqual(searchRequests(standIn)[beforeIndustry].json, {
    api: 'classic',
    category: 'people',
    industry: ['4'],
    location: ['101282230', '101165590'],
  });
  // The ids are cached per process: the same filters again ask nothing more.
  const again = await source.search(
    { kind: 'people_search', filters: { industries: ['Software Development'], countries: ['DE', 'gb'] } },
    { limit: 5 },
  );
  t.is(again.candidates.length, 5);
  t.is(parameterRequests(standIn).length, params + 4);
  // An industry LinkedIn does not know matches nobody: no search is sent.
  const searchesBefore = searchRequests(standIn).length;
  t.deepEqual(
    await source.search({ kind: 'people_search', filters: { industries: ['Space Mining'] } }, { limit: 10 }),
    {
      candidates: [],
      nextCursor: null,
    },
  );
  t.is(searchRequests(standIn).length, searchesBefore);

  // currentEmployerOnly drops people without a current position; since checks the position's start.
  const current = await all(source, { kind: 'people_search', filters: { currentEmployerOnly: true } }, 50);
  t.deepEqual(
    ids(current),
    fixture.people.filter((x) => x.positions.length > 0).map((x) => x.providerId),
  );
  t.true(fixture.people.some((x) => x.positions.length === 0));
  const since = await all(source, { kind: 'people_search', filters: { since: '2022-03-01T00:00:00Z' } }, 50);
  t.deepEqual(
    ids(since),
    fixture.people.filter((x) => primary(x) && startIso(primary(x)!) >= '2022-03-01').map((x) => x.providerId),
  );
  t.true(since.every((c) => c.evidence.date >= '2022-03-01T00:00:00.000Z'));
});

test('a person with several current positions is read at the one the search matched', async (t) => {
  const { source } = await setup(t);
  const found = await all(source, { kind: 'people_search', filters: { titles: ['advisor'] } }, 200);
  const expected = fixture.people.filter((p) => p.positions.some((x) => /\badvisor\b/i.test(x.role)));
  const several = expected.filter((p) => !/\badvisor\b/i.test(p.positions[0].role));
  t.true(several.length > 0, 'the fixture has advisors whose first position is another');
  t.deepEqual(ids(found).sort(), expected.map((p) => p.providerId).sort());
  for (const c of found) t.regex(c.title ?? '', /\badvisor\b/i, `${c.externalId}: ${c.title}`);
  const one = found.find((c) => c.externalId === several[0].providerId)!;
  const pos = several[0].positions.find((x) => /\badvisor\b/i.test(x.role))!;
  t.like(one, { title: pos.role, company: { name: pos.company.name } });
});

test('Sales Navigator search: role, seniority, headcount and ids of its own parameter types', async (t) => {
  const { standIn, source } = await setup(t, { api: 'sales_navigator' });
  const query: SignalQuery = {
    kind: 'people_search',
    filters: {
      titles: ['Manager'],
      seniorities: ['manager', 'cxo'],
      industries: ['Software Development', 'IT Services and IT Consulting'],
      companySizes: ['11-50', '5001+'],
    },
  };
  const got = await all(source, query, 200);
  const inSize = (c: FixtureCompany) => (c.employeeCount >= 11 && c.employeeCount <= 50) || c.employeeCount >= 5001;
  const expected = (['cxo', 'manager'] as const).flatMap((level) =>
    fixture.people.filter(
      (p) =>
        ['4', '96'].includes(p.industry.id) &&
        p.positions.some((x) => x.level === level && titleHas(x.role, 'manager') && inSize(x.company)),
    ),
  );
  // cxo titles never hold "manager": only managers.
  t.true(expected.length > 3);
  t.deepEqual(
    ids(got),
    expected.map((p) => p.salesId),
  );
  t.true(got.every((c) => c.seniority === 'manager' && c.externalId.startsWith('ACwAA')));
  const bodies = searchRequests(standIn).map((r) => r.json);
  t.deepEqual(bodies[0], {
    api: 'sales_navigator',
    category: 'people',
    industry: { include: ['4', '96'] },
    company_headcount: [{ min: 11, max: 50 }, { min: 5001, max: 10000 }, { min: 10001 }],
    role: { include: ['Manager'] },
    seniority: { include: ['cxo'] },
  });
  t.deepEqual((bodies[1] as { seniority: unknown }).seniority, {
    include: ['experienced_manager', 'entry_level_manager'],
  });
  t.true(searchRequests(standIn).every((r) => r.query.get('limit') === '100'));
  // Keywords go into the same search.
  const kw = await all(
    source,
    { kind: 'people_search', keywords: ['outbound'], filters: { seniorities: ['manager'] } },
    200,
  );
  t.is((searchRequests(standIn).at(-1)!.json as { keywords: string }).keywords, '"outbound"');
  t.true(kw.length > 0);
  t.true(kw.every((c) => hasPhrase(c.headline!, 'outbound')));
  // Places: REGION, as Sales Navigator's `location` asks; this account refuses it (400), so LOCATION.
  const us = await all(source, { kind: 'people_search', filters: { countries: ['US'], seniorities: ['cxo'] } }, 100);
  t.deepEqual(
    ids(us),
    fixture.people
      .filter((p) => p.country === 'US' && p.positions.some((x) => x.level === 'cxo'))
      .map((p) => p.salesId),
  );
  t.deepEqual((searchRequests(standIn).at(-1)!.json as { location: unknown }).location, { include: ['103644278'] });
  t.deepEqual(
    parameterRequests(standIn).map((r) => r.query.get('type')),
    ['SALES_INDUSTRY', 'SALES_INDUSTRY', 'REGION', 'LOCATION'],
  );
});

test('Sales Navigator: an account that takes REGION gets REGION ids', async (t) => {
  const { standIn, source } = await setup(t, { api: 'sales_navigator', standIn: { region: true } });
  const page = await source.search({ kind: 'people_search', filters: { countries: ['fr'] } }, { limit: 20 });
  t.is(page.candidates.length, 20);
  t.true(page.candidates.every((c) => c.country === 'FR'));
  t.deepEqual(
    parameterRequests(standIn).map((r) => [r.query.get('type'), r.query.get('keywords')]),
    [['REGION', 'France']],
  );
  t.deepEqual((searchRequests(standIn)[0].json as { location: unknown }).location, { include: ['105015875'] });
});

test('paging: every person once, stable across runs, Unipile cursors in the body, the limit bound', async (t) => {
  const { standIn, source } = await setup(t);
  const query: SignalQuery = { kind: 'people_search' };
  const a = await all(source, query, 7);
  const b = await all(source, query, 7);
  t.is(a.length, fixture.people.length);
  t.is(new Set(ids(a)).size, a.length);
  t.deepEqual(
    ids(a),
    fixture.people.map((p) => p.providerId),
  );
  t.deepEqual(
    a.map((c) => c.signalKey),
    b.map((c) => c.signalKey),
  );
  const requests = searchRequests(standIn);
  t.is(requests.length, 2 * Math.ceil(fixture.people.length / 7));
  t.true(requests.every((r) => r.query.get('limit') === '7'));
  t.deepEqual(requests[0].json, { api: 'classic', category: 'people' });
  t.deepEqual(Object.keys(requests[1].json as object), ['cursor']);

  // A page asks Unipile for at most its documented limit: 50 on Classic even when 200 are wanted.
  const big = await source.search(query, { limit: 200 });
  t.is(big.candidates.length, SEARCH_LIMIT_MAX.classic);
  t.is(searchRequests(standIn).at(-1)!.query.get('limit'), '50');
  // The stand-in refuses more, as documented.
  const res = await fetch(`${standIn.url}/api/v1/linkedin/search?account_id=${ACCOUNT}&limit=51`, {
    method: 'POST',
    headers: { 'x-api-key': standIn.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ api: 'classic', category: 'people' }),
  });
  t.is(res.status, 400);
  t.like(await res.json(), { type: 'errors/invalid_parameters', status: 400 });

  // A cursor belongs to its query.
  const page = await source.search(query, { limit: 5 });
  const other = await failure(
    source.search({ kind: 'people_search', keywords: ['seo'] }, { cursor: page.nextCursor!, limit: 5 }),
  );
  t.like(other, { code: 'invalid_request', retryable: false });
  t.is((await failure(source.search(query, { cursor: 'not-a-cursor', limit: 5 }))).code, 'invalid_request');
  const sales = new UnipilePronetSource({
    baseUrl: standIn.url,
    apiKey: standIn.apiKey,
    accountId: ACCOUNT,
    api: 'sales_navigator',
  });
  t.teardown(() => sales.close());
  t.is((await failure(sales.search(query, { cursor: page.nextCursor!, limit: 5 }))).code, 'invalid_request');
});

/** A company's current employees at the given levels (all when none), most senior first, as positions there. */
function employees(company: FixtureCompany, levels: readonly Seniority[] = SENIORITIES, title?: string) {
  return [...levels]
    .sort((a, b) => SENIORITY_RANK[a] - SENIORITY_RANK[b])
    .flatMap((level) =>
      fixture.people.filter((p) =>
        p.positions.some((x) => x.company === company && x.level === level && (!title || titleHas(x.role, title))),
      ),
    );
}

test('companyPeople (Classic): resolves the company, lists its decision makers most senior first, pages', async (t) => {
  const { standIn, source } = await setup(t);
  const co = fixture.companies.slice(2).find((c) => employees(c, ['founder', 'cxo', 'vp', 'director']).length >= 5)!;
  t.truthy(co);
  const roles: RoleFilters = { seniorities: ['director', 'vp', 'cxo', 'founder'] };
  // As a decision-maker import reads it: small pages until done.
  const got = await allCompanyPeople(source, { name: co.name.toUpperCase() }, roles, 2);
  const sizes: Record<number, string> = {
    1: '1-10',
    11: '11-50',
    51: '51-200',
    201: '201-500',
    501: '501-1000',
    1001: '1001-5000',
    5001: '5001+',
  };
  t.deepEqual(got!.company, {
    name: co.name,
    domain: co.domain,
    size: sizes[co.range.from],
    industry: co.industry.title,
  });
  const expected = employees(co, ['founder', 'cxo', 'vp', 'director']);
  t.deepEqual(
    ids(got!.people),
    expected.map((p) => p.providerId),
  );
  const ranks = got!.people.map((c) => SENIORITY_RANK[c.seniority!]);
  t.deepEqual(
    ranks,
    [...ranks].sort((a, b) => a - b),
  );
  t.true(got!.people.every((c) => c.currentEmployer === true && c.company?.name === co.name));
  // Resolution: typeahead by name, then the profile; the search filters by the company id.
  const lookups = standIn.requests.filter((r) => r.path !== '/linkedin/search');
  t.deepEqual(
    lookups.map((r) => `${r.path}?${r.query.get('type') ?? ''}${r.query.get('keywords') ?? ''}`),
    [`/linkedin/search/parameters?COMPANY${co.name.toUpperCase()}`, `/linkedin/company/${co.id}?`],
  );
  const bodies = searchRequests(standIn).map((r) => r.json as Record<string, unknown>);
  t.deepEqual(bodies[0], {
    api: 'classic',
    category: 'people',
    company: [co.id],
    advanced_keywords: { title: '"founder" OR "co founder" OR "cofounder" OR "owner"' },
  });
  t.true(bodies.every((b) => 'cursor' in b || (b.company as string[])[0] === co.id));

  // Again: the company is known, no look-ups.
  const n = standIn.requests.length;
  const again = await allCompanyPeople(source, { name: co.name }, roles, 200);
  t.is(again!.people.length, expected.length);
  t.true(standIn.requests.slice(n).every((r) => r.path === '/linkedin/search'));

  // Titles and a level; and without levels, everyone there, in level order.
  const heads = await allCompanyPeople(source, { name: co.name }, { titles: ['head'], seniorities: ['director'] }, 50);
  t.deepEqual(
    ids(heads!.people),
    employees(co, ['director'], 'head').map((p) => p.providerId),
  );
  const everyone = await allCompanyPeople(source, { name: co.name }, {}, 50);
  t.deepEqual(
    ids(everyone!.people),
    employees(co).map((p) => p.providerId),
  );
});

test('companyPeople: a domain wins over the name; unknown companies are null', async (t) => {
  const { standIn, source } = await setup(t);
  const [first, twin] = fixture.companies;
  t.is(first.name, twin.name);
  const byName = await source.companyPeople({ name: first.name }, {}, { limit: 50 });
  t.is(byName!.company.domain, first.domain);
  const byDomain = await allCompanyPeople(source, { name: twin.name, domain: `https://www.${twin.domain}/` }, {}, 50);
  t.is(byDomain!.company.domain, twin.domain);
  t.deepEqual(
    ids(byDomain!.people),
    employees(twin).map((p) => p.providerId),
  );
  // A domain alone: its label is typed into the company typeahead.
  const other = fixture.companies[5];
  const domainOnly = await source.companyPeople({ domain: other.domain }, { seniorities: ['entry'] }, { limit: 50 });
  t.is(domainOnly!.company.name, other.name);
  t.truthy(
    parameterRequests(standIn).find(
      (r) => r.query.get('type') === 'COMPANY' && r.query.get('keywords') === other.publicIdentifier,
    ),
  );
  // A domain alone whose label the typeahead does not tie to the name ("Vandelay Software" at
  // vandelay-software-global.example): the label as the company's public identifier, its website checked.
  const twinOnly = await source.companyPeople({ domain: twin.domain }, {}, { limit: 50 });
  t.is(twinOnly?.company.domain, twin.domain);
  t.truthy(standIn.requests.find((r) => r.path === `/linkedin/company/${twin.publicIdentifier}`));
  // Unknown: by name (typeahead, then the name as public identifier → 404), by domain.
  const before = searchRequests(standIn).length;
  t.is(await source.companyPeople({ name: 'Nonexistent Widgets' }, {}, { limit: 10 }), null);
  t.truthy(standIn.requests.find((r) => r.path === '/linkedin/company/nonexistent-widgets'));
  t.is(await source.companyPeople({ domain: 'nonexistent-widgets.example' }, {}, { limit: 10 }), null);
  t.is(searchRequests(standIn).length, before);
  // Input is checked before anything is sent.
  t.is((await failure(source.companyPeople({ name: ' ' }, {}, { limit: 10 }))).code, 'invalid_request');
});

test('companyPeople (Sales Navigator): plain company name, seniority levels, only that company’s people', async (t) => {
  const { standIn, source } = await setup(t, { api: 'sales_navigator' });
  // Company 0 shares its name with company 1: the include by name finds both, the id keeps company 0's.
  const co = fixture.companies[0];
  const got = await allCompanyPeople(
    source,
    { name: co.name, domain: co.domain },
    { seniorities: ['manager', 'vp'] },
    3,
  );
  const expected = employees(co, ['vp', 'manager']);
  t.true(expected.length > 0);
  t.deepEqual(
    ids(got!.people),
    expected.map((p) => p.salesId),
  );
  t.deepEqual(
    got!.people.map((c) => c.seniority),
    expected.map((p) => p.positions.find((x) => x.company === co)!.level),
  );
  const bodies = searchRequests(standIn)
    .map((r) => r.json as Record<string, unknown>)
    .filter((b) => !('cursor' in b));
  t.deepEqual(bodies, [
    {
      api: 'sales_navigator',
      category: 'people',
      company: { include: [co.name] },
      seniority: { include: ['vice_president'] },
    },
    {
      api: 'sales_navigator',
      category: 'people',
      company: { include: [co.name] },
      seniority: { include: ['experienced_manager', 'entry_level_manager'] },
    },
  ]);
  const twinPeople = employees(fixture.companies[1], ['vp', 'manager']);
  t.true(twinPeople.length > 0);
  t.false(got!.people.some((c) => twinPeople.some((p) => p.salesId === c.externalId)));
});

test('profile by URL: GET /users/{public identifier}, any URL form; unknown is null', async (t) => {
  const { standIn, source } = await setup(t, { standIn: { users: true } });
  const p = fixture.people.find((x) => x.publicIdentifier && x.email && x.positions.length === 1)!;
  const pos = primary(p)!;
  const got = await source.profile(`https://www.linkedin.com/in/${p.publicIdentifier}/?trk=people-guest`);
  t.like(got, {
    source: 'pronet',
    externalId: p.providerId,
    profileUrl: `https://www.linkedin.com/in/${p.publicIdentifier}`,
    fullName: `${p.firstName} ${p.lastName}`,
    title: pos.role,
    seniority: pos.level,
    company: { name: pos.company.name },
    country: p.country,
    email: p.email,
    currentEmployer: true,
    evidence: { kind: 'people_search', id: p.providerId, text: p.headline, date: startIso(pos) },
  });
  const req = standIn.requests.at(-1)!;
  t.is(req.path, `/users/${p.publicIdentifier}`);
  t.is(req.query.get('account_id'), ACCOUNT);
  t.is(req.query.get('linkedin_sections'), 'experience');
  t.is(req.query.get('notify'), 'false');
  t.is(req.query.get('linkedin_api'), null);
  // Other spellings of the same profile, and a provider id (case kept).
  t.is(
    (await source.profile(`de.linkedin.com/in/${p.publicIdentifier!.toUpperCase()}/details/experience`))?.externalId,
    p.providerId,
  );
  t.is((await source.profile(`https://www.linkedin.com/in/${p.providerId}`))?.externalId, p.providerId);
  t.is(standIn.requests.at(-1)!.path, `/users/${p.providerId}`);
  // Unknown → 404 → null; not a LinkedIn profile → null without asking.
  t.is(await source.profile('https://www.linkedin.com/in/nobody-at-all-0000'), null);
  const n = standIn.requests.length;
  t.is(await source.profile('https://example.com/in/someone'), null);
  t.is(await source.profile('https://www.linkedin.com/company/acme'), null);
  t.is(standIn.requests.length, n);

  // Sales Navigator: the profile in its ids, as its searches return them.
  const sales = new UnipilePronetSource({
    baseUrl: standIn.url,
    apiKey: standIn.apiKey,
    accountId: ACCOUNT,
    api: 'sales_navigator',
  });
  t.teardown(() => sales.close());
  t.is((await sales.profile(`https://linkedin.com/in/${p.publicIdentifier}`))?.externalId, p.salesId);
  t.is(standIn.requests.at(-1)!.query.get('linkedin_api'), 'sales_navigator');
});

test('errors: the documented error bodies map to SourceError codes', async (t) => {
  const { standIn, control, source } = await setup(t, { standIn: { users: true } });
  const query: SignalQuery = { kind: 'people_search' };
  const cases: [string, () => void, string, number | null, string | undefined][] = [
    ['429', () => (control.tooManyRequests = {}), 'rate_limited', null, 'too_many_requests'],
    [
      '429 retry-after',
      () => (control.tooManyRequests = { retryAfter: '30' }),
      'rate_limited',
      30,
      'too_many_requests',
    ],
    ['401', () => control.fail(401, 'disconnected_account'), 'auth', null, 'disconnected_account'],
    ['403', () => control.fail(403, 'feature_not_subscribed'), 'auth', null, 'feature_not_subscribed'],
    ['422 limit', () => control.fail(422, 'limit_exceeded'), 'rate_limited', null, 'limit_exceeded'],
    ['422', () => control.fail(422, 'unprocessable_entity'), 'invalid_request', null, 'unprocessable_entity'],
    ['400', () => control.fail(400, 'invalid_parameters'), 'invalid_request', null, 'invalid_parameters'],
    ['404 on search', () => control.fail(404, 'resource_not_found'), 'bad_response', null, 'resource_not_found'],
    ['500', () => control.fail(500, 'provider_error'), 'unavailable', null, 'provider_error'],
    ['503', () => control.fail(503, 'network_down'), 'unavailable', null, 'network_down'],
    ['504', () => control.fail(504, 'request_timeout'), 'timeout', null, 'request_timeout'],
    [
      'wrong shape',
      () => control.faults.push({ status: 200, body: { object: 'LinkedinSearch', items: 'none', cursor: null } }),
      'bad_response',
      null,
      undefined,
    ],
    [
      'not JSON',
      () => control.faults.push({ status: 200, body: Buffer.from('<html>'), headers: { 'content-type': 'text/html' } }),
      'bad_response',
      null,
      undefined,
    ],
  ];
  for (const [name, arrange, code, retryAfter, reason] of cases) {
    control.tooManyRequests = null;
    control.faults.length = 0;
    arrange();
    const err = await failure(source.search(query, { limit: 10 }));
    t.is(err.code as string, code, name);
    t.is(err.source, 'pronet', name);
    t.is(err.retryAfterSeconds, retryAfter, name);
    t.is(err.details.reason, reason, name);
    t.is(err.retryable, ['rate_limited', 'unavailable', 'timeout'].includes(err.code), name);
  }
  control.tooManyRequests = null;
  // The same on the other calls: a profile, a company look-up.
  control.fail(429, 'too_many_requests');
  t.is((await failure(source.profile('https://www.linkedin.com/in/someone'))).code, 'rate_limited');
  control.fail(401, 'expired_credentials');
  t.is((await failure(source.companyPeople({ name: 'Anything' }, {}, { limit: 5 }))).code, 'auth');
  // A wrong key: the stand-in's 401 missing_credentials.
  const wrong = new UnipilePronetSource({ baseUrl: standIn.url, apiKey: 'nope', accountId: ACCOUNT });
  t.teardown(() => wrong.close());
  t.like(await failure(wrong.search(query, { limit: 5 })), {
    code: 'auth',
    details: { status: 401, reason: 'missing_credentials' },
  });
  // The mapping on its own: a body that is not Unipile's falls back to the status.
  t.like(unipileErrorOf(502, null, 4), { code: 'unavailable', retryAfterSeconds: 4 });
  t.like(unipileErrorOf(408, 'x', null), { code: 'timeout' });
  t.is(unipileErrorOf(302, null, null), null);
  t.regex(
    unipileErrorOf(403, unipileError(403, 'account_restricted', 'Restricted', 'why').body, null)!.message,
    /HTTP 403 account_restricted: Restricted \(why\)/,
  );
});

test('daily limits: search results and profile visits per UTC day, then rate_limited until midnight', async (t) => {
  let now = Date.parse('2025-06-01T23:00:00Z');
  const { standIn, source } = await setup(t, {
    standIn: { users: true },
    source: { dailyProfiles: 120, dailyProfileVisits: 2, now: () => now },
  });
  const query: SignalQuery = { kind: 'people_search' };
  const p1 = await source.search(query, { limit: 200 });
  const p2 = await source.search(query, { cursor: p1.nextCursor!, limit: 200 });
  const p3 = await source.search(query, { cursor: p2.nextCursor!, limit: 200 });
  t.deepEqual(
    [p1, p2, p3].map((p) => p.candidates.length),
    [50, 50, 20],
  );
  t.is(searchRequests(standIn).at(-1)!.query.get('limit'), '20');
  const n = standIn.requests.length;
  const err = await failure(source.search(query, { cursor: p3.nextCursor!, limit: 200 }));
  t.like(err, { code: 'rate_limited', retryable: true, details: { reason: 'daily_limit' } });
  t.is(err.retryAfterSeconds, 3600);
  t.is(standIn.requests.length, n);
  // The next day the same cursor goes on.
  now += 3600_000;
  const p4 = await source.search(query, { cursor: p3.nextCursor!, limit: 200 });
  t.is(p4.candidates[0].externalId, fixture.people[120].providerId);

  const someone = fixture.people.find((p) => p.publicIdentifier)!;
  const url = `https://www.linkedin.com/in/${someone.publicIdentifier}`;
  t.truthy(await source.profile(url));
  t.truthy(await source.profile(url));
  t.like(await failure(source.profile(url)), { code: 'rate_limited', details: { reason: 'daily_limit' } });
});

test('what the source refuses before sending anything', async (t) => {
  const { standIn, source } = await setup(t);
  t.true(source.supports('people_search'));
  for (const kind of ['job_change', 'hiring', 'funding', 'company_event', 'post_keywords'] as const) {
    t.false(source.supports(kind));
    t.is((await failure(source.search({ kind }, { limit: 10 }))).code, 'invalid_request');
  }
  const sizes = await failure(
    source.search({ kind: 'people_search', filters: { companySizes: ['11-50'] } }, { limit: 10 }),
  );
  t.is(sizes.code, 'invalid_request');
  t.regex(sizes.message, /sales_navigator/);
  t.is((await failure(source.search({ kind: 'people_search' }, { limit: 500 }))).code, 'invalid_request');
  t.is(
    (await failure(source.search({ kind: 'people_search', filters: { since: 'yesterday' } }, { limit: 10 }))).code,
    'invalid_request',
  );
  t.is(standIn.requests.length, 0);
  t.throws(() => new UnipilePronetSource({ baseUrl: standIn.url, apiKey: 'k', accountId: ' ' }), {
    message: /UNIPILE_SEARCH_ACCOUNT_ID/,
  });
  // The DSN may be given with or without /api/v1.
  const withPath = new UnipilePronetSource({
    baseUrl: `${standIn.url}/api/v1/`,
    apiKey: standIn.apiKey,
    accountId: ACCOUNT,
  });
  t.teardown(() => withPath.close());
  t.is((await withPath.search({ kind: 'people_search' }, { limit: 3 })).candidates.length, 3);
});
