// Discovery and a company decision-maker import over Unipile's LinkedIn search (issue 44), end to
// end through the public API: the API in this process and a worker process of its own, both
// configured as a deployment would be (CONNECTOR_PROVIDER=unipile, UNIPILE_SEARCH_ACCOUNT_ID) and
// pointed at the stand-in (test/helpers/unipile), which answers the documented v1 search routes from
// a seeded people/company fixture.
//
//   signal preview (the API's own source) → launch → the run pages through LinkedIn's search, one
//   sub-search per seniority level, Unipile cursors across our pages → discovered leads = exactly
//   the fixture's matching people, once each → a second launch finds them all known
//
//   decision-maker import: companies by name, by domain (a twin with the same name), by domain alone,
//   an unknown one and a duplicate → resolved through the source, decision makers most senior first
//   up to max_per_company → approvals per company and per person → confirm → the people in the list
import test from 'ava';
import { randomUUID } from 'node:crypto';
import type { Services } from '../../api/services.js';
import { temporalJobs } from '../../jobs/temporal.js';
import { unipileSettings, type Config } from '../../lib/config.js';
import { createSources } from '../../lib/sources/index.js';
import { SENIORITY_RANK, type Seniority } from '../../lib/sources/types.js';
import { UnipilePronetSource } from '../../lib/sources/unipile-pronet.js';
import { spawnTsx, stopChild, waitFor } from '../../scripts/children.js';
import { api, call, closeApi, createTestApp, listen, type Res } from '../helpers/api.js';
import { createOwner, grant } from '../helpers/billing.js';
import { registerAccounts } from '../helpers/unipile/accounts.js';
import {
  generateSearchFixture,
  registerSearch,
  type FixtureCompany,
  type FixturePerson,
} from '../helpers/unipile/search.js';
import { startStandIn, type StandInRequest } from '../helpers/unipile/stand-in.js';
import { startOwnWorker } from '../helpers/own-worker.js';

const SECRET = 'whsec-unipile-discovery';
const CDM = '/api/company-decision-maker-imports';
// 2,000 people: the directors of the searched industry span two Unipile pages (Classic's limit is 50).
const fixture = generateSearchFixture({ seed: 44, people: 2000, companies: 40 });

/** Classic's title search for one level (lib/sources/unipile-pronet.ts LEVEL_WORDS, as LinkedIn's Boolean syntax). */
const LEVEL_TITLE: Partial<Record<Seniority, string>> = {
  founder: '"founder" OR "co founder" OR "cofounder" OR "owner"',
  cxo: '"chief" OR "ceo" OR "cto" OR "cfo" OR "coo" OR "cmo" OR "cro" OR "cio" OR "cpo" OR "ciso" OR "president"',
  vp: '"vp" OR "svp" OR "evp" OR "vice president"',
  director: '"director" OR "head"',
};

test.after.always(closeApi);

const byRank = (levels: readonly Seniority[]) => [...levels].sort((a, b) => SENIORITY_RANK[a] - SENIORITY_RANK[b]);
/** A fixture person's LinkedIn URL as a Classic search result gives it (the provider id when the slug is hidden). */
const linkedInUrl = (p: FixturePerson) => `https://www.linkedin.com/in/${p.publicIdentifier ?? p.providerId}`;
/** The people a company's search lists for `levels`: most senior first, then in the fixture's order. */
const employees = (company: FixtureCompany, levels: readonly Seniority[]) =>
  byRank(levels).flatMap((level) =>
    fixture.people
      .filter((p) => p.positions.some((x) => x.company === company && x.level === level))
      .map((p) => ({ person: p, position: p.positions.find((x) => x.company === company)! })),
  );
/** A request's JSON body with the (opaque) Unipile cursor replaced by a marker. */
const bodyOf = (r: StandInRequest) => {
  const b = r.json as Record<string, unknown>;
  return typeof b?.cursor === 'string' ? { cursor: '<cursor>' } : b;
};

