// The stand-in's LinkedIn search area (issue 44; /work/unipile-notes.md §7, §4): people search
// (Classic and Sales Navigator bodies, the cursor body, the documented `limit` bounds), search
// parameters, company profiles and — only with `{ users: true }`, since test/helpers/unipile/accounts.ts
// serves it otherwise — user profiles. Answers in the documented shapes, from a people/company
// fixture generated deterministically from a seed.
//
// Search semantics the docs do not spell out, modelled on LinkedIn's own search: `keywords` and
// Classic's `advanced_keywords.title` are Boolean expressions (quoted phrases, AND, OR, NOT,
// parentheses, adjacent terms ANDed; whole words, case-insensitive) over the headline and the
// current job titles; a plain-text SN `role` matches a title holding every word of it; the
// position filters (company, title/role, seniority, headcount) must hold on one current position.
// Results come in fixture order; the stand-in's cursor is opaque and carries the query.
import type { Seniority } from '../../../lib/sources/types.js';
import { tokenize } from '../../../lib/sources/words.js';
import { unipileError, type StandIn, type StandInHandler, type StandInReply, type StandInRequest } from './stand-in.js';

export interface Param {
  id: string;
  title: string;
}

export interface FixtureCompany {
  /** LinkedIn's numeric company id. */
  id: string;
  name: string;
  publicIdentifier: string;
  website: string;
  domain: string;
  industry: Param;
  employeeCount: number;
  range: { from: number; to: number };
  city: string;
  country: string;
}

export interface FixturePosition {
  company: FixtureCompany;
  role: string;
  /** Our level of the role (what lib/sources/unipile-pronet.ts seniorityOf reads from it). */
  level: Seniority;
  /** Sales Navigator's SENIORITY LEVEL of the position. */
  salesSeniority: string;
  start: { year: number; month: number };
}

export interface FixturePerson {
  index: number;
  /** Classic provider id, `ACoAA…`. */
  providerId: string;
  /** Sales Navigator id, `ACwAA…`. */
  salesId: string;
  /** Null for some people (as LinkedIn hides it out of network). */
  publicIdentifier: string | null;
  firstName: string;
  lastName: string;
  headline: string;
  /** "City, Country". */
  location: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
  locationId: string;
  industry: Param;
  /** Current positions, the primary first; empty for some people. */
  positions: FixturePosition[];
  networkDistance: 'DISTANCE_1' | 'DISTANCE_2' | 'DISTANCE_3' | 'OUT_OF_NETWORK';
  /** In contact_info, first-degree relations only. */
  email: string | null;
}

export interface SearchFixture {
  seed: number;
  companies: FixtureCompany[];
  people: FixturePerson[];
  industries: Param[];
  /** Countries (with their ISO code) and a few areas. */
  locations: (Param & { code: string | null })[];
  titles: Param[];
}

