// The professional network ("pronet") over Unipile's REST API v1 (issue 44): LinkedIn people search,
// a company's people and profile look-ups, run as one connected LinkedIn account. Wire format from
// Unipile's own OpenAPI definitions (/work/unipile-notes.md §0, §4, §7, §9):
//
//   POST {dsn}/api/v1/linkedin/search?account_id=<id>&limit=<n>       X-API-KEY: <key>
//     first page: a "Classic - People" or "Sales Navigator - People" body; next pages: the "Cursor"
//     body `{ cursor }` ("in the case of a long cursor, you may want to set it in the body")
//     → 200 { object: "LinkedinSearch", items: [{ object: "SearchResult", type: "PEOPLE", id, … }],
//             config, paging: { start, page_count, total_count }, cursor: string | null }
//   GET  {dsn}/api/v1/linkedin/search/parameters?account_id&type&keywords&limit   (text → LinkedIn ids)
//     → 200 { object: "LinkedinSearchParametersList", items: [{ id, title }], paging }
//   GET  {dsn}/api/v1/linkedin/company/{identifier}?account_id   → 200 CompanyProfile | 404
//   GET  {dsn}/api/v1/users/{identifier}?account_id&linkedin_sections=experience&notify=false
//     → 200 UserProfile | 404
//   Errors: { title, detail?, type: "errors/<code>", status } (mapped by `unipileErrorOf`).
//
// Which search API. Sales Navigator ("sales_navigator") maps our filters best: titles as plain-text
// `role.include`, seniorities as the documented `seniority.include` levels, company sizes as
// `company_headcount`, a company by plain name in `company.include`. Classic ("classic", the
// default, since every LinkedIn account has it) has no seniority and no company-size filter on
// people: titles and seniority go into LinkedIn's Boolean title search (`advanced_keywords.title`),
// each person's seniority is read from their title (`seniorityOf`) and checked here, and
// `companySizes` is refused (invalid_request) rather than silently ignored. UNIPILE_SEARCH_API picks.
//
// Mapping (our filter / operation → Unipile):
//   keywords (any; phrase)   → `keywords`: "a b" OR "c"               (both APIs)
//   titles (any; all words)  → classic `advanced_keywords.title`: ("head" AND "sales") OR (…)
//                              SN `role.include`: the titles as plain text
//   seniorities              → one sub-search per level, most senior first. classic: the level's
//                              title words ANDed into `advanced_keywords.title`, then checked by
//                              `seniorityOf`; SN: `seniority.include` (SN_SENIORITY)
//   industries (exact names) → ids of search/parameters type INDUSTRY (classic `industry`) or
//                              SALES_INDUSTRY (SN `industry.include`); exact title match only
//   countries (ISO-2)        → the English country name looked up as LOCATION (classic `location`)
//                              or REGION (SN `location.include`; LOCATION when REGION is refused)
//   companySizes             → SN `company_headcount` ranges; classic: invalid_request
//   since                    → checked here against the current position's `start` (month)
//   currentEmployerOnly      → people without `current_positions` are dropped
//   companyPeople            → company resolved by search/parameters type COMPANY (+ website
//                              check on GET /linkedin/company/{id} when a domain is given, or the
//                              name as public identifier), then people search with classic
//                              `company: [id]` / SN `company.include: [name]`, one level at a time
//   profile(url)             → GET /users/{public identifier from the /in/ URL}
//
// Paging: our cursor wraps (sub-search, Unipile cursor) with a fingerprint of the query; one
// Unipile page (limit ≤ 50 classic, ≤ 100 SN) per call, more only while a page is still empty.
// Daily limits, per source instance (one per process): search results counted against
// 1,000/day classic, 2,500/day SN (Unipile's guidance, §9), profile look-ups against 80/150 visits;
// past them a call fails with rate_limited until the next UTC midnight. With several workers,
// divide the limits between them (UNIPILE_SEARCH_DAILY_PROFILES, UNIPILE_PROFILE_DAILY_VISITS).
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { normaliseDomain, normaliseProfileUrl } from '../normalise.js';
import type { JsonHttpClient } from '../provider-http.js';
import { parseWire, sourceClient, splitName, type HttpSourceOptions } from './http-client.js';
import {
  checkCompanyQuery,
  checkPage,
  checkQuery,
  COMPANY_SIZES,
  SENIORITIES,
  SENIORITY_RANK,
  signalKey,
  SourceError,
  type Candidate,
  type CandidatePage,
  type Company,
  type CompanyPeoplePage,
  type CompanyRef,
  type CompanySize,
  type DiscoverySource,
  type Evidence,
  type PageRequest,
  type RoleFilters,
  type Seniority,
  type SignalKind,
  type SignalQuery,
} from './types.js';
import { tokenize } from './words.js';

export const UNIPILE_SEARCH_APIS = ['classic', 'sales_navigator'] as const;
export type UnipileSearchApi = (typeof UNIPILE_SEARCH_APIS)[number];

