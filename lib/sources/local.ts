// The local sources: newsforum and pronet answered from the generated corpus. A query is resolved
// once into an ordered list of references (from the corpus indexes, not by scanning every item) and
// kept in a small cache, so paging is slicing. Cursors are the offset in that list plus a
// fingerprint of the query: a cursor used with another query is refused rather than misread.
import { createHash } from 'node:crypto';
import { normaliseDomain, normaliseProfileUrl } from '../normalise.js';
import { FORUM_HOST, getCorpus, NETWORK_HOST, type Corpus, type CorpusOptions } from './local-corpus.js';
import {
  checkCompanyQuery,
  checkPage,
  checkQuery,
  SENIORITY_RANK,
  signalKey,
  SourceError,
  type Candidate,
  type CandidatePage,
  type CompanyPeoplePage,
  type CompanyRef,
  type DiscoverySource,
  type Evidence,
  type PageRequest,
  type RoleFilters,
  type SignalFilters,
  type SignalKind,
  type SignalQuery,
  type SourceName,
} from './types.js';
import { matchAny, tokenize, unionSorted } from './words.js';

/** (event or job change, person) pairs are packed into one number: item * PAIR + person. */
const PAIR = 2 ** 21;
const CACHE_SIZE = 64;
const STOP_WORDS = new Set(['of', 'and', 'the', 'for', 'at', 'in']);

const EVENT_KINDS: Record<'hiring' | 'funding' | 'company_event', ReadonlySet<string>> = {
  hiring: new Set(['hiring']),
  funding: new Set(['funding']),
  company_event: new Set(['launch', 'expansion', 'acquisition', 'partnership']),
};

abstract class LocalSource implements DiscoverySource {
  abstract readonly name: SourceName;
  protected abstract readonly kinds: ReadonlySet<SignalKind>;
  private corpusRef: Corpus | undefined;
  private readonly resolved = new Map<string, number[]>();

  constructor(private readonly corpusOptions: CorpusOptions) {}

  /** Built on first use and then kept, so a long run never sees the corpus change under its cursors. */
  protected get corpus(): Corpus {
    return (this.corpusRef ??= getCorpus(this.corpusOptions));
  }

  supports(kind: SignalKind): boolean {
    return this.kinds.has(kind);
  }

  async search(raw: SignalQuery, page: PageRequest, signal?: AbortSignal): Promise<CandidatePage> {
    signal?.throwIfAborted();
    checkPage(this.name, page);
    const query = checkQuery(this.name, raw);
    if (!this.supports(query.kind))
      throw new SourceError(this.name, 'invalid_request', `signal kind ${query.kind} is not served by ${this.name}`);
    const key = canonicalQuery(query);
    const fingerprint = createHash('sha256').update(`${this.name}\n${key}`).digest('base64url').slice(0, 10);
    const offset = page.cursor === undefined ? 0 : decodeCursor(this.name, page.cursor, fingerprint);
    const refs = this.refs(key, query);
    const end = Math.min(offset + page.limit, refs.length);
    const candidates: Candidate[] = [];
    for (let i = offset; i < end; i++) candidates.push(this.candidate(query.kind, refs[i]));
    return { candidates, nextCursor: end < refs.length ? encodeCursor(end, fingerprint) : null };
  }

  private refs(key: string, query: SignalQuery): number[] {
    let refs = this.resolved.get(key);
    if (refs) {
      this.resolved.delete(key); // re-inserted below: most recently used last
    } else {
      refs = this.resolve(query);
    }
    this.resolved.set(key, refs);
    if (this.resolved.size > CACHE_SIZE) this.resolved.delete(this.resolved.keys().next().value!);
    return refs;
  }

  /** The ordered references matching the query. */
  protected abstract resolve(query: SignalQuery): number[];
  protected abstract candidate(kind: SignalKind, ref: number): Candidate;

  /** A candidate for corpus person `i` with the given evidence. */
  protected person(i: number, evidence: Evidence, externalId: string): Candidate {
    const c = this.corpus;
    const p = c.people[i];
    const co = c.companies[p.company];
    return {
      source: this.name,
      externalId,
      profileUrl: p.profileUrl,
      fullName: p.fullName,
      firstName: p.firstName,
      lastName: p.lastName,
      title: p.title,
      headline: p.headline,
      seniority: p.seniority,
      company: { name: co.name, domain: co.domain, size: co.size, industry: co.industry },
      country: p.country,
      email: p.email,
      currentEmployer: p.current,
      evidence,
      signalKey: signalKey(evidence.kind, { source: this.name, evidenceId: evidence.id, personId: externalId }),
    };
  }