const FIRST = ['Ada', 'Grace', 'Alan', 'Linus', 'Margaret', 'Ken', 'Barbara', 'Dennis', 'Frances', 'Edsger', 'Radia'];
const LAST = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Torvalds',
  'Hamilton',
  'Thompson',
  'Liskov',
  'Ritchie',
  'Allen',
  'Perlman',
];
const BRANDS = ['Northwind', 'Contoso', 'Fabrikam', 'Globex', 'Initech', 'Hooli', 'Vandelay', 'Tyrell', 'Aperture'];
const KINDS = ['Labs', 'Systems', 'Group', 'Analytics', 'Software', 'Health', 'Capital', 'Logistics'];
const FUNCTIONS = ['Sales', 'Marketing', 'Engineering', 'Operations', 'Finance', 'Product', 'People'];
const TOPICS = ['cold email', 'outbound', 'SEO', 'RevOps', 'B2B SaaS', 'data pipelines', 'growth marketing'];
export const FIXTURE_INDUSTRIES: Param[] = [
  { id: '4', title: 'Software Development' },
  { id: '43', title: 'Financial Services' },
  { id: '96', title: 'IT Services and IT Consulting' },
  { id: '80', title: 'Marketing Services' },
  { id: '14', title: 'Hospitals and Health Care' },
  { id: '27', title: 'Retail' },
];
export const FIXTURE_LOCATIONS: (Param & { code: string | null; cities: string[] })[] = [
  { id: '103644278', title: 'United States', code: 'US', cities: ['New York', 'Austin', 'Seattle'] },
  { id: '101282230', title: 'Germany', code: 'DE', cities: ['Berlin', 'Munich'] },
  { id: '101165590', title: 'United Kingdom', code: 'GB', cities: ['London', 'Manchester'] },
  { id: '105015875', title: 'France', code: 'FR', cities: ['Paris', 'Lyon'] },
  { id: '102890719', title: 'Netherlands', code: 'NL', cities: ['Amsterdam'] },
  { id: '90000070', title: 'New York City Metropolitan Area', code: null, cities: [] },
  { id: '90009706', title: 'Greater Munich Metropolitan Area', code: null, cities: [] },
];
const HEADCOUNTS: [number, number][] = [
  [1, 10],
  [11, 50],
  [51, 200],
  [201, 500],
  [501, 1000],
  [1001, 5000],
  [5001, 10000],
];

const ROLES: Record<Seniority, (fn: string) => string[]> = {
  founder: () => ['Founder', 'Co-Founder', 'Founder & CEO', 'Owner'],
  cxo: () => ['Chief Executive Officer', 'CEO', 'CTO', 'CFO', 'Chief Revenue Officer', 'COO', 'President'],
  vp: (f) => [`VP of ${f}`, `Vice President, ${f}`, `SVP ${f}`],
  director: (f) => [`Director of ${f}`, `Head of ${f}`, `${f} Director`],
  manager: (f) => [`${f} Manager`, `${f} Team Lead`],
  senior: (f) => [`Senior ${f} Specialist`, `Principal ${f} Consultant`, `Staff ${f} Analyst`],
  entry: (f) => [`${f} Associate`, `${f} Coordinator`, `Junior ${f} Analyst`, `${f} Representative`],
};
/** Sales Navigator's documented SENIORITY LEVEL values, by our level. */
const SALES_LEVELS: Record<Seniority, string[]> = {
  founder: ['owner/partner'],
  cxo: ['cxo'],
  vp: ['vice_president'],
  director: ['director'],
  manager: ['experienced_manager', 'entry_level_manager'],
  senior: ['senior', 'strategic'],
  entry: ['entry_level', 'in_training'],
};
export const SALES_SENIORITY_VALUES = Object.values(SALES_LEVELS).flat();
const LEVEL_WEIGHTS: [Seniority, number][] = [
  ['entry', 30],
  ['senior', 20],
  ['manager', 18],
  ['director', 12],
  ['vp', 8],
  ['cxo', 6],
  ['founder', 6],
];

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const slug = (s: string) => tokenize(s).join('-');

