import { defineEntity, type InferEntity } from '@mikro-orm/core';

// analytics_app_hours summed per UTC day (docs/analytics.md): totals over a range for products (or the
// workspace) read the whole UTC days inside it here and only the edges from the hours.
export const AnalyticsAppDay = defineEntity({
  name: 'AnalyticsAppDay',
  tableName: 'analytics_app_days',
  properties: (p) => ({
    workspaceId: p.uuid().primary(),
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
export type IAnalyticsAppDay = InferEntity<typeof AnalyticsAppDay>;
