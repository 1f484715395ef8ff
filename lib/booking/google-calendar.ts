// The `calendar` booking provider over Google Calendar API v3 (docs/calendar.md), as Google documents it:
//
// - OAuth 2.0 for web server applications, authorization code with PKCE (S256): the authorization
//   URL asks `access_type=offline` and `prompt=consent` (a refresh token is issued only then), the
//   token endpoint takes a form body with `client_id` and `client_secret` (grants `authorization_code`
//   with `code_verifier`, and `refresh_token`; a refresh answer carries no new refresh token). A
//   refused grant (`invalid_grant`: revoked, expired, password changed) is `auth`, which the domain
//   records as the connection's refusal; our client refused (`invalid_client`) is our configuration.
// - Who the account is: `GET calendars/primary` (the primary calendar's id is the account's address).
// - Reading: `GET calendars/primary/events` with `singleEvents=true&showDeleted=true&maxResults=N`,
//   and either `timeMin` (a full read of the window) or `syncToken` (the changes since the last
//   complete read; Google forbids `timeMin` beside it), continued by `pageToken` with the same
//   query; the last page carries `nextSyncToken`. A refused sync token (410 `fullSyncRequired`) is the
//   reason FULL_SYNC_REQUIRED: the domain clears it and reads the window again. Our cursor is the
//   page token behind `f.` (a full read) or `i.` (changes), so a resumed page repeats the same query.
// - No push channel (events.watch): the calendar is polled with its sync token by the booking sweep
//   (docs/calendar.md, "Why polling").
// - Errors in Google's shape `{error: {code, message, errors: [{domain, reason, message}]}}`: 401 →
//   `auth`; 403/429 `rateLimitExceeded`/`userRateLimitExceeded` → `rate_limited`, retried here with
//   exponential backoff (the credential's pace paused meanwhile); 403 `quotaExceeded` /
//   `dailyLimitExceeded` → `quota_exhausted`; 403 `insufficientPermissions` (the calendar scope was not
//   granted) → `auth`; 404 → `invalid_request`/not_found; 5xx → `unavailable`.
// - Every call of one connected account takes a token of its ProviderPace bucket (Google allows 600
//   requests per minute per user per project).
import { z } from 'zod';
import type { GoogleCalendarConfig } from '../config.js';
import {
  JsonHttpClient,
  parseWire,
  ProviderError,
  type ProviderErrorCode,
  type ProviderErrorDetails,
} from '../provider-http.js';
import { PaceExceeded, ProviderPace, type Rate } from '../provider-pace.js';
import { clip } from '../provider-wire.js';
import {
  BookingError,
  FULL_SYNC_REQUIRED,
  type Booking,
  type BookingAttendee,
  type BookingCredentials,
  type BookingPage,
  type BookingProvider,
  type OAuthTokens,
  type ProviderAccount,
} from './types.js';

const NAME = 'calendar';
const fail = (code: ProviderErrorCode, message: string, details?: ProviderErrorDetails) =>
  new BookingError(NAME, code, message, details);

export interface GoogleCalendarOptions extends GoogleCalendarConfig {
  timeoutMs?: number;
  /** The first pause after a rate-limit refusal, doubled for each next one (Google's exponential backoff; default 1 s, at most 32 s). */
  backoffMs?: number;
  /** Rate-limit refusals retried within one call before it fails `rate_limited` (default 3). */
  maxRetries?: number;
  now?: () => Date;
}

/** Google's events list allows 2,500 per page. */
export const MAX_PAGE = 2500;
/** What a `quotaExceeded` (Calendar usage limits) waits when Google names no time: ours, "wait until the limit replenishes". */
export const QUOTA_WAIT_SECONDS = 3600;

// ---- Google's error bodies ----

const googleError = z.object({
  error: z.object({
    code: z.number().int().nullish(),
    message: z.string().nullish(),
    status: z.string().nullish(),
    errors: z
      .array(z.object({ domain: z.string().nullish(), reason: z.string().nullish(), message: z.string().nullish() }))
      .nullish(),
  }),
});

/** Seconds to the next midnight in America/Los_Angeles, when Google's daily quotas reset. */
export function secondsToPacificMidnight(now = new Date()): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: 'America/Los_Angeles',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
    hourCycle: 'h23',
  }).formatToParts(now);
  const n = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? 0);
  return Math.max(1, 86_400 - (n('hour') * 3600 + n('minute') * 60 + n('second')));
}

