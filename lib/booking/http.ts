// A booking provider over HTTP, wire format v1 (docs/meetings.md "Provider API"): every call carries
// the workspace's own credential (`Authorization: Bearer <API key or access token>`); OAuth providers
// add the authorization-code flow (PKCE S256) with a confidential client (HTTP Basic at the token
// endpoint). Transport and status errors map like every provider's (lib/provider-http.ts).
import { z } from 'zod';
import {
  JsonHttpClient,
  parseWire,
  ProviderError,
  type HttpProviderOptions,
  type ProviderErrorCode,
  type ProviderErrorDetails,
} from '../provider-http.js';
import { toBooking, wireBooking } from './wire.js';
import {
  BookingError,
  type Booking,
  type BookingCredentials,
  type BookingPage,
  type BookingProvider,
  type BookingProviderName,
  type OAuthTokens,
  type ProviderAccount,
} from './types.js';

export interface HttpOAuthClient {
  authorizeUrl: string;
  clientId: string;
  clientSecret: string;
  scope: string | null;
}

export interface HttpBookingOptions {
  name: BookingProviderName;
  baseUrl: string;
  timeoutMs?: number;
  /** Present for OAuth providers. */
  oauth?: HttpOAuthClient;
}

/** The events our hook handles, asked for at registration. */
export const WEBHOOK_EVENTS = ['booking.created', 'booking.rescheduled', 'booking.canceled'];

const wireAccount = z.object({
  id: z.string().trim().min(1).max(200),
  name: z.string().max(1000).nullish(),
  email: z.string().max(320).nullish(),
});
const wireWebhook = z.object({ id: z.string().trim().min(1).max(200) });
const wirePage = z.object({ items: z.array(z.unknown()).max(500), next_cursor: z.string().min(1).max(1000).nullish() });
const wireTokens = z.object({
  access_token: z.string().min(1).max(4000),
  refresh_token: z.string().min(1).max(4000).nullish(),
  expires_in: z
    .number()
    .int()
    .positive()
    .max(10 * 365 * 86400)
    .nullish(),
});

const bearer = (creds: BookingCredentials) => `Bearer ${creds.kind === 'api_key' ? creds.apiKey : creds.accessToken}`;

export class HttpBookingProvider implements BookingProvider {
  readonly name: BookingProviderName;
  readonly auth: 'api_key' | 'oauth';
  readonly pkce: boolean;
  private readonly http: JsonHttpClient;

  constructor(private readonly opts: HttpBookingOptions) {
    this.name = opts.name;
    this.auth = opts.oauth ? 'oauth' : 'api_key';
    this.pkce = !!opts.oauth;
    const http: HttpProviderOptions = { baseUrl: opts.baseUrl, apiKey: '', timeoutMs: opts.timeoutMs };
    const error = (code: ProviderErrorCode, message: string, details?: ProviderErrorDetails) =>
      new BookingError(opts.name, code, message, details);
    this.http = new JsonHttpClient(`booking:${opts.name}`, http, error);
  }

  async account(creds: BookingCredentials): Promise<ProviderAccount> {
    const a = parseWire(
      this.http,
      wireAccount,
      await this.http.json('GET', 'v1/me', { headers: { authorization: bearer(creds) } }),
    );
    return { accountId: a.id, name: a.name?.trim() || null, email: a.email?.trim() || null };
  }

  async registerWebhook(
    creds: BookingCredentials,
    input: { url: string; secret: string },
  ): Promise<{ webhookId: string }> {
    const body = { url: input.url, secret: input.secret, events: WEBHOOK_EVENTS };
    const w = parseWire(
      this.http,
      wireWebhook,
      await this.http.json('POST', 'v1/webhooks', { body, headers: { authorization: bearer(creds) } }),
    );
    return { webhookId: w.id };
  }

  async deleteWebhook(creds: BookingCredentials, webhookId: string): Promise<void> {
    await this.http.json('DELETE', `v1/webhooks/${encodeURIComponent(webhookId)}`, {
      notFoundIsNull: true,
      headers: { authorization: bearer(creds) },
    });
  }

  /** A page of bookings; an item that is not a valid booking is left out (the page still counts it as read). */
  async bookings(
    creds: BookingCredentials,
    page: { since: Date; cursor: string | null; limit: number },
  ): Promise<BookingPage> {
    const query = new URLSearchParams({ since: page.since.toISOString(), limit: String(page.limit) });
    if (page.cursor) query.set('cursor', page.cursor);
    const p = parseWire(
      this.http,
      wirePage,
      await this.http.json('GET', 'v1/bookings', { query, headers: { authorization: bearer(creds) } }),
    );
    const items: Booking[] = [];
    for (const raw of p.items) {
      const b = wireBooking.safeParse(raw);
      if (b.success) items.push(toBooking(b.data));
    }
    return { items, cursor: p.next_cursor ?? null, invalid: p.items.length - items.length };
  }

  authorizationUrl(input: {
    state: string;
    redirectUri: string;
    codeChallenge: string | null;
    loginHint: string | null;
  }): string {
    const o = this.oauthClient();
    const url = new URL(o.authorizeUrl);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', o.clientId);
    url.searchParams.set('redirect_uri', input.redirectUri);
    url.searchParams.set('state', input.state);
    if (o.scope) url.searchParams.set('scope', o.scope);
    if (input.loginHint) url.searchParams.set('login_hint', input.loginHint);
    if (input.codeChallenge) {
      url.searchParams.set('code_challenge', input.codeChallenge);
      url.searchParams.set('code_challenge_method', 'S256');
    }
    return url.toString();
  }

  async exchangeCode(input: { code: string; redirectUri: string; codeVerifier: string | null }): Promise<OAuthTokens> {
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code: input.code,
      redirect_uri: input.redirectUri,
    });
    if (input.codeVerifier) form.set('code_verifier', input.codeVerifier);
    return this.token(form);
  }

  async refresh(refreshToken: string): Promise<OAuthTokens> {
    return this.token(new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }));
  }

  /** RFC 6749 token request: a refused grant (400 invalid_grant) is an `auth` failure like a refused client. */
  private async token(form: URLSearchParams): Promise<OAuthTokens> {
    const o = this.oauthClient();
    form.set('client_id', o.clientId);
    const basic = Buffer.from(`${encodeURIComponent(o.clientId)}:${encodeURIComponent(o.clientSecret)}`).toString(
      'base64',
    );
    let raw: unknown;
    try {
      raw = await this.http.json('POST', 'oauth/token', { form, headers: { authorization: `Basic ${basic}` } });
    } catch (err) {
      if (err instanceof ProviderError && err.code === 'invalid_request')
        throw new BookingError(this.name, 'auth', 'the authorization grant was refused', err.details);
      throw err;
    }
    const t = parseWire(this.http, wireTokens, raw);
    return {
      accessToken: t.access_token,
      refreshToken: t.refresh_token ?? null,
      expiresAt: t.expires_in ? new Date(Date.now() + t.expires_in * 1000) : null,
    };
  }

  private oauthClient(): HttpOAuthClient {
    if (!this.opts.oauth)
      throw new BookingError(this.name, 'invalid_request', 'this provider connects with an API key');
    return this.opts.oauth;
  }

  async close(): Promise<void> {
    await this.http.close();
  }
}
