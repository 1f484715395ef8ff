// Analytics reads (docs/analytics.md): every route answers from the rollup tables only (rebuilt by
// ./rollup.ts). A range of local days [from, to] in a time zone is the UTC interval [lo, hi); whole
// UTC days inside it come from analytics_days and the partial days at its edges from
// analytics_hours, so any whole-hour offset is exact.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ANALYTICS_METRICS, type AnalyticsMetric } from '../../db/entities/analytics-counters.js';
import { ZERO_UUID } from '../../db/entities/AnalyticsHour.js';
import { requireApp } from '../apps/apps.js';
import { requireCampaign } from '../campaigns/campaigns.js';
import { badRequest } from '../errors.js';
import type { Actor } from '../identity.js';
import { sumCols } from './rollup.js';

/** The widest range a request may ask for, in days (from and to included). */
export const MAX_RANGE_DAYS = 366;

// The rollup tables' counter columns (one list: the entities declare the same ones).
const METRIC_COLS = ANALYTICS_METRICS;
type Metric = AnalyticsMetric;
export type Counts = Record<Metric, number>;
const zeroCounts = (): Counts => Object.fromEntries(METRIC_COLS.map((m) => [m, 0])) as Counts;

export interface RangeQuery {
  from: string;
  to: string;
  tz: string;
  appId?: string;
  campaignId?: string;
}

export function assertTimeZone(tz: string): void {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
  } catch {
    throw badRequest('invalid_time_zone', `unknown IANA time zone: ${tz}`);
  }
}

const dayNumber = (d: string) => Date.parse(`${d}T00:00:00Z`) / 86_400_000;

/** Checks the range (400 `invalid_range`, `range_too_long`, `invalid_time_zone`) and returns its length in days. */
/** Days this service can have facts for; outside them a date is refused (and would not map to a JS time). */
const FIRST_DAY = '1970-01-02';
const LAST_DAY = '9999-12-30';
function assertDayInRange(...days: string[]): void {
  for (const d of days)
    if (d < FIRST_DAY || d > LAST_DAY)
      throw badRequest('invalid_range', `dates must be between ${FIRST_DAY} and ${LAST_DAY}`);
}

export function checkRange(q: { from: string; to: string; tz: string }): number {
  assertTimeZone(q.tz);
  assertDayInRange(q.from, q.to);
  const days = dayNumber(q.to) - dayNumber(q.from) + 1;
  if (!Number.isFinite(days)) throw badRequest('invalid_range', 'from and to must be dates (YYYY-MM-DD)');
  if (days < 1) throw badRequest('invalid_range', 'from must not be after to');
  if (days > MAX_RANGE_DAYS) throw badRequest('range_too_long', `a range covers at most ${MAX_RANGE_DAYS} days`);
  return days;
}

interface Scope {
  sql: string;
  args: unknown[];
}

/**
 * The rows the actor may see: the workspace, the products a limited member was given, and the
 * product/campaign filters (checked: 404 when not in the workspace, 403 `not_assigned` otherwise).
 */
async function scopeOf(em: EntityManager, actor: Actor, q: { appId?: string; campaignId?: string }): Promise<Scope> {
  const parts = ['workspace_id = ?'];
  const args: unknown[] = [actor.workspaceId];
  if (q.appId) {
    await requireApp(em, actor, q.appId);
    parts.push('app_id = ?');
    args.push(q.appId);
  } else if (!actor.allApps) {
    parts.push('app_id = any(?::uuid[])');
    args.push(`{${actor.appIds.join(',')}}`);
  }
  if (q.campaignId) {
    await requireCampaign(em, actor, q.campaignId);
    parts.push('campaign_id = ?');
    args.push(q.campaignId);
  }
  return { sql: parts.join(' and '), args };
}

interface Bounds {
  /** Local midnights of `from` and of the day after `to`, in UTC. */
  lo: Date;
  hi: Date;
  /** The whole UTC days inside [lo, hi): [dlo, dhi) (empty when dlo ≥ dhi). */
  dlo: Date;
  dhi: Date;
}

