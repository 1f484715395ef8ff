// The local enrichment provider: answers from the same generated corpus as the local sources, so
// offline runs enrich the people they discovered. Beyond what the corpus says, it derives a work
// email for most current employees without one and a phone number for half the people, from a
// stable hash, so enrichment visibly adds what discovery did not find.
//
// `CorpusPeople` (the person matching) is shared with the sandbox connector: both stand for the
// same simulated world and must agree on who is who.
import { FORUM_HOST, getCorpus, NETWORK_HOST, type Corpus, type CorpusOptions } from '../sources/local-corpus.js';
import { normaliseDomain, normaliseEmail, normaliseProfileUrl } from '../normalise.js';
import {
  EnrichmentError,
  isQueryable,
  type EnrichedPerson,
  type EnrichmentMatch,
  type EnrichmentProvider,
  type EnrichmentQuery,
} from './types.js';

/** What identifies a person in a lookup (EnrichmentQuery and the connectors' ProfileQuery both are). */
export type PersonKeys = Pick<
  EnrichmentQuery,
  'email' | 'profileUrl' | 'fullName' | 'firstName' | 'lastName' | 'company' | 'companyDomain'
>;

export interface CorpusMatch {
  /** Index into corpus.people. */
  person: number;
  confidence: number;
}

/** Percent of current employees without a corpus email who get a derived one, and of people with a phone. */
export const DERIVED_EMAIL_PERCENT = 70;
export const PHONE_PERCENT = 50;

export const CONFIDENCE = { identifier: 100, nameAndCompany: 80, ambiguousName: 60 } as const;

// Calling code and national number length per corpus country.
const PHONE_PLANS: Record<string, [string, number]> = {
  US: ['1', 10],
  CA: ['1', 10],
  GB: ['44', 10],
  DE: ['49', 10],
  FR: ['33', 9],
  IN: ['91', 10],
  NL: ['31', 9],
  ES: ['34', 9],
  IT: ['39', 10],
  SE: ['46', 9],
  AU: ['61', 9],
  BR: ['55', 11],
  IE: ['353', 9],
  CH: ['41', 9],
  PL: ['48', 9],
  DK: ['45', 8],
  NO: ['47', 8],
  FI: ['358', 9],
  AT: ['43', 10],
  BE: ['32', 9],
  PT: ['351', 9],
  SG: ['65', 8],
  JP: ['81', 10],
  IL: ['972', 9],
  MX: ['52', 10],
  ZA: ['27', 9],
};

const LEGAL_SUFFIX = / (?:inc|ltd|llc|gmbh|plc|corp|corporation|limited|bv|ag|sa|sas|srl|oy|ab)$/;

