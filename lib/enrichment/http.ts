// An enrichment provider over HTTP. Wire format (v1; docs/providers.md has the full description):
//
//   POST {base}/v1/people/match   Authorization: Bearer <ENRICHMENT_API_KEY>
//   { email, profile_url, full_name, first_name, last_name, company, company_domain }   (null when unknown)
//   → 200 { match: null | { confidence: 0..100, person: { email, phone, profile_url, first_name,
//           last_name, full_name, title, headline, company, company_domain, country } } }
//   → 404 also means no match
//
// Whatever the provider sends is bounded before it can reach a contact: free text is trimmed and
// clipped, identifiers (email, URL, domain, phone) are dropped when malformed or over-long (a cut
// identifier would be a wrong one), blank values count as unknown.
import { z } from 'zod';
import { normaliseDomain, normaliseEmail, normaliseProfileUrl } from '../normalise.js';
import { JsonHttpClient, parseWire, splitName, type HttpProviderOptions } from '../provider-http.js';
import { clip, FIELD_LIMITS, isProfileUrl, wireIdentifier, wireText } from '../provider-wire.js';
import {
  EnrichmentError,
  isQueryable,
  type EnrichedPerson,
  type EnrichmentMatch,
  type EnrichmentProvider,
  type EnrichmentQuery,
} from './types.js';

const person = z.object({
  email: wireIdentifier(FIELD_LIMITS.email, (s) => normaliseEmail(s) !== null),
  phone: wireIdentifier(FIELD_LIMITS.phone, (s) => /\d/.test(s)),
  profile_url: wireIdentifier(FIELD_LIMITS.profileUrl, isProfileUrl),
  first_name: wireText(FIELD_LIMITS.name),
  last_name: wireText(FIELD_LIMITS.name),
  full_name: wireText(FIELD_LIMITS.name),
  title: wireText(FIELD_LIMITS.text),
  headline: wireText(FIELD_LIMITS.text),
  company: wireText(FIELD_LIMITS.text),
  company_domain: wireIdentifier(FIELD_LIMITS.domain, (s) => normaliseDomain(s) !== null),
  country: wireText(FIELD_LIMITS.country),
});

const matchResponse = z.object({
  match: z
    .object({
      confidence: z.number().transform((c) => Math.round(Math.min(100, Math.max(0, c)))),
      person,
    })
    .nullable(),
});

export class HttpEnrichment implements EnrichmentProvider {
  readonly name = 'http';
  private readonly http: JsonHttpClient;

  constructor(opts: HttpProviderOptions) {
    this.http = new JsonHttpClient(
      this.name,
      opts,
      (code, message, details) => new EnrichmentError(this.name, code, message, details),
    );
  }

  async enrich(q: EnrichmentQuery, signal?: AbortSignal): Promise<EnrichmentMatch | null> {
    if (!isQueryable(q))
      throw this.http.fail('invalid_request', 'the query needs an email, a profile URL, or a name with a company');
    const body = {
      email: q.email,
      profile_url: q.profileUrl,
      full_name: q.fullName,
      first_name: q.firstName,
      last_name: q.lastName,
      company: q.company,
      company_domain: q.companyDomain,
    };
    const raw = await this.http.json('POST', '/v1/people/match', { body, signal, notFoundIsNull: true });
    if (raw === null) return null;
    const { match } = parseWire(this.http, matchResponse, raw);
    if (!match) return null;
    const p = match.person;
    const split = p.full_name ? splitName(p.full_name) : { firstName: null, lastName: null };
    const fields: Record<keyof EnrichedPerson, string | null> = {
      email: p.email,
      phone: p.phone,
      profileUrl: p.profile_url,
      firstName: p.first_name ?? split.firstName,
      lastName: p.last_name ?? split.lastName,
      fullName:
        p.full_name ?? (p.first_name && p.last_name ? clip(`${p.first_name} ${p.last_name}`, FIELD_LIMITS.name) : null),
      title: p.title,
      headline: p.headline,
      company: p.company,
      companyDomain: p.company_domain,
      country: p.country,
    };
    const known: EnrichedPerson = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null));
    // A match that tells nothing is no match.
    return Object.keys(known).length ? { person: known, confidence: match.confidence } : null;
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
