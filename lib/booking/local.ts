// The deterministic local booking providers (the default when no BOOKING_* base URL is set), so that
// connecting, webhooks, backfills and the OAuth flow all run offline (docs/meetings.md "Local
// providers"):
// - an API key is accepted unless it starts with `invalid`; the account is derived from the key;
// - OAuth: the authorization URL is our own `/oauth/booking/local/authorize`, which answers at once
//   with a code that carries the PKCE challenge, checked against the verifier at the exchange;
// - each account has 14 bookings, derived from its id and anchored on the current ISO week (so a
//   test and the worker compute the same ones): 12 in the past, 2 ahead, every fifth canceled.
import { createHash } from 'node:crypto';
import { localAuthorizationCode, localCodeRefusal, pkceChallenge, readLocalCode } from '../oauth-pkce.js';
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

const hex = (s: string, n = 16) => createHash('sha256').update(s).digest('hex').slice(0, n);
const DAY = 86_400_000;

// Shared with the partner CRM's local stand-in (lib/oauth-pkce.ts); re-exported for existing callers.
export { localAuthorizationCode, pkceChallenge };

/** The account a local credential belongs to. */
export function localAccount(name: BookingProviderName, creds: BookingCredentials): ProviderAccount {
  if (creds.kind === 'api_key') {
    if (creds.apiKey.startsWith('invalid')) throw new BookingError(name, 'auth', 'HTTP 401: the API key was refused');
    const h = hex(`key:${creds.apiKey}`);
    return {
      accountId: `${name}_${h}`,
      name: `Local ${name} ${h.slice(0, 4)}`,
      email: `owner-${h.slice(0, 8)}@${name}.example.test`,
    };
  }
  const subject = /^lat_([0-9a-f]{16})_/.exec(creds.accessToken)?.[1];
  if (!subject) throw new BookingError(name, 'auth', 'HTTP 401: the access token was refused');
  return {
    accountId: `${name}_${subject}`,
    name: `Local ${name} ${subject.slice(0, 4)}`,
    email: `owner-${subject.slice(0, 8)}@${name}.example.test`,
  };
}

/** Monday 00:00 UTC of the ISO week of `now`. */
function weekAnchor(now: Date): number {
  const day = Math.floor(now.getTime() / DAY) * DAY;
  const weekday = (new Date(day).getUTCDay() + 6) % 7; // Monday 0
  return day - weekday * DAY;
}

const TITLES = ['Intro call', 'Product demo', 'Follow-up', 'Pricing questions'];

/** The local account's bookings as of `now`, oldest first. */
export function localBookings(accountId: string, now = new Date()): Booking[] {
  const anchor = weekAnchor(now);
  const domain = `guests-${hex(accountId, 8)}.example.test`;
  const out: Booking[] = [];
  for (let i = 0; i < 14; i++) {
    // 12 in the past (every fourth day back), then 2 in the coming weeks.
    const day = i < 12 ? anchor - (45 - i * 4) * DAY : anchor + (i - 11) * 7 * DAY + DAY;
    const startsAt = new Date(day + (9 + (parseInt(hex(`${accountId}:${i}`, 2), 16) % 8)) * 3_600_000);
    const canceled = i % 5 === 3;
    out.push({
      bookingId: `${accountId}-bk-${i + 1}`,
      status: canceled ? 'canceled' : 'scheduled',
      title: TITLES[i % TITLES.length],
      startsAt,
      endsAt: new Date(startsAt.getTime() + (i % 3 === 0 ? 45 : 30) * 60_000),
      location: `https://meet.example.test/${hex(`${accountId}:${i}:room`, 10)}`,
      attendees: [{ email: `guest${i + 1}@${domain}`, name: `Guest ${i + 1}` }],
      trackingLeadId: null,
      updatedAt: new Date(startsAt.getTime() - (canceled ? 2 * 3_600_000 : DAY)),
    });
  }
  return out;
}

export class LocalBookingProvider implements BookingProvider {
  readonly auth: 'api_key' | 'oauth';
  readonly pkce: boolean;

  constructor(
    readonly name: BookingProviderName,
    private readonly opts: { auth: 'api_key' | 'oauth'; publicBaseUrl: string; now?: () => Date },
  ) {
    this.auth = opts.auth;
    this.pkce = opts.auth === 'oauth';
  }

  async account(creds: BookingCredentials): Promise<ProviderAccount> {
    return localAccount(this.name, creds);
  }

  async registerWebhook(
    creds: BookingCredentials,
    input: { url: string; secret: string },
  ): Promise<{ webhookId: string }> {
    const { accountId } = localAccount(this.name, creds);
    return { webhookId: `wh_${hex(`${accountId}:${input.url}:${input.secret}`)}` };
  }

  async deleteWebhook(creds: BookingCredentials): Promise<void> {
    localAccount(this.name, creds);
  }

  async bookings(
    creds: BookingCredentials,
    page: { since: Date; cursor: string | null; limit: number },
  ): Promise<BookingPage> {
    const { accountId } = localAccount(this.name, creds);
    const all = localBookings(accountId, this.opts.now?.() ?? new Date()).filter((b) => b.startsAt >= page.since);
    const offset = page.cursor && /^\d{1,6}$/.test(page.cursor) ? Number(page.cursor) : 0;
    const items = all.slice(offset, offset + page.limit);
    return { items, cursor: offset + page.limit < all.length ? String(offset + page.limit) : null, invalid: 0 };
  }

  authorizationUrl(input: {
    state: string;
    redirectUri: string;
    codeChallenge: string | null;
    loginHint: string | null;
  }): string {
    const url = new URL(`${this.opts.publicBaseUrl.replace(/\/+$/, '')}/oauth/booking/local/authorize`);
    url.searchParams.set('provider', this.name);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', 'local-client');
    url.searchParams.set('redirect_uri', input.redirectUri);
    url.searchParams.set('state', input.state);
    if (input.loginHint) url.searchParams.set('login_hint', input.loginHint);
    if (input.codeChallenge) {
      url.searchParams.set('code_challenge', input.codeChallenge);
      url.searchParams.set('code_challenge_method', 'S256');
    }
    return url.toString();
  }

  async exchangeCode(input: { code: string; redirectUri: string; codeVerifier: string | null }): Promise<OAuthTokens> {
    const code = readLocalCode(input.code);
    const why = localCodeRefusal(code, this.name, input.redirectUri, input.codeVerifier);
    if (why) throw new BookingError(this.name, 'auth', `the authorization grant was refused: ${why}`);
    return this.tokens(code!.s);
  }

  async refresh(refreshToken: string): Promise<OAuthTokens> {
    const subject = /^lrt_([0-9a-f]{16})$/.exec(refreshToken)?.[1];
    if (!subject) throw new BookingError(this.name, 'auth', 'the refresh token was refused');
    return this.tokens(subject);
  }

  private tokens(subject: string): OAuthTokens {
    const now = this.opts.now?.() ?? new Date();
    return {
      accessToken: `lat_${subject}_${now.getTime().toString(36)}`,
      refreshToken: `lrt_${subject}`,
      expiresAt: new Date(now.getTime() + 3_600_000),
    };
  }
}
