// A local stand-in for Google's OAuth 2.0 endpoints and Calendar API v3 (issue 46; docs/calendar.md),
// speaking their documented formats, for the `calendar` booking provider's tests. One HTTP server:
//
// - `GET /o/oauth2/v2/auth` — the authorization page (OAuth 2.0 for web server applications): checks
//   the client id and the registered redirect URI (Google's `invalid_client` / `redirect_uri_mismatch`
//   error pages), `response_type=code`, a scope, PKCE `code_challenge_method=S256`; the account that
//   signs in (`signIn`, or a `login_hint` it knows) consents at once (or declines: `error=access_denied`)
//   and the browser is sent to `redirect_uri?state&code&scope`.
// - `POST /token` — form body, `client_id` + `client_secret` (else 401 `invalid_client`):
//   `authorization_code` (the code once, the same redirect_uri, the verifier's S256 equal to the
//   challenge) → `{access_token, expires_in, refresh_token (offline access only), scope, token_type}`;
//   `refresh_token` → `{access_token, expires_in, scope, token_type}` (no new refresh token); a spent
//   or wrong code, a wrong verifier, an unknown or revoked refresh token → 400 `{error: "invalid_grant"}`.
// - `GET /calendar/v3/calendars/primary` → the account's primary calendar `{kind, id (its address), summary, timeZone}`.
// - `GET /calendar/v3/calendars/primary/events` — `timeMin` (an event's end after it), `showDeleted`,
//   `singleEvents`, `maxResults` (≤ 2500), `pageToken`, `syncToken` (not with `timeMin`, nor with
//   `showDeleted=false`: 400). A read is a snapshot: its pages list the calendar as it was at its first
//   page; the last page carries `nextSyncToken`; a read with `syncToken` lists the latest version of
//   each event changed since (cancelled ones included, a deleted one reduced to `{kind, etag, id,
//   status}` when deleted so). A token made stale by `expireSyncTokens` answers 410 `fullSyncRequired`.
// - Every Calendar call needs `Authorization: Bearer <live access token>` (else 401 `authError`);
//   `failNext` answers the next calls with the documented error bodies (`GOOGLE_ERRORS`).
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  /** The form body of a token request. */
  form: URLSearchParams | null;
  authorization: string | null;
  status: number;
}

export interface EventTime {
  dateTime?: string;
  date?: string;
  timeZone?: string;
}

export interface GoogleAttendee {
  email: string;
  displayName?: string;
  organizer?: boolean;
  self?: boolean;
  resource?: boolean;
  responseStatus?: 'needsAction' | 'declined' | 'tentative' | 'accepted';
}

/** An event as the Calendar API answers it (the fields the docs' Event resource names that we use). */
export interface GoogleEvent {
  kind: 'calendar#event';
  etag: string;
  id: string;
  status: 'confirmed' | 'tentative' | 'cancelled';
  htmlLink?: string;
  created?: string;
  updated?: string;
  summary?: string;
  description?: string;
  location?: string;
  creator?: { email: string; self?: boolean };
  organizer?: { email: string; displayName?: string; self?: boolean };
  start?: EventTime;
  end?: EventTime;
  iCalUID?: string;
  sequence?: number;
  attendees?: GoogleAttendee[];
  hangoutLink?: string;
  reminders?: { useDefault: boolean };
  eventType?: string;
}

export interface EventInput {
  summary?: string;
  start: EventTime;
  end: EventTime;
  attendees?: GoogleAttendee[];
  location?: string;
  status?: 'confirmed' | 'tentative';
  /** The organizer when it is not the calendar's owner (an invitation received). */
  organizer?: { email: string; displayName?: string };
  id?: string;
}

/** A documented error body: `{error: {errors: [{domain, reason, message}], code, message}}`. */
export interface GoogleErrorSpec {
  status: number;
  reason: string;
  message: string;
  domain?: string;
  retryAfter?: string;
}

