import { proxyActivities } from '@temporalio/workflow';
import type { MaintenanceActivities } from '../activities/maintenance.js';

const { purgeExpiredAuth: purge, purgeWebhookHistory: purgeHistory } = proxyActivities<MaintenanceActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 5 },
});

/** Deletes expired or revoked sessions and spent refresh tokens (run hourly by a Schedule). */
export async function purgeExpiredAuth(): Promise<{ sessions: number; refreshTokens: number }> {
  return purge();
}

/** Deletes webhook delivery records and dispatched outbox events past retention (run daily). */
export async function purgeWebhookHistory(): Promise<{ events: number; deliveries: number }> {
  return purgeHistory();
}
