// The booking providers a process uses (docs/meetings.md "Configuration"): the scheduler is Cal.com
// with BOOKING_SCHEDULER_PROVIDER=calcom (docs/scheduler.md); the calendar is Google Calendar with
// BOOKING_CALENDAR_PROVIDER=google (docs/calendar.md); else each is the deterministic local one.
import type { Config } from '../config.js';
import { CalcomBookingProvider } from './calcom.js';
import { GoogleCalendarProvider } from './google-calendar.js';
import { LocalBookingProvider } from './local.js';
import type { BookingProvider, BookingProviderName, BookingProviders } from './types.js';

export * from './types.js';
export { CalcomBookingProvider } from './calcom.js';
export { GoogleCalendarProvider } from './google-calendar.js';
export { LocalBookingProvider, localAccount, localBookings, localAuthorizationCode, pkceChallenge } from './local.js';

export function createBookingProviders(config: Config['booking'], publicBaseUrl: string): BookingProviders {
  const providers = new Map<BookingProviderName, BookingProvider>();
  const { scheduler, calendar, timeoutMs } = config;
  providers.set(
    'scheduler',
    scheduler.provider === 'calcom' && scheduler.calcom
      ? new CalcomBookingProvider({ ...scheduler.calcom, timeoutMs })
      : new LocalBookingProvider('scheduler', { auth: 'api_key', publicBaseUrl }),
  );
  providers.set(
    'calendar',
    calendar.provider === 'google' && calendar.google
      ? new GoogleCalendarProvider({ ...calendar.google, timeoutMs })
      : new LocalBookingProvider('calendar', { auth: 'oauth', publicBaseUrl }),
  );
  return Object.assign(providers, {
    async close() {
      await Promise.all([...providers.values()].map((p) => p.close?.()));
    },
  });
}

/** Whether a provider is the local stand-in (its OAuth authorize page is ours). */
export const isLocalProvider = (p: BookingProvider): p is LocalBookingProvider => p instanceof LocalBookingProvider;
