import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { analyticsCounters, analyticsDimensions } from './analytics-counters.js';

// The analytics_hours rollup summed per UTC day (docs/analytics.md): the whole UTC days inside a
// range are read from here, 24 times fewer rows; only the partial days at its edges come from hours.
export const AnalyticsDay = defineEntity({
  name: 'AnalyticsDay',
  tableName: 'analytics_days',
  properties: (p) => ({
    workspaceId: p.uuid().primary(),
    day: p.datetime().primary(),
    ...analyticsDimensions(p),
    ...analyticsCounters(p),
  }),
});
export type IAnalyticsDay = InferEntity<typeof AnalyticsDay>;
