// Analytics (docs/analytics.md): totals, daily series, the funnel and breakdowns over a range of local
// days, answered from the rollup tables only (domain/analytics/analytics.ts).
import {
  bySignal,
  bySource,
  bySteps,
  daily,
  dailyOverview,
  funnel,
  overview,
  assertTimeZone,
  type RangeQuery as Range,
} from '../../domain/analytics/analytics.js';
import type { Actor } from '../../domain/identity.js';
import { defineOperation } from '../operation.js';
import {
  AppRangeQuery,
  DailyOverviewView,
  DailyView,
  DayQuery,
  FunnelView,
  OverviewView,
  RangeQuery,
  SignalsView,
  SourcesView,
  StepsView,
} from './schemas.js';

const tag = 'analytics';
const errors = {
  400: ['invalid_query', 'invalid_range', 'range_too_long', 'invalid_time_zone', 'invalid_user'],
  401: ['unauthorized'],
  403: ['not_assigned'],
  404: ['not_found'],
};

/** Today in the time zone, as YYYY-MM-DD. */
function today(tz: string): string {
  assertTimeZone(tz);
  return new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
    new Date(),
  );
}
const minusDays = (d: string, n: number) =>
  new Date(Date.parse(`${d}T00:00:00Z`) - n * 86_400_000).toISOString().slice(0, 10);

/** The query's range; without `from`/`to`, the 30 days ending today (or ending at `to`). */
function range(q: { from?: string; to?: string; tz: string; app_id?: string; campaign_id?: string }): Range {
  const to = q.to ?? (q.from ? maxDay(q.from, today(q.tz)) : today(q.tz));
  return { from: q.from ?? minusDays(to, 29), to, tz: q.tz, appId: q.app_id, campaignId: q.campaign_id };
}
const maxDay = (a: string, b: string) => (a > b ? a : b);

type H = (em: Parameters<typeof overview>[0], actor: Actor, q: Range) => Promise<unknown>;
const get = <R>(path: string, summary: string, query: typeof RangeQuery | typeof AppRangeQuery, response: R, fn: H) =>
  defineOperation({
    method: 'GET',
    path,
    // RangeQuery has both filters, AppRangeQuery the product only.
    ids: { query: query === RangeQuery ? { app_id: 'app', campaign_id: 'campaign' } : { app_id: 'app' } },
    summary,
    tag,
    auth: 'user',
    query,
    responses: { 200: response as never },
    errors,
    handler: async ({ em, actor, query: q }) => fn(em, actor, range(q)) as never,
  });

export const overviewOp = get(
  '/api/analytics/overview',
  'Totals and rates over a range of local days, with the period before it',
  RangeQuery,
  OverviewView,
  overview,
);
export const dailyOp = get(
  '/api/analytics/daily',
  'One row of counts per local day of the range',
  RangeQuery,
  DailyView,
  daily,
);
export const funnelOp = get(
  '/api/analytics/funnel',
  'Discovery to meeting: discovered, approved, enrolled, contacted, replied, meetings in the range',
  AppRangeQuery,
  FunnelView,
  funnel,
);
export const signalsOp = get(
  '/api/analytics/signals',
  'Discovered, approved and rejected leads per agent signal in the range',
  AppRangeQuery,
  SignalsView,
  bySignal,
);
export const sourcesOp = get(
  '/api/analytics/sources',
  'Discovered, approved and rejected leads per discovery source in the range',
  AppRangeQuery,
  SourcesView,
  bySource,
);
export const stepsOp = get(
  '/api/analytics/steps',
  'Sends, opens, acceptances, replies and failures per campaign step in the range',
  RangeQuery,
  StepsView,
  bySteps,
);

export const dailyOverviewOp = defineOperation({
  method: 'GET',
  path: '/api/analytics/daily-overview',
  ids: { query: { app_id: 'app', campaign_id: 'campaign' } },
  summary: 'One local day (default today) against the day before and the average of the 7 days before it',
  tag,
  auth: 'user',
  query: DayQuery,
  responses: { 200: DailyOverviewView },
  // A day outside 1970-01-02…9999-12-30 is 400 invalid_range, as a range's ends are.
  errors: { ...errors, 400: ['invalid_query', 'invalid_range', 'invalid_time_zone', 'invalid_user'] },
  handler: async ({ em, actor, query: q }) =>
    dailyOverview(em, actor, { date: q.date ?? today(q.tz), tz: q.tz, appId: q.app_id, campaignId: q.campaign_id }),
});