/** People and companies for the stand-in, the same for the same options. Company 1 has company 0's name (another domain). */
export function generateSearchFixture(
  opts: { seed?: number; people?: number; companies?: number } = {},
): SearchFixture {
  const seed = opts.seed ?? 44;
  const rnd = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const idChars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
  const countries = FIXTURE_LOCATIONS.filter((l) => l.code);

  const names = BRANDS.flatMap((b) => KINDS.map((k) => `${b} ${k}`));
  for (let i = names.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [names[i], names[j]] = [names[j], names[i]];
  }
  const companies: FixtureCompany[] = [];
  const nCompanies = Math.min(opts.companies ?? 40, names.length);
  for (let i = 0; i < nCompanies; i++) {
    const name = i === 1 ? names[0] : names[i];
    const publicIdentifier = i === 1 ? `${slug(name)}-global` : slug(name);
    const [from, to] = pick(HEADCOUNTS);
    const loc = pick(countries);
    companies.push({
      id: String(1_000_000 + i * 7919),
      name,
      publicIdentifier,
      domain: `${publicIdentifier}.example`,
      website: `https://www.${publicIdentifier}.example`,
      industry: pick(FIXTURE_INDUSTRIES),
      employeeCount: from + Math.floor(rnd() * (to - from + 1)),
      range: { from, to },
      city: loc.cities[0],
      country: loc.code!,
    });
  }

  const level = (): Seniority => {
    let r = rnd() * 100;
    for (const [l, w] of LEVEL_WEIGHTS) if ((r -= w) < 0) return l;
    return 'entry';
  };
  const position = (company: FixtureCompany, lvl: Seniority, role?: string): FixturePosition => ({
    company,
    role: role ?? pick(ROLES[lvl](pick(FUNCTIONS))),
    level: lvl,
    salesSeniority: pick(SALES_LEVELS[lvl]),
    start: { year: 2015 + Math.floor(rnd() * 11), month: 1 + Math.floor(rnd() * 12) },
  });
  const people: FixturePerson[] = [];
  const distances = ['DISTANCE_1', 'DISTANCE_2', 'DISTANCE_3', 'OUT_OF_NETWORK'] as const;
  for (let i = 0; i < (opts.people ?? 600); i++) {
    let suffix = '';
    for (let k = 0; k < 34; k++) suffix += idChars[Math.floor(rnd() * idChars.length)];
    const firstName = pick(FIRST);
    const lastName = pick(LAST);
    const loc = pick(countries);
    const company = pick(companies);
    const positions = rnd() < 0.05 ? [] : [position(company, level())];
    if (positions.length && rnd() < 0.1) {
      const other = pick(companies.filter((c) => c !== company));
      positions.push(position(other, 'entry', 'Advisor'));
    }
    const primary = positions[0];
    const networkDistance = distances[i % distances.length];
    const hex = Math.floor(rnd() * 0xffff)
      .toString(16)
      .padStart(4, '0');
    people.push({
      index: i,
      providerId: `ACoAA${suffix}`,
      salesId: `ACwAA${suffix}`,
      publicIdentifier: i % 12 === 11 ? null : `${slug(firstName)}-${slug(lastName)}-${hex}`,
      firstName,
      lastName,
      headline: `${primary ? `${primary.role} at ${primary.company.name}` : 'Open to work'}${rnd() < 0.6 ? ` | ${pick(TOPICS)}` : ''}`,
      location: `${pick(loc.cities)}, ${loc.title}`,
      country: loc.code!,
      locationId: loc.id,
      industry: primary?.company.industry ?? pick(FIXTURE_INDUSTRIES),
      positions,
      networkDistance,
      email:
        networkDistance === 'DISTANCE_1' && primary
          ? `${slug(firstName)}.${slug(lastName)}.${i}@${primary.company.domain}`
          : null,
    });
  }
  const titles = [...new Set(people.flatMap((p) => p.positions.map((x) => x.role)))]
    .sort()
    .map((title, i) => ({ id: String(25_000 + i), title }));
  return {
    seed,
    companies,
    people,
    industries: FIXTURE_INDUSTRIES,
    locations: FIXTURE_LOCATIONS.map(({ id, title, code }) => ({ id, title, code })),
    titles,
  };
}

// ---------------------------------------------------------------------------------------------

export interface SearchStandInOptions {
  /** Also serve GET /users/{identifier} (off by default: accounts.ts serves it). */
  users?: boolean;
  /**
   * Also accept parameter type REGION (which Sales Navigator's `location` asks for, while the
   * parameters route does not list it): off by default, so REGION answers 400 invalid_parameters.
   */
  region?: boolean;
}

export interface SearchControl {
  fixture: SearchFixture;
  /** While set, every route of this area answers 429 `too_many_requests` (with Retry-After when given). */
  tooManyRequests: null | { retryAfter?: string };
  /** Replies for the next requests to this area, in order (then back to normal). */
  faults: StandInReply[];
  /** Queues `count` documented errors. */
  fail(status: number, type: string, count?: number): void;
}

