// The booking providers a process uses: each over HTTP when its BOOKING_<NAME>_BASE_URL is set, else
// the deterministic local one (docs/meetings.md "Configuration").
import type { Config } from '../config.js';
import { HttpBookingProvider } from './http.js';
import { LocalBookingProvider } from './local.js';
import type { BookingProvider, BookingProviderName, BookingProviders } from './types.js';

export * from './types.js';
export { HttpBookingProvider } from './http.js';
export { LocalBookingProvider, localAccount, localBookings, localAuthorizationCode, pkceChallenge } from './local.js';

function baseUrl(env: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${env} must be an absolute http(s) URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`${env} must be an absolute http(s) URL`);
  return url.toString();
}

export function createBookingProviders(config: Config['booking'], publicBaseUrl: string): BookingProviders {
  const providers = new Map<BookingProviderName, BookingProvider>();
  const { scheduler, calendar, timeoutMs } = config;
  providers.set(
    'scheduler',
    scheduler.baseUrl
      ? new HttpBookingProvider({ name: 'scheduler', baseUrl: baseUrl('BOOKING_SCHEDULER_BASE_URL', scheduler.baseUrl), timeoutMs })
      : new LocalBookingProvider('scheduler', { auth: 'api_key', publicBaseUrl }),
  );
  if (calendar.baseUrl) {
    if (!calendar.clientId || !calendar.clientSecret) throw new Error('BOOKING_CALENDAR_CLIENT_ID and BOOKING_CALENDAR_CLIENT_SECRET are required when BOOKING_CALENDAR_BASE_URL is set');
    const base = baseUrl('BOOKING_CALENDAR_BASE_URL', calendar.baseUrl);
    const authorizeUrl = calendar.authorizeUrl ? baseUrl('BOOKING_CALENDAR_AUTHORIZE_URL', calendar.authorizeUrl) : new URL('oauth/authorize', base.endsWith('/') ? base : `${base}/`).toString();
    providers.set(
      'calendar',
      new HttpBookingProvider({ name: 'calendar', baseUrl: base, timeoutMs, oauth: { authorizeUrl, clientId: calendar.clientId, clientSecret: calendar.clientSecret, scope: calendar.scope } }),
    );
  } else {
    providers.set('calendar', new LocalBookingProvider('calendar', { auth: 'oauth', publicBaseUrl }));
  }
  return Object.assign(providers, {
    async close() {
      await Promise.all([...providers.values()].map((p) => p.close?.()));
    },
  });
}

/** Whether a provider is the local stand-in (its OAuth authorize page is ours). */
export const isLocalProvider = (p: BookingProvider): p is LocalBookingProvider => p instanceof LocalBookingProvider;
