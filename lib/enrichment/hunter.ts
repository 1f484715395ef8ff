// Enrichment over Hunter's API v2 (https://hunter.io/api-documentation/v2; docs/enrichment.md "Providers"):
// the key in `X-API-KEY` (the docs' header form, so it never sits in a URL or a log line), JSON
// answers `{ data, meta }`, refusals `{ errors: [{ id, code, details }] }`.
//
//   our query                                      → Hunter
//   a name (first + last, else full) with the      → GET /email-finder?domain=|company=&first_name=&last_name=|full_name=
//     company domain (else the company name)
//   else a LinkedIn profile URL                    → GET /email-finder?linkedin_handle=
//   else an email (no name with a company)         → GET /domain-search?domain=<the email's domain>&limit=10
//   else (e.g. only a non-LinkedIn profile URL)    → nothing asked: no match
//
//   Hunter's answer                                → ours
//   email-finder data.email null, or its           → no match (null): nothing charged
//     verification.status "invalid"
//   email-finder email, score, position,           → email, confidence, title, profileUrl, phone, firstName,
//     linkedin_url, phone_number, first_name,         lastName (+ fullName), company, companyDomain
//     last_name, company, domain
//   domain-search organization, domain, and the    → company, companyDomain, and that person's firstName,
//     emails[] entry of the person's own address      lastName, title, profileUrl, phone; confidence 100 (the
//                                                      person was named by their own address, as the local provider's identifier matches)
//   domain-search of a webmail / disposable domain → no match (the provider is not the person's employer)
//
//   Hunter's refusal (HTTP status, error id)       → EnrichmentError code (details.reason)
//   401 (authentication_failed, no key)            → auth (the id): HUNTER_API_KEY is wrong — the deployment is misconfigured
//   403 restricted account                         → auth (restricted_account)
//   403 other ("You have reached the rate limit")  → rate_limited (rate_limit): paused and asked again, then retried later
//   429 ("You have reached your usage limit")      → quota_exhausted (usage_limit), with /account's usage in the message;
//                                                    a 429 that speaks of a rate and not of a quota → rate_limited
//   451 claimed_email                              → no match: the owner asked Hunter to stop processing it; never used
//   400 invalid_domain                             → no match: no mail at that domain (or its owner opted out)
//   400 / 422 other (wrong_params, invalid_…)      → invalid_request (the id)
//   404                                            → bad_response (not_found): HUNTER_BASE_URL is not Hunter's API
//   5xx                                            → unavailable (retried; Retry-After honoured)
//
// Pace: Hunter allows 15 requests per second and 500 per minute per key on both endpoints. One
// token bucket per key (HUNTER_PACE) keeps under both in every window; a rate refusal pauses the
// key and the call waits and asks again (twice at most within a call), so a burst of enrichments
// waits rather than fails.
import { z } from 'zod';
import { normaliseDomain, normaliseEmail, normaliseProfileUrl } from '../normalise.js';
import { JsonHttpClient, parseWire, ProviderError, type ProviderErrorCode } from '../provider-http.js';
import { PaceExceeded, ProviderPace, type Rate } from '../provider-pace.js';
import { clip, FIELD_LIMITS, isProfileUrl, wireIdentifier, wireText } from '../provider-wire.js';
import {
  EnrichmentError,
  isQueryable,
  type EnrichedPerson,
  type EnrichmentMatch,
  type EnrichmentProvider,
  type EnrichmentQuery,
} from './types.js';

export const HUNTER = 'hunter';

/**
 * Hunter's limit is 15 requests per second and 500 per minute (Email Finder and Domain Search). A
 * bucket of 6 refilled every 125 ms allows at most 6 + 8 = 14 calls in any second and
 * 6 + 480 = 486 in any minute: under both in every window, with a call to spare for network jitter.
 */
export const HUNTER_PACE: Rate = { burst: 6, everyMs: 125 };

/** Domain Search results asked for: the Free plan refuses `limit + offset` above 10. */
export const DOMAIN_SEARCH_LIMIT = 10;

/** Rate refusals a call waits out itself before failing `rate_limited` (then retried by its caller). */
const RATE_REFUSALS_WAITED = 2;
/** A refusal naming a longer wait is not waited out within the call. */
const LONGEST_WAIT_IN_CALL_MS = 5_000;

const LINKEDIN_HOSTS = ['linkedin.com'];
const MESSAGE_MAX = 300;