export const LIMIT_MAX = { classic: 50, sales_navigator: 100 } as const;
const PARAMETER_TYPES = new Set([
  'LOCATION',
  'PEOPLE',
  'CONNECTIONS',
  'COMPANY',
  'SCHOOL',
  'INDUSTRY',
  'SERVICE',
  'JOB_FUNCTION',
  'JOB_TITLE',
  'EMPLOYMENT_TYPE',
  'SKILL',
  'GROUPS',
  'SALES_INDUSTRY',
  'DEPARTMENT',
  'PERSONA',
  'ACCOUNT_LISTS',
  'LEAD_LISTS',
  'TECHNOLOGIES',
  'SAVED_ACCOUNTS',
  'SAVED_SEARCHES',
  'RECENT_SEARCHES',
  'POSTAL_CODE',
  'HIRING_PROJECTS',
  'SAVED_FILTERS',
]);
const HEADCOUNT_MIN = new Set([1, 11, 51, 201, 501, 1001, 5001, 10001]);
const HEADCOUNT_MAX = new Set([1, 10, 50, 200, 500, 1000, 5000, 10000]);
const PROFILE_DISTANCE = {
  DISTANCE_1: 'FIRST_DEGREE',
  DISTANCE_2: 'SECOND_DEGREE',
  DISTANCE_3: 'THIRD_DEGREE',
  OUT_OF_NETWORK: 'OUT_OF_NETWORK',
} as const;
const VIEWER_PERMISSIONS = [
  'canMembersInviteToFollow',
  'canReadContentSuggestions',
  'canReadMessages',
  'canUpdateOrganizationProfile',
  'canCreateOrganicShare',
  'canReadAdminDashboard',
  'canReadOrganizationActivity',
  'canEditCurators',
  'canManageOrganizationalPageFollow',
  'canReadOrganizationFollowerAnalytics',
  'canInviteMemberToFollow',
  'canReadOrganizationLeadsAnalytics',
  'canEditPendingAdministrators',
  'canManageMessagingAccess',
  'canSeeEmployeeExperienceAsMember',
  'canEmployeesInviteToFollow',
  'canSeeOrganizationAdministrativePage',
  'canManageAdminRoles',
  'canEditOrganizationDetails',
  'canApproveContent',
  'canViewTeamPerformance',
  'canManageOrganizationSettings',
  'canAccessAdvancedAnalytics',
  'canModerateComments',
  'canCreateAds',
  'canManageAdBudgets',
  'canEditPageTheme',
  'canPublishNewsletters',
  'canEditCustomTabs',
  'canManageIntegrations',
  'canAssignRoles',
  'canApprovePendingMembers',
  'canEditCareerPageSettings',
  'canViewBillingInformation',
];

class Invalid extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}
const invalid = (message: string) => new Invalid('invalid_parameters', message);

/** Registers POST /linkedin/search, GET /linkedin/search/parameters, GET /linkedin/company/{identifier} (and GET /users/{identifier} with `users`). */
export function registerSearch(
  standIn: StandIn,
  fixture: SearchFixture,
  options: SearchStandInOptions = {},
): SearchControl {
  const control: SearchControl = {
    fixture,
    tooManyRequests: null,
    faults: [],
    fail(status, type, count = 1) {
      for (let i = 0; i < count; i++) this.faults.push(unipileError(status, type, type.replace(/_/g, ' ')));
    },
  };
  const guarded =
    (handler: StandInHandler): StandInHandler =>
    async (req) => {
      if (control.tooManyRequests) {
        const reply = unipileError(
          429,
          'too_many_requests',
          'Too many requests',
          'The provider cannot accept any more requests at the moment. Please try again later.',
        );
        const retryAfter = control.tooManyRequests.retryAfter;
        return retryAfter ? { ...reply, headers: { 'retry-after': retryAfter } } : reply;
      }
      const fault = control.faults.shift();
      if (fault) return fault;
      if (!req.query.get('account_id'))
        return unipileError(400, 'missing_parameters', 'Missing parameters', 'account_id');
      try {
        return await handler(req);
      } catch (err) {
        if (err instanceof Invalid) return unipileError(400, err.type, 'Invalid parameters', err.message);
        throw err;
      }
    };

  standIn.route(
    'POST',
    /^\/linkedin\/search$/,
    guarded((req) => search(fixture, req)),
  );
  standIn.route(
    'GET',
    /^\/linkedin\/search\/parameters$/,
    guarded((req) => parameters(fixture, req, options)),
  );
  standIn.route(
    'GET',
    /^\/linkedin\/company\/([^/]+)$/,
    guarded((req) => companyProfile(fixture, decodeURIComponent(req.params[0]))),
  );
  if (options.users)
    standIn.route(
      'GET',
      /^\/users\/([^/]+)$/,
      guarded((req) => userProfile(fixture, req)),
    );
  return control;
}

