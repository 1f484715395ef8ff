import { proxyActivities } from '@temporalio/workflow';
import { defineSchedule } from './job.js';
import type { MaintenanceActivities } from '../activities/maintenance.js';

const { purgeExpiredAuth: purge, purgeWebhookHistory: purgeHistory } = proxyActivities<MaintenanceActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 5 },
});

/**
 * Deletes expired or revoked sessions, spent refresh tokens and Idempotency-Keys past their 24 hours
 * (run hourly by a Schedule).
 */
export async function purgeExpiredAuth(): Promise<{
  sessions: number;
  refreshTokens: number;
  idempotencyKeys: number;
}> {
  return purge();
}

/**
 * Deletes webhook delivery records and dispatched outbox events past retention, and the secrets
 * rotations replaced once their overlap has ended (run daily).
 */
export async function purgeWebhookHistory(): Promise<{ events: number; deliveries: number; previousSecrets?: number }> {
  return purgeHistory();
}

export const purgeExpiredAuthSchedule = defineSchedule({
  id: 'schedule:purge-expired-auth',
  runs: 'maintenance:purge-expired-auth',
  workflow: purgeExpiredAuth,
  args: [],
  kind: 'maintenance',
  every: { every: '1 hour' },
  catchupWindow: '1 hour',
  overlap: 'skip',
  description: 'Purges expired/revoked sessions, expired refresh tokens and expired Idempotency-Keys',
});

export const purgeWebhookHistorySchedule = defineSchedule({
  id: 'schedule:purge-webhook-history',
  runs: 'maintenance:purge-webhook-history',
  workflow: purgeWebhookHistory,
  args: [],
  kind: 'maintenance',
  every: { at: { hour: 3, minute: 17 } },
  catchupWindow: '1 day',
  overlap: 'skip',
  description: 'Purges webhook deliveries and dispatched outbox events past retention',
});
