import { z } from 'zod';
import { INSIGHT_KINDS, INSIGHT_STATUSES } from '../../db/entities/Insight.js';
import { effectiveStatus, type InsightRow } from '../../domain/insights/insights.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { JsonValue, Timestamp } from '../schemas.js';

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export const InsightsQuery = z
  .object({
    status: z
      .enum(INSIGHT_STATUSES)
      .default('open')
      .meta({ description: '`open` includes snoozed insights whose time has passed' }),
    kind: z.enum(INSIGHT_KINDS).optional(),
    app_id: z.uuid().optional(),
    limit: pageQuery.limit,
    cursor: pageQuery.cursor,
  })
  .strict();

export const InsightView = z.object({
  id: z.uuid(),
  kind: z.enum(INSIGHT_KINDS),
  status: z.enum(INSIGHT_STATUSES),
  app_id: z.uuid().nullable(),
  subject_id: z.uuid(),
  title: z.string(),
  detail: z.record(z.string(), JsonValue),
  action: z
    .object({
      type: z.enum([
        'pause_campaign',
        'pause_agent',
        'reconnect_account',
        'raise_account_caps',
        'add_sender_account',
        'open_review_queue',
      ]),
    })
    .catchall(JsonValue),
  snoozed_until: Timestamp.nullable(),
  applied_at: Timestamp.nullable(),
  result: z.record(z.string(), JsonValue).nullable().meta({ description: 'what the action answered when applied' }),
  refreshed_at: Timestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const toInsight = (r: InsightRow, now = new Date()): z.infer<typeof InsightView> => {
  const status = effectiveStatus(r, now);
  return {
    id: r.id,
    kind: r.kind,
    status,
    app_id: r.app_id,
    subject_id: r.subject_id,
    title: r.title,
    detail: r.detail as Record<string, z.infer<typeof JsonValue>>,
    action: r.action as z.infer<typeof InsightView>['action'],
    snoozed_until: status === 'snoozed' ? iso(r.snoozed_until) : null,
    applied_at: iso(r.applied_at),
    result: r.result as Record<string, z.infer<typeof JsonValue>> | null,
    refreshed_at: iso(r.refreshed_at)!,
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  };
};

export const InsightPage = pageSchema(InsightView);
export const CountView = z.object({ open: z.number().int(), by_kind: z.record(z.string(), z.number().int()) });

export const StatusBody = z.discriminatedUnion('status', [
  z.object({ status: z.literal('dismissed') }).strict(),
  z
    .object({
      status: z.literal('snoozed'),
      until: Timestamp.meta({ description: 'when it comes back (in the future: 400 invalid_until otherwise)' }),
    })
    .strict(),
  z.object({ status: z.literal('open') }).strict(),
]);