// ---------------------------------------------------------------------------------------------
// POST /linkedin/search

interface StoredSearch {
  b: Record<string, unknown>;
  s: number;
}

function search(fixture: SearchFixture, req: StandInRequest): StandInReply {
  const rawLimit = req.query.get('limit');
  const limit = rawLimit === null ? 10 : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 0 || limit > 100) throw invalid('limit must be an integer from 0 to 100');
  const json = req.json;
  if (!json || typeof json !== 'object' || Array.isArray(json))
    return unipileError(400, 'malformed_request', 'Malformed request', 'a JSON body is required');
  const given = json as Record<string, unknown>;
  const cursorText = typeof given.cursor === 'string' ? given.cursor : req.query.get('cursor');
  let body: Record<string, unknown>;
  let start = 0;
  if (cursorText) {
    let stored: StoredSearch;
    try {
      stored = JSON.parse(Buffer.from(cursorText, 'base64url').toString('utf8')) as StoredSearch;
    } catch {
      throw invalid('cursor is not valid');
    }
    if (!stored || typeof stored.b !== 'object' || !Number.isInteger(stored.s)) throw invalid('cursor is not valid');
    body = stored.b;
    start = stored.s;
  } else body = given;
  const api = body.api;
  if (api !== 'classic' && api !== 'sales_navigator')
    throw invalid('api must be classic or sales_navigator (recruiter is not served by the stand-in)');
  if (body.category !== 'people') throw invalid('only category people is served by the stand-in');
  if (limit > LIMIT_MAX[api])
    throw invalid(`limit can be set up to 100 results for Sales Navigator, but Linkedin Classic shouldn't exceed 50`);
  const test = api === 'classic' ? classicFilter(body) : salesFilter(body, fixture);
  const matches = fixture.people.filter(test);
  const page = matches.slice(start, start + limit);
  const next = start + page.length;
  return {
    status: 200,
    body: {
      object: 'LinkedinSearch',
      items: page.map((p) => searchItem(p, api)),
      config: { params: body },
      paging: { start, page_count: page.length, total_count: matches.length },
      cursor:
        page.length > 0 && next < matches.length
          ? Buffer.from(JSON.stringify({ b: body, s: next } satisfies StoredSearch)).toString('base64url')
          : null,
    },
  };
}

const norm = (text: string) => ` ${tokenize(text).join(' ')} `;

function ids(name: string, value: unknown): Set<string> | null {
  if (value === undefined) return null;
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string' && /^\d+$/.test(v)))
    throw invalid(`${name} must be a non-empty array of ids (digits)`);
  return new Set(value as string[]);
}

function texts(name: string, value: unknown): string[] | null {
  if (value === undefined) return null;
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string' && v.length > 0))
    throw invalid(`${name} must be a non-empty array of strings`);
  return value as string[];
}

function include(name: string, value: unknown): unknown {
  if (value === undefined) return undefined;
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw invalid(`${name} must be { include, exclude }`);
  const v = value as Record<string, unknown>;
  if (v.exclude !== undefined) throw invalid(`${name}.exclude is not served by the stand-in`);
  return v.include;
}

