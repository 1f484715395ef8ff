import { proxyActivities } from '@temporalio/workflow';
import { defineSchedule } from './job.js';
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

export const accountsReconcileSchedule = defineSchedule({
  id: 'schedule:accounts-reconcile',
  runs: 'accounts-reconcile',
  workflow: accountsReconcile,
  args: [{}],
  kind: 'accounts',
  every: { every: '10 minutes' },
  catchupWindow: '10 minutes',
  overlap: 'skip',
  description: 'Reads every sender account’s status at the connector; a disconnection emits account.disconnected once',
});

export const withdrawInvitationsSchedule = defineSchedule({
  id: 'schedule:invite-withdrawal',
  runs: 'invite-withdrawal',
  workflow: withdrawInvitations,
  args: [{}],
  kind: 'accounts',
  every: { at: { hour: 4, minute: 41 } },
  catchupWindow: '1 day',
  overlap: 'skip',
  description: 'Withdraws pending network invitations older than each account’s setting',
});
