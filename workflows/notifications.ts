import { proxyActivities } from '@temporalio/workflow';
import { defineSchedule } from './job.js';
import type { NotificationActivities } from '../activities/notifications.js';

const { sendNotificationEmails } = proxyActivities<NotificationActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { maximumAttempts: 3 },
});

// A year of backlog on a first run can take a while; each batch heartbeats.
const { purgeNotifications: purge } = proxyActivities<NotificationActivities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 5 },
});

/**
 * Mails the notifications whose recipient chose `email` for their topic (run every minute by the
 * Schedule `schedule:notification-emails`; docs/notifications.md).
 */
export async function notificationEmails(): Promise<{ sent: number; failed: number }> {
  return sendNotificationEmails();
}

/**
 * Deletes read notifications older than 90 days and any older than 365 (run daily by the Schedule
 * `schedule:purge-notifications`; docs/notifications.md, "Retention"). `batch`: rows per statement,
 * 5,000 by default and at most.
 */
export async function purgeNotifications(input: { batch?: number } = {}): Promise<{ expired: number; read: number }> {
  return purge(input);
}

export const notificationEmailsSchedule = defineSchedule({
  id: 'schedule:notification-emails',
  runs: 'notification-emails',
  workflow: notificationEmails,
  args: [],
  kind: 'notifications',
  every: { every: '1 minute' },
  catchupWindow: '1 minute',
  overlap: 'skip',
  description: 'Mails the notifications whose recipient chose email for their topic (docs/notifications.md)',
});

export const purgeNotificationsSchedule = defineSchedule({
  id: 'schedule:purge-notifications',
  runs: 'maintenance:purge-notifications',
  workflow: purgeNotifications,
  args: [{}],
  kind: 'maintenance',
  every: { at: { hour: 3, minute: 47 } },
  catchupWindow: '1 day',
  overlap: 'skip',
  description: 'Deletes read notifications older than 90 days and any older than 365 (docs/notifications.md)',
});
