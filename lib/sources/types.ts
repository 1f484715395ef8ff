// The discovery-source contract: what a signal asks for (SignalQuery), what a source answers
// (Candidate pages), and the errors a source may raise. Everything here is plain JSON (ISO date
// strings, no classes in the data) so that candidates can cross Temporal activity boundaries as is.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ProviderError, RETRYABLE_CODES, type ProviderErrorCode, type ProviderErrorDetails } from '../provider-http.js';

export const SIGNAL_KINDS = [
  'post_keywords',
  'people_search',
  'job_change',
  'hiring',
  'funding',
  'company_event',
] as const;
/**
 * - post_keywords: newsforum posts and comments mentioning any of the keywords
 * - people_search: professional-network people matching the ICP filters (keywords match headlines)
 * - job_change: people who started at a new employer
 * - hiring / funding: a company's open roles / funding rounds; candidates are its current employees
 * - company_event: other company news (launch, expansion, acquisition, partnership)
 */
export type SignalKind = (typeof SIGNAL_KINDS)[number];

export const SOURCE_NAMES = ['newsforum', 'pronet'] as const;
export type SourceName = (typeof SOURCE_NAMES)[number];

export const SENIORITIES = ['entry', 'senior', 'manager', 'director', 'vp', 'cxo', 'founder'] as const;
export type Seniority = (typeof SENIORITIES)[number];

export const COMPANY_SIZES = ['1-10', '11-50', '51-200', '201-500', '501-1000', '1001-5000', '5001+'] as const;
export type CompanySize = (typeof COMPANY_SIZES)[number];

/** Largest page a source serves; callers ask for less or get a SourceError('invalid_request'). */
export const MAX_PAGE_LIMIT = 200;

const text = z.string().trim().min(1).max(200);

/** Filters a source applies to the person (and their company) behind each piece of evidence. */
export const signalFiltersSchema = z.object({
  /** A person matches a title when every word of it occurs in their title ("head sales" ~ "Head of Sales"). */
  titles: z.array(text).max(50).optional(),
  seniorities: z.array(z.enum(SENIORITIES)).max(SENIORITIES.length).optional(),
  /** Case-insensitive, exact industry names. */
  industries: z.array(text).max(50).optional(),
  /** ISO 3166-1 alpha-2, any case. */
  countries: z
    .array(z.string().regex(/^[A-Za-z]{2}$/))
    .max(250)
    .optional(),
  companySizes: z.array(z.enum(COMPANY_SIZES)).max(COMPANY_SIZES.length).optional(),
  /** Only evidence dated at or after this instant (ISO 8601). */
  since: z.iso.datetime({ offset: true }).optional(),
  /** Only people whose company is their current employer (the agent's require_current_employer). */
  currentEmployerOnly: z.boolean().optional(),
});
export type SignalFilters = z.infer<typeof signalFiltersSchema>;

export const signalQuerySchema = z.object({
  kind: z.enum(SIGNAL_KINDS),
  /** Any of them matches (OR); a multi-word keyword matches as a phrase; case-insensitive, whole words. */
  keywords: z.array(text).max(50).optional(),
  filters: signalFiltersSchema.optional(),
});
export type SignalQuery = z.infer<typeof signalQuerySchema>;

export interface Company {
  name: string;
  domain: string | null;
  size: CompanySize | null;
  industry: string | null;
}

/** What triggered the candidate: a post or comment, a company event, a job change, or the profile itself. */
export interface Evidence {
  kind: SignalKind;
  /** The source's id of the evidence item (post, comment, event, job change or profile). */
  id: string;
  text: string;
  url: string | null;
  /** ISO 8601 UTC. */
  date: string;
}

export interface Candidate {
  source: SourceName;
  /** The source's id of the person (author id on newsforum, person id on pronet). */
  externalId: string;
  /** Professional-network profile when known, else the source's own user page. Not normalised: see lib/normalise.ts. */
  profileUrl: string | null;
  fullName: string;
  firstName: string | null;
  lastName: string | null;
  title: string | null;
  headline: string | null;
  seniority: Seniority | null;
  company: Company | null;
  /** ISO 3166-1 alpha-2, upper case. */
  country: string | null;
  email: string | null;
  /** False when `company` is a former employer; null when the source does not say. */
  currentEmployer: boolean | null;
  evidence: Evidence;
  /** signalKey(evidence.kind, …): the same evidence for the same person always gets the same key. */
  signalKey: string;
}

