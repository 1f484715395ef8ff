// Recurring jobs as Temporal Schedules (never timers in the API process). Created idempotently at
// worker start-up; an existing schedule is updated to the current definition.
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { scheduleIds, workflowIds } from '../workflows/ids.js';
import { jobSearchAttributes } from '../workflows/search-attributes.js';

/** `idPrefix` lets tests create throwaway copies without touching the real schedules. */
export function scheduleDefinitions(taskQueue: string, idPrefix = ''): ScheduleOptions[] {
  return [
    {
      scheduleId: idPrefix + scheduleIds.purgeExpiredAuth,
      spec: { intervals: [{ every: '1 hour' }] },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
      action: {
        type: 'startWorkflow',
        workflowType: 'purgeExpiredAuth',
        workflowId: idPrefix + workflowIds.purgeExpiredAuth,
        taskQueue,
        args: [],
        typedSearchAttributes: jobSearchAttributes({ kind: 'maintenance' }),
      },
      memo: { description: 'Purges expired/revoked sessions and expired refresh tokens' },
    },
    {
      scheduleId: idPrefix + scheduleIds.grantMonthlyCredits,
      spec: { calendars: [{ dayOfMonth: 1, hour: 0, minute: 5 }] },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '7 days' },
      action: {
        type: 'startWorkflow',
        workflowType: 'grantMonthlyCredits',
        workflowId: idPrefix + workflowIds.grantMonthlyCredits,
        taskQueue,
        args: [{}],
        typedSearchAttributes: jobSearchAttributes({ kind: 'credits' }),
      },
      memo: { description: 'Grants every workspace its plan’s monthly credits (idempotent per month)' },
    },
    {
      scheduleId: idPrefix + scheduleIds.purgeWebhookHistory,
      spec: { calendars: [{ hour: 3, minute: 17 }] },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' },
      action: {
        type: 'startWorkflow',
        workflowType: 'purgeWebhookHistory',
        workflowId: idPrefix + workflowIds.purgeWebhookHistory,
        taskQueue,
        args: [],
        typedSearchAttributes: jobSearchAttributes({ kind: 'maintenance' }),
      },
      memo: { description: 'Purges webhook deliveries and dispatched outbox events past retention' },
    },
  ];
}

export async function ensureSchedules(client: Client, taskQueue: string, idPrefix = ''): Promise<void> {
  for (const def of scheduleDefinitions(taskQueue, idPrefix)) {
    try {
      await client.schedule.create(def);
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
      await client.schedule.getHandle(def.scheduleId).update((prev) => ({ ...prev, spec: def.spec, action: def.action, policies: def.policies }));
    }
  }
}