const DAY_MS = 86_400_000;

/**
 * The range's UTC bounds, computed first (PostgreSQL's time zone rules, one tiny statement) so that
 * the rollup reads below are plain index range scans on (workspace_id, hour|day).
 */
async function boundsOf(em: EntityManager, q: { from: string; to: string; tz: string }): Promise<Bounds> {
  const [b] = await em.execute<{ lo: Date; hi: Date }[]>(
    `select (?::date)::timestamp at time zone ? as lo, ((?::date) + 1)::timestamp at time zone ? as hi`,
    [q.from, q.tz, q.to, q.tz],
  );
  const lo = new Date(b!.lo);
  const hi = new Date(b!.hi);
  return {
    lo,
    hi,
    dlo: new Date(Math.ceil(lo.getTime() / DAY_MS) * DAY_MS),
    dhi: new Date(Math.floor(hi.getTime() / DAY_MS) * DAY_MS),
  };
}

/** Sums over the range, grouped by `group` (columns of the rollup, or none): whole UTC days + the edge hours. */
async function rangeSums<G extends Record<string, unknown>>(
  em: EntityManager,
  scope: Scope,
  q: RangeQuery,
  group: string[],
  extra = '',
): Promise<(G & Counts)[]> {
  const b = await boundsOf(em, q);
  const g = group.join(', ');
  const sel = g ? `${g}, ` : '';
  const by = g ? `group by ${g}` : '';
  const days = b.dlo < b.dhi;
  // Without whole days inside, the range is hours only; otherwise hours before dlo and from dhi on.
  const edges = days ? `((hour >= ? and hour < ?) or (hour >= ? and hour < ?))` : `hour >= ? and hour < ?`;
  const edgeArgs = days ? [b.lo, b.dlo, b.dhi, b.hi] : [b.lo, b.hi];
  const dayPart = days
    ? `select ${sel}${sumCols()} from analytics_days where ${scope.sql} ${extra} and day >= ? and day < ? ${by} union all `
    : '';
  const dayArgs = days ? [...scope.args, b.dlo, b.dhi] : [];
  return em.execute<(G & Counts)[]>(
    `with r as (${dayPart}select ${sel}${sumCols()} from analytics_hours where ${scope.sql} ${extra} and ${edges} ${by})
     select ${sel}${sumCols()} from r ${by}`,
    [...dayArgs, ...scope.args, ...edgeArgs],
  );
}

const ratio = (a: number, b: number) => (b ? Math.round((a / b) * 10000) / 10000 : 0);

export function ratesOf(c: Counts) {
  return {
    reply_rate: ratio(c.replied, c.sent),
    open_rate: ratio(c.opened, c.sent),
    acceptance_rate: ratio(c.accepted, c.sent),
    approval_rate: ratio(c.approved, c.approved + c.rejected),
    meeting_rate: ratio(c.meetings, c.replied_leads),
  };
}

const toCounts = (r: Partial<Counts> | undefined): Counts => {
  const c = zeroCounts();
  for (const m of METRIC_COLS) c[m] = Number(r?.[m] ?? 0);
  return c;
};

/** The same number of days just before the range. */
function previousRange(q: RangeQuery, days: number): RangeQuery {
  const at = (n: number) => new Date(n * 86_400_000).toISOString().slice(0, 10);
  return { ...q, from: at(dayNumber(q.from) - days), to: at(dayNumber(q.from) - 1) };
}

export async function overview(em: EntityManager, actor: Actor, q: RangeQuery) {
  const days = checkRange(q);
  const src = await seriesOf(em, actor, q);
  const prev = previousRange(q, days);
  const [totals, previous] = await Promise.all([seriesTotals(em.fork(), src, q), seriesTotals(em.fork(), src, prev)]);
  return {
    range: rangeView(q, days),
    totals,
    rates: ratesOf(totals),
    previous: { from: prev.from, to: prev.to, totals: previous, rates: ratesOf(previous) },
  };
}

