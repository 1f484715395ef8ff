// HubSpot's wire format, as its documentation gives it (docs/partner.md lists the pages): the answers
// the adapter reads (OAuth tokens and token metadata, CRM batch answers, search pages, associations)
// and its error body `{ status: "error", message, correlationId, category, policyName? }` mapped to
// our codes:
//
//   HubSpot answer                                     → code             details.reason
//   401 (EXPIRED_AUTHENTICATION, INVALID_AUTHENTICATION) → auth           the category (refreshed once, then refused)
//   403 (MISSING_SCOPES, …)                              → auth           the category (reinstall with the scopes)
//   429 (policyName TEN_SECONDLY_ROLLING, SECONDLY, DAILY) → rate_limited the policy; retryAfterSeconds: Retry-After,
//                                                                           else 10 s / 1 s / 1 h (DAILY resets at the
//                                                                           account's midnight, its time zone unknown here)
//   400 VALIDATION_ERROR, 409 CONFLICT, other 4xx        → invalid_request the category (per record after bisecting)
//   404 OBJECT_NOT_FOUND                                 → invalid_request OBJECT_NOT_FOUND
//   408, 504                                             → timeout
//   other 5xx                                            → unavailable
//   token endpoint 400/401 (BAD_REFRESH_TOKEN, BAD_AUTH_CODE, BAD_CLIENT_ID, invalid_grant…),
//   token metadata 400/401/404                           → auth           HubSpot's `status` (or `error`)
import { z } from 'zod';
import type { ProviderError } from '../provider-http.js';
import type { Rate } from '../provider-pace.js';
import { PartnerError } from './types.js';

/** Public apps: 110 requests per rolling 10 s per installing account; a bucket of 10 refilled every 100 ms never exceeds it. */
export const HUBSPOT_RATE: Rate = { burst: 10, everyMs: 100 };
/** The CRM search endpoints have their own limit (5 per second per account; 4 in older pages): at most 4 in any second. */
export const HUBSPOT_SEARCH_RATE: Rate = { burst: 1, everyMs: 300 };
/** HubSpot's batch endpoints take at most 100 inputs. */
export const HUBSPOT_BATCH = 100;

/** How long a 429's policy lasts when HubSpot sends no Retry-After. */
export function policyWaitSeconds(policy: string | null): number {
  if (policy === 'SECONDLY') return 1;
  if (policy === 'DAILY') return 3600;
  return 10; // TEN_SECONDLY_ROLLING (and an unnamed one)
}

const fields = (b: unknown) => (b && typeof b === 'object' && !Array.isArray(b) ? (b as Record<string, unknown>) : {});
const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : null);

function describe(status: number, b: Record<string, unknown>, label: string | null): string {
  const message = (text(b.message) ?? text(b.error_description) ?? `HTTP ${status}`).replace(/\s+/g, ' ').slice(0, 300);
  const correlation = text(b.correlationId);
  return `${message} (${[label ?? `HTTP ${status}`, correlation ? `correlationId ${correlation}` : null].filter(Boolean).join(', ')})`;
}

/** The error of a refused CRM call (the `errorOf` of the API client); null leaves 3xx to the default mapping. */
export function hubspotErrorOf(status: number, raw: unknown, retryAfterSeconds: number | null): ProviderError | null {
  const b = fields(raw);
  const category = text(b.category) ?? text(b.errorType);
  const policy = text(b.policyName);
  const make = (code: ConstructorParameters<typeof PartnerError>[0], reason: string, extra: object = {}) =>
    new PartnerError(code, describe(status, b, policy ?? category), { status, reason, ...extra });
  if (status === 429)
    return make('rate_limited', policy ?? category ?? 'RATE_LIMIT', {
      retryAfterSeconds: retryAfterSeconds ?? policyWaitSeconds(policy),
    });
  if (status === 401) return make('auth', category ?? 'INVALID_AUTHENTICATION');
  if (status === 403) return make('auth', category ?? 'FORBIDDEN');
  if (status === 404) return make('invalid_request', category ?? 'OBJECT_NOT_FOUND');
  if (status === 408 || status === 504) return make('timeout', category ?? 'TIMEOUT');
  if (status >= 500) return make('unavailable', category ?? `HTTP_${status}`, { retryAfterSeconds });
  if (status >= 400) return make('invalid_request', category ?? (status === 409 ? 'CONFLICT' : 'VALIDATION_ERROR'));
  return null;
}

/** The error of a refused OAuth call: a refused grant, client or token is `auth` (the integration shows it). */
export function hubspotOAuthErrorOf(
  status: number,
  raw: unknown,
  retryAfterSeconds: number | null,
): ProviderError | null {
  const b = fields(raw);
  if (status === 400 || status === 401 || status === 403 || status === 404) {
    const own = text(b.status);
    const reason = (own && own !== 'error' ? own : null) ?? text(b.error) ?? text(b.category) ?? `HTTP_${status}`;
    return new PartnerError('auth', describe(status, b, reason), { status, reason });
  }
  return hubspotErrorOf(status, raw, retryAfterSeconds);
}

export const wireTokens = z.object({
  access_token: z.string().min(1).max(4000),
  refresh_token: z.string().min(1).max(4000).nullish(),
  expires_in: z
    .number()
    .int()
    .positive()
    .max(10 * 365 * 86400)
    .nullish(),
});

/** `GET /oauth/v1/access-tokens/{token}`: the installation the token belongs to. */
export const wireTokenInfo = z.object({
  hub_id: z.number().int().positive(),
  hub_domain: z.string().max(300).nullish(),
  scopes: z.array(z.string().max(200)).max(1000).default([]),
});

const wireObject = z.object({
  id: z.string().min(1).max(40),
  properties: z.record(z.string(), z.string().nullable()).default({}),
  objectWriteTraceId: z.string().max(200).nullish(),
});
export type WireObject = z.infer<typeof wireObject>;

const wireError = z.object({
  category: z.string().max(200).nullish(),
  message: z.string().max(20_000).nullish(),
  context: z.record(z.string(), z.unknown()).nullish(),
});
export type WireError = z.infer<typeof wireError>;

/** A batch answer (200, or 207 with per-input errors): `{ status: "COMPLETE", results, errors?, numErrors? }`. */
export const wireBatch = z.object({
  status: z.string().max(40),
  results: z.array(wireObject).max(1000).default([]),
  errors: z.array(wireError).max(1000).nullish(),
});

/** `POST /crm/v3/objects/{type}/search`: a page. */
export const wireSearch = z.object({
  results: z.array(wireObject).max(200),
  paging: z.object({ next: z.object({ after: z.string().max(200) }).nullish() }).nullish(),
});

/** The trace ids (our keys) an error's context names, whatever key HubSpot files them under. */
export function tracesOf(e: WireError, sent: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const v of Object.values(e.context ?? {}))
    for (const item of Array.isArray(v) ? v : [v]) if (typeof item === 'string' && sent.has(item)) out.push(item);
  return out;
}