/** A Calendar API refusal as our error, from Google's body (null when it is not Google's shape: judged by status). */
export function calendarApiErrorOf(
  status: number,
  body: unknown,
  retryAfterSeconds: number | null,
): BookingError | null {
  const parsed = googleError.safeParse(body);
  if (!parsed.success) return null;
  const e = parsed.data.error;
  const reason = e.errors?.find((x) => x.reason)?.reason ?? e.status ?? '';
  const message = `${clip(e.message, 300) ?? `HTTP ${status}`} (${reason || 'no reason'}, HTTP ${status})`;
  const make = (code: ProviderErrorCode, ours: string, retryAfter: number | null = null) =>
    fail(code, message, { status, reason: ours, ...(retryAfter !== null ? { retryAfterSeconds: retryAfter } : {}) });
  if (status === 401) return make('auth', reason || 'authError');
  if (reason === 'rateLimitExceeded' || reason === 'userRateLimitExceeded' || status === 429)
    return make('rate_limited', reason || 'rateLimitExceeded', retryAfterSeconds);
  if (reason === 'dailyLimitExceeded')
    return make('quota_exhausted', reason, retryAfterSeconds ?? secondsToPacificMidnight());
  if (reason === 'quotaExceeded') return make('quota_exhausted', reason, retryAfterSeconds ?? QUOTA_WAIT_SECONDS);
  if (status === 410) return make('invalid_request', FULL_SYNC_REQUIRED);
  if (status === 403) {
    // The Calendar API is not enabled on our Cloud project: our configuration, not the account's.
    if (reason === 'accessNotConfigured') return make('invalid_request', reason);
    // Anything else forbids this account's own calendar to us (the scope unchecked at consent, …).
    return make('auth', reason || 'forbidden');
  }
  if (status === 404) return make('invalid_request', 'not_found');
  if (status >= 500) return make('unavailable', reason || 'backendError', retryAfterSeconds);
  if (status === 400) return make('invalid_request', reason || 'badRequest');
  return null;
}

const oauthError = z.object({ error: z.string().max(200), error_description: z.string().nullish() });

/** A token endpoint refusal (RFC 6749 §5.2 body): `invalid_grant` is the account's grant gone; the rest is our request or client. */
export function tokenErrorOf(status: number, body: unknown): BookingError | null {
  const parsed = oauthError.safeParse(body);
  if (!parsed.success || status === 429 || status >= 500) return null;
  const { error, error_description } = parsed.data;
  const message = `the token endpoint refused the request: ${error}${error_description ? ` (${clip(error_description, 300)})` : ''}`;
  if (error === 'invalid_grant')
    return fail('auth', `the authorization was revoked or has expired: reconnect the calendar (${message})`, {
      status,
      reason: 'invalid_grant',
    });
  return fail('invalid_request', message, { status, reason: error });
}

// ---- What Google answers ----

const wireTokens = z.object({
  access_token: z.string().min(1).max(4096),
  expires_in: z
    .number()
    .int()
    .positive()
    .max(366 * 86_400)
    .nullish(),
  refresh_token: z.string().min(1).max(4096).nullish(),
  scope: z.string().max(4000).nullish(),
  token_type: z.string().max(40).nullish(),
});

const wireCalendar = z.object({
  id: z.string().trim().min(1).max(320),
  summary: z.string().max(2000).nullish(),
  timeZone: z.string().max(100).nullish(),
});

const wireEvents = z.object({
  items: z.array(z.unknown()).max(MAX_PAGE).nullish(),
  // Our cursor is the page token behind two characters, in a column of 1,000.
  nextPageToken: z.string().min(1).max(990).nullish(),
  nextSyncToken: z.string().min(1).max(1000).nullish(),
});

const when = z.object({ dateTime: z.string().nullish(), date: z.string().nullish(), timeZone: z.string().nullish() });
const person = z.object({
  email: z.string().nullish(),
  displayName: z.string().nullish(),
  self: z.boolean().nullish(),
  organizer: z.boolean().nullish(),
  resource: z.boolean().nullish(),
  responseStatus: z.string().nullish(),
});
type Person = z.infer<typeof person>;

export const wireEvent = z.object({
  id: z.string().min(1).max(1024),
  status: z.string().nullish(),
  summary: z.string().nullish(),
  location: z.string().nullish(),
  hangoutLink: z.string().nullish(),
  conferenceData: z
    .object({
      entryPoints: z
        .array(z.object({ entryPointType: z.string().nullish(), uri: z.string().nullish() }))
        .max(50)
        .nullish(),
    })
    .nullish(),
  start: when.nullish(),
  end: when.nullish(),
  updated: z.string().nullish(),
  organizer: person.nullish(),
  creator: person.nullish(),
  attendees: z.array(person).max(2000).nullish(),
});