/** The error bodies of Google's "Handle API errors" page. */
export const GOOGLE_ERRORS = {
  authError: { status: 401, domain: 'global', reason: 'authError', message: 'Invalid Credentials' },
  rateLimitExceeded: {
    status: 403,
    domain: 'usageLimits',
    reason: 'rateLimitExceeded',
    message: 'Rate Limit Exceeded',
  },
  userRateLimitExceeded: {
    status: 403,
    domain: 'usageLimits',
    reason: 'userRateLimitExceeded',
    message: 'User Rate Limit Exceeded',
  },
  tooManyRequests: { status: 429, domain: 'usageLimits', reason: 'rateLimitExceeded', message: 'Rate Limit Exceeded' },
  quotaExceeded: {
    status: 403,
    domain: 'usageLimits',
    reason: 'quotaExceeded',
    message: 'Calendar usage limits exceeded.',
  },
  insufficientPermissions: {
    status: 403,
    domain: 'global',
    reason: 'insufficientPermissions',
    message: 'Request had insufficient authentication scopes.',
  },
  fullSyncRequired: {
    status: 410,
    domain: 'calendar',
    reason: 'fullSyncRequired',
    message: 'Sync token is no longer valid, a full sync is required.',
  },
  backendError: { status: 500, domain: 'global', reason: 'backendError', message: 'Backend Error' },
} satisfies Record<string, GoogleErrorSpec>;

export const googleErrorBody = (e: GoogleErrorSpec) => ({
  error: {
    errors: [
      {
        domain: e.domain ?? 'global',
        reason: e.reason,
        message: e.message,
        ...(e.status === 410 ? { locationType: 'parameter', location: 'syncToken' } : {}),
        ...(e.status === 401 ? { locationType: 'header', location: 'Authorization' } : {}),
      },
    ],
    code: e.status,
    message: e.message,
  },
});

interface Version {
  seq: number;
  event: GoogleEvent;
  /** Deleted with nothing left but its id (what an incremental read then shows). */
  minimal: boolean;
}

interface Grant {
  account: string;
  scopes: string[];
  revoked: boolean;
}

export interface Calendar {
  /** The account's address (the primary calendar's id). */
  id: string;
  insert(e: EventInput): GoogleEvent;
  /** Changes an event (a new version, `updated` later than the last). */
  patch(id: string, changes: Partial<EventInput>): GoogleEvent;
  /** Cancels (deletes) an event; `minimal`: later reads show only its id. */
  cancel(id: string, opts?: { minimal?: boolean }): GoogleEvent;
  /** Every event as it is now (cancelled ones too). */
  events(): GoogleEvent[];
}