export interface HunterOptions {
  /** HUNTER_BASE_URL: `https://api.hunter.io/v2` (the stand-in in tests). */
  baseUrl: string;
  /** HUNTER_API_KEY. */
  apiKey: string;
  /** ENRICHMENT_TIMEOUT_MS: the deadline of one call (Email Finder takes up to its `max_duration`, 10 s by default). */
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** The per-key pace, and the clock its pauses are set by (tests give both, simulated). */
  pace?: ProviderPace;
  now?: () => number;
}

// ---------------------------------------------------------------------------------------------
// Wire schemas: only what is used; unknown fields ignored; identifiers dropped when malformed.

const email = wireIdentifier(FIELD_LIMITS.email, (s) => normaliseEmail(s) !== null);
const domain = wireIdentifier(FIELD_LIMITS.domain, (s) => normaliseDomain(s) !== null);
const phone = wireIdentifier(FIELD_LIMITS.phone, (s) => /\d/.test(s));
const name = wireText(FIELD_LIMITS.name);
const text = wireText(FIELD_LIMITS.text);
const score = z.number().nullish();

const finderResponse = z.object({
  data: z.object({
    first_name: name,
    last_name: name,
    email,
    score,
    domain,
    position: text,
    linkedin_url: wireIdentifier(FIELD_LIMITS.profileUrl, isProfileUrl),
    phone_number: phone,
    company: text,
    verification: z.object({ status: z.string().nullish() }).nullish(),
  }),
});

const domainResponse = z.object({
  data: z.object({
    domain,
    organization: text,
    webmail: z.boolean().nullish(),
    disposable: z.boolean().nullish(),
    emails: z
      .array(
        z.object({
          value: z.string().nullish(),
          confidence: score,
          first_name: name,
          last_name: name,
          position: text,
          // A profile URL, or a bare handle.
          linkedin: z.string().max(FIELD_LIMITS.profileUrl).nullish(),
          phone_number: phone,
        }),
      )
      .max(1000)
      .nullish(),
  }),
});

const accountResponse = z.object({
  data: z.object({
    plan_name: z.string().nullish(),
    reset_date: z.string().nullish(),
    requests: z.object({ searches: z.object({ used: z.number(), available: z.number() }).nullish() }).nullish(),
  }),
});

const errorsBody = z.object({
  errors: z.array(z.object({ id: z.string().nullish(), details: z.string().nullish() }).loose()).min(1),
});

// ---------------------------------------------------------------------------------------------
// Errors

const QUOTA_WORDS = /quota|usage limit|upgrade|plan|credit|exhaust/i;
const RATE_WORDS = /rate.?limit|per (second|minute)|slow down|try again later/i;
const RESTRICTED_WORDS = /restrict|suspend|block|disabl/i;

/** Refusals that mean "Hunter has no one to give" rather than a failure (`details.reason`). */
export const NOT_FOUND_REASONS: ReadonlySet<string> = new Set(['claimed_email', 'invalid_domain']);

/** The EnrichmentError for a refused call, from Hunter's status and `errors[0]` (JsonHttpClient's `errorOf`). */
export function hunterErrorOf(status: number, body: unknown, retryAfterSeconds: number | null): ProviderError | null {
  const parsed = errorsBody.safeParse(body);
  const first = parsed.success ? parsed.data.errors[0] : null;
  const id = first?.id && /^[a-z0-9_]{1,80}$/.test(first.id) ? first.id : null;
  const details = (first?.details ?? '').replace(/\s+/g, ' ').trim();
  const said = `${details || `HTTP ${status}`} (${id ?? 'no error id'}, HTTP ${status})`.slice(0, MESSAGE_MAX);
  const make = (code: ProviderErrorCode, reason: string, message: string, retryAfter: number | null = null) =>
    new EnrichmentError(HUNTER, code, message, {
      status,
      reason,
      ...(retryAfter !== null ? { retryAfterSeconds: retryAfter } : {}),
    });
  const words = `${id ?? ''} ${details}`;
  if (status === 401)
    return make('auth', id ?? 'authentication_failed', `Hunter refused the API key: ${said}; check HUNTER_API_KEY`);
  if (status === 403) {
    if (RESTRICTED_WORDS.test(words))
      return make('auth', 'restricted_account', `Hunter restricted the account: ${said}; see Hunter's dashboard`);
    return make('rate_limited', 'rate_limit', `Hunter's rate limit: ${said}`, retryAfterSeconds);
  }
  if (status === 429) {
    if (RATE_WORDS.test(words) && !QUOTA_WORDS.test(words))
      return make('rate_limited', 'rate_limit', `Hunter's rate limit: ${said}`, retryAfterSeconds);
    return make('quota_exhausted', 'usage_limit', `Hunter's usage limit is reached: ${said}`);
  }
  if (status === 451) return make('invalid_request', 'claimed_email', `Hunter may not process this person: ${said}`);
  if (status === 400 || status === 422)
    return make('invalid_request', id ?? `http_${status}`, `Hunter refused the query: ${said}`);
  if (status === 404)
    return make('bad_response', 'not_found', `no such endpoint: ${said}; HUNTER_BASE_URL must be Hunter's API v2`);
  if (status === 408) return make('timeout', id ?? 'http_408', `Hunter: ${said}`);
  if (status >= 500) return make('unavailable', id ?? `http_${status}`, `Hunter: ${said}`, retryAfterSeconds);
  return null; // 3xx and the rest: the shared client's mapping
}