const rangeView = (q: RangeQuery, days: number) => ({
  from: q.from,
  to: q.to,
  tz: q.tz,
  days,
  app_id: q.appId ?? null,
  campaign_id: q.campaignId ?? null,
});

/**
 * Where a campaign's or the products' figures are, without the per step/signal/source dimensions:
 * a campaign's rows of analytics_series_* (key led by the campaign), otherwise the products' rows of
 * analytics_app_* (one index range per product). Checks the filters like scopeOf.
 */
interface Series {
  /** `<table prefix>` and its where clause (without the time condition). */
  table: 'analytics_series' | 'analytics_app';
  sql: string;
  args: unknown[];
}

async function seriesOf(em: EntityManager, actor: Actor, q: { appId?: string; campaignId?: string }): Promise<Series> {
  if (q.campaignId) {
    const c = await requireCampaign(em, actor, q.campaignId);
    if (q.appId && c.app.id !== q.appId) await requireApp(em, actor, q.appId);
    return {
      table: 'analytics_series',
      sql: `workspace_id = ? and campaign_id = ? and app_id = ?`,
      args: [actor.workspaceId, c.id, q.appId ?? c.app.id],
    };
  }
  let apps: string[];
  if (q.appId) apps = [(await requireApp(em, actor, q.appId)).id];
  else if (actor.allApps)
    apps = (await em.execute<{ id: string }[]>(`select id from apps where workspace_id = ?`, [actor.workspaceId])).map(
      (a) => a.id,
    );
  else apps = actor.appIds;
  return {
    table: 'analytics_app',
    sql: `workspace_id = ? and app_id = any(?::uuid[])`,
    args: [actor.workspaceId, `{${apps.join(',')}}`],
  };
}

/** Totals over the range from the series tables: whole UTC days + the edge hours. */
async function seriesTotals(
  em: EntityManager,
  src: Series,
  q: { from: string; to: string; tz: string },
): Promise<Counts> {
  const b = await boundsOf(em, q);
  const days = b.dlo < b.dhi;
  const edges = days ? `((hour >= ? and hour < ?) or (hour >= ? and hour < ?))` : `hour >= ? and hour < ?`;
  const edgeArgs = days ? [b.lo, b.dlo, b.dhi, b.hi] : [b.lo, b.hi];
  const dayPart = days
    ? `select ${sumCols()} from ${src.table}_days where ${src.sql} and day >= ? and day < ? union all `
    : '';
  const [row] = await em.execute<Counts[]>(
    `with r as (${dayPart}select ${sumCols()} from ${src.table}_hours where ${src.sql} and ${edges}) select ${sumCols()} from r`,
    [...(days ? [...src.args, b.dlo, b.dhi] : []), ...src.args, ...edgeArgs],
  );
  return toCounts(row);
}

/** One row per local day of the range (days without events are zeros), from the series hours. */
export async function daily(em: EntityManager, actor: Actor, q: RangeQuery) {
  const days = checkRange(q);
  const src = await seriesOf(em, actor, q);
  const b = await boundsOf(em, q);
  const rows = await em.execute<({ day: string } & Counts)[]>(
    `with s as (select (hour at time zone ?)::date as day, ${sumCols()} from ${src.table}_hours where ${src.sql} and hour >= ? and hour < ? group by 1)
     select to_char(d, 'YYYY-MM-DD') as day, ${METRIC_COLS.map((m) => `coalesce(s.${m}, 0)::int as ${m}`).join(', ')}
       from generate_series(?::date, ?::date, interval '1 day') d left join s on s.day = d::date order by 1`,
    [q.tz, ...src.args, b.lo, b.hi, q.from, q.to],
  );
  return {
    range: rangeView(q, days),
    items: rows.map((r) => ({ day: r.day, ...toCounts(r), reply_rate: ratio(r.replied, r.sent) })),
  };
}

