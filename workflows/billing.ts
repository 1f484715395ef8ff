import { proxyActivities } from '@temporalio/workflow';
import { defineSchedule } from './job.js';
import type { BillingActivities } from '../activities/billing.js';

const { grantMonthlyCredits: grant } = proxyActivities<BillingActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { maximumAttempts: 5 },
});

/**
 * Grants every workspace its plan's monthly credits for the current month (run on the 1st by a
 * Schedule). Idempotent per workspace, plan and month, so a re-run or a catch-up grants nothing twice.
 * `period` (YYYY-MM) defaults to the month of the workflow's start (workflow time, deterministic).
 */
export async function grantMonthlyCredits(
  input: { period?: string; workspaceIds?: string[] } = {},
): Promise<{ period: string; workspaces: number; granted: number }> {
  const now = new Date();
  const period = input.period ?? `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
  const r = await grant({ period, workspaceIds: input.workspaceIds });
  return { period, ...r };
}

export const grantMonthlyCreditsSchedule = defineSchedule({
  id: 'schedule:grant-monthly-credits',
  runs: 'credits:grant-monthly',
  workflow: grantMonthlyCredits,
  args: [{}],
  kind: 'credits',
  every: { at: { dayOfMonth: 1, hour: 0, minute: 5 } },
  catchupWindow: '7 days',
  overlap: 'skip',
  description: 'Grants every workspace its plan’s monthly credits (idempotent per month)',
});