function classicFilter(body: Record<string, unknown>): (p: FixturePerson) => boolean {
  const keywords = body.keywords === undefined ? null : booleanQuery('keywords', body.keywords);
  const advanced = body.advanced_keywords as Record<string, unknown> | undefined;
  if (advanced !== undefined && (typeof advanced !== 'object' || advanced === null))
    throw invalid('advanced_keywords must be an object');
  const title = advanced?.title === undefined ? null : booleanQuery('advanced_keywords.title', advanced.title);
  const industry = ids('industry', body.industry);
  const location = ids('location', body.location);
  const company = ids('company', body.company);
  return (p) =>
    (!keywords || evaluate(keywords, norm(p.headline))) &&
    (!industry || industry.has(p.industry.id)) &&
    (!location || location.has(p.locationId)) &&
    (!title && !company
      ? true
      : p.positions.some((x) => (!title || evaluate(title, norm(x.role))) && (!company || company.has(x.company.id))));
}

function salesFilter(body: Record<string, unknown>, fixture: SearchFixture): (p: FixturePerson) => boolean {
  const keywords = body.keywords === undefined ? null : booleanQuery('keywords', body.keywords);
  const industry = ids('industry.include', include('industry', body.industry));
  const location = ids('location.include', include('location', body.location));
  const companies = texts('company.include', include('company', body.company));
  const roles = texts('role.include', include('role', body.role));
  const seniority = texts('seniority.include', include('seniority', body.seniority));
  for (const s of seniority ?? [])
    if (!SALES_SENIORITY_VALUES.includes(s)) throw invalid(`seniority.include: ${s} is not a SENIORITY LEVEL`);
  let headcount: { min?: number; max?: number }[] | null = null;
  if (body.company_headcount !== undefined) {
    const h = body.company_headcount;
    if (!Array.isArray(h) || h.length === 0) throw invalid('company_headcount must be a non-empty array');
    for (const r of h as { min?: unknown; max?: unknown }[]) {
      if (
        !r ||
        typeof r !== 'object' ||
        (r.min !== undefined && !HEADCOUNT_MIN.has(r.min as number)) ||
        (r.max !== undefined && !HEADCOUNT_MAX.has(r.max as number))
      )
        throw invalid('company_headcount: min and max take the documented values');
    }
    headcount = h as { min?: number; max?: number }[];
  }
  const roleTests = roles?.map((r) => {
    if (/^\d+$/.test(r)) {
      const title = fixture.titles.find((t) => t.id === r)?.title.toLowerCase();
      return (role: string) => role.toLowerCase() === title;
    }
    const words = tokenize(r).filter((w) => !['of', 'and', 'the', 'for', 'at', 'in'].includes(w));
    return (role: string) => words.every((w) => norm(role).includes(` ${w} `));
  });
  const companyTest = companies?.map((c) =>
    /^\d+$/.test(c)
      ? (x: FixtureCompany) => x.id === c
      : (x: FixtureCompany) => x.name.trim().toLowerCase() === c.trim().toLowerCase(),
  );
  return (p) =>
    (!keywords || evaluate(keywords, norm(p.headline))) &&
    (!industry || industry.has(p.industry.id)) &&
    (!location || location.has(p.locationId)) &&
    (!companyTest && !roleTests && !seniority && !headcount
      ? true
      : p.positions.some(
          (x) =>
            (!companyTest || companyTest.some((t) => t(x.company))) &&
            (!roleTests || roleTests.some((t) => t(x.role))) &&
            (!seniority || seniority.includes(x.salesSeniority)) &&
            (!headcount ||
              headcount.some(
                (r) => x.company.employeeCount >= (r.min ?? 0) && x.company.employeeCount <= (r.max ?? Infinity),
              )),
        ));
}

