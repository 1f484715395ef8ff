// A messaging-network connector over HTTP. Wire format (v1; docs/providers.md has the full description):
//
//   POST {base}/v1/profiles/resolve   Authorization: Bearer <CONNECTOR_API_KEY>
//   { full_name, first_name, last_name, company, company_domain, email, profile_url }   (null when unknown)
//   → 200 { profile: null | { profile_url, provider_id, full_name, first_name, last_name, headline,
//           title, company, country } }
//   → 404 also means no profile
import { z } from 'zod';
import { clip, FIELD_LIMITS, isProfileUrl, wireText } from '../provider-wire.js';
import { JsonHttpClient, parseWire, splitName, type HttpProviderOptions } from '../provider-http.js';
import { ConnectorError, type NetworkConnector, type NetworkProfile, type ProfileQuery } from './types.js';

const profile = z.object({
  profile_url: z.string().trim().max(FIELD_LIMITS.profileUrl).refine(isProfileUrl, 'not an http(s) URL'),
  provider_id: z.union([z.string().trim().min(1).max(200), z.number().int()]).transform(String),
  full_name: z.string().trim().min(1).transform((v) => clip(v, FIELD_LIMITS.name)!),
  first_name: wireText(FIELD_LIMITS.name),
  last_name: wireText(FIELD_LIMITS.name),
  headline: wireText(FIELD_LIMITS.text),
  title: wireText(FIELD_LIMITS.text),
  company: wireText(FIELD_LIMITS.text),
  country: wireText(FIELD_LIMITS.country),
});

const resolveResponse = z.object({ profile: profile.nullable() });

export class HttpConnector implements NetworkConnector {
  readonly name = 'http';
  private readonly http: JsonHttpClient;

  constructor(opts: HttpProviderOptions) {
    this.http = new JsonHttpClient(this.name, opts, (code, message, details) => new ConnectorError(this.name, code, message, details));
  }

  async findProfile(q: ProfileQuery, signal?: AbortSignal): Promise<NetworkProfile | null> {
    const body = {
      full_name: q.fullName,
      first_name: q.firstName,
      last_name: q.lastName,
      company: q.company,
      company_domain: q.companyDomain,
      email: q.email,
      profile_url: q.profileUrl,
    };
    const raw = await this.http.json('POST', '/v1/profiles/resolve', { body, signal, notFoundIsNull: true });
    if (raw === null) return null;
    const p = parseWire(this.http, resolveResponse, raw).profile;
    if (!p) return null;
    const split = splitName(p.full_name);
    return {
      profileUrl: p.profile_url,
      providerId: p.provider_id,
      fullName: p.full_name,
      firstName: p.first_name ?? split.firstName,
      lastName: p.last_name ?? split.lastName,
      headline: p.headline,
      title: p.title,
      company: p.company,
      country: p.country,
    };
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