/** One local day against the day before and the average day of the 7 before it. */
export async function dailyOverview(
  em: EntityManager,
  actor: Actor,
  q: { date: string; tz: string; appId?: string; campaignId?: string },
) {
  assertTimeZone(q.tz);
  assertDayInRange(q.date);
  const src = await seriesOf(em, actor, q);
  const at = (n: number) => new Date(n * 86_400_000).toISOString().slice(0, 10);
  const d = dayNumber(q.date);
  const [t, yesterday, w] = await Promise.all([
    seriesTotals(em.fork(), src, { tz: q.tz, from: q.date, to: q.date }),
    seriesTotals(em.fork(), src, { tz: q.tz, from: at(d - 1), to: at(d - 1) }),
    seriesTotals(em.fork(), src, { tz: q.tz, from: at(d - 7), to: at(d - 1) }),
  ]);
  const avg = Object.fromEntries(METRIC_COLS.map((m) => [m, Math.round((w[m] / 7) * 100) / 100])) as Counts;
  return {
    date: q.date,
    tz: q.tz,
    app_id: q.appId ?? null,
    campaign_id: q.campaignId ?? null,
    totals: t,
    rates: ratesOf(t),
    previous_day: yesterday,
    average_of_previous_7_days: avg,
  };
}

export const FUNNEL_STAGES = ['discovered', 'approved', 'enrolled', 'contacted', 'replied', 'meetings'] as const;

/** Discovery to meeting: events of each stage in the range, and each stage against the one before. */
export async function funnel(em: EntityManager, actor: Actor, q: RangeQuery) {
  const days = checkRange(q);
  const c = await seriesTotals(em, await seriesOf(em, actor, { appId: q.appId }), q);
  const values = [c.discovered, c.approved, c.enrolled, c.contacted, c.replied_leads, c.meetings];
  return {
    range: rangeView({ ...q, campaignId: undefined }, days),
    stages: FUNNEL_STAGES.map((stage, i) => ({
      stage,
      count: values[i]!,
      rate_from_previous: i === 0 ? null : ratio(values[i]!, values[i - 1]!),
    })),
  };
}

/** Per agent signal: discovered, approved, rejected in the range (signal names from the agents' signals). */
export async function bySignal(em: EntityManager, actor: Actor, q: RangeQuery) {
  const days = checkRange(q);
  const scope = await scopeOf(em, actor, { appId: q.appId });
  const rows = await rangeSums<{ agent_id: string; signal_key: string }>(
    em,
    scope,
    q,
    ['agent_id', 'signal_key'],
    `and agent_id <> '${ZERO_UUID}'`,
  );
  const names = rows.length
    ? await em.execute<{ agent_id: string; agent_name: string; key: string; name: string | null }[]>(
        `select a.id as agent_id, a.name as agent_name, s.key, s.name from discovery_agents a left join agent_signals s on s.agent_id = a.id where a.id = any(?::uuid[])`,
        [`{${[...new Set(rows.map((r) => r.agent_id))].join(',')}}`],
      )
    : [];
  return {
    range: rangeView({ ...q, campaignId: undefined }, days),
    items: rows
      .map((r) => {
        const n = names.find((x) => x.agent_id === r.agent_id && x.key === r.signal_key);
        const agent = names.find((x) => x.agent_id === r.agent_id);
        return {
          agent_id: r.agent_id,
          agent_name: agent?.agent_name ?? null,
          signal_key: r.signal_key,
          signal_name: n?.name ?? null,
          ...discoveryCounts(r),
        };
      })
      .sort((a, b) => b.discovered - a.discovered || a.signal_key.localeCompare(b.signal_key)),
  };
}

const discoveryCounts = (r: Counts) => ({
  discovered: r.discovered,
  approved: r.approved,
  rejected: r.rejected,
  approval_rate: ratio(r.approved, r.approved + r.rejected),
});

/** Per discovery source: discovered, approved, rejected in the range. */
export async function bySource(em: EntityManager, actor: Actor, q: RangeQuery) {
  const days = checkRange(q);
  const scope = await scopeOf(em, actor, { appId: q.appId });
  const rows = await rangeSums<{ source: string }>(em, scope, q, ['source'], `and source <> ''`);
  return {
    range: rangeView({ ...q, campaignId: undefined }, days),
    items: rows
      .map((r) => ({ source: r.source, ...discoveryCounts(r) }))
      .sort((a, b) => b.discovered - a.discovered || a.source.localeCompare(b.source)),
  };
}

