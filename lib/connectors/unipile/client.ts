// The HTTP client for Unipile's REST API v1 (issue 44; /work/unipile-notes.md lists the sources):
// base `<UNIPILE_BASE_URL>/api/v1`, the key in `X-API-KEY`, and Unipile's refusals — an RFC-7807-like
// body `{ title, detail?, type: "errors/<code>", status }` — mapped to ConnectorError codes with a
// finer `details.reason`, so callers can tell an account that is lost from a recipient that cannot be
// reached and from a limit that must be waited out:
//
//   Unipile `type` (HTTP status)                              → code             details.reason
//   disconnected_account (401)                                → auth             disconnected
//   expired_credentials (401)                                 → auth             credentials_expired
//   invalid_credentials, …_but_valid_account_imap (401)       → auth             invalid_credentials
//   checkpoint_error, invalid_checkpoint_solution,
//     captcha_not_supported (401)                             → auth             checkpoint
//   multiple_sessions (401)                                   → auth             multiple_sessions
//   wrong_account (401), account_mismatch (403)               → auth             wrong_account
//   session_mismatch (403)                                    → auth             session_mismatch
//   unknown_authentication_context (403)                      → auth             unknown_authentication_context
//   account_restricted (403)                                  → auth             restricted
//   action_required (403)                                     → auth             action_required
//   missing_credentials (401: our X-API-KEY)                  → auth             api_key_refused
//   too_many_requests (429)                                   → rate_limited     too_many_requests (Retry-After when sent)
//   limit_exceeded (422: LinkedIn's quota for the account)    → rate_limited     limit_exceeded (Retry-After, else 24 h)
//   invalid_recipient, user_unreachable, no_connection_with_recipient, blocked_recipient,
//     cannot_invite_attendee, not_allowed_inmail, insufficient_credits, already_invited_recently,
//     cannot_resend_yet, cannot_resend_within_24hrs, action_already_performed, … (422),
//     any 400, 403 insufficient_permissions / feature_not_subscribed / subscription_required /
//     resource_access_restricted, 401 insufficient_privileges / disconnected_feature / expired_link,
//     501 feature_not_implemented                            → invalid_request  the code itself
//   resource_not_found, invalid_resource_identifier (404)     → invalid_request  not_found
//   request_timeout (504), HTTP 408                           → timeout          the code
//   any 5xx (unexpected_error, provider_error, network_down,
//     no_client_session, service_unavailable, …)             → unavailable      the code (Retry-After when sent)
//
// `auth` with a reason in ACCOUNT_LOST_REASONS is marked `accountLost`: the sender account itself must
// be reconnected (the account is lost, not the call; domain/accounts/refusals.ts disconnects it);
// `api_key_refused` means our configuration is wrong, and disconnects nothing.
// `rate_limited` is retryable and names the wait in `retryAfterSeconds`; `invalid_request` is final
// for the call (the recipient, the content or the feature), never retried as is.
import { JsonHttpClient, type ProviderError, type ProviderErrorCode } from '../../provider-http.js';
import { ConnectorError } from '../types.js';

export const UNIPILE = 'unipile';

export interface UnipileHttpOptions {
  /** UNIPILE_BASE_URL: the DSN as an origin, e.g. `https://api1.unipile.com:13111` (no `/api/v1`). */
  baseUrl: string;
  /** UNIPILE_API_KEY: the access token sent as `X-API-KEY`. */
  apiKey: string;
  timeoutMs?: number;
  maxResponseBytes?: number;
}

/** Reasons of an `auth` error that mean the sender account must be reconnected (not our key, not the call). */
export const ACCOUNT_LOST_REASONS: ReadonlySet<string> = new Set([
  'disconnected',
  'credentials_expired',
  'invalid_credentials',
  'checkpoint',
  'multiple_sessions',
  'wrong_account',
  'session_mismatch',
  'unknown_authentication_context',
  'restricted',
  'action_required',
]);

