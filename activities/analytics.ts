import { rollupAnalytics, ROLLUP_LOOKBACK_HOURS, type RollupResult } from '../domain/analytics/rollup.js';
import { refreshInsights } from '../domain/insights/insights.js';
import type { ActivityDeps } from './deps.js';

export function createAnalyticsActivities(deps: ActivityDeps) {
  return {
    /** The window defaults to the last ROLLUP_LOOKBACK_HOURS hours, read from the clock here (never in the workflow). */
    async rollupAnalyticsWindow(input: { from?: string; to?: string; workspaceId?: string }): Promise<RollupResult> {
      const to = input.to ? new Date(input.to) : new Date();
      const from = input.from ? new Date(input.from) : new Date(to.getTime() - ROLLUP_LOOKBACK_HOURS * 3_600_000);
      return rollupAnalytics(deps.orm.em.fork(), { from, to, workspaceId: input.workspaceId });
    },
    async refreshInsightsNow(input: { workspaceId?: string }): Promise<{ found: number; resolved: number }> {
      return refreshInsights(deps.orm.em.fork(), { workspaceId: input.workspaceId });
    },
  };
}

export type AnalyticsActivities = ReturnType<typeof createAnalyticsActivities>;
