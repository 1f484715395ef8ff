// Enrichment over Hunter's API v2 (lib/enrichment/hunter.ts) against the stand-in that speaks its
// documented format (test/helpers/hunter/stand-in.ts): which endpoint each query asks and with which
// parameters, the mapping of the answers (the docs' own examples), no match, every refusal mapped to
// our codes, the per-key pace; and the configuration that selects it.
import test from 'ava';
import fc from 'fast-check';
import { enrichmentSettings, HUNTER_DEFAULT_BASE_URL, refuseRemovedVariables } from '../../lib/config.js';
import { EnrichmentError, HunterEnrichment, type EnrichmentQuery } from '../../lib/enrichment/index.js';
import { HUNTER_PACE, hunterLookup, linkedInHandle } from '../../lib/enrichment/hunter.js';
import { ProviderPace } from '../../lib/provider-pace.js';
import { startHunterStandIn, type HunterStandIn, type StandInOptions } from '../helpers/hunter/stand-in.js';

const EMPTY: EnrichmentQuery = {
  email: null,
  profileUrl: null,
  fullName: null,
  firstName: null,
  lastName: null,
  company: null,
  companyDomain: null,
};
const q = (fields: Partial<EnrichmentQuery>): EnrichmentQuery => ({ ...EMPTY, ...fields });
const ALEXIS_QUERY = q({
  firstName: 'Alexis',
  lastName: 'Ohanian',
  company: 'Reddit',
  companyDomain: 'https://www.reddit.com/',
});

async function setup(t: { teardown(fn: () => unknown): void }, opts: StandInOptions = {}) {
  const standIn = await startHunterStandIn(opts);
  t.teardown(() => standIn.close());
  const hunter = new HunterEnrichment({ baseUrl: standIn.baseUrl, apiKey: standIn.apiKey, timeoutMs: 5_000 });
  t.teardown(() => hunter.close());
  return { standIn, hunter };
}

async function failure(p: Promise<unknown>): Promise<EnrichmentError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof EnrichmentError) return err;
    throw err;
  }
  throw new Error('expected an EnrichmentError');
}

const paramsOf = (s: HunterStandIn, i = -1) => [...s.requests.at(i)!.query.entries()];

// ---------------------------------------------------------------------------------------------
// Mapping

test("email finder: the docs' example request and answer, mapped to our person; the search counted", async (t) => {
  const { standIn, hunter } = await setup(t);
  t.deepEqual(await hunter.enrich(ALEXIS_QUERY), {
    confidence: 97,
    person: {
      email: 'alexis@reddit.com',
      firstName: 'Alexis',
      lastName: 'Ohanian',
      fullName: 'Alexis Ohanian',
      title: 'Cofounder',
      company: 'Reddit',
      companyDomain: 'reddit.com',
    },
  });
  // GET /v2/email-finder?domain=reddit.com&first_name=Alexis&last_name=Ohanian, the key in X-API-KEY (never in the URL).
  t.is(standIn.requests.length, 1);
  const r = standIn.requests[0];
  t.is(r.method, 'GET');
  t.is(r.path, '/email-finder');
  t.deepEqual(paramsOf(standIn), [
    ['domain', 'reddit.com'],
    ['first_name', 'Alexis'],
    ['last_name', 'Ohanian'],
  ]);
  t.is(r.keyVia, 'x-api-key');
  t.is(r.key, standIn.apiKey);
  t.is(r.headers.accept, 'application/json');
  t.like(standIn.usage, { searches: { used: 1, available: 25 }, credits: { used: 1 } });
});

