import test from 'ava';
import type { ServerResponse } from 'node:http';
import {
  createEnrichment,
  EnrichmentError,
  HttpEnrichment,
  LocalEnrichment,
  type EnrichmentQuery,
} from '../../lib/enrichment/index.js';
import { CorpusPeople, DERIVED_EMAIL_PERCENT, PHONE_PERCENT } from '../../lib/enrichment/local.js';
import { getCorpus } from '../../lib/sources/local-corpus.js';
import { sendJson, startServer, type WireServer } from '../helpers/source-servers.js';

const corpusOpts = { seed: 42, people: 12_000, anchor: new Date('2025-06-01T00:00:00Z') };
const corpus = getCorpus(corpusOpts);
const local = new LocalEnrichment(corpusOpts);
const KEY = 'k-enrich-1';
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

const index = (pred: (p: (typeof corpus.people)[number], i: number) => boolean) => corpus.people.findIndex(pred);
const accented = index((p) => p.current && p.fullName === 'Thomas Müller');
const withEmail = index((p) => p.email !== null);
const former = index((p) => !p.current);

async function serve(
  t: { teardown(fn: () => Promise<void>): void },
  handler: Parameters<typeof startServer>[0],
): Promise<WireServer> {
  const server = await startServer(handler);
  t.teardown(server.close);
  return server;
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

// ---------------------------------------------------------------------------------------------
// Local

test('local: matches by pronet URL in any spelling, and by newsforum URL, with confidence 100', async (t) => {
  const p = corpus.people[accented];
  const co = corpus.companies[p.company];
  const messy = `http://www.pronet.example/de/in/${p.profileUrl.split('/in/')[1].toUpperCase()}/details/`;
  const byUrl = await local.enrich(q({ profileUrl: messy }));
  t.is(byUrl?.confidence, 100);
  t.like(byUrl?.person, {
    profileUrl: p.profileUrl,
    firstName: p.firstName,
    lastName: p.lastName,
    fullName: p.fullName,
    title: p.title,
    headline: p.headline,
    company: co.name,
    companyDomain: co.domain,
    country: p.country,
  });
  t.deepEqual(await local.enrich(q({ profileUrl: p.forumUrl })), byUrl);
  // A URL that names nobody falls through to the next key.
  t.is(await local.enrich(q({ profileUrl: 'https://pronet.example/in/nobody-here' })), null);
  const fallback = await local.enrich(
    q({ profileUrl: 'https://pronet.example/in/nobody-here', fullName: p.fullName, company: co.name }),
  );
  t.is(fallback?.person.profileUrl, p.profileUrl);
  t.is(fallback?.confidence, 80);
});

test('local: matches by corpus email and by derived email', async (t) => {
  const p = corpus.people[withEmail];
  const m = await local.enrich(q({ email: `  ${p.email!.toUpperCase()} ` }));
  t.is(m?.confidence, 100);
  t.is(m?.person.email, p.email!);
  t.is(m?.person.profileUrl, p.profileUrl);
  // Enrichment finds emails discovery did not, and finds the person again by them.
  const people = new CorpusPeople(corpusOpts);
  const i = index((x, j) => x.email === null && people.email(j) !== null);
  const derived = (await local.enrich(q({ profileUrl: corpus.people[i].profileUrl })))?.person.email;
  t.regex(
    derived ?? '',
    new RegExp(`^[a-z0-9]+\\.[a-z0-9]+@${corpus.companies[corpus.people[i].company].domain.replace(/\./g, '\\.')}$`),
  );
  t.is((await local.enrich(q({ email: derived! })))?.person.profileUrl, corpus.people[i].profileUrl);
  t.is(await local.enrich(q({ email: 'nobody@nowhere.example' })), null);
});

test('local: matches by full name (case and accents ignored) with company name or domain, confidence 80', async (t) => {
  const p = corpus.people[accented];
  const co = corpus.companies[p.company];
  const byName = await local.enrich(q({ fullName: 'THOMAS MULLER', company: `${co.name.toLowerCase()} Inc.` }));
  t.is(byName?.confidence, 80);
  t.is(byName?.person.profileUrl, p.profileUrl);
  const byParts = await local.enrich(
    q({ firstName: 'thomas', lastName: 'müller', companyDomain: `https://www.${co.domain}/about` }),
  );
  t.deepEqual(byParts, byName);
  // Another company, or a name without a company, is no match.
  const other = corpus.companies.find((c) => c.name !== co.name)!;
  t.is(await local.enrich(q({ fullName: p.fullName, company: other.name, companyDomain: other.domain })), null);
  t.is(await local.enrich(q({ fullName: 'Nobody Atall', company: co.name })), null);
  // Namesakes at one company: the first, with less confidence.
  const seen = new Map<string, number>();
  const twin = corpus.people.findIndex((x, i) => {
    const key = `${x.fullName}|${x.company}`;
    if (seen.has(key)) return true;
    seen.set(key, i);
    return false;
  });
  const twinP = corpus.people[twin];
  const ambiguous = await local.enrich(q({ fullName: twinP.fullName, company: corpus.companies[twinP.company].name }));
  t.is(ambiguous?.confidence, 60);
  t.is(ambiguous?.person.profileUrl, corpus.people[seen.get(`${twinP.fullName}|${twinP.company}`)!].profileUrl);
});

test('local: a former employer is not reported as the company; unqueryable queries are refused', async (t) => {
  const m = await local.enrich(q({ profileUrl: corpus.people[former].profileUrl }));
  t.truthy(m);
  t.false('company' in m!.person);
  t.false('companyDomain' in m!.person);
  const err = await failure(local.enrich(q({ fullName: 'Ada Lovelace' })));
  t.is(err.code, 'invalid_request');
  t.false(err.retryable);
});

// Serial: it counts the reads of the shared corpus' people, which a concurrent test would add to.
test.serial(
  'local: deterministic across instances, with derived emails and phones for the documented shares',
  async (t) => {
    const other = new LocalEnrichment({ seed: 42, people: 12_000, anchor: new Date('2025-06-01T00:00:00Z') });
    let withoutEmail = 0;
    let derived = 0;
    let phones = 0;
    // Lookups are indexed, not scans: counted as reads of people entries (the indexes built first), a
    // bounded few per lookup, where a scan would read thousands. (The corpus is the one `local` uses.)
    await local.enrich(q({ email: corpus.people[withEmail].email }));
    await local.enrich(q({ profileUrl: corpus.people[withEmail].profileUrl }));
    const allPeople = corpus.people;
    let reads = 0;
    corpus.people = new Proxy(allPeople, {
      get(target, prop, receiver) {
        if (typeof prop === 'string' && /^\d+$/.test(prop)) reads++;
        return Reflect.get(target, prop, receiver);
      },
    });
    t.teardown(() => {
      corpus.people = allPeople;
    });
    for (let i = 0; i < corpus.people.length; i++) {
      const p = corpus.people[i];
      const a = await local.enrich(q({ profileUrl: p.profileUrl }));
      if (i % 50 === 0) t.deepEqual(await other.enrich(q({ profileUrl: p.profileUrl })), a);
      if (!p.email && p.current) {
        withoutEmail++;
        if (a?.person.email) derived++;
      }
      if (a?.person.phone) {
        phones++;
        t.regex(a.person.phone, /^\+[1-9]\d{8,13}$/);
      }
    }
    corpus.people = allPeople;
    t.log(`${reads} reads of people`);
    t.true(
      reads <= 10 * allPeople.length,
      `lookups are indexed, not scans: ${reads} reads of people for ${allPeople.length + Math.ceil(allPeople.length / 50)} lookups`,
    );
    t.true(Math.abs((derived / withoutEmail) * 100 - DERIVED_EMAIL_PERCENT) < 3, `${derived} / ${withoutEmail}`);
    t.true(Math.abs((phones / corpus.people.length) * 100 - PHONE_PERCENT) < 3, String(phones));
    // Every email (real or derived) belongs to one person only.
    const people = new CorpusPeople(corpusOpts);
    const derivedEmails = corpus.people
      .map((_, i) => (corpus.people[i].email ? null : people.email(i)))
      .filter(Boolean);
    t.is(new Set(derivedEmails).size, derivedEmails.length);
    const corpusEmails = new Set(corpus.people.map((p) => p.email));
    t.false(derivedEmails.some((e) => corpusEmails.has(e)));
  },
);

// ---------------------------------------------------------------------------------------------
// HTTP

/** The enrichment wire format (docs/providers.md) answered by the local provider. */
function wireHandler(apiKey: string): Parameters<typeof startServer>[0] {
  return async (req, res) => {
    if (req.headers.authorization !== `Bearer ${apiKey}`) return sendJson(res, 401, { error: 'unauthorized' });
    if (req.method !== 'POST' || req.url.pathname !== '/api/v1/people/match')
      return sendJson(res, 404, { error: 'not_found' });
    const b = req.body as Record<string, string | null>;
    const m = await local.enrich({
      email: b.email,
      profileUrl: b.profile_url,
      fullName: b.full_name,
      firstName: b.first_name,
      lastName: b.last_name,
      company: b.company,
      companyDomain: b.company_domain,
    });
    const p = m?.person;
    sendJson(res, 200, {
      match: p
        ? {
            confidence: m.confidence,
            person: {
              email: p.email ?? null,
              phone: p.phone ?? null,
              profile_url: p.profileUrl ?? null,
              first_name: p.firstName ?? null,
              last_name: p.lastName ?? null,
              full_name: p.fullName ?? null,
              title: p.title ?? null,
              headline: p.headline ?? null,
              company: p.company ?? null,
              company_domain: p.companyDomain ?? null,
              country: p.country ?? null,
            },
          }
        : null,
    });
  };
}

test('http: POSTs the query with the key and maps the match like the local provider', async (t) => {
  const server = await serve(t, wireHandler(KEY));
  const http = new HttpEnrichment({ baseUrl: `${server.url}/api`, apiKey: KEY });
  t.teardown(() => http.close());
  const p = corpus.people[accented];
  const co = corpus.companies[p.company];
  const query = q({ fullName: p.fullName, company: co.name, email: 'unknown@nowhere.example' });
  t.deepEqual(await http.enrich(query), await local.enrich(query));
  for (const i of [withEmail, former, 0, 1, 2, 3]) {
    const byUrl = q({ profileUrl: corpus.people[i].profileUrl });
    t.deepEqual(await http.enrich(byUrl), await local.enrich(byUrl));
  }
  t.is(await http.enrich(q({ fullName: 'Nobody Atall', company: 'Acme' })), null);
  const r = server.requests[0];
  t.is(r.method, 'POST');
  t.is(r.headers.authorization, `Bearer ${KEY}`);
  t.is(r.headers['content-type'], 'application/json');
  t.deepEqual(r.body, {
    email: 'unknown@nowhere.example',
    profile_url: null,
    full_name: p.fullName,
    first_name: null,
    last_name: null,
    company: co.name,
    company_domain: null,
  });
  // Not enough to ask: refused before sending.
  const before = server.requests.length;
  t.is((await failure(http.enrich(q({ firstName: 'Ada' })))).code, 'invalid_request');
  t.is(server.requests.length, before);
});

test('http: every field is trimmed, clipped or dropped; blanks are unknown; absent names are derived', async (t) => {
  let answer: (res: ServerResponse) => void = () => {};
  const server = await serve(t, (_req, res) => answer(res));
  const http = new HttpEnrichment({ baseUrl: server.url, apiKey: KEY });
  t.teardown(() => http.close());
  const ask = q({ email: 'ada@example.com' });
  const person = {
    email: ' Ada@Example.com ',
    phone: ' +44 20 7946 0958 ',
    profile_url: 'https://www.pronet.example/in/ada/',
    first_name: null,
    last_name: '',
    full_name: '  Ada King Lovelace ',
    title: 'x'.repeat(400),
    headline: `${'h'.repeat(299)}😀tail`,
    company: '   ',
    company_domain: 'Analytical.example',
    country: 'GB',
  };
  answer = (res) => sendJson(res, 200, { match: { confidence: 93.6, person } });
  t.deepEqual(await http.enrich(ask), {
    confidence: 94,
    person: {
      email: 'Ada@Example.com',
      phone: '+44 20 7946 0958',
      profileUrl: 'https://www.pronet.example/in/ada/',
      firstName: 'Ada',
      lastName: 'King Lovelace',
      fullName: 'Ada King Lovelace',
      title: 'x'.repeat(300),
      headline: 'h'.repeat(299), // the emoji would have been cut in half
      companyDomain: 'Analytical.example',
      country: 'GB',
    },
  });
  // Malformed or over-long identifiers are dropped, not cut; a full name is built from its parts.
  const bad = {
    email: 'not an email',
    phone: '1'.repeat(41),
    profile_url: 'ftp://pronet.example/in/ada',
    first_name: 'Ada',
    last_name: 'Lovelace',
    company: 'Analytical Engines',
    company_domain: 'localhost',
    confidence_hint: 'ignored',
  };
  answer = (res) => sendJson(res, 200, { match: { confidence: 140, person: bad } });
  t.deepEqual(await http.enrich(ask), {
    confidence: 100,
    person: { firstName: 'Ada', lastName: 'Lovelace', fullName: 'Ada Lovelace', company: 'Analytical Engines' },
  });
  answer = (res) =>
    sendJson(res, 200, { match: { confidence: -3, person: { email: `${'a'.repeat(64)}@${'b'.repeat(260)}.com` } } });
  t.is(await http.enrich(ask), null, 'a match that tells nothing is no match');
  answer = (res) => sendJson(res, 200, { match: null });
  t.is(await http.enrich(ask), null);
  answer = (res) => sendJson(res, 404, { error: 'no match' });
  t.is(await http.enrich(ask), null);
});

test('http: statuses and broken answers map to EnrichmentError codes', async (t) => {
  let answer: (res: ServerResponse) => void = () => {};
  const server = await serve(t, (_req, res) => answer(res));
  const http = new HttpEnrichment({ baseUrl: server.url, apiKey: KEY });
  t.teardown(() => http.close());
  const ask = q({ email: 'ada@example.com' });
  const cases: [string, (res: ServerResponse) => void, string, number | null][] = [
    ['401', (res) => sendJson(res, 401, {}), 'auth', null],
    ['403', (res) => sendJson(res, 403, {}), 'auth', null],
    ['429', (res) => sendJson(res, 429, {}, { 'retry-after': '12' }), 'rate_limited', 12],
    ['429 bare', (res) => sendJson(res, 429, {}), 'rate_limited', null],
    ['500', (res) => sendJson(res, 500, {}), 'unavailable', null],
    ['503 retry-after', (res) => sendJson(res, 503, {}, { 'retry-after': '30' }), 'unavailable', 30],
    ['408', (res) => sendJson(res, 408, {}), 'timeout', null],
    ['400', (res) => sendJson(res, 400, {}), 'invalid_request', null],
    ['422', (res) => sendJson(res, 422, {}), 'invalid_request', null],
    ['302', (res) => void res.writeHead(302, { location: 'http://127.0.0.1:9/' }).end(), 'bad_response', null],
    [
      'bad JSON',
      (res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"match": {'),
      'bad_response',
      null,
    ],
    ['no match key', (res) => sendJson(res, 200, { person: {} }), 'bad_response', null],
    [
      'confidence not a number',
      (res) => sendJson(res, 200, { match: { confidence: 'high', person: {} } }),
      'bad_response',
      null,
    ],
    [
      'field mistyped',
      (res) => sendJson(res, 200, { match: { confidence: 90, person: { email: 42 } } }),
      'bad_response',
      null,
    ],
  ];
  for (const [name, respond, code, retryAfter] of cases) {
    answer = respond;
    const err = await failure(http.enrich(ask));
    t.is(err.code as string, code, name);
    t.is(err.provider, 'http', name);
    t.is(err.retryAfterSeconds, retryAfter, name);
    t.is(err.retryable, ['rate_limited', 'unavailable', 'timeout'].includes(code), name);
  }
  answer = (res) => sendJson(res, 429, {}, { 'retry-after': new Date(Date.now() + 60_000).toUTCString() });
  const dated = await failure(http.enrich(ask));
  t.true(dated.retryAfterSeconds! > 40 && dated.retryAfterSeconds! <= 61, String(dated.retryAfterSeconds));
});

test('http: oversized answers are refused', async (t) => {
  const server = await serve(t, (_req, res) => sendJson(res, 200, { match: null, pad: 'x'.repeat(10_000) }));
  const http = new HttpEnrichment({ baseUrl: server.url, apiKey: KEY, maxResponseBytes: 4096 });
  t.teardown(() => http.close());
  const err = await failure(http.enrich(q({ email: 'ada@example.com' })));
  t.is(err.code, 'bad_response');
  t.regex(err.message, /larger than 4096 bytes/);
});

test('createEnrichment: local by default, HTTP when a base URL is set (which then needs a key)', (t) => {
  t.true(createEnrichment({ baseUrl: null, apiKey: null, timeoutMs: 1000 }, corpusOpts) instanceof LocalEnrichment);
  const http = createEnrichment({ baseUrl: 'http://127.0.0.1:9/x', apiKey: 'k', timeoutMs: 1000 }, corpusOpts);
  t.true(http instanceof HttpEnrichment);
  t.teardown(() => http.close?.());
  t.throws(() => createEnrichment({ baseUrl: 'ftp://x', apiKey: 'k', timeoutMs: 1 }, corpusOpts), {
    message: /ENRICHMENT_BASE_URL must be an absolute http\(s\) URL/,
  });
  t.throws(() => createEnrichment({ baseUrl: 'not a url', apiKey: 'k', timeoutMs: 1 }, corpusOpts), {
    message: /ENRICHMENT_BASE_URL/,
  });
  t.throws(() => createEnrichment({ baseUrl: 'https://enrich.example', apiKey: null, timeoutMs: 1 }, corpusOpts), {
    message: /ENRICHMENT_API_KEY is required/,
  });
});