export interface GoogleStandIn {
  url: string;
  authorizeUrl: string;
  tokenUrl: string;
  calendarBaseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Every request, in order. */
  requests: StandInRequest[];
  /** The account that signs in at the next authorization (a `login_hint` naming a known account wins). */
  signIn: string;
  /** What the next consent does: allow every scope, decline, or grant only some scopes. */
  consent: 'allow' | 'deny' | { scopes: string[] };
  /** expires_in of the access tokens issued from now on (seconds). */
  expiresIn: number;
  /** Redirect URIs registered on the OAuth client (any other is `redirect_uri_mismatch`). */
  redirectUris: string[];
  calendar(account: string): Calendar;
  /** Revokes every grant of the account: its refresh tokens answer `invalid_grant`, its access tokens 401. */
  revoke(account: string): void;
  /** The access tokens issued so far expire now. */
  expireAccessTokens(): void;
  /** Every sync token issued so far is refused with 410 `fullSyncRequired`. */
  expireSyncTokens(account?: string): void;
  /** The next Calendar API calls answer these errors, one each. */
  failNext(...errors: GoogleErrorSpec[]): void;
  close(): Promise<void>;
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const unb64 = <T>(s: string): T | null => {
  try {
    return JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as T;
  } catch {
    return null;
  }
};
const isoMs = (t: number) => new Date(t).toISOString();

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startGoogleStandIn(
  opts: { signIn?: string; redirectUris?: string[] } = {},
): Promise<GoogleStandIn> {
  const clientId = `${randomBytes(6).toString('hex')}-standin.apps.googleusercontent.com`;
  const clientSecret = `GOCSPX-${randomBytes(12).toString('base64url')}`;
  const codes = new Map<
    string,
    { account: string; redirectUri: string; challenge: string | null; scopes: string[]; offline: boolean }
  >();
  const refreshTokens = new Map<string, Grant>();
  const accessTokens = new Map<string, { grant: Grant; expiresAt: number }>();
  const calendars = new Map<string, { cal: Calendar; log: Version[]; generation: number }>();
  const faults: GoogleErrorSpec[] = [];
  let seq = 0;
  let clock = Date.now();
  /** Strictly increasing times, so every version has a later `updated`. */
  const tick = () => (clock = Math.max(clock + 1, Date.now()));

  const calendarOf = (account: string) => {
    let c = calendars.get(account);
    if (c) return c;
    const log: Version[] = [];
    const latest = (id: string) => [...log].reverse().find((v) => v.event.id === id);
    const record = (event: GoogleEvent, minimal = false) => {
      log.push({ seq: ++seq, event: structuredClone(event), minimal });
      return structuredClone(event);
    };
    const build = (id: string, input: EventInput, prev: GoogleEvent | null): GoogleEvent => {
      const now = isoMs(tick());
      return {
        kind: 'calendar#event',
        etag: `"${randomBytes(8).toString('hex')}"`,
        id,
        status: input.status ?? 'confirmed',
        htmlLink: `https://www.google.com/calendar/event?eid=${Buffer.from(id).toString('base64url')}`,
        created: prev?.created ?? now,
        updated: now,
        summary: input.summary,
        ...(input.location ? { location: input.location } : {}),
        creator: { email: account, self: true },
        organizer: input.organizer ?? { email: account, self: true },
        start: input.start,
        end: input.end,
        iCalUID: `${id}@google.com`,
        sequence: prev ? (prev.sequence ?? 0) + 1 : 0,
        attendees: input.attendees,
        reminders: { useDefault: true },
        eventType: 'default',
      };
    };
    const inputOf = (e: GoogleEvent): EventInput => ({
      summary: e.summary,
      start: e.start!,
      end: e.end!,
      attendees: e.attendees,
      location: e.location,
      status: e.status === 'tentative' ? 'tentative' : 'confirmed',
      organizer: e.organizer?.self ? undefined : e.organizer,
    });
    const cal: Calendar = {
      id: account,
      insert: (input) => {
        // Google's ids: base32hex characters (a–v, 0–9), 5 to 1024 of them.
        const id = input.id ?? randomBytes(13).toString('hex').replace(/[w-z]/g, 'v');
        return record(build(id, input, null));
      },
      patch: (id, changes) => {
        const prev = latest(id);
        if (!prev) throw new Error(`no event ${id}`);
        return record(build(id, { ...inputOf(prev.event), ...changes }, prev.event));
      },
      cancel: (id, o = {}) => {
        const prev = latest(id);
        if (!prev) throw new Error(`no event ${id}`);
        return record(
          { ...prev.event, status: 'cancelled', updated: isoMs(tick()), etag: `"${randomBytes(8).toString('hex')}"` },
          o.minimal ?? false,
        );
      },
      events: () => {
        const ids = [...new Set(log.map((v) => v.event.id))];
        return ids.map((id) => structuredClone(latest(id)!.event));
      },
    };
    c = { cal, log, generation: 0 };
    calendars.set(account, c);
    return c;
  };

  /**
   * The calendar as it was at `at`: each event's latest version then, in creation order; with
   * `since`, only the events changed after it, in the order of their changes.
   */
  const snapshot = (log: Version[], at: number, since: number | null = null) => {
    const out = new Map<string, Version>();
    for (const v of log) if (v.seq <= at) out.set(v.event.id, v);
    const all = [...out.values()];
    return since === null ? all : all.filter((v) => v.seq > since).sort((a, b) => a.seq - b.seq);
  };
  const shown = (v: Version): Partial<GoogleEvent> =>
    v.minimal ? { kind: 'calendar#event', etag: v.event.etag, id: v.event.id, status: 'cancelled' } : v.event;

  const self: GoogleStandIn = {
    url: '',
    authorizeUrl: '',
    tokenUrl: '',
    calendarBaseUrl: '',
    clientId,
    clientSecret,
    requests: [],
    signIn: opts.signIn ?? 'owner@standin.example',
    consent: 'allow',
    expiresIn: 3599,
    redirectUris: opts.redirectUris ?? [],
    calendar: (account) => calendarOf(account).cal,
    revoke: (account) => {
      for (const g of refreshTokens.values()) if (g.account === account) g.revoked = true;
      for (const a of accessTokens.values()) if (a.grant.account === account) a.grant.revoked = true;
    },
    expireAccessTokens: () => {
      for (const a of accessTokens.values()) a.expiresAt = 0;
    },
    expireSyncTokens: (account) => {
      for (const [k, c] of calendars) if (!account || k === account) c.generation++;
    },
    failNext: (...errors) => void faults.push(...errors),
    close: async () => {},
  };

  const issue = (grant: Grant, withRefresh: boolean) => {
    const access = `ya29.${randomBytes(24).toString('base64url')}`;
    accessTokens.set(access, { grant, expiresAt: Date.now() + self.expiresIn * 1000 });
    const out: Record<string, unknown> = {
      access_token: access,
      expires_in: self.expiresIn,
      scope: grant.scopes.join(' '),
      token_type: 'Bearer',
    };
    if (withRefresh) {
      const refresh = `1//${randomBytes(24).toString('base64url')}`;
      refreshTokens.set(refresh, grant);
      out.refresh_token = refresh;
    }
    return out;
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const raw = req.method === 'POST' ? await bodyOf(req) : '';
      const form = req.method === 'POST' ? new URLSearchParams(raw) : null;
      const record: StandInRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        form,
        authorization: req.headers.authorization ?? null,
        status: 0,
      };
      self.requests.push(record);
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        record.status = status;
        const text = typeof body === 'string' ? body : JSON.stringify(body);
        res
          .writeHead(status, {
            'content-type': typeof body === 'string' ? 'text/html; charset=utf-8' : 'application/json; charset=UTF-8',
            ...headers,
          })
          .end(text);
      };
      try {
        if (req.method === 'GET' && url.pathname === '/o/oauth2/v2/auth') return authorize(url.searchParams, send);
        if (req.method === 'POST' && url.pathname === '/token') return token(form!, req, send);
        if (url.pathname.startsWith('/calendar/v3/')) return calendarApi(req, url, send);
        send(404, {
          error: {
            code: 404,
            message: 'Not Found',
            errors: [{ domain: 'global', reason: 'notFound', message: 'Not Found' }],
          },
        });
      } catch (err) {
        send(500, googleErrorBody({ ...GOOGLE_ERRORS.backendError, message: String(err) }));
      }
    })();
  });

  type Send = (status: number, body: unknown, headers?: Record<string, string>) => void;

  function authorize(q: URLSearchParams, send: Send) {
    // Google answers a bad client or redirect URI with an error page, never a redirect.
    if (q.get('client_id') !== clientId)
      return send(401, '<h1>Error 401: invalid_client</h1><p>The OAuth client was not found.</p>');
    const redirectUri = q.get('redirect_uri') ?? '';
    if (!self.redirectUris.includes(redirectUri)) return send(400, '<h1>Error 400: redirect_uri_mismatch</h1>');
    const scopes = (q.get('scope') ?? '').split(/\s+/).filter(Boolean);
    if (q.get('response_type') !== 'code' || !scopes.length) return send(400, '<h1>Error 400: invalid_request</h1>');
    const challenge = q.get('code_challenge');
    if (challenge && q.get('code_challenge_method') !== 'S256')
      return send(400, '<h1>Error 400: invalid_request</h1><p>code_challenge_method</p>');
    const to = new URL(redirectUri);
    const state = q.get('state');
    if (self.consent === 'deny') {
      to.searchParams.set('error', 'access_denied');
      if (state) to.searchParams.set('state', state);
      return send(302, '', { location: to.toString() });
    }
    const granted =
      self.consent === 'allow'
        ? scopes
        : scopes.filter((s) => (self.consent as { scopes: string[] }).scopes.includes(s));
    const hint = q.get('login_hint');
    const account = hint && calendars.has(hint) ? hint : self.signIn;
    calendarOf(account);
    const code = `4/0${randomBytes(24).toString('base64url')}`;
    codes.set(code, {
      account,
      redirectUri,
      challenge,
      scopes: granted,
      // A refresh token comes with offline access (the consent prompt makes Google issue it again).
      offline: q.get('access_type') === 'offline',
    });
    if (state) to.searchParams.set('state', state);
    to.searchParams.set('code', code);
    to.searchParams.set('scope', granted.join(' '));
    send(302, '', { location: to.toString() });
  }

  function token(f: URLSearchParams, req: IncomingMessage, send: Send) {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const [bid, bsecret] = basic ? Buffer.from(basic, 'base64').toString('utf8').split(':') : [];
    const id = f.get('client_id') ?? (bid ? decodeURIComponent(bid) : null);
    const secret = f.get('client_secret') ?? (bsecret ? decodeURIComponent(bsecret) : null);
    if (id !== clientId || secret !== clientSecret)
      return send(401, { error: 'invalid_client', error_description: 'Unauthorized' });
    const grantType = f.get('grant_type');
    if (grantType === 'authorization_code') {
      const code = f.get('code') ?? '';
      const c = codes.get(code);
      codes.delete(code);
      const verifier = f.get('code_verifier');
      if (!c || c.redirectUri !== f.get('redirect_uri'))
        return send(400, { error: 'invalid_grant', error_description: 'Bad Request' });
      if (c.challenge && (!verifier || createHash('sha256').update(verifier).digest('base64url') !== c.challenge))
        return send(400, { error: 'invalid_grant', error_description: 'Invalid code verifier.' });
      return send(200, issue({ account: c.account, scopes: c.scopes, revoked: false }, c.offline));
    }
    if (grantType === 'refresh_token') {
      const g = refreshTokens.get(f.get('refresh_token') ?? '');
      if (!g || g.revoked)
        return send(400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
      return send(200, issue(g, false));
    }
    send(400, { error: 'unsupported_grant_type', error_description: `Invalid grant_type: ${grantType ?? ''}` });
  }

  function calendarApi(req: IncomingMessage, url: URL, send: Send) {
    const fault = faults.shift();
    if (fault)
      return send(fault.status, googleErrorBody(fault), fault.retryAfter ? { 'retry-after': fault.retryAfter } : {});
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const at = bearer ? accessTokens.get(bearer) : undefined;
    if (!at || at.expiresAt <= Date.now() || at.grant.revoked)
      return send(401, googleErrorBody(GOOGLE_ERRORS.authError));
    const c = calendarOf(at.grant.account);
    const path = url.pathname.slice('/calendar/v3/'.length);
    if (req.method === 'GET' && path === 'calendars/primary')
      return send(200, {
        kind: 'calendar#calendar',
        etag: `"${seq}"`,
        id: c.cal.id,
        summary: c.cal.id,
        timeZone: 'Europe/Paris',
        conferenceProperties: { allowedConferenceSolutionTypes: ['hangoutsMeet'] },
      });
    if (req.method === 'GET' && path === 'calendars/primary/events') return listEvents(c, url.searchParams, send);
    send(404, googleErrorBody({ status: 404, reason: 'notFound', message: 'Not Found' }));
  }

  function listEvents(c: { cal: Calendar; log: Version[]; generation: number }, q: URLSearchParams, send: Send) {
    const bad = (message: string) => send(400, googleErrorBody({ status: 400, reason: 'invalid', message }));
    const syncToken = q.get('syncToken');
    const showDeleted = q.get('showDeleted') === 'true';
    if (syncToken && (q.get('timeMin') || q.get('timeMax') || q.get('updatedMin') || q.get('orderBy') || q.get('q')))
      return bad('Sync token cannot be used with other request parameters.');
    if (syncToken && q.get('showDeleted') === 'false') return bad('showDeleted cannot be false with a sync token.');
    const max = Math.min(2500, Math.max(1, Number(q.get('maxResults') ?? 250) || 250));
    // What a page token carries: the read's query and snapshot, and where it is.
    const queryKey = ['syncToken', 'timeMin', 'showDeleted', 'singleEvents', 'maxResults']
      .map((k) => `${k}=${q.get(k) ?? ''}`)
      .join('&');
    let from = 0;
    let at = seq;
    const pageToken = q.get('pageToken');
    if (pageToken) {
      const p = unb64<{ k: string; s: number; o: number }>(pageToken);
      if (!p || p.k !== queryKey) return bad('Invalid page token value.');
      at = p.s;
      from = p.o;
    }
    let versions: Version[];
    if (syncToken) {
      const t = unb64<{ a: string; s: number; g: number }>(syncToken);
      if (!t || t.a !== c.cal.id || t.g !== c.generation)
        return send(410, googleErrorBody(GOOGLE_ERRORS.fullSyncRequired));
      versions = snapshot(c.log, at, t.s);
    } else {
      const timeMin = q.get('timeMin');
      const min = timeMin ? Date.parse(timeMin) : null;
      if (timeMin && Number.isNaN(min)) return bad('Bad Request');
      versions = snapshot(c.log, at).filter((v) => {
        if (v.event.status === 'cancelled' && !showDeleted) return false;
        // timeMin bounds an event's end (exclusive); a deleted one reduced to its id has none to compare.
        const end = v.event.end?.dateTime ?? v.event.end?.date;
        return min === null || v.minimal || !end || Date.parse(end) > min;
      });
    }
    const page = versions.slice(from, from + max);
    const more = from + max < versions.length;
    send(200, {
      kind: 'calendar#events',
      etag: `"p${at}"`,
      summary: c.cal.id,
      description: '',
      updated: isoMs(clock),
      timeZone: 'Europe/Paris',
      accessRole: 'owner',
      defaultReminders: [{ method: 'popup', minutes: 10 }],
      ...(more
        ? { nextPageToken: b64({ k: queryKey, s: at, o: from + max }) }
        : { nextSyncToken: b64({ a: c.cal.id, s: at, g: c.generation }) }),
      items: page.map(shown),
    });
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  Object.assign(self, {
    url: base,
    authorizeUrl: `${base}/o/oauth2/v2/auth`,
    tokenUrl: `${base}/token`,
    calendarBaseUrl: `${base}/calendar/v3`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  });
  return self;
}

/** Follows an authorization URL as the browser would: the stand-in's answer (a 302 to our callback, or its error page). */
export async function openAuthorization(
  authorizationUrl: string,
): Promise<{ status: number; location: string | null }> {
  const r = await fetch(authorizationUrl, { redirect: 'manual' });
  await r.text();
  return { status: r.status, location: r.headers.get('location') };
}
