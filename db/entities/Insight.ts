import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';

export const INSIGHT_KINDS = [
  'low_reply_rate_step',
  'account_disconnected',
  'account_near_cap',
  'agent_rejections',
  'review_overdue',
] as const;
export type InsightKind = (typeof INSIGHT_KINDS)[number];
/** open → applied | dismissed | snoozed | resolved; snoozed → open (its time passed) | applied | dismissed; resolved → open (the condition returns). */
export const INSIGHT_STATUSES = ['open', 'snoozed', 'dismissed', 'applied', 'resolved'] as const;
export type InsightStatus = (typeof INSIGHT_STATUSES)[number];

// A recommendation (docs/insights.md) written by the `insights-refresh` workflow from the analytics
// rollups and the current state. One row per workspace and dedupe key (kind + subject), so a refresh
// updates it in place and never brings back one a person dismissed.
export const Insight = defineEntity({
  name: 'Insight',
  tableName: 'insights',
  uniques: [{ name: 'insights_workspace_id_dedupe_key_unique', properties: ['workspaceId', 'dedupeKey'] }],
  indexes: [{ name: 'insights_workspace_id_status_id_index', properties: ['workspaceId', 'status', 'id'] }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspaceId: p.uuid(),
    /** The product it is about (null: the whole workspace, e.g. a sender account). */
    appId: p.uuid().nullable(),
    kind: p.string().length(40),
    /** What it is about: a step, an account, an agent, a campaign. */
    subjectId: p.uuid(),
    dedupeKey: p.string().length(120),
    title: p.string().length(300),
    /** The figures behind it, as the last refresh saw them. */
    detail: p.json<Record<string, unknown>>(),
    /** What `apply` does: `{type, ...ids}`. */
    action: p.json<Record<string, unknown>>(),
    status: p.string().length(20).default('open'),
    snoozedUntil: p.datetime().nullable(),
    appliedAt: p.datetime().nullable(),
    appliedBy: p.uuid().nullable(),
    /** What the action answered when applied (returned again by a repeated apply). */
    result: p.json<Record<string, unknown>>().nullable(),
    /** The last refresh that found the condition (an open insight not found again is resolved). */
    refreshedAt: p.datetime(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IInsight = InferEntity<typeof Insight>;