  /**
   * The people matching the filters, ascending. The smallest indexed dimension gives the
   * candidates; the full predicate then checks each of them.
   */
  protected peopleMatching(f: SignalFilters | undefined): { base: number[] | null; test: (i: number) => boolean } {
    const ix = this.corpus.index;
    const lists: number[][] = [];
    const union = (keys: Iterable<string> | undefined, map: Map<string, number[]>) => {
      if (keys) lists.push(unionSorted([...keys].map((k) => map.get(k) ?? [])));
    };
    union(f?.seniorities?.length ? new Set<string>(f.seniorities) : undefined, ix.bySeniority);
    union(f?.countries?.length ? new Set(f.countries.map((c) => c.toUpperCase())) : undefined, ix.byCountry);
    union(f?.industries?.length ? new Set(f.industries.map((s) => s.trim().toLowerCase())) : undefined, ix.byIndustry);
    union(f?.companySizes?.length ? new Set<string>(f.companySizes) : undefined, ix.bySize);
    const base = lists.length ? lists.reduce((a, b) => (b.length < a.length ? b : a)) : null;
    return { base, test: this.personFilter(f) };
  }

  /** The full predicate of the filters on one person (no index work: cheap to build per call). */
  protected personFilter(f: SignalFilters | undefined): (i: number) => boolean {
    const people = this.corpus.people;
    const companies = this.corpus.companies;
    const seniorities = f?.seniorities?.length ? new Set<string>(f.seniorities) : null;
    const countries = f?.countries?.length ? new Set(f.countries.map((c) => c.toUpperCase())) : null;
    const industries = f?.industries?.length ? new Set(f.industries.map((s) => s.trim().toLowerCase())) : null;
    const sizes = f?.companySizes?.length ? new Set<string>(f.companySizes) : null;
    const titles = f?.titles?.length
      ? f.titles.map((t) => tokenize(t).filter((w) => !STOP_WORDS.has(w))).filter((ws) => ws.length > 0)
      : null;
    const currentOnly = f?.currentEmployerOnly === true;
    return (i: number) => {
      const p = people[i];
      if (currentOnly && !p.current) return false;
      if (seniorities && !seniorities.has(p.seniority)) return false;
      if (countries && !countries.has(p.country)) return false;
      const co = companies[p.company];
      if (industries && !industries.has(co.industry.toLowerCase())) return false;
      if (sizes && !sizes.has(co.size)) return false;
      if (titles) {
        const norm = this.corpus.index.titleNorm[i];
        if (!titles.some((words) => words.every((w) => norm.includes(` ${w} `)))) return false;
      }
      return true;
    };
  }
}

/** newsforum: posts and comments mentioning the keywords (`since` applies; people filters do not, see docs/sources.md). */
export class LocalNewsforum extends LocalSource {
  readonly name = 'newsforum' as const;
  protected readonly kinds = new Set<SignalKind>(['post_keywords']);

  protected resolve(query: SignalQuery): number[] {
    const c = this.corpus;
    const keywords = query.keywords ?? [];
    let refs = keywords.length ? matchAny(c.index.posts, keywords) : c.posts.map((_, i) => i);
    const since = query.filters?.since;
    if (since) {
      // Posts are newest first: the ones since the date are a prefix.
      const t = Date.parse(since);
      const cut = firstIndex(c.posts.length, (i) => Date.parse(c.posts[i].createdAt) < t);
      refs = refs.filter((i) => i < cut);
    }
    return refs;
  }

  protected candidate(kind: SignalKind, i: number): Candidate {
    const post = this.corpus.posts[i];
    const author = this.corpus.people[post.author];
    return this.person(
      post.author,
      { kind, id: post.id, text: post.text, url: post.url, date: post.createdAt },
      author.forumId,
    );
  }

  async profile(url: string): Promise<Candidate | null> {
    const normalised = normaliseProfileUrl(url);
    const prefix = `https://${FORUM_HOST}/u/`;
    if (!normalised?.startsWith(prefix)) return null;
    const i = this.corpus.index.byForumHandle.get(normalised.slice(prefix.length));
    if (i === undefined) return null;
    const p = this.corpus.people[i];
    return this.person(
      i,
      { kind: 'people_search', id: p.forumId, text: p.headline, url: p.forumUrl, date: p.startedAt },
      p.forumId,
    );
  }
}

