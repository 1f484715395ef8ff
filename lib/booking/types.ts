// The booking-provider contract (DESIGN.md "External providers"; docs/meetings.md): who the stored
// credentials belong to, the provider's webhook subscription for our inbound route, past bookings page
// by page, and for OAuth providers the authorization-code flow. Two implementations per kind: a real
// service (the scheduler over Cal.com's API v2, lib/booking/calcom.ts; the calendar over Google
// Calendar API v3, lib/booking/google-calendar.ts) and a deterministic local one (lib/booking/local.ts),
// the default, so that everything runs offline.
import { ProviderError, type ProviderErrorCode, type ProviderErrorDetails } from '../provider-http.js';

/**
 * The providers a workspace can connect. `scheduler` connects with an API key; `calendar` through
 * OAuth 2 (authorization code with PKCE): Cal.com and Google Calendar, or their local stand-ins.
 */
export const BOOKING_PROVIDERS = ['scheduler', 'calendar'] as const;
export type BookingProviderName = (typeof BOOKING_PROVIDERS)[number];
export const isBookingProvider = (s: string): s is BookingProviderName =>
  (BOOKING_PROVIDERS as readonly string[]).includes(s);

export type BookingCredentials =
  | { kind: 'api_key'; apiKey: string }
  | { kind: 'oauth'; accessToken: string; refreshToken: string | null; expiresAt: string | null };

/** Who the credentials belong to at the provider. */
export interface ProviderAccount {
  accountId: string;
  name: string | null;
  email: string | null;
}

export interface BookingAttendee {
  email: string;
  name: string | null;
}

export const BOOKING_STATUSES = ['scheduled', 'canceled'] as const;
export type BookingStatus = (typeof BOOKING_STATUSES)[number];

/** A booking as the provider describes it now (every event carries the whole booking). */
export interface Booking {
  /** The provider's booking id: stable across reschedules and the cancellation. */
  bookingId: string;
  status: BookingStatus;
  title: string;
  startsAt: Date;
  endsAt: Date;
  location: string | null;
  /** The person who booked first, then the guests they added. */
  attendees: BookingAttendee[];
  /** The booking page's tracking field (e.g. `?lead=<id>` on the link we sent): a lead id when it is one. */
  trackingLeadId: string | null;
  /** When the provider last changed it: an older version never overwrites a newer one. */
  updatedAt: Date;
  /**
   * Providers whose reschedule makes a new booking (Cal.com: a new uid, the old one canceled): the
   * booking this one replaced. Its meeting follows this booking (domain/booking/events.ts `bookingChain`).
   */
  previousBookingId?: string | null;
  /** An id every version of a rescheduled booking shares (Cal.com's iCalUID), linking them like `previousBookingId`. */
  seriesId?: string | null;
}

export const BOOKING_EVENT_TYPES = ['booking.created', 'booking.rescheduled', 'booking.canceled'] as const;
export type BookingEventType = (typeof BOOKING_EVENT_TYPES)[number];

/** An inbound booking event (POST /hooks/booking/{providerId}). */
export interface BookingEvent {
  eventId: string;
  type: BookingEventType;
  createdAt: Date | null;
  booking: Booking;
}

export interface OAuthTokens {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: Date | null;
}

export interface BookingPage {
  items: Booking[];
  /** The next page's cursor; null after the last. */
  cursor: string | null;
  /** Items of the page that were not valid bookings (left out). */
  invalid: number;
  /** Sync-token providers (`calendarSync`), on the last page: where the next read of changes starts (null: none given). */
  nextSyncToken?: string | null;
  /** Sync-token providers: bookings reported deleted with nothing but their id (Google Calendar's deleted events). */
  removed?: { bookingId: string; updatedAt: Date }[];
}

/** Inbound webhooks in the provider's own documented format (absent: the local envelope of lib/booking/wire.ts). */
export interface ProviderWebhooks {
  /** Whether `raw` carries the provider's signature made with `secret` (constant time); the reason is for our logs only. */
  verify(
    secret: string,
    raw: Buffer,
    headers: Readonly<Record<string, string | string[] | undefined>>,
  ): { ok: true } | { ok: false; reason: string };
  /** The booking events a verified body carries (none for a trigger we do not follow), or its first problem. */
  parse(json: unknown, now: Date): { events: BookingEvent[] } | { error: string };
}

export interface BookingProvider {
  readonly name: BookingProviderName;
  /** Set when the provider's webhooks are its own format (Cal.com), read by the hook instead of the local envelope. */
  readonly webhooks?: ProviderWebhooks;
  /**
   * A calendar read by polling with sync tokens (Google Calendar, docs/calendar.md): no webhook to
   * register; `bookings` takes the connection's `syncToken` and answers `nextSyncToken`; every event
   * of the calendar is read, and only those with a lead among their attendees (or already followed)
   * become booking events (domain/booking/calendar-sync.ts).
   */
  readonly calendarSync?: true;
  /** How a workspace connects it. */
  readonly auth: 'api_key' | 'oauth';
  /** OAuth: whether the authorization request carries a PKCE challenge (S256). */
  readonly pkce: boolean;
  /** Who the credentials belong to; BookingError `auth` when the provider refuses them. */
  account(creds: BookingCredentials): Promise<ProviderAccount>;
  /** Subscribes `url` to booking events signed with `secret`; returns the provider's subscription id. */
  registerWebhook(creds: BookingCredentials, input: { url: string; secret: string }): Promise<{ webhookId: string }>;
  /** Removes a subscription (one already gone is not an error). */
  deleteWebhook(creds: BookingCredentials, webhookId: string): Promise<void>;
  /**
   * Bookings starting at or after `since`, oldest first, `limit` at a time. `calendarSync` providers:
   * with `syncToken` the changes since that token instead (any order; a 410-like refusal is the
   * BookingError reason `full_sync_required`).
   */
  bookings(
    creds: BookingCredentials,
    page: { since: Date; cursor: string | null; limit: number; syncToken?: string | null },
  ): Promise<BookingPage>;
  /** OAuth providers: the URL the user's browser opens. */
  authorizationUrl?(input: {
    state: string;
    redirectUri: string;
    codeChallenge: string | null;
    loginHint: string | null;
  }): string;
  /** OAuth providers: the code from the callback exchanged for tokens. */
  exchangeCode?(input: { code: string; redirectUri: string; codeVerifier: string | null }): Promise<OAuthTokens>;
  /** OAuth providers: a new access token from the refresh token. */
  refresh?(refreshToken: string): Promise<OAuthTokens>;
  close?(): Promise<void>;
}

export type BookingProviders = ReadonlyMap<BookingProviderName, BookingProvider> & { close(): Promise<void> };

/** The `details.reason` of a sync-token provider's refusal of a sync token (Google's 410 `fullSyncRequired`): read the window again. */
export const FULL_SYNC_REQUIRED = 'full_sync_required';

/** Every failure of a booking provider (HTTP status and transport errors mapped like the other providers'). */
export class BookingError extends ProviderError {
  constructor(provider: string, code: ProviderErrorCode, message: string, details?: ProviderErrorDetails) {
    super(provider, code, message, details);
    this.name = 'BookingError';
  }
}
