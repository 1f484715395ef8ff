// The booking-provider contract (DESIGN.md "External providers"; docs/meetings.md): who the stored
// credentials belong to, the provider's webhook subscription for our inbound route, past bookings page
// by page, and for OAuth providers the authorization-code flow. Two implementations per provider: over
// HTTP (lib/booking/http.ts, wire format in docs/meetings.md) and a deterministic local one
// (lib/booking/local.ts), the default, so that everything runs offline.
import { ProviderError, type ProviderErrorCode, type ProviderErrorDetails } from '../provider-http.js';

/**
 * The providers a workspace can connect. `scheduler` connects with an API key; `calendar` through
 * OAuth 2 (authorization code with PKCE). Both are neutral stand-ins for third-party products.
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
}

export interface BookingProvider {
  readonly name: BookingProviderName;
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
  /** Bookings starting at or after `since`, oldest first, `limit` at a time. */
  bookings(
    creds: BookingCredentials,
    page: { since: Date; cursor: string | null; limit: number },
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

/** Every failure of a booking provider (HTTP status and transport errors mapped like the other providers'). */
export class BookingError extends ProviderError {
  constructor(provider: string, code: ProviderErrorCode, message: string, details?: ProviderErrorDetails) {
    super(provider, code, message, details);
    this.name = 'BookingError';
  }
}
