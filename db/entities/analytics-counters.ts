import type { p as PropertyBuilders } from '@mikro-orm/core';

// The counters every analytics rollup table carries (docs/analytics.md), declared once so that the
// six rollups (by hour and by day; all dimensions, per campaign, per product) cannot drift apart.
// Each entity spreads them after its own key columns.

/** The counts every rollup table carries (column names). */
export const ANALYTICS_METRICS = [
  'discovered',
  'approved',
  'rejected',
  'enrolled',
  'contacted',
  'sent',
  'opened',
  'accepted',
  'replied',
  'failed',
  'bounced',
  'replied_leads',
  'meetings',
] as const;
export type AnalyticsMetric = (typeof ANALYTICS_METRICS)[number];

/** The counter properties of a rollup entity, for `properties: (p) => ({ ...keys, ...analyticsCounters(p) })`. */
export const analyticsCounters = (p: typeof PropertyBuilders) => ({
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
});

/**
 * The dimension key columns of the all-dimensions rollups (analytics_hours, analytics_days), after
 * their workspace and time columns (the primary key keeps that order).
 */
export const analyticsDimensions = (p: typeof PropertyBuilders) => ({
  appId: p.uuid().primary(),
  campaignId: p.uuid().primary(),
  stepId: p.uuid().primary(),
  /** The A/B variant of a send step's action (campaign_steps.variants), the zero uuid without one. */
  variantId: p.uuid().primary(),
  agentId: p.uuid().primary(),
  signalKey: p.string().length(100).primary(),
  source: p.string().length(40).primary(),
});