/** `limit` of one POST /linkedin/search: "up to 100 results for Sales Navigator …, Linkedin Classic shouldn't exceed 50". */
export const SEARCH_LIMIT_MAX: Record<UnipileSearchApi, number> = { classic: 50, sales_navigator: 100 };
/** Profiles from searches per account per day: "a maximum of 1,000 profiles per day (or 2,500 for Sales Navigator accounts)". */
export const DAILY_SEARCH_PROFILES: Record<UnipileSearchApi, number> = { classic: 1000, sales_navigator: 2500 };
/** Profile visits per account per day: "80 to 100 (Premium) or up to 150 (Sales Navigator)"; the low end for classic. */
export const DAILY_PROFILE_VISITS: Record<UnipileSearchApi, number> = { classic: 80, sales_navigator: 150 };

/** Our seniorities as Sales Navigator's documented SENIORITY LEVEL values. */
export const SN_SENIORITY: Record<Seniority, readonly string[]> = {
  founder: ['owner/partner'],
  cxo: ['cxo'],
  vp: ['vice_president'],
  director: ['director'],
  manager: ['experienced_manager', 'entry_level_manager'],
  senior: ['senior', 'strategic'],
  entry: ['entry_level', 'in_training'],
};

/** The title words of each level (entry: none of the others), most senior first; words and phrases match whole. */
export const LEVEL_WORDS: Record<Exclude<Seniority, 'entry'>, readonly string[]> = {
  founder: ['founder', 'co-founder', 'cofounder', 'owner'],
  cxo: ['chief', 'ceo', 'cto', 'cfo', 'coo', 'cmo', 'cro', 'cio', 'cpo', 'ciso', 'president'],
  vp: ['vp', 'svp', 'evp', 'vice president'],
  director: ['director', 'head'],
  manager: ['manager', 'lead', 'supervisor'],
  senior: ['senior', 'sr', 'principal', 'staff'],
};

const BY_RANK = [...SENIORITIES].sort((a, b) => SENIORITY_RANK[a] - SENIORITY_RANK[b]);
const STOP_WORDS = new Set(['of', 'and', 'the', 'for', 'at', 'in']);
/** Unipile calls one page may make while it is still empty (skipping empty levels). */
const MAX_CALLS_PER_PAGE = 10;
const PARAMETER_LIMIT = 25;
const CACHE_SIZE = 2000;

/** A person's seniority read from a job title: the most senior level whose words occur in it, else entry. */
export function seniorityOf(title: string | null | undefined): Seniority | null {
  if (!title?.trim()) return null;
  const text = ` ${tokenize(title).join(' ')} `;
  for (const level of BY_RANK) {
    if (level === 'entry') break;
    // "Vice President" is a vp, not a president.
    const t = level === 'cxo' ? text.replaceAll(' vice president ', ' ') : text;
    if (LEVEL_WORDS[level].some((w) => t.includes(` ${tokenize(w).join(' ')} `))) return level;
  }
  return 'entry';
}

export interface UnipilePronetOptions extends Omit<HttpSourceOptions, 'keyHeader' | 'errorOf'> {
  /** The Unipile DSN, `https://apiN.unipile.com:PORT` (`/api/v1` is appended unless already there). */
  baseUrl: string;
  /** The connected LinkedIn account every call runs as (UNIPILE_SEARCH_ACCOUNT_ID). */
  accountId: string;
  /** UNIPILE_SEARCH_API; default classic. */
  api?: UnipileSearchApi;
  /** Search results per UTC day (default DAILY_SEARCH_PROFILES[api]). */
  dailyProfiles?: number;
  /** Profile look-ups per UTC day (default DAILY_PROFILE_VISITS[api]). */
  dailyProfileVisits?: number;
  /** Profile hosts besides linkedin.com that profile() accepts (PRONET_PROFILE_HOSTS). */
  profileHosts?: readonly string[];
  /** Clock (tests). */
  now?: () => number;
}

// ---------------------------------------------------------------------------------------------
// Wire schemas: only what is used; unknown fields ignored, odd optional values dropped.

const str = z.string().max(10_000);
const opt = <T extends z.ZodType>(t: T) => t.nullish().transform((v) => v ?? null);
const idStr = z.union([z.string().min(1).max(500), z.number().int()]).transform(String);

const position = z.object({
  company: opt(str).catch(null),
  company_id: opt(idStr).catch(null),
  role: opt(str).catch(null),
  industry: opt(z.array(str).max(50)).catch(null),
  start: opt(z.object({ year: z.number().int().optional(), month: z.number().int().optional() })).catch(null),
});
type Position = z.infer<typeof position>;

const searchPerson = z.object({
  type: z.literal('PEOPLE'),
  id: idStr,
  public_identifier: opt(str).catch(null),
  public_profile_url: opt(str).catch(null),
  profile_url: opt(str).catch(null),
  name: opt(str).catch(null),
  first_name: opt(str).catch(null),
  last_name: opt(str).catch(null),
  location: opt(str).catch(null),
  headline: opt(str).catch(null),
  current_positions: opt(z.array(position).max(100)).catch(null),
});
type SearchPerson = z.infer<typeof searchPerson>;

const searchResponse = z.object({
  items: z.array(z.object({ type: z.string() }).loose()).max(1000),
  cursor: opt(z.string().min(1).max(100_000)),
});

const parametersResponse = z.object({
  items: z.array(z.object({ id: idStr, title: z.string().max(1000) })).max(1000),
});
type Parameter = z.infer<typeof parametersResponse>['items'][number];