// ---- Mapping an event to a booking ----

const BOOKING_ID = /^[A-Za-z0-9_.:@-]{1,200}$/;
const ADDRESS = /^[^\s@<>()",;:]{1,254}@[^\s@<>()",;:]{1,254}$/;
const validEmail = (s: string | null | undefined): s is string => !!s && s.length <= 320 && ADDRESS.test(s.trim());
const instant = (s: string | null | undefined): Date | null => {
  if (!s) return null;
  const t = Date.parse(s);
  return Number.isNaN(t) ? null : new Date(t);
};

export type EventReading =
  | { kind: 'booking'; booking: Booking }
  | { kind: 'removed'; bookingId: string; updatedAt: Date }
  | { kind: 'invalid'; why: string };

/**
 * One event of the list as ours:
 * - a deleted event reduced to its id (Google guarantees nothing else) is `removed`;
 * - an all-day event (`start.date`) or one without a valid time range is `invalid` (not a meeting at a time);
 * - else a booking: `cancelled` → canceled; `confirmed`/`tentative` → scheduled, unless no guest
 *   is still coming (every invitee declined or none is left), which is canceled too. Its attendees are
 *   the guests — the organizer first when it is not the calendar's owner (the lead sent the
 *   invitation), then the invitees in Google's order — leaving out the owner (`self`), rooms
 *   (`resource`) and those who declined; `updated` orders its versions (the time it was read when
 *   Google gives none).
 */
export function readEvent(raw: unknown, now: Date): EventReading {
  const parsed = wireEvent.safeParse(raw);
  if (!parsed.success) return { kind: 'invalid', why: 'not an event' };
  const e = parsed.data;
  if (!BOOKING_ID.test(e.id)) return { kind: 'invalid', why: 'event id' };
  const updatedAt = instant(e.updated) ?? now;
  const startsAt = instant(e.start?.dateTime);
  const endsAt = instant(e.end?.dateTime);
  if (e.status === 'cancelled' && (!startsAt || !endsAt)) return { kind: 'removed', bookingId: e.id, updatedAt };
  if (!startsAt || !endsAt) return { kind: 'invalid', why: e.start?.date ? 'all-day event' : 'no time range' };
  if (endsAt <= startsAt) return { kind: 'invalid', why: 'ends before it starts' };

  const guests: Person[] = [];
  const add = (p: Person | null | undefined) => {
    if (!p || p.self || p.resource || !validEmail(p.email)) return;
    const email = p.email.trim().toLowerCase();
    const same = guests.find((g) => g.email!.trim().toLowerCase() === email);
    // The organizer listed again among the attendees brings its answer.
    if (same) same.responseStatus ??= p.responseStatus;
    else guests.push({ ...p });
  };
  add(e.organizer);
  for (const a of e.attendees ?? []) add(a);
  const coming = guests.filter((g) => g.responseStatus !== 'declined');
  const owner = [e.organizer, e.creator, ...(e.attendees ?? [])].find((p) => p?.self && validEmail(p.email))?.email;
  const listed = coming.length ? coming : guests;
  const attendees: BookingAttendee[] = (listed.length ? listed : owner ? [{ email: owner }] : []).map((p) => ({
    email: p.email!.trim(),
    name: clip(p.displayName, 200),
  }));
  if (!attendees.length) return { kind: 'invalid', why: 'no attendee' };
  const video = e.conferenceData?.entryPoints?.find((x) => x.entryPointType === 'video' && x.uri)?.uri;
  return {
    kind: 'booking',
    booking: {
      bookingId: e.id,
      status: e.status === 'cancelled' || coming.length === 0 ? 'canceled' : 'scheduled',
      title: clip(e.summary, 300) ?? 'Meeting',
      startsAt,
      endsAt,
      location: clip(e.location ?? e.hangoutLink ?? video, 500),
      attendees,
      trackingLeadId: null,
      updatedAt,
    },
  };
}

// ---- The provider ----

const bearer = (creds: BookingCredentials) => {
  if (creds.kind !== 'oauth') throw fail('invalid_request', 'Google Calendar connects through OAuth');
  return { authorization: `Bearer ${creds.accessToken}` };
};

