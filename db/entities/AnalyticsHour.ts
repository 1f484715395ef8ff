import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { analyticsCounters, analyticsDimensions } from './analytics-counters.js';

// Analytics rollups (docs/analytics.md): counts of events per UTC hour and dimension, rebuilt
// set-based from the raw tables by the `analytics-rollup` workflow; the analytics routes read only
// the rollup tables. A dimension that does not apply to a row is the zero uuid / the empty string (so
// it can be part of the primary key). Counts are additive, so any range of hours sums exactly.
export const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

/** Every dimension per UTC hour: the edges of a local-day range and the per step/signal/source breakdowns. */
export const AnalyticsHour = defineEntity({
  name: 'AnalyticsHour',
  tableName: 'analytics_hours',
  properties: (p) => ({
    workspaceId: p.uuid().primary(),
    hour: p.datetime().primary(),
    ...analyticsDimensions(p),
    ...analyticsCounters(p),
  }),
});
export type IAnalyticsHour = InferEntity<typeof AnalyticsHour>;