export interface PageRequest {
  /** Opaque, from the previous page's nextCursor; absent for the first page. */
  cursor?: string;
  /** 1..MAX_PAGE_LIMIT */
  limit: number;
}

export interface CandidatePage {
  candidates: Candidate[];
  /** Null when there is nothing more. A page may hold fewer than `limit` candidates and still have a next one. */
  nextCursor: string | null;
}

/** A company as a user names it: a name, a domain, or both (a known domain wins over the name). */
export interface CompanyRef {
  name?: string | null;
  domain?: string | null;
}

/** Which of a company's people to list. Several values in one filter are alternatives (OR); titles and seniorities both apply (AND). */
export const roleFiltersSchema = z.object({
  /** As SignalFilters.titles: every word of one of them occurs in the person's title. */
  titles: z.array(text).max(50).optional(),
  seniorities: z.array(z.enum(SENIORITIES)).max(SENIORITIES.length).optional(),
});
export type RoleFilters = z.infer<typeof roleFiltersSchema>;

export interface CompanyPeoplePage {
  /** The company the source resolved the reference to. */
  company: Company;
  /** Its current employees matching the roles, most senior first; evidence is each person's profile. */
  people: Candidate[];
  nextCursor: string | null;
}

/** Most senior first: the order companyPeople lists people in. */
export const SENIORITY_RANK: Record<Seniority, number> = {
  founder: 0,
  cxo: 1,
  vp: 2,
  director: 3,
  manager: 4,
  senior: 5,
  entry: 6,
};

export interface DiscoverySource {
  readonly name: SourceName;
  supports(kind: SignalKind): boolean;
  search(query: SignalQuery, page: PageRequest, signal?: AbortSignal): Promise<CandidatePage>;
  /** The person behind a profile URL (any form normaliseProfileUrl accepts), or null when unknown. */
  profile?(url: string, signal?: AbortSignal): Promise<Candidate | null>;
  /**
   * A company's current employees matching the roles (pronet; company decision-maker imports), or
   * null when the source does not know the company.
   */
  companyPeople?(
    company: CompanyRef,
    roles: RoleFilters,
    page: PageRequest,
    signal?: AbortSignal,
  ): Promise<CompanyPeoplePage | null>;
}

/**
 * The stable key of one piece of evidence about one person: the same post, event or job change for
 * the same person yields the same key on every run, so a run can recognise what it has seen.
 * 32 hex characters (128 bits of SHA-256).
 */
export function signalKey(kind: SignalKind, ids: { source: SourceName; evidenceId: string; personId: string }): string {
  return createHash('sha256')
    .update(`${kind}\n${ids.source}\n${ids.evidenceId}\n${ids.personId}`)
    .digest('hex')
    .slice(0, 32);
}

export type SourceErrorCode = ProviderErrorCode;
export { RETRYABLE_CODES };

/** Every failure of a discovery source, whatever its transport. */
export class SourceError extends ProviderError {
  constructor(
    readonly source: SourceName,
    code: SourceErrorCode,
    message: string,
    details: ProviderErrorDetails = {},
  ) {
    super(source, code, message, details);
    this.name = 'SourceError';
  }
}

/** Validates a query the same way for every source; returns it parsed (strings trimmed). */
export function checkQuery(source: SourceName, query: SignalQuery): SignalQuery {
  const r = signalQuerySchema.safeParse(query);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new SourceError(
      source,
      'invalid_request',
      `invalid query at ${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
  }
  return r.data;
}

/** Validates a company reference and role filters the same way for every source; returns the roles parsed. */
export function checkCompanyQuery(source: SourceName, company: CompanyRef, roles: RoleFilters): RoleFilters {
  if (!company.name?.trim() && !company.domain?.trim())
    throw new SourceError(source, 'invalid_request', 'a company needs a name or a domain');
  const r = roleFiltersSchema.safeParse(roles);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new SourceError(
      source,
      'invalid_request',
      `invalid roles at ${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
  }
  return r.data;
}

/** Validates a page request the same way for every source. */
export function checkPage(source: SourceName, page: PageRequest): void {
  if (!Number.isInteger(page.limit) || page.limit < 1 || page.limit > MAX_PAGE_LIMIT) {
    throw new SourceError(source, 'invalid_request', `limit must be an integer from 1 to ${MAX_PAGE_LIMIT}`);
  }
}
