// Mailboxes connected with Google or Microsoft OAuth 2.0 (docs/email.md "Connecting with Google or
// Microsoft"): the authorization URL (authorization code + PKCE S256), and the token endpoint's two
// grants — `authorization_code` with the `code_verifier`, `refresh_token` — as RFC 6749 and both
// providers document them (form body, client_secret_post). The address a grant belongs to is the
// id_token's `email` (Microsoft: else `preferred_username`), read from the token endpoint's own answer
// over TLS (OpenID Connect Core 3.1.3.7: no signature check needed for a token received directly).
// The HTTP goes through the guarded outbound client (lib/outbound-http.ts): https, no private
// addresses unless allow-listed, no redirects, a deadline and a bounded answer.
//
// A refused grant (`invalid_grant`: revoked, expired, password changed) is `MailOAuthError('invalid_grant')`,
// which the token store (domain/mailbox/oauth-tokens.ts) turns into a disconnection; a network
// failure, a 5xx or a 429 is `unavailable` and only ever retried.
import type { MailOAuthConfig, MailOAuthProviderConfig } from '../../config.js';
import { postGuarded, type Resolver } from '../../outbound-http.js';

export const MAIL_OAUTH_PROVIDERS = ['google', 'microsoft'] as const;
export type MailOAuthProvider = (typeof MAIL_OAUTH_PROVIDERS)[number];

export type MailOAuthErrorKind = 'invalid_grant' | 'refused' | 'unavailable' | 'bad_response';

/** A token endpoint's failure: `invalid_grant` (the grant is gone), `refused` (another 4xx: our client or request), `unavailable` (network, 5xx, 429: retried), `bad_response`. */
export class MailOAuthError extends Error {
  constructor(
    readonly kind: MailOAuthErrorKind,
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'MailOAuthError';
  }
}

export interface MailOAuthTokens {
  accessToken: string;
  /** Null when the answer carries none (Google's refresh answers: the one we hold stays valid). */
  refreshToken: string | null;
  expiresAt: Date;
  /** The address the grant belongs to (an authorization_code answer's id_token), else null. */
  email: string | null;
}

/** A fresh access token of a connected account: the token store's answer to the mail connector (domain/mailbox/oauth-tokens.ts). */
export interface MailAccessToken {
  accessToken: string;
  expiresAt: Date;
}

/**
 * What the mail connector asks of the token store: the account's access token, refreshed when it is
 * about to expire (or when `rejected`, the token a server just refused, is still the stored one).
 * Throws MailConnectError `oauth_revoked` once the grant is gone (the account is then disconnected).
 */
export type MailTokenSource = (accountId: string, opts?: { rejected?: string }) => Promise<MailAccessToken>;

const ENV = { google: 'MAIL_OAUTH_GOOGLE', microsoft: 'MAIL_OAUTH_MICROSOFT' } as const;

/** The variables to set before `provider` can be used (empty when it is configured). */
export function missingMailOAuthSettings(config: MailOAuthConfig, provider: MailOAuthProvider): string[] {
  const p = config[provider];
  return [
    ...(p.clientId ? [] : [`${ENV[provider]}_CLIENT_ID`]),
    ...(p.clientSecret ? [] : [`${ENV[provider]}_CLIENT_SECRET`]),
  ];
}

/** The stored credentials of an OAuth mailbox (sealed on the account like a password mailbox's, without any secret). */
export function oauthMailCredentials(
  config: MailOAuthConfig,
  provider: MailOAuthProvider,
  email: string,
): Record<string, string> {
  const p = config[provider];
  return {
    auth: 'oauth',
    oauth_provider: provider,
    email,
    smtp_host: p.smtp.host,
    smtp_port: String(p.smtp.port),
    smtp_security: p.smtp.security,
    imap_host: p.imap.host,
    imap_port: String(p.imap.port),
    imap_security: p.imap.security,
  };
}

const ADDRESS = /^[^\s@<>()",;:]+@[^\s@<>()",;:]+$/;

