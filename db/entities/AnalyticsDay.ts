import { defineEntity, type InferEntity } from '@mikro-orm/core';

// The analytics_hours rollup summed per UTC day (docs/analytics.md): the whole UTC days inside a
// range are read from here, 24 times fewer rows; only the partial days at its edges come from hours.
export const AnalyticsDay = defineEntity({
  name: 'AnalyticsDay',
  tableName: 'analytics_days',
  properties: (p) => ({
    workspaceId: p.uuid().primary(),
    day: p.datetime().primary(),
    appId: p.uuid().primary(),
    campaignId: p.uuid().primary(),
    stepId: p.uuid().primary(),
    agentId: p.uuid().primary(),
    signalKey: p.string().length(100).primary(),
    source: p.string().length(40).primary(),
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
export type IAnalyticsDay = InferEntity<typeof AnalyticsDay>;