/** pronet: people search, job changes and company events (hiring, funding, other news). */
export class LocalPronet extends LocalSource {
  readonly name = 'pronet' as const;
  protected readonly kinds = new Set<SignalKind>(['people_search', 'job_change', 'hiring', 'funding', 'company_event']);

  protected resolve(query: SignalQuery): number[] {
    const c = this.corpus;
    const { base, test } = this.peopleMatching(query.filters);
    const keywords = query.keywords?.length ? query.keywords : null;
    const since = query.filters?.since ? Date.parse(query.filters.since) : null;

    if (query.kind === 'people_search') {
      let people = keywords ? matchAny(c.index.headlines, keywords) : (base ?? c.people.map((_, i) => i));
      if (keywords && base) people = intersectSorted(people, base);
      return people.filter((i) => test(i) && (since === null || Date.parse(c.people[i].startedAt) >= since));
    }

    if (query.kind === 'job_change') {
      const items = newestSince(c.jobChanges.length, (i) => c.jobChanges[i].date, since);
      const matching = keywords ? intersectSorted(items, matchAny(c.index.jobChanges, keywords)) : items;
      const refs: number[] = [];
      for (const j of matching) if (test(c.jobChanges[j].person)) refs.push(j * PAIR + c.jobChanges[j].person);
      return refs;
    }

    // Company events: each matching event, then the company's current employees who match.
    const kinds = EVENT_KINDS[query.kind as keyof typeof EVENT_KINDS];
    if (!kinds) return [];
    const items = newestSince(c.events.length, (i) => c.events[i].date, since).filter((i) =>
      kinds.has(c.events[i].kind),
    );
    const matching = keywords ? intersectSorted(items, matchAny(c.index.events, keywords)) : items;
    const refs: number[] = [];
    for (const e of matching) {
      for (const p of c.index.employees[c.events[e].company]) if (test(p)) refs.push(e * PAIR + p);
    }
    return refs;
  }

  protected candidate(kind: SignalKind, ref: number): Candidate {
    const c = this.corpus;
    if (kind === 'people_search') {
      const p = c.people[ref];
      return this.person(ref, { kind, id: p.id, text: p.headline, url: p.profileUrl, date: p.startedAt }, p.id);
    }
    const item = Math.floor(ref / PAIR);
    const person = ref % PAIR;
    const ev = kind === 'job_change' ? c.jobChanges[item] : c.events[item];
    return this.person(person, { kind, id: ev.id, text: ev.text, url: ev.url, date: ev.date }, c.people[person].id);
  }

  private companyKeys: { byDomain: Map<string, number>; byName: Map<string, number> } | undefined;

  /** The corpus company a reference names: by domain first (any spelling normaliseDomain accepts), else by name (case-insensitive). */
  private findCompany(ref: CompanyRef): number | undefined {
    if (!this.companyKeys) {
      const byDomain = new Map<string, number>();
      const byName = new Map<string, number>();
      this.corpus.companies.forEach((co, i) => {
        byDomain.set(normaliseDomain(co.domain) ?? co.domain, i);
        byName.set(companyNameKey(co.name), i);
      });
      this.companyKeys = { byDomain, byName };
    }
    const domain = normaliseDomain(ref.domain);
    const byDomain = domain === null ? undefined : this.companyKeys.byDomain.get(domain);
    if (byDomain !== undefined) return byDomain;
    return ref.name?.trim() ? this.companyKeys.byName.get(companyNameKey(ref.name)) : undefined;
  }