function searchItem(p: FixturePerson, api: 'classic' | 'sales_navigator') {
  const id = api === 'sales_navigator' ? p.salesId : p.providerId;
  return {
    object: 'SearchResult',
    type: 'PEOPLE',
    id,
    public_identifier: p.publicIdentifier,
    public_profile_url: p.publicIdentifier ? `https://www.linkedin.com/in/${p.publicIdentifier}` : null,
    profile_url:
      api === 'sales_navigator'
        ? `https://www.linkedin.com/sales/lead/${p.salesId}`
        : `https://www.linkedin.com/in/${p.providerId}`,
    profile_picture_url: null,
    profile_picture_url_large: null,
    member_urn: `urn:li:member:${100_000 + p.index}`,
    name: `${p.firstName} ${p.lastName}`,
    first_name: p.firstName,
    last_name: p.lastName,
    network_distance: p.networkDistance,
    location: p.location,
    industry: p.industry.title,
    headline: p.headline,
    current_positions: p.positions.map((x) => ({
      company: x.company.name,
      company_id: x.company.id,
      description: null,
      role: x.role,
      location: p.location,
      industry: [x.company.industry.title],
      start: x.start,
      skills: null,
    })),
  };
}

// ---------------------------------------------------------------------------------------------
// LinkedIn's Boolean search, as the stand-in reads it.

type BoolNode =
  | { t: 'term'; phrase: string }
  | { t: 'and' | 'or'; a: BoolNode; b: BoolNode }
  | { t: 'not'; a: BoolNode }
  | { t: 'any' };

function booleanQuery(name: string, value: unknown): BoolNode {
  if (typeof value !== 'string') throw invalid(`${name} must be a string`);
  const tokens = value.match(/"[^"]*"|\(|\)|[^\s()"]+/g) ?? [];
  let i = 0;
  const peek = () => tokens[i];
  const primary = (): BoolNode => {
    const tok = tokens[i++];
    if (tok === undefined) throw invalid(`${name}: the expression ends too early`);
    if (tok === '(') {
      const node = or();
      if (tokens[i++] !== ')') throw invalid(`${name}: a parenthesis is not closed`);
      return node;
    }
    if (tok === ')' || tok === 'AND' || tok === 'OR') throw invalid(`${name}: unexpected ${tok}`);
    const words = tokenize(tok.startsWith('"') ? tok.slice(1, -1) : tok);
    return words.length ? { t: 'term', phrase: ` ${words.join(' ')} ` } : { t: 'any' };
  };
  const not = (): BoolNode => {
    if (peek() === 'NOT') {
      i++;
      return { t: 'not', a: not() };
    }
    return primary();
  };
  const and = (): BoolNode => {
    let node = not();
    while (i < tokens.length && peek() !== 'OR' && peek() !== ')') {
      if (peek() === 'AND') i++;
      node = { t: 'and', a: node, b: not() };
    }
    return node;
  };
  const or = (): BoolNode => {
    let node = and();
    while (peek() === 'OR') {
      i++;
      node = { t: 'or', a: node, b: and() };
    }
    return node;
  };
  const root = tokens.length ? or() : ({ t: 'any' } as BoolNode);
  if (i < tokens.length) throw invalid(`${name}: unexpected ${tokens[i]}`);
  return root;
}

function evaluate(node: BoolNode, text: string): boolean {
  switch (node.t) {
    case 'any':
      return true;
    case 'term':
      return text.includes(node.phrase);
    case 'not':
      return !evaluate(node.a, text);
    case 'and':
      return evaluate(node.a, text) && evaluate(node.b, text);
    case 'or':
      return evaluate(node.a, text) || evaluate(node.b, text);
  }
}

// ---------------------------------------------------------------------------------------------
// GET /linkedin/search/parameters, GET /linkedin/company/{identifier}, GET /users/{identifier}

