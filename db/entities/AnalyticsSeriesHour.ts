import { defineEntity, type InferEntity } from '@mikro-orm/core';

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
    discovered: p.integer().default(0),
    approved: p.integer().default(0),
    rejected: p.integer().default(0),
    enrolled: p.integer().default(0),
    contacted: p.integer().default(0),
    sent: p.integer().default(0),
    opened: p.integer().default(0),
    accepted: p.integer().default(0),
    replied: p.integer().default(0),
    failed: p.integer().default(0),
    bounced: p.integer().default(0),
    repliedLeads: p.integer().default(0),
    meetings: p.integer().default(0),
  }),
});
export type IAnalyticsSeriesHour = InferEntity<typeof AnalyticsSeriesHour>;