test('email finder: by company name and full name, by LinkedIn handle; phone and profile mapped', async (t) => {
  const { standIn, hunter } = await setup(t);
  standIn.addDomain({ domain: 'analytical.example', organization: 'Analytical Engines', pattern: '{first}.{last}' });
  standIn.addPerson({
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: 'ada.lovelace@analytical.example',
    domain: 'analytical.example',
    company: 'Analytical Engines',
    score: 88.6,
    position: 'Head of Engines',
    linkedin_url: 'https://www.linkedin.com/in/ada-lovelace',
    phone_number: '+44 20 7946 0958',
  });
  const ada = {
    confidence: 89,
    person: {
      email: 'ada.lovelace@analytical.example',
      phone: '+44 20 7946 0958',
      profileUrl: 'https://www.linkedin.com/in/ada-lovelace',
      firstName: 'Ada',
      lastName: 'Lovelace',
      fullName: 'Ada Lovelace',
      title: 'Head of Engines',
      company: 'Analytical Engines',
      companyDomain: 'analytical.example',
    },
  };
  t.deepEqual(await hunter.enrich(q({ fullName: 'Ada Lovelace', company: 'Analytical Engines' })), ada);
  t.deepEqual(paramsOf(standIn), [
    ['company', 'Analytical Engines'],
    ['full_name', 'Ada Lovelace'],
  ]);
  // Any spelling of the LinkedIn profile URL gives its handle; the name without a company is not enough for the finder.
  t.deepEqual(
    await hunter.enrich(q({ profileUrl: 'http://uk.linkedin.com/in/Ada-Lovelace/details/', fullName: 'Ada Lovelace' })),
    ada,
  );
  t.deepEqual(paramsOf(standIn), [['linkedin_handle', 'ada-lovelace']]);
  t.is(linkedInHandle('https://pronet.example/in/ada'), null);
  t.is(linkedInHandle('https://www.linkedin.com/company/analytical'), null);
});

test("domain search: a person known by email alone gets the domain's organization and their own entry", async (t) => {
  const { standIn, hunter } = await setup(t);
  t.deepEqual(await hunter.enrich(q({ email: ' Ciaran@Intercom.com ' })), {
    confidence: 100,
    person: {
      firstName: 'Ciaran',
      lastName: 'Lee',
      fullName: 'Ciaran Lee',
      title: 'Support Engineer',
      company: 'Intercom',
      companyDomain: 'intercom.com',
    },
  });
  t.is(standIn.requests.at(-1)!.path, '/domain-search');
  t.deepEqual(paramsOf(standIn), [
    ['domain', 'intercom.com'],
    ['limit', '10'],
  ]);
  // Someone the list does not name: the organization only.
  t.deepEqual(await hunter.enrich(q({ email: 'someone.else@intercom.com' })), {
    confidence: 100,
    person: { company: 'Intercom', companyDomain: 'intercom.com' },
  });
  // A webmail address names no employer; an unknown domain names nothing.
  t.is(await hunter.enrich(q({ email: 'ada.lovelace@gmail.com' })), null);
  t.is(await hunter.enrich(q({ email: 'ada@nobody-knows.example' })), null);
  // A handle given bare by the domain search becomes a LinkedIn URL.
  standIn.addPerson({
    first_name: 'Des',
    last_name: 'Traynor',
    email: 'des@intercom.com',
    domain: 'intercom.com',
    company: 'Intercom',
    linkedin_url: 'destraynor',
  });
  t.is(
    (await hunter.enrich(q({ email: 'des@intercom.com' })))?.person.profileUrl,
    'https://www.linkedin.com/in/destraynor',
  );
});

test('what each query asks', (t) => {
  const ask = (x: Partial<EnrichmentQuery>) => {
    const l = hunterLookup(q(x));
    return l && [l.kind, [...l.params.entries()]];
  };
  t.deepEqual(
    ask({ firstName: 'Ada', lastName: 'Lovelace', fullName: 'Ada King', companyDomain: 'ANALYTICAL.example' }),
    [
      'finder',
      [
        ['domain', 'analytical.example'],
        ['first_name', 'Ada'],
        ['last_name', 'Lovelace'],
      ],
    ],
  );
  t.deepEqual(ask({ firstName: 'Ada', fullName: 'Ada King', company: ' Analytical ', email: 'a@b.example' }), [
    'finder',
    [
      ['company', 'Analytical'],
      ['full_name', 'Ada King'],
    ],
  ]);
  t.deepEqual(ask({ email: 'ada@b.example', profileUrl: 'https://linkedin.com/in/ada' }), [
    'finder',
    [['linkedin_handle', 'ada']],
  ]);
  t.deepEqual(ask({ email: 'Ada@B.example', fullName: 'Ada King' }), [
    'domain',
    [
      ['domain', 'b.example'],
      ['limit', '10'],
    ],
  ]);
  t.is(ask({ profileUrl: 'https://pronet.example/in/ada' }), null);
});

// ---------------------------------------------------------------------------------------------
// No match

