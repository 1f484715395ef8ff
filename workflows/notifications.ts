import { proxyActivities } from '@temporalio/workflow';
import type { NotificationActivities } from '../activities/notifications.js';

const { sendNotificationEmails } = proxyActivities<NotificationActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { maximumAttempts: 3 },
});

/**
 * Mails the notifications whose recipient chose `email` for their topic (run every minute by the
 * Schedule `schedule:notification-emails`; docs/notifications.md).
 */
export async function notificationEmails(): Promise<{ sent: number; failed: number }> {
  return sendNotificationEmails();
}