/** The pace's key for a connected account: its grant (the refresh token outlives its access tokens). */
const paceKey = (creds: BookingCredentials) =>
  creds.kind === 'oauth' ? (creds.refreshToken ?? creds.accessToken) : creds.apiKey;

/** Google's per-user quota as a bucket: one call every 60000/rpm ms, bursts of up to a second's worth. */
export const paceOf = (requestsPerMinute: number): Rate => ({
  burst: Math.max(1, Math.min(10, Math.floor(requestsPerMinute / 60))),
  everyMs: Math.ceil(60_000 / requestsPerMinute),
});

export class GoogleCalendarProvider implements BookingProvider {
  readonly name = NAME;
  readonly auth = 'oauth' as const;
  readonly pkce = true;
  readonly calendarSync = true as const;
  private readonly api: JsonHttpClient;
  private readonly tokens: JsonHttpClient;
  private readonly tokenPath: string;
  private readonly pace: ProviderPace;
  private readonly now: () => Date;

  constructor(private readonly opts: GoogleCalendarOptions) {
    this.now = opts.now ?? (() => new Date());
    // The access token goes in each call's own header (keyHeader null): the clients hold no key.
    this.api = new JsonHttpClient(
      'booking:calendar',
      {
        baseUrl: opts.baseUrl,
        apiKey: '',
        keyHeader: null,
        timeoutMs: opts.timeoutMs,
        errorOf: (status, body, retryAfter) => calendarApiErrorOf(status, body, retryAfter),
      },
      fail,
    );
    const token = new URL(opts.tokenUrl);
    this.tokenPath = `${token.pathname.split('/').pop() ?? ''}${token.search}`;
    this.tokens = new JsonHttpClient(
      'booking:calendar-oauth',
      {
        baseUrl: new URL('./', token).toString(),
        apiKey: '',
        keyHeader: null,
        timeoutMs: opts.timeoutMs,
        errorOf: (status, body) => tokenErrorOf(status, body),
      },
      fail,
    );
    this.pace = new ProviderPace(paceOf(opts.requestsPerMinute));
  }