test('not found: no email, a claimed address (451), an invalid domain, nothing Hunter can be asked', async (t) => {
  const { standIn, hunter } = await setup(t);
  // data.email null: no match, and Hunter counts no search for it.
  t.is(await hunter.enrich(q({ firstName: 'Nobody', lastName: 'Here', companyDomain: 'reddit.com' })), null);
  t.is(standIn.requests.at(-1)!.status, 200);
  t.is(standIn.usage.searches.used, 0);
  // 451 claimed_email: the owner asked Hunter to stop; nothing of it is used.
  standIn.addPerson({
    first_name: 'Claire',
    last_name: 'Med',
    email: 'claire@reddit.com',
    domain: 'reddit.com',
    company: 'Reddit',
    claimed: true,
  });
  t.is(await hunter.enrich(q({ firstName: 'Claire', lastName: 'Med', companyDomain: 'reddit.com' })), null);
  t.is(standIn.requests.at(-1)!.status, 451);
  // 400 invalid_domain: no mail there.
  standIn.addDomain({ domain: 'nomail.example', organization: 'No Mail', pattern: null, invalid: true });
  t.is(await hunter.enrich(q({ firstName: 'Ada', lastName: 'L', companyDomain: 'nomail.example' })), null);
  t.is(standIn.requests.at(-1)!.status, 400);
  // Hunter knows no pronet profile; an invalid email verification is no find either.
  const before = standIn.requests.length;
  t.is(await hunter.enrich(q({ profileUrl: 'https://pronet.example/in/ada' })), null);
  t.is((await failure(hunter.enrich(q({ fullName: 'Ada Lovelace' })))).code, 'invalid_request');
  t.is(standIn.requests.length, before, 'neither was sent');
  standIn.fail({
    status: 200,
    body: { data: { email: 'x@reddit.com', score: 40, verification: { date: null, status: 'invalid' } }, meta: {} },
  });
  t.is(await hunter.enrich(ALEXIS_QUERY), null);
});

test('what Hunter sends is bounded: malformed identifiers dropped, text clipped, a mistyped field refused', async (t) => {
  const { standIn, hunter } = await setup(t);
  standIn.fail({
    status: 200,
    body: {
      data: {
        first_name: '  Ada ',
        last_name: '',
        email: ' Ada@Analytical.example ',
        score: 140,
        domain: 'localhost',
        position: 'x'.repeat(400),
        linkedin_url: 'ftp://linkedin.com/in/ada',
        phone_number: '1'.repeat(41),
        company: '   ',
        twitter: 42,
      },
      meta: { params: {} },
    },
  });
  t.deepEqual(await hunter.enrich(ALEXIS_QUERY), {
    confidence: 100,
    person: { email: 'Ada@Analytical.example', firstName: 'Ada', title: 'x'.repeat(300) },
  });
  standIn.fail({ status: 200, body: { data: { email: 'a@b.example', score: 'high' } } });
  const err = await failure(hunter.enrich(ALEXIS_QUERY));
  t.is(err.code, 'bad_response');
  t.regex(err.message, /data\.score/);
  standIn.fail({ status: 200, body: { errors: [] } });
  t.is((await failure(hunter.enrich(ALEXIS_QUERY))).code, 'bad_response');
});

// ---------------------------------------------------------------------------------------------
// Refusals

