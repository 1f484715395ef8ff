import { defineEntity, type InferEntity } from '@mikro-orm/core';

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
export type IAnalyticsSeriesDay = InferEntity<typeof AnalyticsSeriesDay>;