test('discovery and a company decision-maker import over Unipile LinkedIn search, through the API, on a worker of its own', async (t) => {
  const started = Date.now();
  const { services } = await api();
  const standIn = await startStandIn();
  t.teardown(() => standIn.close());
  const unipile = registerAccounts(standIn);
  t.teardown(() => unipile.settled());
  registerSearch(standIn, fixture);
  // The LinkedIn account searches run as: connected at Unipile long ago.
  const searchAccount = unipile.addAccount({ name: 'search' });

  // The process configuration both sides read, from the variables a deployment sets (lib/config.ts).
  const taskQueue = `unipile-discovery-${randomUUID()}`;
  const unipileEnv = {
    CONNECTOR_PROVIDER: 'unipile',
    UNIPILE_BASE_URL: standIn.url,
    UNIPILE_API_KEY: standIn.apiKey,
    UNIPILE_WEBHOOK_SECRET: SECRET,
    UNIPILE_SEARCH_ACCOUNT_ID: searchAccount.id,
    UNIPILE_SEARCH_API: 'classic',
  };
  const settings = unipileSettings('http://placeholder.invalid', 5_000, unipileEnv);
  t.like(settings.search, { baseUrl: standIn.url, accountId: searchAccount.id, api: 'classic' });

  // The API: the test's services with that config and its sources, starting workflows on the worker's queue.
  const config: Config = {
    ...services.config,
    connector: { ...services.config.connector, provider: settings.provider, unipile: settings.unipile },
    sources: {
      ...services.config.sources,
      pronet: { ...services.config.sources.pronet, unipile: settings.search },
    },
  };
  const sources = createSources(config.sources);
  t.teardown(() => sources.close());
  t.true(sources.pronet instanceof UnipilePronetSource, 'pronet is LinkedIn search over Unipile');
  const svc: Services = { ...services, config, sources, jobs: temporalJobs(services.temporal, taskQueue) };
  const { base } = await listen(svc);
  config.connector.unipile!.publicBaseUrl = base;

  // The worker, started now: it bundles its workflows while the test prepares the agent.
  const worker = startOwnWorker(t, services.temporal, taskQueue, { ...unipileEnv, PUBLIC_BASE_URL: base });

  const u = await createOwner();
  await grant(u.id, 100);
  const as = (body?: unknown) => ({ base, token: u.accessToken, ...(body === undefined ? {} : { body }) });
  const app = await createTestApp(u, 'Unipile discovery');
  const searchRequests = (from: number) =>
    standIn.requests.slice(from).filter((r) => r.method === 'POST' && r.path === '/linkedin/search');
  const lookups = (from: number) =>
    standIn.requests
      .slice(from)
      .filter((r) => r.method === 'GET' && r.path.startsWith('/linkedin/'))
      .map((r) => `${r.path}${r.query.get('type') ? ` ${r.query.get('type')} ${r.query.get('keywords')}` : ''}`);
  const everyAsTheAccount = (rs: StandInRequest[]) =>
    rs.every((r) => r.query.get('account_id') === searchAccount.id && r.headers['x-api-key'] === standIn.apiKey);

  // ---------------------------------------------------------------------------------------------
  // 1. Discovery: VPs and directors in software, by a people_search signal on pronet.

  const SOFTWARE = fixture.industries.find((i) => i.title === 'Software Development')!;
  const levels: Seniority[] = ['director', 'vp'];
  const expected = byRank(levels).flatMap((level) =>
    fixture.people.filter((p) => p.positions[0]?.level === level && p.industry.id === SOFTWARE.id),
  );
  const expectedDirectors = expected.filter((p) => p.positions[0].level === 'director').length;
  t.true(expectedDirectors > 50 && expectedDirectors <= 100, `${expectedDirectors}: two Unipile pages of directors`);
  t.true(expected.length - expectedDirectors <= 50, 'one page of VPs');
  t.is(new Set(expected.map(linkedInUrl)).size, expected.length, 'the fixture’s people have distinct profiles');

  const agent = await call(
    'POST',
    `/api/apps/${app.id}/agents`,
    as({
      name: 'Software leaders on LinkedIn',
      // The ICP the run qualifies against: the same people the search asks for.
      icp_filters: { seniorities: levels, industries: [SOFTWARE.title] },
      require_current_employer: true,
    }),
  );
  t.is(agent.status, 201, agent.text);
  const agentId = agent.body.id as string;
  const signals = await call(
    'PUT',
    `/api/agents/${agentId}/signals`,
    as({
      signals: [
        {
          key: 'software-leaders',
          kind: 'people_search',
          name: 'VPs and directors in software',
          filters: { seniorities: levels, industries: [SOFTWARE.title] },
        },
      ],
    }),
  );
  t.is(signals.status, 200, signals.text);
  const signalId = signals.body[0].id as string;
  const source = await call('PUT', `/api/agents/${agentId}/sources/pronet`, as({ enabled: true }));
  t.is(source.status, 200, source.text);

  // The signal's preview runs in the API process, on its own Unipile source: the first VPs, qualified.
  let mark = standIn.requests.length;
  const preview = await call('POST', `/api/agents/${agentId}/preview`, as({ signal_id: signalId, limit: 10 }));
  t.is(preview.status, 200, preview.text);
  t.deepEqual(preview.body.signal.sources, ['pronet']);
  t.deepEqual(
    (preview.body.candidates as Record<string, unknown>[]).map((c) => [c.name, c.profile_url, c.known, c.verdict]),
    expected.slice(0, 10).map((p) => [`${p.firstName} ${p.lastName}`, linkedInUrl(p), false, 'qualified']),
  );
  t.deepEqual(lookups(mark), [`/linkedin/search/parameters INDUSTRY ${SOFTWARE.title}`]);
  t.deepEqual(
    searchRequests(mark).map((r) => [r.query.get('limit'), bodyOf(r)]),
    [
      [
        '10',
        { api: 'classic', category: 'people', industry: [SOFTWARE.id], advanced_keywords: { title: LEVEL_TITLE.vp } },
      ],
    ],
  );

  // The run, on the worker.
  mark = standIn.requests.length;
  const launched = await call('POST', `/api/agents/${agentId}/signals/${signalId}/launch`, as({}));
  t.is(launched.status, 202, launched.text);
  const runOf = async (id: string) =>
    ((await call('GET', '/api/me/recent-signal-runs?limit=20', as())).body.items as Record<string, any>[]).find(
      (r) => r.id === id,
    );
  // The first wait includes the worker's start (bundling its workflows on a busy machine).
  await waitFor('the discovery run to end', async () => (await runOf(launched.body.id))?.status !== 'running', 150_000);
  t.log(`first run done after ${Math.round((Date.now() - started) / 1000)} s`);
  t.like(await runOf(launched.body.id), {
    status: 'completed',
    error: null,
    signal_keys: ['software-leaders'],
    candidates: expected.length,
    qualified: expected.length,
    rejected: 0,
    duplicates: 0,
    // One of VPs, two of directors (our cursor carries Unipile's across the second).
    pages: 3,
  });

  // Exactly the fixture's matching people, once each, as LinkedIn gave them.
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
  const view = (l: Record<string, any>) =>
    [l.external_id, l.full_name, l.first_name, l.last_name, l.profile_url, l.title, l.company, l.country].join(' | ');
  const want = (p: FixturePerson) =>
    [
      p.providerId,
      `${p.firstName} ${p.lastName}`,
      p.firstName,
      p.lastName,
      linkedInUrl(p),
      p.positions[0].role,
      p.positions[0].company.name,
      p.country,
    ].join(' | ');
  t.deepEqual(leads.map(view).sort(), expected.map(want).sort());
  t.true(
    leads.every(
      (l) =>
        l.source === 'pronet' &&
        l.signal_key === 'software-leaders' &&
        l.run_id === launched.body.id &&
        l.status === 'new' &&
        l.score === 100 &&
        l.evidence.kind === 'people_search' &&
        l.evidence.url === l.profile_url,
    ),
  );
  const funnel = await call('GET', `/api/agents/${agentId}/discovery-funnel`, as());
  t.like(funnel.body, {
    cohort: { candidates: expected.length, qualified: expected.length, rejected: 0, pending: 0, duplicates: 0 },
    by_signal: [{ signal_key: 'software-leaders', qualified: expected.length, rejected: 0 }],
  });

  // What the worker asked Unipile: the industry's id once, then one documented search per level, the
  // directors' second page by Unipile's cursor; every call as the search account with the API key.
  t.deepEqual(lookups(mark), [`/linkedin/search/parameters INDUSTRY ${SOFTWARE.title}`]);
  const runSearches = searchRequests(mark);
  t.deepEqual(
    runSearches.map((r) => [r.query.get('limit'), bodyOf(r)]),
    [
      [
        '50',
        { api: 'classic', category: 'people', industry: [SOFTWARE.id], advanced_keywords: { title: LEVEL_TITLE.vp } },
      ],
      [
        '50',
        {
          api: 'classic',
          category: 'people',
          industry: [SOFTWARE.id],
          advanced_keywords: { title: LEVEL_TITLE.director },
        },
      ],
      ['50', { cursor: '<cursor>' }],
    ],
  );
  t.true(everyAsTheAccount(standIn.requests.slice(mark).filter((r) => r.path.startsWith('/linkedin/'))));
  t.true(runSearches.every((r) => String(r.headers['content-type']).startsWith('application/json')));

  // A second launch meets the same people: all known, nothing stored twice.
  mark = standIn.requests.length;
  const again = await call('POST', `/api/agents/${agentId}/signals/${signalId}/launch`, as({}));
  t.is(again.status, 202, again.text);
  await waitFor('the second run to end', async () => (await runOf(again.body.id))?.status !== 'running', 60_000);
  t.like(await runOf(again.body.id), {
    status: 'completed',
    candidates: expected.length,
    qualified: 0,
    rejected: 0,
    duplicates: expected.length,
    pages: 3,
  });
  t.is(searchRequests(mark).length, 3);
  t.deepEqual(lookups(mark), [], 'the industry id is remembered');
  const counts = await call('GET', `/api/discovered-leads/counts?agent_id=${agentId}`, as());
  t.is(counts.status, 200, counts.text);
  t.like(counts.body, { total: expected.length, by_status: { new: expected.length } }, counts.text);

  // ---------------------------------------------------------------------------------------------
  // 2. A company decision-maker import: founders, CxOs, VPs and directors, six per company at most.

  const [first, twin, contoso, , , globex] = fixture.companies;
  t.is(first.name, twin.name, 'the fixture’s first two companies share a name');
  const ROLES: Seniority[] = ['founder', 'cxo', 'vp', 'director'];
  const MAX = 6;
  const UNKNOWN = 'Nonexistent Widgets Incorporated';
  const list = await call('POST', `/api/apps/${app.id}/lists`, as({ name: 'Decision-makers' }));
  t.is(list.status, 201, list.text);
  const listId = list.body.id as string;
  mark = standIn.requests.length;
  const created = await call(
    'POST',
    `${CDM}/preview`,
    as({
      app_id: app.id,
      list_id: listId,
      companies: [
        { name: twin.name, domain: twin.domain }, // the domain tells the twin from the first
        { name: contoso.name },
        { domain: globex.domain }, // a domain alone: its label typed into the company typeahead
        { name: UNKNOWN },
        { domain: `www.${contoso.domain}` }, // the same company as the second, found again
      ],
      roles: { seniorities: ROLES },
      max_per_company: MAX,
      batch_size: 2,
    }),
  );
  t.is(created.status, 201, created.text);
  const jobId = created.body.job.id as string;
  t.like(created.body.job, { company_count: 5, batch_count: 3, max_per_company: MAX, state: 'searching' });
  t.like(created.body.batch, { batch: 0, batches_total: 3 });
  const progress = async () => {
    const r = await call('GET', `${CDM}/${jobId}/progress`, as());
    if (r.status !== 200) throw new Error(r.text);
    return r.body as Record<string, any>;
  };
  await waitFor('the import’s search', async () => (await progress()).state === 'ready_for_review', 60_000);
  const wanted = [twin, contoso, globex].map((co) => employees(co, ROLES).slice(0, MAX));
  t.true(
    wanted.every((w) => w.length === MAX),
    'each company has more decision makers than kept',
  );
  t.like(await progress(), {
    state: 'ready_for_review',
    percent: 100,
    companies: { total: 5, pending: 0, done: 3, failed: 1, duplicate: 1 },
    members: { found: 3 * MAX, pending: 3 * MAX },
    batches: { total: 3, searched: 3 },
  });

  const outcomes = await call('GET', `${CDM}/${jobId}/company-outcomes?limit=50`, as());
  t.is(outcomes.status, 200, outcomes.text);
  const companies = outcomes.body.items as Record<string, any>[];
  const resolvedAs = (co: FixtureCompany) => ({ name: co.name, domain: co.domain, industry: co.industry.title });
  t.like(companies[0], { status: 'done', resolved: resolvedAs(twin), members_found: MAX });
  t.like(companies[1], { status: 'done', resolved: resolvedAs(contoso), members_found: MAX });
  t.like(companies[2], { status: 'done', resolved: resolvedAs(globex), members_found: MAX });
  t.like(companies[3], { status: 'failed', reason: 'company_not_found', resolved: null, members_found: 0 });
  t.like(companies[4], { status: 'duplicate', duplicate_of: companies[1].id, members_found: 0 });

  // Each company's people: its decision makers, most senior first, as LinkedIn lists them.
  const rowsOf = async (companyId: string) => {
    const r = await call('GET', `${CDM}/${jobId}/rows?limit=200&company_id=${companyId}`, as());
    t.is(r.status, 200, r.text);
    return r.body.items as Record<string, any>[];
  };
  const members: Record<string, any>[][] = [];
  for (const [i, co] of [twin, contoso, globex].entries()) {
    const rows = await rowsOf(companies[i].id);
    members.push(rows);
    t.deepEqual(
      rows.map((m) => [m.source_id, m.full_name, m.title, m.seniority, m.profile_url, m.company, m.country]),
      wanted[i].map(({ person, position }) => [
        person.providerId,
        `${person.firstName} ${person.lastName}`,
        position.role,
        position.level,
        linkedInUrl(person),
        { name: co.name, domain: co.domain },
        person.country,
      ]),
      co.name,
    );
  }

  // Resolution through the source: typeahead by name (and by the domain's label), the candidates'
  // pages to check the website; the unknown name tried as a public identifier too. Then one search
  // per level at each company by its LinkedIn id.
  const resolution = lookups(mark);
  for (const expectedLookup of [
    `/linkedin/search/parameters COMPANY ${twin.name}`,
    `/linkedin/search/parameters COMPANY ${twin.publicIdentifier}`,
    `/linkedin/company/${first.id}`,
    `/linkedin/company/${twin.id}`,
    `/linkedin/search/parameters COMPANY ${contoso.name}`,
    `/linkedin/company/${contoso.id}`,
    `/linkedin/search/parameters COMPANY ${globex.publicIdentifier}`,
    `/linkedin/company/${globex.id}`,
    `/linkedin/search/parameters COMPANY ${UNKNOWN}`,
    `/linkedin/company/nonexistent-widgets-incorporated`,
  ])
    t.true(resolution.includes(expectedLookup), expectedLookup);
  const cdmSearches = searchRequests(mark);
  for (const co of [twin, contoso, globex])
    t.truthy(
      cdmSearches.find(
        (r) =>
          JSON.stringify(r.json) ===
          JSON.stringify({
            api: 'classic',
            category: 'people',
            company: [co.id],
            advanced_keywords: { title: LEVEL_TITLE.founder },
          }),
      ),
      `${co.name}: founders first`,
    );
  t.true(
    cdmSearches.every((r) => {
      const b = r.json as Record<string, any>;
      return (
        typeof b.cursor === 'string' ||
        (b.api === 'classic' &&
          b.category === 'people' &&
          [twin.id, contoso.id, globex.id].includes(b.company?.[0]) &&
          Object.values(LEVEL_TITLE).includes(b.advanced_keywords?.title))
      );
    }),
  );
  t.true(everyAsTheAccount(standIn.requests.slice(mark).filter((r) => r.path.startsWith('/linkedin/'))));

  // Review: the twin's people approved as a company; two of Contoso's approved, one rejected, the rest left.
  const approveTwin = await call(
    'POST',
    `${CDM}/${jobId}/approval`,
    as({ decision: 'approve', company_ids: [companies[0].id] }),
  );
  t.is(approveTwin.status, 200, approveTwin.text);
  t.like(approveTwin.body.results[0], { kind: 'company', result: 'approved', members_changed: MAX });
  const contosoPeople = members[1];
  const picked = await call(
    'POST',
    `${CDM}/${jobId}/approval`,
    as({ decision: 'approve', member_ids: [contosoPeople[0].id, contosoPeople[1].id] }),
  );
  t.is(picked.status, 200, picked.text);
  const dropped = await call(
    'POST',
    `${CDM}/${jobId}/approval`,
    as({ decision: 'reject', member_ids: [contosoPeople[2].id] }),
  );
  t.like(dropped.body.results[0], { result: 'rejected' });
  const approved = [...members[0], contosoPeople[0], contosoPeople[1]];

  const confirm = await call('POST', `${CDM}/${jobId}/confirm`, as());
  t.is(confirm.status, 202, confirm.text);
  await waitFor('the import’s confirm', async () => (await progress()).state === 'completed', 60_000);
  t.like(await progress(), {
    state: 'completed',
    members: { added: approved.length, rejected: 1, approved: 0, pending: 3 * MAX - approved.length - 1 },
    credits_charged: approved.length,
  });
  const results = await call('GET', `${CDM}/${jobId}/results?limit=200`, as());
  t.is(results.status, 200, results.text);
  t.like(results.body, {
    state: 'completed',
    list_id: listId,
    summary: {
      added: approved.length,
      leads_created: approved.length,
      already_in_list: 0,
      contacts_created: approved.length,
      contacts_reused: 0,
      credits_charged: approved.length,
    },
  });
  t.deepEqual((results.body.items as Record<string, any>[]).map((i) => i.id).sort(), approved.map((m) => m.id).sort());

  // The list holds exactly those people, with what LinkedIn said of them.
  const listLeads = await call('GET', `/api/lists/${listId}/leads?limit=200`, as());
  t.is(listLeads.status, 200, listLeads.text);
  t.deepEqual(
    (listLeads.body.items as Record<string, any>[])
      .map((l) => [l.name, l.profile_url, l.title, l.company, l.source].join(' | '))
      .sort(),
    approved.map((m) => [m.full_name, m.profile_url, m.title, m.company.name, 'import'].join(' | ')).sort(),
  );
  t.log(`done after ${Math.round((Date.now() - started) / 1000)} s`);
});