/**
 * Per campaign step: sent, opened, accepted, replied, failed, bounced and the reply rate in the range;
 * a step with A/B variants also per variant (beyond the spec), its sends without one only in the step's figures.
 */
export async function bySteps(em: EntityManager, actor: Actor, q: RangeQuery) {
  const days = checkRange(q);
  const scope = await scopeOf(em, actor, q);
  const rows = await rangeSums<{ campaign_id: string; step_id: string; variant_id: string }>(
    em,
    scope,
    q,
    ['campaign_id', 'step_id', 'variant_id'],
    `and step_id <> '${ZERO_UUID}'`,
  );
  const perStep = new Map<
    string,
    { campaign_id: string; step_id: string; total: Counts; variants: (Counts & { variant_id: string })[] }
  >();
  for (const r of rows) {
    const key = `${r.campaign_id}/${r.step_id}`;
    const step = perStep.get(key) ?? {
      campaign_id: r.campaign_id,
      step_id: r.step_id,
      total: zeroCounts(),
      variants: [],
    };
    perStep.set(key, step);
    for (const m of METRIC_COLS) step.total[m] += r[m];
    if (r.variant_id !== ZERO_UUID) step.variants.push(r);
  }
  const steps = [...perStep.values()];
  const meta = steps.length
    ? await em.execute<
        {
          id: string;
          campaign_id: string;
          campaign_name: string;
          position: number | null;
          type: string | null;
          variants: { id: string; name: string }[] | null;
          winner: string | null;
        }[]
      >(
        `select x.step_id as id, c.id as campaign_id, c.name as campaign_name, s.position, s.type, s.variants, w.variant_id as winner
           from unnest(?::uuid[], ?::uuid[]) as x(campaign_id, step_id) join campaigns c on c.id = x.campaign_id
           left join campaign_steps s on s.id = x.step_id left join step_winners w on w.step_id = x.step_id`,
        [`{${steps.map((r) => r.campaign_id).join(',')}}`, `{${steps.map((r) => r.step_id).join(',')}}`],
      )
    : [];
  const figures = (c: Counts) => ({
    sent: c.sent,
    opened: c.opened,
    accepted: c.accepted,
    replied: c.replied,
    failed: c.failed,
    bounced: c.bounced,
    reply_rate: ratio(c.replied, c.sent),
  });
  return {
    range: rangeView(q, days),
    items: steps
      .map(({ campaign_id, step_id, total, variants }) => {
        const m = meta.find((x) => x.id === step_id);
        // The step's own order of its variants; one removed since, after them.
        const order = (id: string) => (m?.variants ?? []).findIndex((x) => x.id === id) + 1 || 99;
        return {
          campaign_id,
          campaign_name: m?.campaign_name ?? null,
          step_id,
          step_position: m?.position ?? null,
          type: m?.type ?? null,
          ...figures(total),
          ...(variants.length
            ? {
                variants: variants
                  .map((v) => ({
                    variant_id: v.variant_id,
                    name: m?.variants?.find((x) => x.id === v.variant_id)?.name ?? null, // null: removed from the step since
                    is_winner: m?.winner === v.variant_id,
                    ...figures(v),
                    open_rate: ratio(v.opened, v.sent),
                  }))
                  .sort(
                    (a, b) => order(a.variant_id) - order(b.variant_id) || a.variant_id.localeCompare(b.variant_id),
                  ),
              }
            : {}),
        };
      })
      .sort(
        (a, b) =>
          (a.campaign_name ?? '').localeCompare(b.campaign_name ?? '') ||
          a.campaign_id.localeCompare(b.campaign_id) ||
          (a.step_position ?? 0) - (b.step_position ?? 0),
      ),
  };
}
