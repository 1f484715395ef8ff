// The local enrichment provider (lib/enrichment/local.ts) and the choice of provider. Hunter's adapter
// has its own tests: test/lib/enrichment-hunter.test.ts.
import test from 'ava';
import {
  createEnrichment,
  EnrichmentError,
  HunterEnrichment,
  LocalEnrichment,
  type EnrichmentQuery,
} from '../../lib/enrichment/index.js';
import { CorpusPeople, DERIVED_EMAIL_PERCENT, PHONE_PERCENT } from '../../lib/enrichment/local.js';
import { getCorpus } from '../../lib/sources/local-corpus.js';

const corpusOpts = { seed: 42, people: 12_000, anchor: new Date('2025-06-01T00:00:00Z') };
const corpus = getCorpus(corpusOpts);
const local = new LocalEnrichment(corpusOpts);
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
// The choice

test('createEnrichment: local by default, Hunter with ENRICHMENT_PROVIDER=hunter', (t) => {
  t.true(createEnrichment({ provider: 'local', hunter: null, timeoutMs: 1000 }, corpusOpts) instanceof LocalEnrichment);
  const hunter = createEnrichment(
    { provider: 'hunter', hunter: { baseUrl: 'http://127.0.0.1:9/v2', apiKey: 'k' }, timeoutMs: 1000 },
    corpusOpts,
  );
  t.teardown(() => hunter.close?.());
  t.true(hunter instanceof HunterEnrichment);
  t.is(hunter.name, 'hunter');
});
