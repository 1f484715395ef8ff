import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { analyticsCounters } from './analytics-counters.js';

// The analytics_hours rollup per UTC hour by campaign (docs/analytics.md): the daily series of one
// campaign groups these hours into local days of any time zone (one index range: the key leads with
// the campaign). Rows of facts without a campaign (discovery, meetings) have the zero uuid.
export const AnalyticsSeriesHour = defineEntity({
  name: 'AnalyticsSeriesHour',
  tableName: 'analytics_series_hours',
  properties: (p) => ({
    workspaceId: p.uuid().primary(),
    campaignId: p.uuid().primary(),
    appId: p.uuid().primary(),
    hour: p.datetime().primary(),
    ...analyticsCounters(p),
  }),
});
export type IAnalyticsSeriesHour = InferEntity<typeof AnalyticsSeriesHour>;