const companyProfile = z.object({
  id: idStr,
  name: z.string().min(1).max(300),
  public_identifier: opt(str).catch(null),
  website: opt(str).catch(null),
  industry: opt(z.array(str).max(50)).catch(null),
  employee_count: opt(z.number()).catch(null),
  employee_count_range: opt(z.object({ from: z.number(), to: z.number().nullish() })).catch(null),
});
type CompanyProfile = z.infer<typeof companyProfile>;

const userProfile = z.object({
  provider_id: idStr,
  public_identifier: opt(str).catch(null),
  public_profile_url: opt(str).catch(null),
  first_name: opt(str).catch(null),
  last_name: opt(str).catch(null),
  headline: opt(str).catch(null),
  location: opt(str).catch(null),
  contact_info: opt(z.object({ emails: opt(z.array(str).max(50)).catch(null) })).catch(null),
  work_experience: opt(
    z
      .array(
        z.object({
          position: opt(str).catch(null),
          company: opt(str).catch(null),
          current: opt(z.boolean()).catch(null),
          start: opt(str).catch(null),
          end: opt(str).catch(null),
        }),
      )
      .max(200),
  ).catch(null),
});

const companySchema = z.object({
  name: z.string(),
  domain: z.string().nullable(),
  size: z.enum(COMPANY_SIZES).nullable(),
  industry: z.string().nullable(),
});
const cursorSchema = z.object({
  v: z.literal(1),
  f: z.string(),
  s: z.number().int().min(0).max(SENIORITIES.length),
  c: z.string().min(1).nullable(),
  co: z.object({ id: z.string().min(1), company: companySchema }).optional(),
});
type CursorState = z.infer<typeof cursorSchema>;

// ---------------------------------------------------------------------------------------------