test("each of Hunter's refusals maps to our code", async (t) => {
  const { standIn, hunter } = await setup(t);
  const cases: [string, Parameters<HunterStandIn['fail']>[0], string, string, boolean, number | null][] = [
    [
      '401',
      { status: 401, id: 'authentication_failed', details: 'No user found for the API key supplied' },
      'auth',
      'authentication_failed',
      false,
      null,
    ],
    [
      '403 restricted',
      { status: 403, id: 'restricted_account', details: 'Your account has been restricted' },
      'auth',
      'restricted_account',
      false,
      null,
    ],
    [
      '429 usage limit',
      { status: 429, id: 'too_many_requests', details: 'You have reached your usage limit. Upgrade your plan.' },
      'quota_exhausted',
      'usage_limit',
      false,
      null,
    ],
    [
      '429 speaking of a rate',
      // Waited out twice within the call (below), so refused three times.
      { status: 429, id: 'too_many_requests', details: 'Too many requests per second, slow down', times: 3 },
      'rate_limited',
      'rate_limit',
      true,
      null,
    ],
    [
      '400',
      { status: 400, id: 'wrong_params', details: 'You are missing the domain parameter' },
      'invalid_request',
      'wrong_params',
      false,
      null,
    ],
    ['422', { status: 422, id: 'invalid_argument', details: '…' }, 'invalid_request', 'invalid_argument', false, null],
    ['404', { status: 404, id: 'not_found', details: 'Not found' }, 'bad_response', 'not_found', false, null],
    ['500', { status: 500 }, 'unavailable', 'http_500', true, null],
    ['503 Retry-After', { status: 503, headers: { 'retry-after': '30' } }, 'unavailable', 'http_503', true, 30],
  ];
  for (const [name, fault, code, reason, retryable, retryAfter] of cases) {
    standIn.fail(fault);
    const err = await failure(hunter.enrich(ALEXIS_QUERY));
    t.is(err.code as string, code, name);
    t.is(err.provider, 'hunter', name);
    t.is(err.details.reason, reason, name);
    t.is(err.details.status, fault.status, name);
    t.is(err.retryable, retryable, name);
    t.is(err.retryAfterSeconds, retryAfter, name);
    if (code === 'auth' && reason !== 'restricted_account') t.regex(err.message, /HUNTER_API_KEY/, name);
  }
  // A body that is not Hunter's: judged by its status alone.
  standIn.fail({ status: 401, body: '<html>nope</html>' });
  t.like(await failure(hunter.enrich(ALEXIS_QUERY)), { code: 'auth', details: { reason: 'authentication_failed' } });
});

test("quota exhausted: Hunter's 429 usage limit, with the account's usage and reset date; nothing retried", async (t) => {
  const { standIn, hunter } = await setup(t);
  standIn.exhaustQuota();
  const mark = standIn.requests.length;
  const err = await failure(hunter.enrich(ALEXIS_QUERY));
  t.is(err.code, 'quota_exhausted');
  t.false(err.retryable);
  t.regex(err.message, /usage limit/);
  t.regex(err.message, /Free plan: 25 of 25 searches used, reset on 2026-12-01/);
  t.deepEqual(
    standIn.requests.slice(mark).map((r) => [r.path, r.status]),
    [
      ['/email-finder', 429],
      ['/account', 200],
    ],
  );
});

test('a rate refusal (403) pauses the key: the call waits and asks again; past two, it fails rate_limited', async (t) => {
  const { standIn, hunter } = await setup(t);
  const limited = { status: 403, id: 'too_many_requests', details: 'You have reached the rate limit' };
  standIn.fail(limited);
  const mark = standIn.requests.length;
  t.is((await hunter.enrich(ALEXIS_QUERY))?.person.email, 'alexis@reddit.com');
  const [refused, asked] = standIn.requests.slice(mark);
  t.is(refused.status, 403);
  t.is(asked.status, 200);
  t.true(asked.at - refused.at >= 950, `asked again ${asked.at - refused.at} ms later (1 s pause)`);
  // Retry-After names the pause.
  standIn.fail({ ...limited, headers: { 'retry-after': '2' } });
  const mark2 = standIn.requests.length;
  await hunter.enrich(ALEXIS_QUERY);
  const [r1, r2] = standIn.requests.slice(mark2);
  t.true(r2.at - r1.at >= 1_950, `${r2.at - r1.at} ms`);
  // Three refusals in a row: the caller's retry takes over.
  standIn.fail({ ...limited, times: 3 });
  const err = await failure(hunter.enrich(ALEXIS_QUERY));
  t.is(err.code, 'rate_limited');
  t.true(err.retryable);
  t.is(standIn.requests.filter((r) => r.status === 403).length, 5);
});

// ---------------------------------------------------------------------------------------------
// Pace

test('HUNTER_PACE: generated call sequences never pass 15 in any second nor 500 in any minute (the seed is printed)', async (t) => {
  const seed = Number(process.env.PACE_SEED ?? Date.now() % 1_000_000);
  t.log(`seed ${seed} (PACE_SEED replays it)`);
  await fc.assert(
    fc.asyncProperty(fc.array(fc.nat(400), { minLength: 600, maxLength: 1200 }), async (gaps) => {
      let now = 0;
      const pace = new ProviderPace(
        HUNTER_PACE,
        () => now,
        async (ms) => void (now += ms),
      );
      const times: number[] = [];
      for (const gap of gaps) {
        now += gap % 7 === 0 ? gap : 0; // bursts, and pauses between them
        await pace.take('key');
        times.push(now);
      }
      for (let i = 0, j = 0, k = 0; i < times.length; i++) {
        while (times[i] - times[j] >= 1_000) j++;
        while (times[i] - times[k] >= 60_000) k++;
        if (i - j + 1 > 15 || i - k + 1 > 500) return false;
      }
      return true;
    }),
    { seed, numRuns: 25 },
  );
  // Flat out, it still gives 480 a minute.
  let now = 0;
  const pace = new ProviderPace(
    HUNTER_PACE,
    () => now,
    async (ms) => void (now += ms),
  );
  for (let i = 0; i < 486; i++) await pace.take('key');
  t.is(now, 60_000);
});