// ---------------------------------------------------------------------------------------------
// The adapter

type Lookup =
  { kind: 'finder'; params: URLSearchParams } | { kind: 'domain'; email: string; params: URLSearchParams } | null;

/** The handle of a LinkedIn profile URL (`https://www.linkedin.com/in/<handle>/…`), else null. */
export function linkedInHandle(url: string | null): string | null {
  const canonical = normaliseProfileUrl(url, LINKEDIN_HOSTS);
  const m = canonical?.match(/^https:\/\/linkedin\.com\/in\/([^/]+)$/);
  return m ? decodeURIComponent(m[1]) : null;
}

/** What to ask Hunter for this query (the table at the top), or null when Hunter cannot be asked. */
export function hunterLookup(q: EnrichmentQuery): Lookup {
  const first = clip(q.firstName, FIELD_LIMITS.name);
  const last = clip(q.lastName, FIELD_LIMITS.name);
  const full = clip(q.fullName, FIELD_LIMITS.name);
  const companyDomain = normaliseDomain(q.companyDomain);
  const company = clip(q.company, FIELD_LIMITS.text);
  if (((first && last) || full) && (companyDomain || company)) {
    const params = new URLSearchParams();
    // The docs: the domain gives better results than the company name, and first + last than a full name.
    if (companyDomain) params.set('domain', companyDomain);
    else params.set('company', company!);
    if (first && last) {
      params.set('first_name', first);
      params.set('last_name', last);
    } else params.set('full_name', full!);
    return { kind: 'finder', params };
  }
  const handle = linkedInHandle(q.profileUrl);
  if (handle) return { kind: 'finder', params: new URLSearchParams({ linkedin_handle: handle }) };
  const address = normaliseEmail(q.email);
  if (address) {
    const params = new URLSearchParams({ domain: address.slice(address.lastIndexOf('@') + 1) });
    params.set('limit', String(DOMAIN_SEARCH_LIMIT));
    return { kind: 'domain', email: address, params };
  }
  return null;
}

const confidenceOf = (n: number | null | undefined) => Math.round(Math.min(100, Math.max(0, n ?? 0)));

/** The fields that are known (absent = unknown), or null when none is. */
function known(fields: Record<keyof EnrichedPerson, string | null>): EnrichedPerson | null {
  const person: EnrichedPerson = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null));
  return Object.keys(person).length ? person : null;
}

const fullNameOf = (first: string | null, last: string | null) =>
  first && last ? clip(`${first} ${last}`, FIELD_LIMITS.name) : null;

export class HunterEnrichment implements EnrichmentProvider {
  readonly name = HUNTER;
  private readonly http: JsonHttpClient;
  private readonly pace: ProviderPace;
  private readonly apiKey: string;
  private readonly now: () => number;

  constructor(opts: HunterOptions) {
    this.apiKey = opts.apiKey;
    this.now = opts.now ?? Date.now;
    this.pace = opts.pace ?? new ProviderPace(HUNTER_PACE);
    this.http = new JsonHttpClient(
      HUNTER,
      {
        baseUrl: opts.baseUrl,
        apiKey: opts.apiKey,
        keyHeader: 'x-api-key',
        timeoutMs: opts.timeoutMs,
        maxResponseBytes: opts.maxResponseBytes,
        errorOf: hunterErrorOf,
      },
      (code, message, details) => new EnrichmentError(HUNTER, code, message, details),
    );
  }

  async enrich(query: EnrichmentQuery, signal?: AbortSignal): Promise<EnrichmentMatch | null> {
    if (!isQueryable(query))
      throw this.http.fail('invalid_request', 'the query needs an email, a profile URL, or a name with a company');
    const lookup = hunterLookup(query);
    if (!lookup) return null;
    try {
      if (lookup.kind === 'finder') return this.finderMatch(await this.get('email-finder', lookup.params, signal));
      return this.domainMatch(lookup.email, await this.get('domain-search', lookup.params, signal));
    } catch (err) {
      if (err instanceof ProviderError && NOT_FOUND_REASONS.has(err.details.reason ?? '')) return null;
      if (err instanceof ProviderError && err.code === 'quota_exhausted') throw await this.withUsage(err, signal);
      throw err;
    }
  }

