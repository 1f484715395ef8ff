// The enrichment-provider contract: who to look up (a person known by some of email, profile URL,
// name and company) and what the provider found. Plain JSON so results cross activity boundaries.
import { ProviderError, type ProviderErrorCode, type ProviderErrorDetails } from '../provider-http.js';

/** What we know about the person; a provider needs an email, a profile URL, or a name with a company. */
export interface EnrichmentQuery {
  email: string | null;
  profileUrl: string | null;
  fullName: string | null;
  firstName: string | null;
  lastName: string | null;
  company: string | null;
  companyDomain: string | null;
}

/** The fields enrichment may fill (the same names on contacts and discovered leads). */
export const ENRICHABLE_FIELDS = [
  'email',
  'phone',
  'profileUrl',
  'firstName',
  'lastName',
  'fullName',
  'title',
  'headline',
  'company',
  'companyDomain',
  'country',
] as const;
export type EnrichableField = (typeof ENRICHABLE_FIELDS)[number];

/** Each field's column, the same on contacts and discovered leads. */
export const FIELD_COLUMNS: Record<EnrichableField, string> = {
  email: 'email',
  phone: 'phone',
  profileUrl: 'profile_url',
  firstName: 'first_name',
  lastName: 'last_name',
  fullName: 'full_name',
  title: 'title',
  headline: 'headline',
  company: 'company',
  companyDomain: 'company_domain',
  country: 'country',
};

/** What the provider found: only the fields it knows (absent = unknown, never "erase"). */
export type EnrichedPerson = Partial<Record<EnrichableField, string>>;

export interface EnrichmentMatch {
  person: EnrichedPerson;
  /** 0..100: how sure the provider is that this is the person asked about. */
  confidence: number;
}

export interface EnrichmentProvider {
  /** `local` or `hunter`, recorded on each enrichment. */
  readonly name: string;
  /** The person, or null when the provider has no match (nothing is charged then). Throws EnrichmentError on failure. */
  enrich(query: EnrichmentQuery, signal?: AbortSignal): Promise<EnrichmentMatch | null>;
  close?(): Promise<void>;
}

export class EnrichmentError extends ProviderError {
  constructor(provider: string, code: ProviderErrorCode, message: string, details: ProviderErrorDetails = {}) {
    super(provider, code, message, details);
    this.name = 'EnrichmentError';
  }
}

/** Whether the query names the person well enough to ask a provider at all. */
export const isQueryable = (q: EnrichmentQuery): boolean =>
  Boolean(q.email || q.profileUrl || ((q.fullName || (q.firstName && q.lastName)) && (q.company || q.companyDomain)));