test('a burst of enrichments waits for the pace; the stand-in enforces 15/s, and none fails', async (t) => {
  const { standIn, hunter } = await setup(t, { plan: { name: 'Growth', level: 2, searches: 1000 } });
  const started = Date.now();
  const answers = await Promise.all(Array.from({ length: 30 }, () => hunter.enrich(ALEXIS_QUERY)));
  const took = Date.now() - started;
  t.true(answers.every((a) => a?.person.email === 'alexis@reddit.com'));
  // Sent at most 14 a second; on a loaded machine requests can still arrive bunched, and a 403 is
  // then waited out and asked again: every call answered, none failed.
  const statuses = standIn.requests.map((r) => r.status);
  t.log(`${statuses.filter((s) => s === 403).length} rate refusals waited out, ${took} ms`);
  t.is(statuses.filter((s) => s === 200).length, 30);
  t.true(
    statuses.every((s) => s === 200 || s === 403),
    statuses.join(' '),
  );
  t.true(took >= (30 - HUNTER_PACE.burst - 1) * HUNTER_PACE.everyMs, `${took} ms`);
  t.is(standIn.usage.searches.used, 30);
});

// ---------------------------------------------------------------------------------------------
// Configuration

test('ENRICHMENT_PROVIDER selects Hunter; its variables are checked at start-up', (t) => {
  t.deepEqual(enrichmentSettings({}), { provider: 'local', hunter: null, timeoutMs: 15_000 });
  t.deepEqual(
    enrichmentSettings({ ENRICHMENT_PROVIDER: 'Hunter', HUNTER_API_KEY: ' k ', ENRICHMENT_TIMEOUT_MS: '20000' }),
    {
      provider: 'hunter',
      hunter: { baseUrl: HUNTER_DEFAULT_BASE_URL, apiKey: 'k' },
      timeoutMs: 20_000,
    },
  );
  t.is(
    enrichmentSettings({ ENRICHMENT_PROVIDER: 'hunter', HUNTER_API_KEY: 'k', HUNTER_BASE_URL: 'http://127.0.0.1:9/v2' })
      .hunter?.baseUrl,
    'http://127.0.0.1:9/v2',
  );
  t.throws(() => enrichmentSettings({ ENRICHMENT_PROVIDER: 'hunter' }), { message: /needs HUNTER_API_KEY/ });
  t.throws(() => enrichmentSettings({ ENRICHMENT_PROVIDER: 'clearbit' }), { message: /one of local, hunter/ });
  t.throws(
    () => enrichmentSettings({ ENRICHMENT_PROVIDER: 'hunter', HUNTER_API_KEY: 'k', HUNTER_BASE_URL: 'ftp://x' }),
    {
      message: /HUNTER_BASE_URL must be an absolute http\(s\) URL/,
    },
  );
  t.throws(() => enrichmentSettings({ HUNTER_API_KEY: 'k' }), {
    message: /HUNTER_API_KEY is set but ENRICHMENT_PROVIDER/,
  });
  t.throws(() => enrichmentSettings({ ENRICHMENT_TIMEOUT_MS: 'soon' }), { message: /ENRICHMENT_TIMEOUT_MS/ });
  // The removed HTTP format's variables fail start-up, naming what replaces them.
  t.throws(() => refuseRemovedVariables({ ENRICHMENT_BASE_URL: 'https://enrich.example' }), {
    message: /ENRICHMENT_BASE_URL is no longer supported \(.*ENRICHMENT_PROVIDER=hunter with HUNTER_API_KEY/,
  });
  t.throws(() => refuseRemovedVariables({ ENRICHMENT_API_KEY: 'k' }), { message: /HUNTER_API_KEY/ });
  t.notThrows(() => refuseRemovedVariables({ ENRICHMENT_TIMEOUT_MS: '5000' }));
});