/** Unipile's error body `{ title, detail, type: "errors/<code>", status }` as a SourceError; `reason` is the code. */
export function unipileErrorOf(status: number, body: unknown, retryAfterSeconds: number | null): SourceError | null {
  if (status < 400) return null;
  const b = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const type = typeof b.type === 'string' ? b.type.replace(/^errors\//, '').slice(0, 100) : null;
  const title = typeof b.title === 'string' ? b.title : '';
  const detail = typeof b.detail === 'string' ? b.detail : '';
  const message =
    `HTTP ${status}${type ? ` ${type}` : ''}${title && title !== type ? `: ${title}` : ''}${detail ? ` (${detail})` : ''}`.slice(
      0,
      300,
    );
  const details = { status, ...(type ? { reason: type } : {}) };
  // 422 limit_exceeded is undocumented beyond its name; a limit passes, so it is treated as a rate limit.
  if (status === 429 || type === 'too_many_requests' || type === 'limit_exceeded')
    return new SourceError('pronet', 'rate_limited', message, { ...details, retryAfterSeconds });
  if (status === 401 || status === 403) return new SourceError('pronet', 'auth', message, details);
  if (status === 408 || status === 504) return new SourceError('pronet', 'timeout', message, details);
  if (status >= 500) return new SourceError('pronet', 'unavailable', message, { ...details, retryAfterSeconds });
  if (status === 400 || status === 422) return new SourceError('pronet', 'invalid_request', message, details);
  return new SourceError('pronet', 'bad_response', message, details);
}

/** A count per UTC day against a limit. */
class DailyBudget {
  private day = '';
  private used = 0;
  constructor(
    readonly limit: number,
    private readonly now: () => number,
    private readonly what: string,
  ) {}

  private roll(): void {
    const day = new Date(this.now()).toISOString().slice(0, 10);
    if (day !== this.day) {
      this.day = day;
      this.used = 0;
    }
  }

  remaining(): number {
    this.roll();
    return Math.max(0, this.limit - this.used);
  }

  take(n: number): void {
    this.roll();
    this.used += n;
  }

  exhausted(): SourceError {
    const now = this.now();
    const midnight = Date.UTC(
      new Date(now).getUTCFullYear(),
      new Date(now).getUTCMonth(),
      new Date(now).getUTCDate() + 1,
    );
    return new SourceError('pronet', 'rate_limited', `the daily limit of ${this.limit} ${this.what} is reached`, {
      retryAfterSeconds: Math.max(1, Math.ceil((midnight - now) / 1000)),
      reason: 'daily_limit',
    });
  }
}

/** A small insertion-ordered cache that forgets its oldest entries. */
class Cache<V> {
  private readonly map = new Map<string, V>();
  get(key: string): V | undefined {
    return this.map.get(key);
  }
  has(key: string): boolean {
    return this.map.has(key);
  }
  set(key: string, value: V): void {
    this.map.set(key, value);
    if (this.map.size > CACHE_SIZE) this.map.delete(this.map.keys().next().value!);
  }
}

interface Step {
  /** The level this sub-search lists, or null for all levels at once. */
  level: Seniority | null;
}

interface ResolvedCompany {
  /** The id given to the people search's company filter. */
  id: string;
  company: Company;
}

const nameKey = (s: string) => s.normalize('NFC').trim().toLowerCase().replace(/\s+/g, ' ');
const phrase = (words: readonly string[]) => `"${words.join(' ')}"`;
const unique = <T>(xs: T[]) => [...new Set(xs)];
const REGION_NAMES = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
let countryCodes: Map<string, string> | undefined;
/** Retired codes that still have names (FX "France", UK "United Kingdom" …): never the answer. */
const RETIRED_CODES = new Set('AN BU CS DD DY FX HV NH RH SU TP UK VD YD YU ZR'.split(' '));

/** The ISO code of the country a LinkedIn location ends with ("Berlin, Germany" → DE), else null. */
export function countryOfLocation(location: string | null): string | null {
  if (!location) return null;
  if (!countryCodes) {
    countryCodes = new Map();
    const A = 'A'.charCodeAt(0);
    for (let i = 0; i < 26; i++)
      for (let j = 0; j < 26; j++) {
        const code = String.fromCharCode(A + i, A + j);
        const name = REGION_NAMES.of(code);
        if (name && name !== code && !RETIRED_CODES.has(code)) countryCodes.set(nameKey(name), code);
      }
  }
  const last = location.split(',').at(-1) ?? '';
  return countryCodes.get(nameKey(last)) ?? null;
}

function sizeOf(n: number | null): CompanySize | null {
  if (n === null || !Number.isFinite(n) || n < 1) return null;
  const bounds: [number, CompanySize][] = [
    [10, '1-10'],
    [50, '11-50'],
    [200, '51-200'],
    [500, '201-500'],
    [1000, '501-1000'],
    [5000, '1001-5000'],
  ];
  return bounds.find(([max]) => n <= max)?.[1] ?? '5001+';
}

const HEADCOUNT: Record<CompanySize, { min: number; max?: number }[]> = {
  '1-10': [{ min: 1, max: 10 }],
  '11-50': [{ min: 11, max: 50 }],
  '51-200': [{ min: 51, max: 200 }],
  '201-500': [{ min: 201, max: 500 }],
  '501-1000': [{ min: 501, max: 1000 }],
  '1001-5000': [{ min: 1001, max: 5000 }],
  '5001+': [{ min: 5001, max: 10000 }, { min: 10001 }],
};

/** Our keywords as one Boolean keyword search: any of them, each as a phrase. */
function keywordsExpr(keywords: readonly string[] | undefined): string | null {
  const parts = unique(
    (keywords ?? [])
      .map(tokenize)
      .filter((t) => t.length > 0)
      .map(phrase),
  );
  return parts.length ? parts.join(' OR ') : null;
}

/** Our titles (any of them; every word of one) as a Boolean title search. */
function titlesExpr(titles: readonly string[] | undefined): string | null {
  const alts = unique(
    (titles ?? [])
      .map((t) => tokenize(t).filter((w) => !STOP_WORDS.has(w)))
      .filter((ws) => ws.length > 0)
      .map((ws) => (ws.length === 1 ? phrase(ws) : `(${ws.map((w) => phrase([w])).join(' AND ')})`)),
  );
  return alts.length ? alts.join(' OR ') : null;
}

const levelExpr = (levels: readonly Exclude<Seniority, 'entry'>[]) =>
  unique(levels.flatMap((l) => LEVEL_WORDS[l].map((w) => phrase(tokenize(w))))).join(' OR ');

/**
 * Classic's title search for titles and one level. Entry (none of the other levels' words) is a
 * NOT, which LinkedIn takes only next to a positive term: alone, entry is checked here only.
 */
function classicTitle(titles: readonly string[] | undefined, level: Seniority | null): string | null {
  const t = titlesExpr(titles);
  if (level === null) return t;
  if (level === 'entry') {
    if (!t) return null;
    return `(${t}) AND NOT (${levelExpr(BY_RANK.filter((l) => l !== 'entry') as Exclude<Seniority, 'entry'>[])})`;
  }
  const l = levelExpr([level]);
  return t ? `(${t}) AND (${l})` : l;
}

/** First of the month a position started, ISO; null when the provider does not say. */
function startOf(p: Position | null): string | null {
  const y = p?.start?.year;
  if (!y || y < 1900 || y > 2200) return null;
  const m = p.start?.month && p.start.month >= 1 && p.start.month <= 12 ? p.start.month : 1;
  return new Date(Date.UTC(y, m - 1, 1)).toISOString();
}

/** The label a company is likely typed as, from its domain (acme-labs.co.uk → acme-labs). */
function domainLabel(domain: string): string {
  const labels = domain.split('.');
  if (labels.length >= 3 && labels.at(-1)!.length === 2 && labels.at(-2)!.length <= 3) return labels.at(-3)!;
  return labels.length >= 2 ? labels.at(-2)! : labels[0];
}

function canonical(xs: readonly string[] | undefined, f: (s: string) => string = nameKey): string[] | null {
  return xs?.length ? unique(xs.map(f)).sort() : null;
}

export class UnipilePronetSource implements DiscoverySource {
  readonly name = 'pronet' as const;
  readonly api: UnipileSearchApi;
  readonly accountId: string;
  private readonly http: JsonHttpClient;
  private readonly now: () => number;
  private readonly profiles: DailyBudget;
  private readonly visits: DailyBudget;
  private readonly profileHosts: string[];
  private readonly parameters = new Cache<Parameter[]>();
  private readonly companies = new Cache<CompanyProfile | null>();
  private readonly resolved = new Cache<ResolvedCompany | null>();
  /** Set when the account refuses parameter type REGION: SN locations are then looked up as LOCATION. */
  private regionRefused = false;

  constructor(opts: UnipilePronetOptions) {
    if (!opts.accountId?.trim()) throw new Error('UNIPILE_SEARCH_ACCOUNT_ID is required for the Unipile pronet source');
    const api = opts.api ?? 'classic';
    if (!UNIPILE_SEARCH_APIS.includes(api)) throw new Error('UNIPILE_SEARCH_API must be classic or sales_navigator');
    this.api = api;
    this.accountId = opts.accountId.trim();
    const base = opts.baseUrl.replace(/\/+$/, '');
    this.http = sourceClient('pronet', {
      ...opts,
      baseUrl: /\/api\/v1$/.test(base) ? base : `${base}/api/v1`,
      keyHeader: 'x-api-key',
      errorOf: unipileErrorOf,
    });
    this.now = opts.now ?? Date.now;
    this.profiles = new DailyBudget(opts.dailyProfiles ?? DAILY_SEARCH_PROFILES[api], this.now, 'search profiles');
    this.visits = new DailyBudget(opts.dailyProfileVisits ?? DAILY_PROFILE_VISITS[api], this.now, 'profile visits');
    this.profileHosts = unique(['linkedin.com', ...(opts.profileHosts ?? [])]);
  }

  supports(kind: SignalKind): boolean {
    // Job changes and company events have no documented search on LinkedIn through Unipile.
    return kind === 'people_search';
  }

  async search(raw: SignalQuery, page: PageRequest, signal?: AbortSignal): Promise<CandidatePage> {
    checkPage(this.name, page);
    const query = checkQuery(this.name, raw);
    if (!this.supports(query.kind))
      throw new SourceError(
        this.name,
        'invalid_request',
        `signal kind ${query.kind} is not served by pronet (Unipile)`,
      );
    const f = query.filters ?? {};
    if (f.companySizes?.length && this.api === 'classic')
      throw new SourceError(
        this.name,
        'invalid_request',
        'company sizes cannot be searched with LinkedIn Classic: set UNIPILE_SEARCH_API=sales_navigator',
      );
    const fingerprint = this.fingerprint([
      'search',
      query.kind,
      canonical(query.keywords),
      canonical(f.titles),
      canonical(f.seniorities, String),
      canonical(f.industries),
      canonical(f.countries, (c) => c.toUpperCase()),
      canonical(f.companySizes, String),
      f.since ? new Date(f.since).toISOString() : null,
      f.currentEmployerOnly === true,
    ]);
    const steps: Step[] = f.seniorities?.length
      ? BY_RANK.filter((l) => f.seniorities!.includes(l)).map((level) => ({ level }))
      : [{ level: null }];
    const since = f.since ? Date.parse(f.since) : null;
    let base: Record<string, unknown> | null | undefined;

    const body = async (step: Step): Promise<Record<string, unknown> | null> => {
      // The filters' ids are looked up once per call, and only when a sub-search starts.
      if (base === undefined) base = await this.baseBody(query, signal);
      if (base === null) return null;
      if (this.api === 'classic') {
        const title = classicTitle(f.titles, step.level);
        return title ? { ...base, advanced_keywords: { title } } : base;
      }
      return {
        ...base,
        ...(f.titles?.length ? { role: { include: unique(f.titles.map((t) => t.trim())) } } : {}),
        ...(step.level ? { seniority: { include: SN_SENIORITY[step.level] } } : {}),
      };
    };

    // LinkedIn's title search matches any current position: the one read is the first that matches
    // the titles (every word of one) and this sub-search's level, else the first.
    const titleWords = (f.titles ?? [])
      .map((t) => tokenize(t).filter((w) => !STOP_WORDS.has(w)))
      .filter((ws) => ws.length > 0);
    const matches = (role: string | null | undefined, step: Step) => {
      const words = new Set(tokenize(role ?? ''));
      if (titleWords.length && !titleWords.some((ws) => ws.every((w) => words.has(w)))) return false;
      return this.levelOf(role ?? null, step) !== undefined;
    };
    const accept = (p: SearchPerson, step: Step): Candidate | null => {
      const positions = p.current_positions ?? [];
      const pos = positions.find((x) => matches(x.role, step)) ?? positions[0] ?? null;
      if (f.currentEmployerOnly && !pos) return null;
      const seniority = this.levelOf(pos?.role ?? null, step);
      if (seniority === undefined) return null;
      const started = startOf(pos);
      if (since !== null && (started === null || Date.parse(started) < since)) return null;
      return this.candidate(p, pos, seniority, query.kind, started, null);
    };

    const res = await this.pages(steps, page, fingerprint, undefined, body, accept, signal);
    return { candidates: res.candidates, nextCursor: res.nextCursor };
  }

  async companyPeople(
    ref: CompanyRef,
    rawRoles: RoleFilters,
    page: PageRequest,
    signal?: AbortSignal,
  ): Promise<CompanyPeoplePage | null> {
    checkPage(this.name, page);
    const roles = checkCompanyQuery(this.name, ref, rawRoles);
    const domain = normaliseDomain(ref.domain);
    const name = ref.name?.trim() || null;
    const fingerprint = this.fingerprint([
      'company',
      domain,
      name && nameKey(name),
      canonical(roles.titles),
      canonical(roles.seniorities, String),
    ]);
    let co: ResolvedCompany | null;
    if (page.cursor !== undefined) {
      co = this.decodeCursor(page.cursor, fingerprint, SENIORITIES.length).co ?? null;
      if (!co) throw new SourceError(this.name, 'invalid_request', 'cursor does not belong to this query');
    } else co = await this.resolveCompany(domain, name, signal);
    if (!co) return null;
    const company = co.company;
    const id = co.id;
    // Every level in turn, most senior first, so the list is ordered across pages.
    const levels = roles.seniorities?.length ? BY_RANK.filter((l) => roles.seniorities!.includes(l)) : BY_RANK;
    const steps: Step[] = levels.map((level) => ({ level }));

    const body = async (step: Step): Promise<Record<string, unknown> | null> => {
      if (this.api === 'classic') {
        const title = classicTitle(roles.titles, step.level);
        return {
          api: 'classic',
          category: 'people',
          company: [id],
          ...(title ? { advanced_keywords: { title } } : {}),
        };
      }
      return {
        api: 'sales_navigator',
        category: 'people',
        company: { include: [company.name] },
        ...(roles.titles?.length ? { role: { include: unique(roles.titles.map((t) => t.trim())) } } : {}),
        ...(step.level ? { seniority: { include: SN_SENIORITY[step.level] } } : {}),
      };
    };

    const accept = (p: SearchPerson, step: Step): Candidate | null => {
      // Its position at this company (by id; by name when the result gives no id).
      const pos =
        p.current_positions?.find((x) => x.company_id === id) ??
        p.current_positions?.find((x) => !x.company_id && x.company && nameKey(x.company) === nameKey(company.name)) ??
        null;
      if (!pos) return null;
      const seniority = this.levelOf(pos.role, step);
      if (seniority === undefined) return null;
      return this.candidate(p, pos, seniority, 'people_search', startOf(pos), company);
    };

    const res = await this.pages(steps, page, fingerprint, co, body, accept, signal);
    return { company, people: res.candidates, nextCursor: res.nextCursor };
  }

  async profile(url: string, signal?: AbortSignal): Promise<Candidate | null> {
    const normalised = normaliseProfileUrl(url, this.profileHosts);
    const m = normalised ? /^https:\/\/([^/]+)\/in\/[^/]+$/.exec(normalised) : null;
    if (!m || !this.profileHosts.includes(m[1])) return null;
    // The identifier as written (a provider id such as ACoAA… is case-sensitive; normalising lowers it).
    const raw = /\/(?:in|profile|people|pub)\/([^/?#]+)/i.exec(url)?.[1];
    let identifier: string;
    try {
      identifier = decodeURIComponent(raw ?? '');
    } catch {
      return null;
    }
    if (!identifier) return null;
    if (this.visits.remaining() < 1) throw this.visits.exhausted();
    this.visits.take(1);
    const query = new URLSearchParams({
      account_id: this.accountId,
      linkedin_sections: 'experience',
      notify: 'false',
    });
    // Sales Navigator ids differ from Classic ones: ask for the ids the searches return.
    if (this.api === 'sales_navigator') query.set('linkedin_api', 'sales_navigator');
    const body = await this.http.json('GET', `/users/${encodeURIComponent(identifier)}`, {
      query,
      signal,
      notFoundIsNull: true,
    });
    if (body === null) return null;
    const p = parseWire(this.http, userProfile, body);
    const current =
      p.work_experience?.find((w) => w.current === true) ??
      p.work_experience?.find((w) => w.current === null && !w.end) ??
      null;
    const fullName =
      [p.first_name, p.last_name].filter(Boolean).join(' ').trim() || p.public_identifier || p.provider_id;
    const profileUrl =
      p.public_profile_url ??
      (p.public_identifier ? `https://www.linkedin.com/in/${encodeURIComponent(p.public_identifier)}` : null);
    const started = current?.start && !Number.isNaN(Date.parse(current.start)) ? Date.parse(current.start) : null;
    const evidence: Evidence = {
      kind: 'people_search',
      id: p.provider_id,
      text: p.headline ?? fullName,
      url: profileUrl,
      date: new Date(started ?? this.now()).toISOString(),
    };
    return {
      source: this.name,
      externalId: p.provider_id,
      profileUrl,
      fullName,
      firstName: p.first_name ?? splitName(fullName).firstName,
      lastName: p.last_name ?? splitName(fullName).lastName,
      title: current?.position ?? null,
      headline: p.headline,
      seniority: seniorityOf(current?.position),
      company: current?.company ? { name: current.company, domain: null, size: null, industry: null } : null,
      country: countryOfLocation(p.location),
      email: p.contact_info?.emails?.find((e) => e.includes('@')) ?? null,
      currentEmployer: current ? true : null,
      evidence,
      signalKey: signalKey('people_search', { source: this.name, evidenceId: p.provider_id, personId: p.provider_id }),
    };
  }

  close(): Promise<void> {
    return this.http.close();
  }

  // -------------------------------------------------------------------------------------------

  /**
   * One page of a query run as sub-searches (steps) in order: continues the Unipile cursor of the
   * current step, or starts the next step; asks Unipile again only while the page is still empty.
   */
  private async pages(
    steps: Step[],
    page: PageRequest,
    fingerprint: string,
    co: ResolvedCompany | undefined,
    body: (step: Step) => Promise<Record<string, unknown> | null>,
    accept: (p: SearchPerson, step: Step) => Candidate | null,
    signal?: AbortSignal,
  ): Promise<{ candidates: Candidate[]; nextCursor: string | null }> {
    let state: Pick<CursorState, 's' | 'c'> | null =
      page.cursor === undefined ? { s: 0, c: null } : this.decodeCursor(page.cursor, fingerprint, steps.length);
    const out: Candidate[] = [];
    const seen = new Set<string>();
    let calls = 0;
    while (state && out.length === 0 && calls < MAX_CALLS_PER_PAGE) {
      const step = steps[state.s];
      const next = (cursor: string | null): typeof state =>
        cursor ? { s: state!.s, c: cursor } : state!.s + 1 < steps.length ? { s: state!.s + 1, c: null } : null;
      let request: Record<string, unknown> | null;
      if (state.c) request = { cursor: state.c };
      else {
        request = await body(step);
        if (request === null) {
          // Nothing can match this step (a filter value LinkedIn does not know).
          state = next(null);
          continue;
        }
      }
      const remaining = this.profiles.remaining();
      if (remaining < 1) throw this.profiles.exhausted();
      const limit = Math.min(page.limit, SEARCH_LIMIT_MAX[this.api], remaining);
      const raw = await this.http.json('POST', '/linkedin/search', {
        query: new URLSearchParams({ account_id: this.accountId, limit: String(limit) }),
        body: request,
        signal,
      });
      calls++;
      const res = parseWire(this.http, searchResponse, raw);
      this.profiles.take(res.items.length);
      for (const item of res.items.slice(0, limit)) {
        if (item.type !== 'PEOPLE') continue;
        const p = parseWire(this.http, searchPerson, item);
        const c = accept(p, step);
        if (c && !seen.has(c.externalId)) {
          seen.add(c.externalId);
          out.push(c);
        }
      }
      state = next(res.cursor);
    }
    return {
      candidates: out,
      nextCursor: state ? this.encodeCursor({ v: 1, f: fingerprint, s: state.s, c: state.c, co }) : null,
    };
  }

  /**
   * The seniority of a person in a step: the step's level on Sales Navigator (LinkedIn's own);
   * on Classic the one read from the title, which must be the step's (undefined drops the person).
   */
  private levelOf(role: string | null, step: Step): Seniority | null | undefined {
    if (step.level === null) return seniorityOf(role);
    if (this.api === 'sales_navigator') return step.level;
    return seniorityOf(role) === step.level ? step.level : undefined;
  }

  /** The search body's filters that need LinkedIn ids (null: some filter can match nothing). */
  private async baseBody(query: SignalQuery, signal?: AbortSignal): Promise<Record<string, unknown> | null> {
    const f = query.filters ?? {};
    const keywords = keywordsExpr(query.keywords);
    const industries = await this.ids(this.api === 'classic' ? ['INDUSTRY'] : ['SALES_INDUSTRY'], f.industries, signal);
    const countries = await this.ids(
      this.api === 'classic' || this.regionRefused ? ['LOCATION'] : ['REGION', 'LOCATION'],
      f.countries?.map((c) => REGION_NAMES.of(c.toUpperCase()) ?? c.toUpperCase()),
      signal,
    );
    if (industries?.length === 0 || countries?.length === 0) return null;
    if (this.api === 'classic')
      return {
        api: 'classic',
        category: 'people',
        ...(keywords ? { keywords } : {}),
        ...(industries ? { industry: industries } : {}),
        ...(countries ? { location: countries } : {}),
      };
    return {
      api: 'sales_navigator',
      category: 'people',
      ...(keywords ? { keywords } : {}),
      ...(industries ? { industry: { include: industries } } : {}),
      ...(countries ? { location: { include: countries } } : {}),
      ...(f.companySizes?.length ? { company_headcount: unique(f.companySizes).flatMap((s) => HEADCOUNT[s]) } : {}),
    };
  }

  /** LinkedIn ids of names (exact title matches of search/parameters); undefined when no names were given. */
  private async ids(
    types: string[],
    names: readonly string[] | undefined,
    signal?: AbortSignal,
  ): Promise<string[] | undefined> {
    if (!names?.length) return undefined;
    const out: string[] = [];
    for (const name of unique(names.map((n) => n.trim()))) {
      const items = await this.lookup(types, name, signal);
      const hit = items.find((i) => nameKey(i.title) === nameKey(name));
      if (hit) out.push(hit.id);
    }
    return unique(out);
  }

  /** GET /linkedin/search/parameters, cached per process; falls back along `types` when the account refuses one (REGION). */
  private async lookup(types: string[], keywords: string, signal?: AbortSignal): Promise<Parameter[]> {
    for (const [i, type] of types.entries()) {
      if (type === 'REGION' && this.regionRefused) continue;
      const key = `${type}\n${nameKey(keywords)}`;
      const cached = this.parameters.get(key);
      if (cached) return cached;
      try {
        const raw = await this.http.json('GET', '/linkedin/search/parameters', {
          query: new URLSearchParams({
            account_id: this.accountId,
            type,
            keywords,
            limit: String(PARAMETER_LIMIT),
          }),
          signal,
        });
        const items = parseWire(this.http, parametersResponse, raw).items;
        this.parameters.set(key, items);
        return items;
      } catch (err) {
        if (
          type === 'REGION' &&
          i < types.length - 1 &&
          err instanceof SourceError &&
          err.code === 'invalid_request' &&
          err.details.status === 400
        ) {
          this.regionRefused = true;
          continue;
        }
        throw err;
      }
    }
    return [];
  }

  /** GET /linkedin/company/{identifier} (id, public identifier or URN), cached; null when unknown. */
  private async companyProfile(identifier: string, signal?: AbortSignal): Promise<CompanyProfile | null> {
    if (this.companies.has(identifier)) return this.companies.get(identifier)!;
    const raw = await this.http.json('GET', `/linkedin/company/${encodeURIComponent(identifier)}`, {
      query: new URLSearchParams({ account_id: this.accountId }),
      signal,
      notFoundIsNull: true,
    });
    const profile = raw === null ? null : parseWire(this.http, companyProfile, raw);
    this.companies.set(identifier, profile);
    if (profile) this.companies.set(profile.id, profile);
    return profile;
  }

  /**
   * The LinkedIn company a reference names. A domain wins: the companies found by name (and by
   * the domain's label) whose website has that domain; else the company whose name is exactly the
   * name (typeahead, then the name as public identifier). Null when none: the reference is unknown.
   */
  private async resolveCompany(
    domain: string | null,
    name: string | null,
    signal?: AbortSignal,
  ): Promise<ResolvedCompany | null> {
    const key = JSON.stringify([domain, name && nameKey(name)]);
    if (this.resolved.has(key)) return this.resolved.get(key)!;
    const found = (profile: CompanyProfile, id = profile.id): ResolvedCompany => ({
      id,
      company: {
        name: profile.name,
        domain: normaliseDomain(profile.website),
        size: sizeOf(profile.employee_count_range?.from ?? profile.employee_count),
        industry: profile.industry?.[0] ?? null,
      },
    });
    let result: ResolvedCompany | null = null;
    const byName = name ? await this.lookup(['COMPANY'], name, signal) : [];
    if (domain) {
      const byLabel = await this.lookup(['COMPANY'], domainLabel(domain), signal);
      const pool = [...byName, ...byLabel].filter((p, i, all) => all.findIndex((q) => q.id === p.id) === i).slice(0, 5);
      for (const candidate of pool) {
        const profile = await this.companyProfile(candidate.id, signal);
        if (profile && normaliseDomain(profile.website) === domain) {
          result = found(profile, candidate.id);
          break;
        }
      }
      // A name the typeahead does not connect with the domain: the domain's label as the company's
      // public identifier, accepted when its website has the domain.
      if (!result) {
        const byId = await this.companyProfile(domainLabel(domain), signal);
        if (byId && normaliseDomain(byId.website) === domain) result = found(byId);
      }
    }
    if (!result && name) {
      const exact = byName.find((p) => nameKey(p.title) === nameKey(name));
      const profile = exact ? await this.companyProfile(exact.id, signal) : null;
      if (profile && exact) result = found(profile, exact.id);
      else {
        const slug = tokenize(name).join('-');
        const bySlug = slug ? await this.companyProfile(slug, signal) : null;
        if (bySlug && nameKey(bySlug.name) === nameKey(name)) result = found(bySlug);
      }
    }
    this.resolved.set(key, result);
    return result;
  }

  private candidate(
    p: SearchPerson,
    pos: Position | null,
    seniority: Seniority | null,
    kind: SignalKind,
    started: string | null,
    company: Company | null,
  ): Candidate | null {
    const fullName = p.name?.trim() || [p.first_name, p.last_name].filter(Boolean).join(' ').trim();
    if (!fullName) return null;
    const split = splitName(fullName);
    const profileUrl =
      p.public_profile_url ??
      (p.public_identifier ? `https://www.linkedin.com/in/${encodeURIComponent(p.public_identifier)}` : null) ??
      // Unipile's own payloads link Classic ids as /in/<id>; Sales Navigator ids have no such page.
      (/^ACo/.test(p.id) ? `https://www.linkedin.com/in/${p.id}` : null) ??
      p.profile_url;
    const evidence: Evidence = {
      kind,
      id: p.id,
      text: p.headline ?? fullName,
      url: profileUrl,
      date: started ?? new Date(this.now()).toISOString(),
    };
    return {
      source: this.name,
      externalId: p.id,
      profileUrl,
      fullName,
      firstName: p.first_name ?? split.firstName,
      lastName: p.last_name ?? split.lastName,
      title: pos?.role ?? null,
      headline: p.headline,
      seniority,
      company:
        company ??
        (pos?.company ? { name: pos.company, domain: null, size: null, industry: pos.industry?.[0] ?? null } : null),
      country: countryOfLocation(p.location),
      email: null,
      currentEmployer: pos ? true : null,
      evidence,
      signalKey: signalKey(kind, { source: this.name, evidenceId: p.id, personId: p.id }),
    };
  }

  private fingerprint(parts: unknown[]): string {
    return createHash('sha256')
      .update(JSON.stringify([this.api, this.accountId, ...parts]))
      .digest('base64url')
      .slice(0, 16);
  }

  private encodeCursor(state: CursorState): string {
    return Buffer.from(JSON.stringify(state)).toString('base64url');
  }

  private decodeCursor(cursor: string, fingerprint: string, steps: number): CursorState {
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    } catch {
      parsed = null;
    }
    const r = cursorSchema.safeParse(parsed);
    if (!r.success || r.data.f !== fingerprint || r.data.s >= steps)
      throw new SourceError(this.name, 'invalid_request', 'cursor does not belong to this query');
    return r.data;
  }
}
