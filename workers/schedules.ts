// Recurring jobs as Temporal Schedules (never timers in the API process). Created idempotently at
// worker start-up; an existing schedule is updated to the current definition.
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { scheduleIds, workflowIds } from '../workflows/ids.js';
import { jobSearchAttributes } from '../workflows/search-attributes.js';

interface Recurring {
  id: keyof typeof scheduleIds & keyof typeof workflowIds;
  spec: ScheduleOptions['spec'];
  catchupWindow: string;
  kind: string;
  args?: unknown[];
  description: string;
}

// The workflow type has the same name as the schedule/workflow-id key.
const RECURRING: Recurring[] = [
  { id: 'purgeExpiredAuth', spec: { intervals: [{ every: '1 hour' }] }, catchupWindow: '1 hour', kind: 'maintenance', description: 'Purges expired/revoked sessions and expired refresh tokens' },
  { id: 'grantMonthlyCredits', spec: { calendars: [{ dayOfMonth: 1, hour: 0, minute: 5 }] }, catchupWindow: '7 days', kind: 'credits', args: [{}], description: 'Grants every workspace its plan’s monthly credits (idempotent per month)' },
  { id: 'accountsReconcile', spec: { intervals: [{ every: '10 minutes' }] }, catchupWindow: '10 minutes', kind: 'accounts', args: [{}], description: 'Reads every sender account’s status at the connector; a disconnection emits account.disconnected once' },
  { id: 'withdrawInvitations', spec: { calendars: [{ hour: 4, minute: 41 }] }, catchupWindow: '1 day', kind: 'accounts', args: [{}], description: 'Withdraws pending network invitations older than each account’s setting' },
  { id: 'purgeWebhookHistory', spec: { calendars: [{ hour: 3, minute: 17 }] }, catchupWindow: '1 day', kind: 'maintenance', description: 'Purges webhook deliveries and dispatched outbox events past retention' },
];

/** `idPrefix` lets tests create throwaway copies without touching the real schedules. */
export function scheduleDefinitions(taskQueue: string, idPrefix = ''): ScheduleOptions[] {
  return RECURRING.map((r) => ({
    scheduleId: idPrefix + scheduleIds[r.id],
    spec: r.spec,
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: r.catchupWindow },
    action: {
      type: 'startWorkflow',
      workflowType: r.id,
      workflowId: idPrefix + workflowIds[r.id],
      taskQueue,
      args: r.args ?? [],
      typedSearchAttributes: jobSearchAttributes({ kind: r.kind }),
    },
    memo: { description: r.description },
  }));
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
