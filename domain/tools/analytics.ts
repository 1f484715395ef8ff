// Analytics and insights for the Operator (docs/analytics.md, docs/insights.md): read the overview and
// the funnel, list insights, apply one (risky: it changes a campaign, an agent or an account).
import { z } from 'zod';
import { funnel, overview } from '../analytics/analytics.js';
import { applyInsight, effectiveStatus, listInsights } from '../insights/insights.js';
import { defineTool } from './registry.js';

const today = () => new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
const range = {
  from: z.iso.date().optional().describe('first local day (default 30 days ago)'),
  to: z.iso.date().optional().describe('last local day (default today)'),
  tz: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z][A-Za-z0-9_+\-/]*$/)
    .default('UTC'),
  app_id: z.uuid().optional(),
};

export const analyticsTools = [
  defineTool({
    name: 'get_analytics_overview',
    ids: { app_id: 'app', campaign_id: 'campaign' },
    domain: 'analytics',
    description:
      'Totals and rates (sends, opens, acceptances, replies, discovered and approved leads, meetings) over a range of days, with the period before it; optionally one product or campaign.',
    input: z.object({ ...range, campaign_id: z.uuid().optional() }).strict(),
    risk: 'read',
    run: async ({ em, actor }, i) =>
      overview(em, actor, {
        from: i.from ?? daysAgo(29),
        to: i.to ?? today(),
        tz: i.tz,
        appId: i.app_id,
        campaignId: i.campaign_id,
      }),
  }),
  defineTool({
    name: 'get_funnel',
    ids: { app_id: 'app' },
    domain: 'analytics',
    description:
      'The discovery-to-meeting funnel over a range of days: discovered, approved, enrolled, contacted, replied, meetings, each against the stage before.',
    input: z.object(range).strict(),
    risk: 'read',
    run: async ({ em, actor }, i) =>
      funnel(em, actor, { from: i.from ?? daysAgo(29), to: i.to ?? today(), tz: i.tz, appId: i.app_id }),
  }),
  defineTool({
    name: 'list_insights',
    domain: 'insights',
    description:
      'Open recommendations (a step with few replies, a disconnected account, an account near its sending caps, an agent whose leads are mostly rejected, overdue message reviews), each with the action apply_insight performs.',
    input: z.object({ limit: z.number().int().min(1).max(50).default(20) }).strict(),
    risk: 'read',
    run: async ({ em, actor }, i) =>
      (await listInsights(em, actor, { status: 'open', limit: i.limit })).slice(0, i.limit).map((r) => ({
        id: r.id,
        kind: r.kind,
        status: effectiveStatus(r),
        title: r.title,
        action: r.action,
        detail: r.detail,
      })),
  }),
  defineTool({
    name: 'apply_insight',
    ids: { insight_id: 'insight' },
    domain: 'insights',
    description:
      'Perform a recommendation’s action once (pause the campaign, pause the agent, raise a sender account’s caps within the plan, or point to the review queue or to adding a sender account). Reconnecting an account needs the app.',
    input: z.object({ insight_id: z.uuid() }).strict(),
    risk: 'change',
    run: async ({ em, actor, jobs }, i) => {
      const r = await applyInsight(em, actor, i.insight_id, { jobs });
      return { id: r.id, status: r.status, result: r.result };
    },
  }),
];