/** The claims of a JWT's payload, unverified (see the header comment); null when it is not a JWT. */
function jwtClaims(token: string): Record<string, unknown> | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as unknown;
    return claims && typeof claims === 'object' ? (claims as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export interface MailOAuthClientOptions {
  /** OUTBOUND_ALLOW_HOSTS: token endpoints allowed on a private address or over http (tests, on-prem). */
  allowHosts: readonly string[];
  resolver?: Resolver;
  /** Attempts at a token request that failed with `unavailable` before giving up (default 3). */
  attempts?: number;
  /** The pause before the second attempt, doubled for each next one (default 500 ms). */
  backoffMs?: number;
}

export class MailOAuthClient {
  constructor(
    readonly config: MailOAuthConfig,
    private readonly opts: MailOAuthClientOptions,
  ) {}

  provider(name: MailOAuthProvider): MailOAuthProviderConfig {
    return this.config[name];
  }

  /** The URL the browser opens: authorization code with PKCE (S256), offline access, the consent screen. */
  authorizationUrl(
    name: MailOAuthProvider,
    input: { state: string; codeChallenge: string; loginHint?: string | null },
  ): string {
    const p = this.provider(name);
    const url = new URL(p.authorizeUrl);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', p.clientId ?? '');
    url.searchParams.set('redirect_uri', p.redirectUri);
    url.searchParams.set('scope', p.scope);
    url.searchParams.set('state', input.state);
    url.searchParams.set('code_challenge', input.codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
    if (name === 'google') {
      // A refresh token is only issued for offline access, and again only with the consent prompt.
      url.searchParams.set('access_type', 'offline');
      url.searchParams.set('prompt', 'consent');
      url.searchParams.set('include_granted_scopes', 'true');
    } else {
      url.searchParams.set('response_mode', 'query');
      url.searchParams.set('prompt', 'select_account');
    }
    if (input.loginHint) url.searchParams.set('login_hint', input.loginHint);
    return url.toString();
  }

  /** Exchanges the code (with the PKCE verifier); the answer must name the address (id_token). */
  async exchangeCode(name: MailOAuthProvider, input: { code: string; codeVerifier: string }): Promise<MailOAuthTokens> {
    const p = this.provider(name);
    const tokens = await this.token(
      name,
      new URLSearchParams({
        grant_type: 'authorization_code',
        code: input.code,
        redirect_uri: p.redirectUri,
        code_verifier: input.codeVerifier,
      }),
      1,
    );
    if (!tokens.email)
      throw new MailOAuthError(
        'bad_response',
        'the token answer names no mailbox address (an id_token with the email claim: the scope must include "openid email")',
      );
    if (!tokens.refreshToken)
      throw new MailOAuthError(
        'bad_response',
        'the token answer has no refresh token (Google: access_type=offline; Microsoft: the offline_access scope)',
      );
    return tokens;
  }

  /** A new access token (and, with Microsoft, a new refresh token that replaces the one given). */
  refresh(name: MailOAuthProvider, refreshToken: string): Promise<MailOAuthTokens> {
    return this.token(
      name,
      new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        // Microsoft asks for the scopes again on a refresh; Google ignores a scope it already granted.
        ...(name === 'microsoft' ? { scope: this.provider(name).scope } : {}),
      }),
      this.opts.attempts ?? 3,
    );
  }

  private async token(name: MailOAuthProvider, form: URLSearchParams, attempts: number): Promise<MailOAuthTokens> {
    const p = this.provider(name);
    form.set('client_id', p.clientId ?? '');
    form.set('client_secret', p.clientSecret ?? '');
    let last: MailOAuthError | null = null;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1) await new Promise((r) => setTimeout(r, (this.opts.backoffMs ?? 500) * 2 ** (attempt - 2)));
      try {
        return await this.tokenOnce(name, p, form);
      } catch (err) {
        if (!(err instanceof MailOAuthError) || err.kind !== 'unavailable') throw err;
        last = err;
      }
    }
    throw last ?? new MailOAuthError('unavailable', 'the token endpoint did not answer');
  }

  private async tokenOnce(
    name: MailOAuthProvider,
    p: MailOAuthProviderConfig,
    form: URLSearchParams,
  ): Promise<MailOAuthTokens> {
    const r = await postGuarded(
      p.tokenUrl,
      form.toString(),
      { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      {
        allowHosts: this.opts.allowHosts,
        resolver: this.opts.resolver,
        timeoutMs: this.config.timeoutMs,
        maxExcerptBytes: 64 * 1024,
      },
    );
    let body: Record<string, unknown> | null = null;
    try {
      body = r.responseExcerpt ? (JSON.parse(r.responseExcerpt) as Record<string, unknown>) : null;
    } catch {
      body = null;
    }
    const where = `the ${name} token endpoint`;
    if (r.statusCode === null) {
      // Not reached (DNS, connect, TLS, deadline), or refused by the outbound policy.
      if (r.errorClass === 'blocked_destination' || r.errorClass === 'invalid_url')
        throw new MailOAuthError('refused', `${where} is not allowed: ${r.error}`);
      throw new MailOAuthError('unavailable', `${where} could not be reached: ${r.error}`);
    }
    if (r.statusCode >= 500 || r.statusCode === 429 || r.statusCode === 408)
      throw new MailOAuthError('unavailable', `${where} answered HTTP ${r.statusCode}`, r.statusCode);
    if (!r.success) {
      const code = typeof body?.error === 'string' ? body.error : null;
      const description =
        typeof body?.error_description === 'string' ? `: ${body.error_description.slice(0, 300)}` : '';
      if (code === 'invalid_grant')
        throw new MailOAuthError(
          'invalid_grant',
          `${where} refused the grant (invalid_grant${description})`,
          r.statusCode,
        );
      // Google answers a revoked token with 400 invalid_grant too; 401 invalid_client is our configuration.
      throw new MailOAuthError(
        'refused',
        `${where} refused the request: HTTP ${r.statusCode} ${code ?? ''}${description}`.trim(),
        r.statusCode,
      );
    }
    const accessToken = typeof body?.access_token === 'string' ? body.access_token : '';
    if (!accessToken || accessToken.length > 16_000)
      throw new MailOAuthError('bad_response', `${where} answered without an access_token`);
    const expiresIn = Number(body?.expires_in);
    const refreshToken = typeof body?.refresh_token === 'string' && body.refresh_token ? body.refresh_token : null;
    const claims = typeof body?.id_token === 'string' ? jwtClaims(body.id_token) : null;
    if (claims && claims.aud !== undefined) {
      const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
      if (!aud.includes(p.clientId)) throw new MailOAuthError('bad_response', `${where}: the id_token is not for us`);
    }
    const rawEmail = claims?.email ?? (name === 'microsoft' ? claims?.preferred_username : undefined);
    const email = typeof rawEmail === 'string' && ADDRESS.test(rawEmail.trim()) ? rawEmail.trim().toLowerCase() : null;
    return {
      accessToken,
      refreshToken,
      // Without expires_in: an hour, the lifetime both providers give.
      expiresAt: new Date(Date.now() + (Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 3600) * 1000),
      email,
    };
  }
}