/** Case- and accent-insensitive form of a name: "Łukasz O'Brien-Müller" → "lukasz obrien muller". */
function foldName(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/ł/g, 'l')
    .replace(/ø/g, 'o')
    .replace(/æ/g, 'ae')
    .replace(/ß/g, 'ss')
    .replace(/ı/g, 'i')
    .replace(/['’`]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

const foldCompany = (s: string) => foldName(s).replace(LEGAL_SUFFIX, '');

/** A 32-bit hash of (seed, person, salt): the stable coin behind every derived value. */
function hash32(seed: number, person: number, salt: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(person + 1, 0xc2b2ae35) ^ Math.imul(salt, 0x27d4eb2f);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

interface PeopleIndex {
  byEmail: Map<string, number>;
  /** Folded full name → people, ascending. */
  byName: Map<string, number[]>;
  /** Per company: its folded name. */
  companyKeys: string[];
  /** Per person: the derived email, when they get one. */
  derivedEmail: (string | null)[];
}

// One index per corpus (corpora are shared through getCorpus' cache), built on the first lookup.
const indexes = new WeakMap<Corpus, PeopleIndex>();

function peopleIndex(corpus: Corpus): PeopleIndex {
  let ix = indexes.get(corpus);
  if (ix) return ix;
  const { people, companies } = corpus;
  const byEmail = new Map<string, number>();
  const byName = new Map<string, number[]>();
  const folded = new Map<string, string>(); // names come from small pools
  const fold = (s: string) => folded.get(s) ?? folded.set(s, foldName(s)).get(s)!;
  people.forEach((p, i) => {
    if (p.email && !byEmail.has(p.email)) byEmail.set(p.email, i);
    const key = fold(p.fullName);
    const list = byName.get(key);
    if (list) list.push(i);
    else byName.set(key, [i]);
  });
  // Derived after every corpus email is indexed, so one never shadows a real address; a derived
  // address already taken (namesakes at one company) is not given out twice.
  const derivedEmail = people.map((p, i) => {
    if (p.email || !p.current || hash32(corpus.seed, i, 1) % 100 >= DERIVED_EMAIL_PERCENT) return null;
    const first = fold(p.firstName).replace(/[^a-z0-9]/g, '');
    const last = fold(p.lastName).replace(/[^a-z0-9]/g, '');
    const email = first && last ? normaliseEmail(`${first}.${last}@${companies[p.company].domain}`) : null;
    if (!email || byEmail.has(email)) return null;
    byEmail.set(email, i);
    return email;
  });
  ix = { byEmail, byName, companyKeys: companies.map((c) => foldCompany(c.name)), derivedEmail };
  indexes.set(corpus, ix);
  return ix;
}

/** The corpus' people as a lookup service: who a query names, and their (partly derived) contact data. */
export class CorpusPeople {
  private corpusRef: Corpus | undefined;

  constructor(private readonly corpusOptions: CorpusOptions) {}

  /** Built on first use and then kept, like the local sources' corpus. */
  get corpus(): Corpus {
    return (this.corpusRef ??= getCorpus(this.corpusOptions));
  }

  /** By profile URL (pronet or newsforum), else by email, else by full name with company name or domain. */
  match(q: PersonKeys): CorpusMatch | null {
    const byUrl = this.byProfileUrl(q.profileUrl);
    if (byUrl !== undefined) return { person: byUrl, confidence: CONFIDENCE.identifier };
    const ix = peopleIndex(this.corpus);
    const email = normaliseEmail(q.email);
    const byEmail = email ? ix.byEmail.get(email) : undefined;
    if (byEmail !== undefined) return { person: byEmail, confidence: CONFIDENCE.identifier };
    return this.byNameAndCompany(ix, q);
  }

  email(i: number): string | null {
    return this.corpus.people[i].email ?? peopleIndex(this.corpus).derivedEmail[i];
  }

  /** E.164, e.g. +4420…, for PHONE_PERCENT % of people. */
  phone(i: number): string | null {
    const seed = this.corpus.seed;
    const plan = PHONE_PLANS[this.corpus.people[i].country];
    if (!plan || hash32(seed, i, 2) % 100 >= PHONE_PERCENT) return null;
    const [code, length] = plan;
    const digits = `${hash32(seed, i, 3)}${hash32(seed, i, 4)}`.padStart(20, '0');
    return `+${code}${2 + (hash32(seed, i, 5) % 8)}${digits.slice(-(length - 1))}`;
  }

  private byProfileUrl(url: string | null): number | undefined {
    const normalised = normaliseProfileUrl(url);
    if (!normalised) return undefined;
    const { bySlug, byForumHandle } = this.corpus.index;
    const network = `https://${NETWORK_HOST}/in/`;
    const forum = `https://${FORUM_HOST}/u/`;
    if (normalised.startsWith(network)) return bySlug.get(decodeURIComponent(normalised.slice(network.length)));
    if (normalised.startsWith(forum)) return byForumHandle.get(normalised.slice(forum.length));
    return undefined;
  }

  private byNameAndCompany(ix: PeopleIndex, q: PersonKeys): CorpusMatch | null {
    const company = q.company ? foldCompany(q.company) : null;
    const domain = normaliseDomain(q.companyDomain);
    if (!company && !domain) return null;
    const names = [q.fullName, q.firstName && q.lastName ? `${q.firstName} ${q.lastName}` : null];
    for (const name of names) {
      const namesakes = name ? ix.byName.get(foldName(name)) : undefined;
      const found = namesakes?.filter((i) => {
        const c = this.corpus.people[i].company;
        return (company && ix.companyKeys[c] === company) || (domain && this.corpus.companies[c].domain === domain);
      });
      if (found?.length)
        return {
          person: found[0],
          confidence: found.length === 1 ? CONFIDENCE.nameAndCompany : CONFIDENCE.ambiguousName,
        };
    }
    return null;
  }
}

export class LocalEnrichment implements EnrichmentProvider {
  readonly name = 'local';
  private readonly people: CorpusPeople;

  constructor(corpusOptions: CorpusOptions) {
    this.people = new CorpusPeople(corpusOptions);
  }

  async enrich(query: EnrichmentQuery, signal?: AbortSignal): Promise<EnrichmentMatch | null> {
    signal?.throwIfAborted();
    if (!isQueryable(query))
      throw new EnrichmentError(
        this.name,
        'invalid_request',
        'the query needs an email, a profile URL, or a name with a company',
      );
    const match = this.people.match(query);
    return match && { person: this.person(match.person), confidence: match.confidence };
  }

  private person(i: number): EnrichedPerson {
    const p = this.people.corpus.people[i];
    // A former employer is not the person's company (the corpus keeps it only for job-change history).
    const co = p.current ? this.people.corpus.companies[p.company] : null;
    const fields: Record<keyof EnrichedPerson, string | null> = {
      email: this.people.email(i),
      phone: this.people.phone(i),
      profileUrl: p.profileUrl,
      firstName: p.firstName,
      lastName: p.lastName,
      fullName: p.fullName,
      title: p.title,
      headline: p.headline,
      company: co?.name ?? null,
      companyDomain: co?.domain ?? null,
      country: p.country,
    };
    return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null));
  }
}
