// Recurring jobs as Temporal Schedules (never timers in the API process). Created idempotently at
// worker start-up; an existing schedule is updated to the current definition.
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { scheduleIds, workflowIds } from '../lib/workflow-ids.js';
import { jobSearchAttributes, type JobKindName } from '../workflows/search-attributes.js';
import { retryTransient } from '../jobs/connection.js';
import type * as workflows from '../workflows/index.js';

type Workflows = typeof workflows;
type Scheduled = keyof typeof scheduleIds & keyof typeof workflowIds & keyof Workflows;

/**
 * A recurring job: its id names the registered workflow it starts (and its schedule and workflow ids),
 * and its arguments are that workflow function's, so tsc refuses a schedule of an unknown workflow or
 * with arguments of another shape.
 */
type Recurring = {
  [K in Scheduled]: {
    id: K;
    spec: ScheduleOptions['spec'];
    catchupWindow: string;
    kind: JobKindName;
    args: Parameters<Workflows[K]>;
    description: string;
    /** Only while the connector is the local sandbox network (CONNECTOR_BASE_URL unset). */
    sandboxOnly?: boolean;
  };
}[Scheduled];

const RECURRING: Recurring[] = [
  {
    id: 'purgeExpiredAuth',
    spec: { intervals: [{ every: '1 hour' }] },
    catchupWindow: '1 hour',
    args: [],
    kind: 'maintenance',
    description: 'Purges expired/revoked sessions and expired refresh tokens',
  },
  {
    id: 'grantMonthlyCredits',
    spec: { calendars: [{ dayOfMonth: 1, hour: 0, minute: 5 }] },
    catchupWindow: '7 days',
    kind: 'credits',
    args: [{}],
    description: 'Grants every workspace its plan’s monthly credits (idempotent per month)',
  },
  {
    id: 'accountsReconcile',
    spec: { intervals: [{ every: '10 minutes' }] },
    catchupWindow: '10 minutes',
    kind: 'accounts',
    args: [{}],
    description:
      'Reads every sender account’s status at the connector; a disconnection emits account.disconnected once',
  },
  {
    id: 'withdrawInvitations',
    spec: { calendars: [{ hour: 4, minute: 41 }] },
    catchupWindow: '1 day',
    kind: 'accounts',
    args: [{}],
    description: 'Withdraws pending network invitations older than each account’s setting',
  },
  {
    id: 'purgeWebhookHistory',
    spec: { calendars: [{ hour: 3, minute: 17 }] },
    catchupWindow: '1 day',
    args: [],
    kind: 'maintenance',
    description: 'Purges webhook deliveries and dispatched outbox events past retention',
  },
  {
    id: 'deliverSandboxEvents',
    spec: { intervals: [{ every: '1 minute' }] },
    catchupWindow: '1 minute',
    args: [],
    kind: 'connector',
    sandboxOnly: true,
    description: 'Hands the sandbox network’s due inbound events (acceptances, replies) to the inbound pipeline',
  },
  {
    id: 'notificationEmails',
    spec: { intervals: [{ every: '1 minute' }] },
    catchupWindow: '1 minute',
    args: [],
    kind: 'notifications',
    description: 'Mails the notifications whose recipient chose email for their topic (docs/notifications.md)',
  },
  {
    id: 'purgeNotifications',
    spec: { calendars: [{ hour: 3, minute: 47 }] },
    catchupWindow: '1 day',
    kind: 'maintenance',
    args: [{}],
    description: 'Deletes read notifications older than 90 days and any older than 365 (docs/notifications.md)',
  },
  {
    id: 'partnerSyncSweep',
    spec: { intervals: [{ every: '15 minutes' }] },
    catchupWindow: '15 minutes',
    args: [],
    kind: 'partner-sync',
    description: 'Starts partner-sync:<id> for every active partner CRM integration (a running sync goes on)',
  },
  {
    id: 'analyticsRollup',
    spec: { intervals: [{ every: '10 minutes' }] },
    catchupWindow: '10 minutes',
    kind: 'analytics',
    args: [{}],
    description: 'Rebuilds the analytics rollups of the last 48 hours from the raw tables (idempotent)',
  },
  {
    id: 'bookingBackfillSweep',
    spec: { intervals: [{ every: '6 hours' }] },
    catchupWindow: '6 hours',
    kind: 'booking-backfill',
    args: [{}],
    description:
      'Backfills the last day and upcoming bookings of every connected booking provider, so a missed webhook still becomes a meeting',
  },
  {
    id: 'inboxSweep',
    spec: { intervals: [{ every: '1 minute' }] },
    catchupWindow: '1 minute',
    args: [],
    kind: 'inbox',
    description:
      'Wakes the inbox processor of every account with inbound events stored over 30 s ago and not handled (a wake-up lost with its API process)',
  },
  {
    id: 'insightsRefresh',
    spec: { intervals: [{ every: '15 minutes' }] },
    catchupWindow: '15 minutes',
    kind: 'insights',
    args: [{}],
    description:
      'Finds recommendations in the analytics and the current state; snoozed ones come back after their time',
  },
];

export interface ScheduleOpts {
  /** Whether the connector is the sandbox network (default true): its delivery schedule exists only then. */
  sandboxConnector?: boolean;
}

/** `idPrefix` lets tests create throwaway (paused) copies without touching the real schedules. */
export function scheduleDefinitions(taskQueue: string, idPrefix = '', opts: ScheduleOpts = {}): ScheduleOptions[] {
  return RECURRING.filter((r) => !r.sandboxOnly || opts.sandboxConnector !== false).map((r) => ({
    scheduleId: idPrefix + scheduleIds[r.id],
    spec: r.spec,
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: r.catchupWindow },
    action: {
      type: 'startWorkflow',
      workflowType: r.id,
      workflowId: idPrefix + workflowIds[r.id],
      taskQueue,
      args: r.args,
      typedSearchAttributes: jobSearchAttributes({ kind: r.kind }),
    },
    memo: { description: r.description },
    // A test's throwaway copy never fires: its runs would do real work (e.g. deliver the sandbox's
    // due events) on the test's queue while other tests run.
    ...(idPrefix ? { state: { paused: true, note: 'test copy' } } : {}),
  }));
}

export async function ensureSchedules(
  client: Client,
  taskQueue: string,
  idPrefix = '',
  opts: ScheduleOpts = {},
): Promise<void> {
  const defs = scheduleDefinitions(taskQueue, idPrefix, opts);
  // A schedule that no longer applies (the sandbox's, once a real connector is configured) goes away.
  for (const r of RECURRING) {
    const id = idPrefix + scheduleIds[r.id];
    if (!defs.some((d) => d.scheduleId === id))
      await client.schedule
        .getHandle(id)
        .delete()
        .catch(() => {});
  }
  // Each step is repeatable: a create that timed out after taking effect is "already running" on the
  // next attempt and becomes an update; an update re-reads the schedule before writing it.
  for (const def of defs) {
    await retryTransient(async () => {
      try {
        await client.schedule.create(def);
      } catch (err) {
        if (!(err instanceof ScheduleAlreadyRunning)) throw err;
        await client.schedule
          .getHandle(def.scheduleId)
          .update((prev) => ({ ...prev, spec: def.spec, action: def.action, policies: def.policies }));
      }
    });
  }
}
