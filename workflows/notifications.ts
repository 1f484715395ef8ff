import { proxyActivities } from '@temporalio/workflow';
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