function parameters(fixture: SearchFixture, req: StandInRequest, options: SearchStandInOptions): StandInReply {
  const type = req.query.get('type');
  if (!type) return unipileError(400, 'missing_parameters', 'Missing parameters', 'type');
  if (!PARAMETER_TYPES.has(type) && !(type === 'REGION' && options.region))
    throw invalid(`type ${type} is not a search parameter type`);
  const rawLimit = req.query.get('limit');
  const limit = rawLimit === null ? 10 : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw invalid('limit must be an integer from 1 to 100');
  const compact = (s: string) => tokenize(s).join('');
  const keywords = compact(req.query.get('keywords') ?? '');
  const all: Param[] =
    type === 'INDUSTRY' || type === 'SALES_INDUSTRY'
      ? fixture.industries
      : type === 'LOCATION' || type === 'REGION'
        ? fixture.locations.map(({ id, title }) => ({ id, title }))
        : type === 'COMPANY'
          ? fixture.companies.map((c) => ({ id: c.id, title: c.name }))
          : type === 'JOB_TITLE'
            ? fixture.titles
            : [];
  const items = all.filter((p) => !keywords || compact(p.title).includes(keywords)).slice(0, limit);
  return {
    status: 200,
    body: {
      object: 'LinkedinSearchParametersList',
      items: items.map((p) => ({ object: 'LinkedinSearchParameter', id: p.id, title: p.title })),
      paging: { page_count: items.length },
    },
  };
}

function companyProfile(fixture: SearchFixture, identifier: string): StandInReply {
  const c = fixture.companies.find(
    (x) =>
      x.id === identifier ||
      x.publicIdentifier === identifier.toLowerCase() ||
      `urn:li:fsd_company:${x.id}` === identifier,
  );
  if (!c) return unipileError(404, 'resource_not_found', 'Resource not found', `no company ${identifier}`);
  return {
    status: 200,
    body: {
      object: 'CompanyProfile',
      id: c.id,
      name: c.name,
      description: `${c.name} builds things.`,
      entity_urn: `urn:li:fsd_company:${c.id}`,
      public_identifier: c.publicIdentifier,
      profile_url: `https://www.linkedin.com/company/${c.publicIdentifier}/`,
      followers_count: c.employeeCount * 3,
      hashtags: [],
      messaging: { is_enabled: false },
      claimed: true,
      viewer_permissions: Object.fromEntries(VIEWER_PERMISSIONS.map((k) => [k, false])),
      organization_type: 'PRIVATELY_HELD',
      locations: [{ is_headquarter: true, country: c.country, city: c.city, street: [] }],
      industry: [c.industry.title],
      employee_count: c.employeeCount,
      employee_count_range: c.range,
      website: c.website,
    },
  };
}

function userProfile(fixture: SearchFixture, req: StandInRequest): StandInReply {
  const identifier = decodeURIComponent(req.params[0]);
  const p = fixture.people.find(
    (x) =>
      x.providerId === identifier ||
      x.salesId === identifier ||
      (x.publicIdentifier !== null && x.publicIdentifier === identifier.toLowerCase()),
  );
  if (!p) return unipileError(404, 'resource_not_found', 'Resource not found', `no user ${identifier}`);
  const api = req.query.get('linkedin_api');
  if (api !== null && api !== 'sales_navigator' && api !== 'recruiter') throw invalid('linkedin_api is not valid');
  const sections = req.query.getAll('linkedin_sections');
  const experience = sections.includes('*') || sections.includes('experience');
  return {
    status: 200,
    body: {
      object: 'UserProfile',
      provider: 'LINKEDIN',
      provider_id: api === 'sales_navigator' ? p.salesId : p.providerId,
      public_identifier: p.publicIdentifier,
      first_name: p.firstName,
      last_name: p.lastName,
      headline: p.headline,
      location: p.location,
      websites: [],
      network_distance: PROFILE_DISTANCE[p.networkDistance],
      ...(p.publicIdentifier ? { public_profile_url: `https://www.linkedin.com/in/${p.publicIdentifier}` } : {}),
      ...(p.email ? { contact_info: { emails: [p.email] } } : {}),
      ...(experience
        ? {
            work_experience: p.positions.map((x) => ({
              position: x.role,
              company_id: x.company.id,
              company: x.company.name,
              current: true,
              skills: [],
              start: new Date(Date.UTC(x.start.year, x.start.month - 1, 1)).toISOString(),
              end: null,
            })),
          }
        : {}),
    },
  };
}