  /** A Calendar API call of one account: paced, and retried with exponential backoff while Google says to slow down. */
  private async call(creds: BookingCredentials, run: () => Promise<unknown>): Promise<unknown> {
    const key = paceKey(creds);
    const base = this.opts.backoffMs ?? 1000;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.pace.take(key);
      } catch (err) {
        if (err instanceof PaceExceeded)
          throw fail('rate_limited', err.message, { reason: 'paced', retryAfterSeconds: Math.ceil(err.waitMs / 1000) });
        throw err;
      }
      try {
        return await run();
      } catch (err) {
        if (!(err instanceof ProviderError) || (err.code !== 'rate_limited' && err.code !== 'quota_exhausted'))
          throw err;
        const backoff = Math.min(32_000, base * 2 ** attempt + Math.floor(Math.random() * base));
        const waitMs = err.retryAfterSeconds !== null ? err.retryAfterSeconds * 1000 : backoff;
        // The account's next calls (this one's retry, or a later call) wait until then.
        this.pace.pause(key, new Date(Date.now() + waitMs));
        if (err.code === 'quota_exhausted' || attempt >= (this.opts.maxRetries ?? 3)) throw err;
      }
    }
  }

  async account(creds: BookingCredentials): Promise<ProviderAccount> {
    const raw = await this.call(creds, () => this.api.json('GET', 'calendars/primary', { headers: bearer(creds) }));
    const c = parseWire(this.api, wireCalendar, raw);
    return {
      accountId: c.id,
      name: clip(c.summary, 200),
      email: validEmail(c.id) ? c.id.trim().toLowerCase() : null,
    };
  }

  /** Google Calendar is polled (docs/calendar.md "Why polling"): there is no webhook of ours to register. */
  async registerWebhook(): Promise<{ webhookId: string }> {
    throw fail('invalid_request', 'Google Calendar is read by polling with its sync token: no webhook to register');
  }

  async deleteWebhook(): Promise<void> {}

  async bookings(
    creds: BookingCredentials,
    page: { since: Date; cursor: string | null; limit: number; syncToken?: string | null },
  ): Promise<BookingPage> {
    const resumed = page.cursor ? /^([fi])\.(.+)$/s.exec(page.cursor) : null;
    if (page.cursor && !resumed) throw fail('invalid_request', 'not a Google Calendar cursor');
    const incremental = resumed ? resumed[1] === 'i' : !!page.syncToken;
    // The same query on every page of a read (Google's rule for pageToken).
    const query = new URLSearchParams({
      singleEvents: 'true',
      showDeleted: 'true',
      maxResults: String(Math.min(MAX_PAGE, Math.max(1, page.limit))),
    });
    if (incremental) {
      // A read of changes resumed after its token was cleared: start over, as Google would say.
      if (!page.syncToken)
        throw fail('invalid_request', 'no sync token to continue from', { reason: FULL_SYNC_REQUIRED });
      query.set('syncToken', page.syncToken);
    } else query.set('timeMin', page.since.toISOString());
    if (resumed) query.set('pageToken', resumed[2]);
    const raw = await this.call(creds, () =>
      this.api.json('GET', 'calendars/primary/events', { query, headers: bearer(creds) }),
    );
    const list = parseWire(this.api, wireEvents, raw);
    const now = this.now();
    const items: Booking[] = [];
    const removed: { bookingId: string; updatedAt: Date }[] = [];
    let invalid = 0;
    for (const item of list.items ?? []) {
      const r = readEvent(item, now);
      if (r.kind === 'booking') items.push(r.booking);
      else if (r.kind === 'removed') removed.push({ bookingId: r.bookingId, updatedAt: r.updatedAt });
      else invalid++;
    }
    const cursor = list.nextPageToken ? `${incremental ? 'i' : 'f'}.${list.nextPageToken}` : null;
    return { items, removed, invalid, cursor, nextSyncToken: cursor ? null : (list.nextSyncToken ?? null) };
  }

  /** Google's authorization page: code + PKCE (S256), offline access with the consent prompt (so a refresh token is issued). */
  authorizationUrl(input: {
    state: string;
    redirectUri: string;
    codeChallenge: string | null;
    loginHint: string | null;
  }): string {
    const url = new URL(this.opts.authorizeUrl);
    url.searchParams.set('client_id', this.opts.clientId);
    url.searchParams.set('redirect_uri', input.redirectUri);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('scope', this.opts.scope);
    url.searchParams.set('access_type', 'offline');
    url.searchParams.set('prompt', 'consent');
    url.searchParams.set('include_granted_scopes', 'true');
    url.searchParams.set('state', input.state);
    if (input.codeChallenge) {
      url.searchParams.set('code_challenge', input.codeChallenge);
      url.searchParams.set('code_challenge_method', 'S256');
    }
    if (input.loginHint) url.searchParams.set('login_hint', input.loginHint);
    return url.toString();
  }

  /** The code for tokens; the answer must carry a refresh token and every scope we asked (Google lets a user uncheck one). */
  async exchangeCode(input: { code: string; redirectUri: string; codeVerifier: string | null }): Promise<OAuthTokens> {
    const form = new URLSearchParams({
      code: input.code,
      redirect_uri: input.redirectUri,
      grant_type: 'authorization_code',
    });
    if (input.codeVerifier) form.set('code_verifier', input.codeVerifier);
    const t = await this.token(form);
    if (!t.refreshToken)
      throw fail(
        'auth',
        'Google issued no refresh token (asked with access_type=offline and prompt=consent): connect the calendar again',
      );
    if (t.scope !== null) {
      const granted = new Set(t.scope.split(/\s+/));
      const missing = this.opts.scope.split(/\s+/).filter((s) => s && !granted.has(s));
      if (missing.length)
        throw fail(
          'auth',
          `the calendar permission was not granted (${missing.join(' ')}): connect again and allow it`,
        );
    }
    return { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: t.expiresAt };
  }

  /** A new access token; Google's answer carries no refresh token (the one held stays valid). */
  async refresh(refreshToken: string): Promise<OAuthTokens> {
    const t = await this.token(new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }));
    return { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: t.expiresAt };
  }

  private async token(form: URLSearchParams): Promise<OAuthTokens & { scope: string | null }> {
    form.set('client_id', this.opts.clientId);
    form.set('client_secret', this.opts.clientSecret);
    const t = parseWire(this.tokens, wireTokens, await this.tokens.json('POST', this.tokenPath, { form }));
    return {
      accessToken: t.access_token,
      refreshToken: t.refresh_token ?? null,
      // Without expires_in: an hour, the lifetime Google gives.
      expiresAt: new Date(this.now().getTime() + (t.expires_in ?? 3600) * 1000),
      scope: t.scope ?? null,
    };
  }

  async close(): Promise<void> {
    await Promise.all([this.api.close(), this.tokens.close()]);
  }
}
