import { proxyActivities } from '@temporalio/workflow';
import type { AccountActivities } from '../activities/accounts.js';

const { reconcileAccounts: reconcile, withdrawOldInvitations: withdraw } = proxyActivities<AccountActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { maximumAttempts: 5 },
});

/**
 * `accounts-reconcile` (every 10 minutes, a Schedule): every sender account's status at the
 * connector, applied as transitions (a disconnection: notification + `account.disconnected`, once).
 */
export async function accountsReconcile(input: { pageSize?: number; concurrency?: number } = {}) {
  return reconcile(input);
}

/** `invite-withdrawal` (daily, a Schedule): withdraws pending invitations older than each account's setting. */
export async function withdrawInvitations(input: { now?: string } = {}) {
  return withdraw(input);
}
