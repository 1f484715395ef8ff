// Booking activities: handling one stored event, the backfill's paging loop (heartbeats; a retried
// attempt resumes after the last committed page) and the backfill's end.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { EntityManager } from '@mikro-orm/postgresql';
import { BookingError } from '../lib/booking/types.js';
import { withProviders, type Providers } from '../lib/providers.js';
import { backfillNextPage, finishBackfill, sweepBackfills } from '../domain/booking/backfill.js';
import { handleBookingEvent } from '../domain/booking/events.js';
import { wakeStopped } from '../domain/booking/meeting-stops.js';
import type { BookingDeps } from '../domain/booking/providers.js';
import type { ActivityDeps } from './deps.js';

export function createBookingActivities(deps: ActivityDeps, overrides: Partial<Providers> = {}) {
  const em = () => deps.orm.em.fork() as EntityManager;
  const providers = withProviders(deps.providers, overrides);
  const booking = (): BookingDeps => ({
    providers: providers.booking,
    encryptionKey: deps.config.encryptionKey,
    publicBaseUrl: deps.config.publicBaseUrl,
  });
  return {
    async handleBookingEvent(eventId: string) {
      const r = await handleBookingEvent(em(), eventId);
      if (!('stopped' in r) || !r.stopped) return r;
      // The meeting stopped the lead's sequences: wake their workflows (after the commit).
      const { stopped, ...applied } = r;
      if (deps.jobs) await wakeStopped(deps.jobs, stopped);
      return applied;
    },

    async bookingBackfillPages(input: {
      backfillId: string;
      pageSize: number;
      failFirstAttemptAfterPages?: number | null;
    }): Promise<{ pages: number }> {
      const ctx = Context.current();
      let pages = 0;
      for (;;) {
        let out;
        try {
          out = await backfillNextPage(em(), booking(), input.backfillId, input.pageSize);
        } catch (err) {
          // Refused credentials will not get better by retrying; the rest (timeouts, 5xx) may.
          if (err instanceof BookingError && !err.retryable)
            throw ApplicationFailure.nonRetryable(
              err.message,
              err.code === 'auth' ? 'provider_refused' : 'provider_error',
            );
          throw err;
        }
        if (out.stopped.length && deps.jobs) await wakeStopped(deps.jobs, out.stopped);
        ctx.heartbeat({ pages });
        if (out.done) return { pages };
        pages++;
        if (input.failFirstAttemptAfterPages && ctx.info.attempt === 1 && pages === input.failFirstAttemptAfterPages) {
          throw ApplicationFailure.retryable('test: the first attempt fails mid-way', 'test_failure');
        }
      }
    },

    /** Starts a backfill from a day back for every connected provider without one running (domain `sweepBackfills`). */
    async bookingBackfillSweep(input: { workspaceId?: string }): Promise<{ started: number }> {
      if (!deps.jobs) throw new Error('the booking sweep needs the Jobs port');
      return sweepBackfills(em(), deps.jobs, { workspaceId: input.workspaceId });
    },

    async bookingBackfillFinish(
      backfillId: string,
      status: 'completed' | 'failed',
      error: { code: string; message: string } | null,
    ) {
      const b = await finishBackfill(em(), backfillId, status, error ?? undefined);
      return {
        status: (b?.status === 'completed' ? 'completed' : 'failed') as 'completed' | 'failed',
        pages: b?.pages ?? 0,
        bookings: b?.bookings ?? 0,
        created: b?.created ?? 0,
        updated: b?.updated ?? 0,
        unchanged: b?.unchanged ?? 0,
        unmatched: b?.unmatched ?? 0,
      };
    },
  };
}

export type BookingActivities = ReturnType<typeof createBookingActivities>;
