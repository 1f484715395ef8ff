import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { analyticsCounters } from './analytics-counters.js';

// The analytics_hours rollup per UTC hour by product only (docs/analytics.md): the daily series of a
// product, or of the whole workspace (its products' ranges), group these hours into local days.
export const AnalyticsAppHour = defineEntity({
  name: 'AnalyticsAppHour',
  tableName: 'analytics_app_hours',
  properties: (p) => ({
    workspaceId: p.uuid().primary(),
    appId: p.uuid().primary(),
    hour: p.datetime().primary(),
    ...analyticsCounters(p),
  }),
});
export type IAnalyticsAppHour = InferEntity<typeof AnalyticsAppHour>;