/** Unipile error codes (without `errors/`) whose account is lost, and the reason we give. */
const ACCOUNT_LOST: Record<string, string> = {
  disconnected_account: 'disconnected',
  expired_credentials: 'credentials_expired',
  invalid_credentials: 'invalid_credentials',
  invalid_credentials_but_valid_account_imap: 'invalid_credentials',
  checkpoint_error: 'checkpoint',
  invalid_checkpoint_solution: 'checkpoint',
  captcha_not_supported: 'checkpoint',
  multiple_sessions: 'multiple_sessions',
  wrong_account: 'wrong_account',
  account_mismatch: 'wrong_account',
  session_mismatch: 'session_mismatch',
  unknown_authentication_context: 'unknown_authentication_context',
  account_restricted: 'restricted',
  action_required: 'action_required',
};

/** How long an account waits after `limit_exceeded` when Unipile names no time (ours: LinkedIn's quotas are daily and weekly). */
export const LIMIT_EXCEEDED_WAIT_SECONDS = 86_400;

const MESSAGE_MAX = 300;

/** The error for a refused call, from Unipile's body when it has one (the `errorOf` of JsonHttpClient). */
export function unipileErrorOf(status: number, body: unknown, retryAfterSeconds: number | null): ProviderError | null {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const type = typeof b.type === 'string' ? b.type.replace(/^errors\//, '').trim() : '';
  if (!type || !/^[a-z0-9_]{1,80}$/.test(type)) return null; // not Unipile's shape: judged by status
  const title = typeof b.title === 'string' ? b.title : type;
  const detail = typeof b.detail === 'string' && b.detail ? `: ${b.detail}` : '';
  const message = `${title}${detail}`.replace(/\s+/g, ' ').slice(0, MESSAGE_MAX) + ` (errors/${type}, HTTP ${status})`;
  const make = (code: ProviderErrorCode, reason: string, retryAfter: number | null = null, accountLost = false) =>
    new ConnectorError(UNIPILE, code, message, {
      status,
      reason,
      ...(retryAfter !== null ? { retryAfterSeconds: retryAfter } : {}),
      ...(accountLost ? { accountLost } : {}),
    });

  const lost = ACCOUNT_LOST[type];
  if (lost) return make('auth', lost, null, true);
  if (type === 'missing_credentials') return make('auth', 'api_key_refused');
  if (type === 'too_many_requests' || status === 429) return make('rate_limited', type, retryAfterSeconds);
  if (type === 'limit_exceeded') return make('rate_limited', type, retryAfterSeconds ?? LIMIT_EXCEEDED_WAIT_SECONDS);
  if (type === 'resource_not_found' || type === 'invalid_resource_identifier')
    return make('invalid_request', 'not_found');
  if (type === 'request_timeout' || status === 408 || status === 504) return make('timeout', type);
  if (status >= 500 && status !== 501) return make('unavailable', type, retryAfterSeconds);
  // 400, 401/403 about a feature or a link, 422 about the recipient or the content, 501: final for the call.
  return make('invalid_request', type);
}

/** The JsonHttpClient for Unipile: base `<baseUrl>/api/v1`, `X-API-KEY`, errors as ConnectorError. */
export function unipileClient(opts: UnipileHttpOptions): JsonHttpClient {
  return new JsonHttpClient(
    UNIPILE,
    {
      baseUrl: `${apiOrigin(opts.baseUrl)}/api/v1/`,
      apiKey: opts.apiKey,
      keyHeader: 'x-api-key',
      timeoutMs: opts.timeoutMs,
      maxResponseBytes: opts.maxResponseBytes,
      errorOf: unipileErrorOf,
    },
    (code, message, details) => new ConnectorError(UNIPILE, code, message, details),
  );
}

/** The Unipile server's URL as `api_url` wants it (`https://{subdomain}.unipile.com:{port}`): no trailing slash, no `/api/v1`. */
export function apiOrigin(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new Error('UNIPILE_BASE_URL must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new Error('UNIPILE_BASE_URL must be an absolute http(s) URL');
  return url
    .toString()
    .replace(/\/+$/, '')
    .replace(/\/api\/v1$/, '');
}

/** Whether `err` says the sender account itself is lost (reconnect it), and why. */
export function accountLostReason(err: unknown): string | null {
  if (!(err instanceof ConnectorError) || !err.details.accountLost) return null;
  return err.details.reason ?? null;
}
