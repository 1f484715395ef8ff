// The professional network ("pronet") over HTTP. Wire format (v1; docs/sources.md has the full
// description):
//
//   POST {base}/v1/people/search   Authorization: Bearer <PRONET_API_KEY>
//   { kind, keywords: [], filters: { titles, seniorities, industries, countries, company_sizes,
//     since, current_only }, cursor: string|null, limit: 1..200 }
//   → 200 { people: [person + evidence], next_cursor: string|null }
//
//   GET {base}/v1/people/lookup?profile_url=<url>  → 200 { person } | 404
//
//   POST {base}/v1/companies/people
//   { company: { name, domain }, filters: { titles, seniorities }, cursor: string|null, limit: 1..200 }
//   → 200 { company, people: [person], next_cursor: string|null } | 404 (the company is unknown)
import { z } from 'zod';
import type { JsonHttpClient } from '../provider-http.js';
import { parseWire, sourceClient, splitName, type HttpSourceOptions } from './http-client.js';
import {
  checkCompanyQuery,
  checkPage,
  checkQuery,
  COMPANY_SIZES,
  SENIORITIES,
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
  type SignalKind,
  type SignalQuery,
} from './types.js';

const str = z.string().max(10_000);
const optional = <T extends z.ZodType>(t: T) => t.nullish().transform((v) => v ?? null);
const id = z.union([z.string().min(1).max(200), z.number().int()]).transform(String);
// Values outside our vocabularies are dropped (null), not treated as a broken response.
const oneOf = <T extends readonly [string, ...string[]]>(values: T) => optional(z.enum(values)).catch(null);

const company = z.object({
  name: z.string().min(1).max(300),
  domain: optional(str),
  size: oneOf(COMPANY_SIZES),
  industry: optional(str),
});

const person = z.object({
  id,
  profile_url: optional(str),
  full_name: z.string().min(1).max(300),
  first_name: optional(str),
  last_name: optional(str),
  headline: optional(str),
  title: optional(str),
  seniority: oneOf(SENIORITIES),
  country: optional(
    z
      .string()
      .regex(/^[A-Za-z]{2}$/)
      .transform((c) => c.toUpperCase()),
  ).catch(null),
  email: optional(str),
  current: optional(z.boolean()),
  company: optional(company),
});

const evidence = z.object({
  id,
  text: z.string().max(100_000),
  url: optional(str),
  date: z.iso.datetime({ offset: true }),
});

const searchResponse = z.object({
  people: z.array(person.extend({ evidence })).max(1000),
  next_cursor: optional(z.string().min(1).max(2000)),
});
const lookupResponse = z.object({ person });
const companyPeopleResponse = z.object({
  company,
  people: z.array(person).max(1000),
  next_cursor: optional(z.string().min(1).max(2000)),
});

const PRONET_KINDS = new Set<SignalKind>(['people_search', 'job_change', 'hiring', 'funding', 'company_event']);

export class HttpPronet implements DiscoverySource {
  readonly name = 'pronet' as const;
  private readonly http: JsonHttpClient;

  constructor(opts: HttpSourceOptions) {
    this.http = sourceClient('pronet', opts);
  }

  supports(kind: SignalKind): boolean {
    return PRONET_KINDS.has(kind);
  }

  async search(raw: SignalQuery, page: PageRequest, signal?: AbortSignal): Promise<CandidatePage> {
    checkPage(this.name, page);
    const query = checkQuery(this.name, raw);
    if (!this.supports(query.kind))
      throw new SourceError(this.name, 'invalid_request', `signal kind ${query.kind} is not served by pronet`);
    const f = query.filters ?? {};
    const body = {
      kind: query.kind,
      keywords: query.keywords ?? [],
      filters: {
        titles: f.titles ?? [],
        seniorities: f.seniorities ?? [],
        industries: f.industries ?? [],
        countries: (f.countries ?? []).map((c) => c.toUpperCase()),
        company_sizes: f.companySizes ?? [],
        since: f.since ? new Date(f.since).toISOString() : null,
        current_only: f.currentEmployerOnly === true,
      },
      cursor: page.cursor ?? null,
      limit: page.limit,
    };
    const res = parseWire(
      this.http,
      searchResponse,
      await this.http.json('POST', '/v1/people/search', { body, signal }),
    );
    return {
      candidates: res.people.map((p) =>
        this.candidate(p, {
          kind: query.kind,
          id: p.evidence.id,
          text: p.evidence.text,
          url: p.evidence.url,
          date: new Date(p.evidence.date).toISOString(),
        }),
      ),
      nextCursor: res.next_cursor,
    };
  }

  async profile(url: string, signal?: AbortSignal): Promise<Candidate | null> {
    const raw = await this.http.json('GET', '/v1/people/lookup', {
      query: new URLSearchParams({ profile_url: url }),
      signal,
      notFoundIsNull: true,
    });
    if (raw === null) return null;
    const { person: p } = parseWire(this.http, lookupResponse, raw);
    return this.candidate(p, {
      kind: 'people_search',
      id: p.id,
      text: p.headline ?? p.full_name,
      url: p.profile_url,
      date: new Date().toISOString(),
    });
  }

  async companyPeople(
    ref: CompanyRef,
    rawRoles: RoleFilters,
    page: PageRequest,
    signal?: AbortSignal,
  ): Promise<CompanyPeoplePage | null> {
    checkPage(this.name, page);
    const roles = checkCompanyQuery(this.name, ref, rawRoles);
    const body = {
      company: { name: ref.name?.trim() || null, domain: ref.domain?.trim() || null },
      filters: { titles: roles.titles ?? [], seniorities: roles.seniorities ?? [] },
      cursor: page.cursor ?? null,
      limit: page.limit,
    };
    const raw = await this.http.json('POST', '/v1/companies/people', { body, signal, notFoundIsNull: true });
    if (raw === null) return null;
    const res = parseWire(this.http, companyPeopleResponse, raw);
    const seen = new Date().toISOString();
    return {
      company: res.company,
      people: res.people.map((p) =>
        this.candidate(p, {
          kind: 'people_search',
          id: p.id,
          text: p.headline ?? p.full_name,
          url: p.profile_url,
          date: seen,
        }),
      ),
      nextCursor: res.next_cursor,
    };
  }

  private candidate(p: z.infer<typeof person>, ev: Evidence): Candidate {
    const split = splitName(p.full_name);
    return {
      source: this.name,
      externalId: p.id,
      profileUrl: p.profile_url,
      fullName: p.full_name,
      firstName: p.first_name ?? split.firstName,
      lastName: p.last_name ?? split.lastName,
      title: p.title,
      headline: p.headline,
      seniority: p.seniority,
      company: p.company,
      country: p.country,
      email: p.email,
      currentEmployer: p.current,
      evidence: ev,
      signalKey: signalKey(ev.kind, { source: this.name, evidenceId: ev.id, personId: p.id }),
    };
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
