import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { analyticsCounters } from './analytics-counters.js';

// analytics_series_hours summed per UTC day (docs/analytics.md): a campaign's totals over a range read
// the whole UTC days inside it here and only the edges from the hours.
export const AnalyticsSeriesDay = defineEntity({
  name: 'AnalyticsSeriesDay',
  tableName: 'analytics_series_days',
  properties: (p) => ({
    workspaceId: p.uuid().primary(),
    campaignId: p.uuid().primary(),
    appId: p.uuid().primary(),
    day: p.datetime().primary(),
    ...analyticsCounters(p),
  }),
});
export type IAnalyticsSeriesDay = InferEntity<typeof AnalyticsSeriesDay>;
