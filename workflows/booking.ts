// Booking providers (docs/meetings.md "Workflows"): each stored inbound booking event is handled by
// `booking-event:<eventId>`; a backfill of past bookings runs as `booking-backfill:<providerId>:<id>`,
// one long activity paging through the provider (progress committed with each page, heartbeats),
// then the operation's end. Histories stay a handful of events whatever the number of bookings.
import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import { defineJob, defineSchedule } from './job.js';
import { bookingWorkflowIds } from '../lib/workflow-ids.js';
import type { BookingActivities } from '../activities/booking.js';

const { handleBookingEvent: handle } = proxyActivities<BookingActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10, initialInterval: '2 seconds', maximumInterval: '1 minute' },
});
const { bookingBackfillPages } = proxyActivities<BookingActivities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '1 minute',
  // A provider that refuses the credentials fails the job at once (non-retryable, from the activity).
  retry: { maximumAttempts: 10, initialInterval: '2 seconds', maximumInterval: '1 minute' },
});
const { bookingBackfillSweep: sweep } = proxyActivities<BookingActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 5, initialInterval: '5 seconds' },
});
const { bookingBackfillFinish } = proxyActivities<BookingActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 20, initialInterval: '1 second' },
});

/** `booking-event:<eventId>`: applies one stored booking event (meeting, match, or unmatched). */
export async function handleBookingEvent(input: {
  eventId: string;
}): Promise<{ state: string; effect?: string | null; meetingId?: string | null }> {
  return handle(input.eventId);
}

export interface BookingBackfillInput {
  backfillId: string;
  /** Bookings per provider page (default 50). */
  pageSize?: number;
  /** Tests only: the first attempt of the paging activity fails after committing this many pages. */
  failFirstAttemptAfterPages?: number;
}

export interface BookingBackfillResult {
  status: 'completed' | 'failed';
  pages: number;
  bookings: number;
  created: number;
  updated: number;
  unchanged: number;
  unmatched: number;
}

/** `booking-backfill:<providerId>:<backfillId>`. */
export async function bookingBackfill(input: BookingBackfillInput): Promise<BookingBackfillResult> {
  try {
    await bookingBackfillPages({
      backfillId: input.backfillId,
      pageSize: input.pageSize ?? 50,
      failFirstAttemptAfterPages: input.failFirstAttemptAfterPages ?? null,
    });
    return await bookingBackfillFinish(input.backfillId, 'completed', null);
  } catch (err) {
    const failure = err instanceof Error && err.cause instanceof ApplicationFailure ? err.cause : null;
    const message = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    const r = await bookingBackfillFinish(input.backfillId, 'failed', {
      code: failure?.type ?? 'backfill_failed',
      message,
    });
    throw ApplicationFailure.nonRetryable(`booking backfill failed: ${message}`, 'backfill_failed', r);
  }
}

/** `booking-backfill-sweep` (scheduled): a backfill from a day back for each connected provider, catching missed webhooks. */
export async function bookingBackfillSweep(input: { workspaceId?: string } = {}): Promise<{ started: number }> {
  return sweep({ workspaceId: input.workspaceId });
}

export const bookingEventJob = defineJob('booking-event', {
  workflow: handleBookingEvent,
  id: (k) => bookingWorkflowIds.event(k.eventId),
  args: (s) => [{ eventId: s.eventId }],
  scope: (s) => ({ workspaceId: s.workspaceId }),
  memo: (s) => ({ event_id: s.eventId }),
  repeat: 'never-again',
});

export const bookingBackfillJob = defineJob('booking-backfill', {
  workflow: bookingBackfill,
  id: (k) => bookingWorkflowIds.backfill(k.providerId, k.backfillId),
  args: (s) => [{ backfillId: s.backfillId }],
  scope: (s) => ({ workspaceId: s.workspaceId }),
  memo: (s) => ({ backfill_id: s.backfillId, provider_id: s.providerId }),
  // Once per operation: a repeated request reads the same operation.
  repeat: 'never-again',
});

export const bookingBackfillSweepSchedule = defineSchedule({
  id: 'schedule:booking-backfill-sweep',
  runs: 'booking-backfill-sweep',
  workflow: bookingBackfillSweep,
  args: [{}],
  kind: 'booking-backfill',
  every: { every: '6 hours' },
  catchupWindow: '6 hours',
  overlap: 'skip',
  description:
    'Backfills the last day and upcoming bookings of every connected booking provider, so a missed webhook still becomes a meeting',
});
