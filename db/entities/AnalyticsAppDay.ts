import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { analyticsCounters } from './analytics-counters.js';

// analytics_app_hours summed per UTC day (docs/analytics.md): totals over a range for products (or the
// workspace) read the whole UTC days inside it here and only the edges from the hours.
export const AnalyticsAppDay = defineEntity({
  name: 'AnalyticsAppDay',
  tableName: 'analytics_app_days',
  properties: (p) => ({
    workspaceId: p.uuid().primary(),
    appId: p.uuid().primary(),
    day: p.datetime().primary(),
    ...analyticsCounters(p),
  }),
});
export type IAnalyticsAppDay = InferEntity<typeof AnalyticsAppDay>;