  /** GET /account (free): the plan, its reset date and the searches used and available. */
  async account(signal?: AbortSignal): Promise<z.infer<typeof accountResponse>['data']> {
    return parseWire(this.http, accountResponse, await this.get('account', new URLSearchParams(), signal)).data;
  }

  close(): Promise<void> {
    return this.http.close();
  }

  private finderMatch(raw: unknown): EnrichmentMatch | null {
    const d = parseWire(this.http, finderResponse, raw).data;
    if (!d.email || d.verification?.status === 'invalid') return null;
    const person = known({
      email: d.email,
      phone: d.phone_number,
      profileUrl: d.linkedin_url,
      firstName: d.first_name,
      lastName: d.last_name,
      fullName: fullNameOf(d.first_name, d.last_name),
      title: d.position,
      headline: null,
      company: d.company,
      companyDomain: d.domain,
      country: null,
    });
    return person && { person, confidence: confidenceOf(d.score) };
  }

  private domainMatch(address: string, raw: unknown): EnrichmentMatch | null {
    const d = parseWire(this.http, domainResponse, raw).data;
    if (d.webmail || d.disposable) return null;
    const entry = d.emails?.find((e) => normaliseEmail(e.value) === address);
    // A domain Hunter knows nothing of (no organization, the person not listed) tells nothing.
    if (!entry && !d.organization) return null;
    const linkedin = entry?.linkedin?.trim();
    const profileUrl = !linkedin
      ? null
      : /^[\w.%-]{1,100}$/.test(linkedin)
        ? `https://www.linkedin.com/in/${linkedin}`
        : isProfileUrl(linkedin)
          ? linkedin
          : null;
    const person = known({
      email: null, // the query's own
      phone: entry?.phone_number ?? null,
      profileUrl,
      firstName: entry?.first_name ?? null,
      lastName: entry?.last_name ?? null,
      fullName: fullNameOf(entry?.first_name ?? null, entry?.last_name ?? null),
      title: entry?.position ?? null,
      headline: null,
      company: d.organization,
      companyDomain: d.domain,
      country: null,
    });
    return person && { person, confidence: 100 };
  }

  /** One paced GET; a rate refusal pauses the key, and is waited out here up to RATE_REFUSALS_WAITED times. */
  private async get(path: string, query: URLSearchParams, signal?: AbortSignal): Promise<unknown> {
    for (let refusals = 0; ; refusals++) {
      await this.paced(signal);
      try {
        return await this.http.json('GET', path, { query, signal });
      } catch (err) {
        if (!(err instanceof ProviderError) || err.code !== 'rate_limited') throw err;
        const waitMs = (err.retryAfterSeconds ?? 1) * 1000;
        this.pace.pause(this.apiKey, new Date(this.now() + waitMs));
        if (refusals >= RATE_REFUSALS_WAITED || waitMs > LONGEST_WAIT_IN_CALL_MS) throw err;
      }
    }
  }

  private async paced(signal?: AbortSignal): Promise<void> {
    try {
      await this.pace.take(this.apiKey);
    } catch (err) {
      if (!(err instanceof PaceExceeded)) throw err;
      throw this.http.fail('rate_limited', `Hunter's pace: ${err.message}`, {
        reason: 'rate_limit',
        retryAfterSeconds: Math.ceil(err.waitMs / 1000),
      });
    }
    signal?.throwIfAborted();
  }

  /** The quota error with the account's usage and reset date (GET /account is free), when Hunter answers it. */
  private async withUsage(err: ProviderError, signal?: AbortSignal): Promise<ProviderError> {
    const usage = await this.account(signal).catch(() => null);
    const searches = usage?.requests?.searches;
    if (!usage || !searches) return err;
    const plan = usage.plan_name ? `${usage.plan_name} plan: ` : '';
    const reset = usage.reset_date ? `, reset on ${usage.reset_date}` : '';
    return new EnrichmentError(
      HUNTER,
      'quota_exhausted',
      `${err.message.replace(/^hunter: quota_exhausted: /, '')}; ${plan}${searches.used} of ${searches.available} searches used${reset}; upgrade the plan on Hunter or wait for the reset`,
      err.details,
    );
  }
}
