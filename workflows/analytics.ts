import { proxyActivities } from '@temporalio/workflow';
import { defineSchedule } from './job.js';
import type { AnalyticsActivities } from '../activities/analytics.js';

const { rollupAnalyticsWindow, refreshInsightsNow } = proxyActivities<AnalyticsActivities>({
  startToCloseTimeout: '15 minutes',
  retry: { maximumAttempts: 5 },
});

export interface RollupInput {
  /** ISO times; default: the last ROLLUP_LOOKBACK_HOURS hours up to now (what the Schedule runs). */
  from?: string;
  to?: string;
  /** One workspace only (tests, a manual repair); default every workspace. */
  workspaceId?: string;
}

/**
 * `analytics-rollup` (docs/analytics.md): rebuilds the analytics rollups of a window of hours from
 * the raw tables. Idempotent: a rerun of the same window writes the same rows. Run every 10 minutes
 * by the Schedule `schedule:analytics-rollup` over the last 48 hours.
 */
export async function analyticsRollup(
  input: RollupInput = {},
): Promise<{ from: string; to: string; hours: number; rows: number }> {
  return rollupAnalyticsWindow(input);
}

/**
 * `insights-refresh` (docs/insights.md): writes the recommendations found in the rollups and the
 * current state, brings back snoozed ones whose time passed, resolves those no longer found. Every
 * 15 minutes by `schedule:insights-refresh`.
 */
export async function insightsRefresh(
  input: { workspaceId?: string } = {},
): Promise<{ found: number; resolved: number }> {
  return refreshInsightsNow(input);
}

export const analyticsRollupSchedule = defineSchedule({
  id: 'schedule:analytics-rollup',
  runs: 'analytics-rollup',
  workflow: analyticsRollup,
  args: [{}],
  kind: 'analytics',
  every: { every: '10 minutes' },
  catchupWindow: '10 minutes',
  overlap: 'skip',
  description: 'Rebuilds the analytics rollups of the last 48 hours from the raw tables (idempotent)',
});

export const insightsRefreshSchedule = defineSchedule({
  id: 'schedule:insights-refresh',
  runs: 'insights-refresh',
  workflow: insightsRefresh,
  args: [{}],
  kind: 'insights',
  every: { every: '15 minutes' },
  catchupWindow: '15 minutes',
  overlap: 'skip',
  description: 'Finds recommendations in the analytics and the current state; snoozed ones come back after their time',
});
