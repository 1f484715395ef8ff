// The booking providers a process uses: each over HTTP when its BOOKING_<NAME>_BASE_URL is set, else
// the deterministic local one (docs/meetings.md "Configuration").
import type { Config } from '../config.js';
import { absoluteUrl, oauthClientSettings } from '../provider-adapter.js';
import { HttpBookingProvider } from './http.js';
import { LocalBookingProvider } from './local.js';
import type { BookingProvider, BookingProviderName, BookingProviders } from './types.js';

export * from './types.js';
export { HttpBookingProvider } from './http.js';
export { LocalBookingProvider, localAccount, localBookings, localAuthorizationCode, pkceChallenge } from './local.js';

export function createBookingProviders(config: Config['booking'], publicBaseUrl: string): BookingProviders {
  const providers = new Map<BookingProviderName, BookingProvider>();
  const { scheduler, calendar, timeoutMs } = config;
  providers.set(
    'scheduler',
    scheduler.baseUrl
      ? new HttpBookingProvider({
          name: 'scheduler',
          baseUrl: absoluteUrl('BOOKING_SCHEDULER_BASE_URL', scheduler.baseUrl),
          timeoutMs,
        })
      : new LocalBookingProvider('scheduler', { auth: 'api_key', publicBaseUrl }),
  );
  if (calendar.baseUrl) {
    // The token endpoint is <base>/oauth/token (lib/booking/http.ts), so only the authorize URL is configurable.
    const { baseUrl, authorizeUrl, clientId, clientSecret, scope } = oauthClientSettings(
      'BOOKING_CALENDAR',
      calendar.baseUrl,
      calendar,
    );
    providers.set(
      'calendar',
      new HttpBookingProvider({
        name: 'calendar',
        baseUrl,
        timeoutMs,
        oauth: { authorizeUrl, clientId, clientSecret, scope },
      }),
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
