import { defineEntity, type InferEntity } from '@mikro-orm/core';

// The analytics_hours rollup per UTC hour by product only (docs/analytics.md): the daily series of a
// product, or of the whole workspace (its products' ranges), group these hours into local days.
export const AnalyticsAppHour = defineEntity({
  name: 'AnalyticsAppHour',
  tableName: 'analytics_app_hours',
  properties: (p) => ({
    workspaceId: p.uuid().primary(),
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
export type IAnalyticsAppHour = InferEntity<typeof AnalyticsAppHour>;