  async companyPeople(
    ref: CompanyRef,
    rawRoles: RoleFilters,
    page: PageRequest,
    signal?: AbortSignal,
  ): Promise<CompanyPeoplePage | null> {
    signal?.throwIfAborted();
    checkPage(this.name, page);
    const roles = checkCompanyQuery(this.name, ref, rawRoles);
    const index = this.findCompany(ref);
    if (index === undefined) return null;
    const c = this.corpus;
    const co = c.companies[index];
    const key = JSON.stringify([
      index,
      [...new Set(roles.titles?.map((t) => t.normalize('NFC').toLowerCase()))].sort(),
      [...new Set(roles.seniorities)].sort(),
    ]);
    const fingerprint = createHash('sha256').update(`${this.name}\ncompany\n${key}`).digest('base64url').slice(0, 10);
    const offset = page.cursor === undefined ? 0 : decodeCursor(this.name, page.cursor, fingerprint);
    const test = this.personFilter({ titles: roles.titles, seniorities: roles.seniorities, currentEmployerOnly: true });
    // A company has tens of employees (hundreds at most): filtering and sorting them per page is cheap.
    const people = c.index.employees[index]
      .filter(test)
      .sort((a, b) => SENIORITY_RANK[c.people[a].seniority] - SENIORITY_RANK[c.people[b].seniority] || a - b);
    const end = Math.min(offset + page.limit, people.length);
    const out: Candidate[] = [];
    for (let i = offset; i < end; i++) {
      const p = c.people[people[i]];
      out.push(
        this.person(
          people[i],
          { kind: 'people_search', id: p.id, text: p.headline, url: p.profileUrl, date: p.startedAt },
          p.id,
        ),
      );
    }
    return {
      company: { name: co.name, domain: co.domain, size: co.size, industry: co.industry },
      people: out,
      nextCursor: end < people.length ? encodeCursor(end, fingerprint) : null,
    };
  }

  async profile(url: string): Promise<Candidate | null> {
    const normalised = normaliseProfileUrl(url);
    const prefix = `https://${NETWORK_HOST}/in/`;
    if (!normalised?.startsWith(prefix)) return null;
    const i = this.corpus.index.bySlug.get(decodeURIComponent(normalised.slice(prefix.length)));
    if (i === undefined) return null;
    const p = this.corpus.people[i];
    return this.person(
      i,
      { kind: 'people_search', id: p.id, text: p.headline, url: p.profileUrl, date: p.startedAt },
      p.id,
    );
  }
}

// ---------------------------------------------------------------------------------------------

/** Company names compare case-insensitively, NFC, with runs of whitespace as one space. */
const companyNameKey = (name: string) => name.normalize('NFC').trim().toLowerCase().replace(/\s+/g, ' ');

/** A stable text for a query: same meaning, same text (key order and filter order do not matter). */
function canonicalQuery(q: SignalQuery): string {
  const sorted = (xs: readonly string[] | undefined, f: (s: string) => string = (s) => s) =>
    xs?.length ? [...new Set(xs.map(f))].sort() : null;
  const lower = (s: string) => s.normalize('NFC').trim().toLowerCase();
  const f = q.filters ?? {};
  return JSON.stringify([
    q.kind,
    sorted(q.keywords, lower),
    sorted(f.titles, lower),
    sorted(f.seniorities),
    sorted(f.industries, lower),
    sorted(f.countries, (s) => s.toUpperCase()),
    sorted(f.companySizes),
    f.since ? new Date(f.since).toISOString() : null,
    f.currentEmployerOnly === true,
  ]);
}

function encodeCursor(offset: number, fingerprint: string): string {
  return Buffer.from(`${offset}.${fingerprint}`).toString('base64url');
}

function decodeCursor(source: SourceName, cursor: string, fingerprint: string): number {
  const m = /^(\d{1,9})\.(.+)$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!m || m[2] !== fingerprint)
    throw new SourceError(source, 'invalid_request', 'cursor does not belong to this query');
  return Number(m[1]);
}

/** The first index in [0, n) where `past` holds, for a predicate that is false then true. */
function firstIndex(n: number, past: (i: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (past(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Indexes of a newest-first list dated at or after `since` (all when null). */
function newestSince(n: number, date: (i: number) => string, since: number | null): number[] {
  const end = since === null ? n : firstIndex(n, (i) => Date.parse(date(i)) < since);
  return Array.from({ length: end }, (_, i) => i);
}

function intersectSorted(a: readonly number[], b: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 0, j = 0; i < a.length && j < b.length;) {
    if (a[i] === b[j]) {
      out.push(a[i]);
      i++;
      j++;
    } else if (a[i] < b[j]) i++;
    else j++;
  }
  return out;
}

export function createLocalSources(opts: CorpusOptions): { newsforum: LocalNewsforum; pronet: LocalPronet } {
  return { newsforum: new LocalNewsforum(opts), pronet: new LocalPronet(opts) };
}
