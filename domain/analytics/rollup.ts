// The analytics rollup (docs/analytics.md "The rollup workflow"): `rollupAnalytics` rebuilds a window
// of UTC hours of analytics_hours from the raw tables (scheduled actions, enrollments, discovered
// leads, meetings) in one set-based statement, then the UTC days and the per-campaign and per-product
// tables derived from it. Delete-and-insert of whole hours in one transaction: running it twice gives
// the same rows (idempotent). Apart from the reads (./analytics.ts) so that the Demo's seed can roll
// its history up without importing the domains the reads check access with.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ANALYTICS_METRICS } from '../../db/entities/analytics-counters.js';
import { ZERO_UUID } from '../../db/entities/AnalyticsHour.js';

/** What the scheduled rollup recomputes each run: facts recorded late (a reply to an old send) land within it. */
export const ROLLUP_LOOKBACK_HOURS = 48;

const HOUR_MS = 3_600_000;
export const floorHour = (d: Date) => new Date(Math.floor(d.getTime() / HOUR_MS) * HOUR_MS);

// The rollup tables' counter columns (one list: the entities declare the same ones).
const METRIC_COLS = ANALYTICS_METRICS;

/**
 * Every fact of the window as (workspace, product, hour, campaign, step, A/B variant, agent, signal,
 * source, metric). Each metric is counted at its own time: sent at executed_at, opened/accepted/replied at
 * their times, failed and bounced when the action last changed (an inbound bounce of an executed send:
 * at its `bounced_at`; a send is never both), enrolled at the enrollment, a lead's
 * first reply (replied_leads) at the enrollment's replied_at, contacted at an enrollment's first send,
 * discovered at creation, approved/rejected at the review, meetings when booked.
 */
const FACTS = (ws: string) => `
  select c.workspace_id, c.app_id, date_trunc('hour', sa.executed_at, 'UTC') as h, sa.campaign_id, sa.step_id, coalesce(sa.variant_id, '${ZERO_UUID}') as variant_id, '${ZERO_UUID}'::uuid as agent_id, '' as signal_key, '' as source, 'sent' as m
    from scheduled_actions sa join campaigns c on c.id = sa.campaign_id where sa.state = 'executed' and sa.executed_at >= $1 and sa.executed_at < $2 ${ws.replace('$W', 'sa.workspace_id')}
  union all select c.workspace_id, c.app_id, date_trunc('hour', sa.opened_at, 'UTC'), sa.campaign_id, sa.step_id, coalesce(sa.variant_id, '${ZERO_UUID}'), '${ZERO_UUID}', '', '', 'opened'
    from scheduled_actions sa join campaigns c on c.id = sa.campaign_id where sa.opened_at >= $1 and sa.opened_at < $2 ${ws.replace('$W', 'sa.workspace_id')}
  union all select c.workspace_id, c.app_id, date_trunc('hour', sa.accepted_at, 'UTC'), sa.campaign_id, sa.step_id, coalesce(sa.variant_id, '${ZERO_UUID}'), '${ZERO_UUID}', '', '', 'accepted'
    from scheduled_actions sa join campaigns c on c.id = sa.campaign_id where sa.accepted_at >= $1 and sa.accepted_at < $2 ${ws.replace('$W', 'sa.workspace_id')}
  union all select c.workspace_id, c.app_id, date_trunc('hour', sa.replied_at, 'UTC'), sa.campaign_id, sa.step_id, coalesce(sa.variant_id, '${ZERO_UUID}'), '${ZERO_UUID}', '', '', 'replied'
    from scheduled_actions sa join campaigns c on c.id = sa.campaign_id where sa.replied_at >= $1 and sa.replied_at < $2 ${ws.replace('$W', 'sa.workspace_id')}
  union all select c.workspace_id, c.app_id, date_trunc('hour', sa.updated_at, 'UTC'), sa.campaign_id, sa.step_id, coalesce(sa.variant_id, '${ZERO_UUID}'), '${ZERO_UUID}', '', '', 'failed'
    from scheduled_actions sa join campaigns c on c.id = sa.campaign_id where sa.state = 'failed' and sa.updated_at >= $1 and sa.updated_at < $2 ${ws.replace('$W', 'sa.workspace_id')}
  union all select c.workspace_id, c.app_id, date_trunc('hour', sa.updated_at, 'UTC'), sa.campaign_id, sa.step_id, coalesce(sa.variant_id, '${ZERO_UUID}'), '${ZERO_UUID}', '', '', 'bounced'
    from scheduled_actions sa join campaigns c on c.id = sa.campaign_id where sa.state = 'failed' and sa.error_code ilike '%bounce%' and sa.updated_at >= $1 and sa.updated_at < $2 ${ws.replace('$W', 'sa.workspace_id')}
  union all select c.workspace_id, c.app_id, date_trunc('hour', sa.bounced_at, 'UTC'), sa.campaign_id, sa.step_id, coalesce(sa.variant_id, '${ZERO_UUID}'), '${ZERO_UUID}', '', '', 'bounced'
    from scheduled_actions sa join campaigns c on c.id = sa.campaign_id where sa.bounced_at >= $1 and sa.bounced_at < $2 ${ws.replace('$W', 'sa.workspace_id')}
  union all select c.workspace_id, c.app_id, date_trunc('hour', f.first_at, 'UTC'), f.campaign_id, '${ZERO_UUID}', '${ZERO_UUID}', '${ZERO_UUID}', '', '', 'contacted'
    from (select sa.campaign_id, min(sa.executed_at) as first_at from scheduled_actions sa
           where sa.state = 'executed' and sa.enrollment_id in (select enrollment_id from scheduled_actions where state = 'executed' and executed_at >= $1 and executed_at < $2 ${ws.replace('$W', 'workspace_id')})
           group by sa.enrollment_id, sa.campaign_id) f join campaigns c on c.id = f.campaign_id
   where f.first_at >= $1 and f.first_at < $2
  union all select c.workspace_id, c.app_id, date_trunc('hour', e.created_at, 'UTC'), e.campaign_id, '${ZERO_UUID}', '${ZERO_UUID}', '${ZERO_UUID}', '', '', 'enrolled'
    from enrollments e join campaigns c on c.id = e.campaign_id where e.created_at >= $1 and e.created_at < $2 ${ws.replace('$W', 'e.workspace_id')}
  union all select c.workspace_id, c.app_id, date_trunc('hour', e.replied_at, 'UTC'), e.campaign_id, '${ZERO_UUID}', '${ZERO_UUID}', '${ZERO_UUID}', '', '', 'replied_leads'
    from enrollments e join campaigns c on c.id = e.campaign_id where e.replied_at >= $1 and e.replied_at < $2 ${ws.replace('$W', 'e.workspace_id')}
  union all select d.workspace_id, d.app_id, date_trunc('hour', d.created_at, 'UTC'), '${ZERO_UUID}', '${ZERO_UUID}', '${ZERO_UUID}', d.agent_id, d.signal_key, d.source, 'discovered'
    from discovered_leads d where d.created_at >= $1 and d.created_at < $2 ${ws.replace('$W', 'd.workspace_id')}
  union all select d.workspace_id, d.app_id, date_trunc('hour', d.reviewed_at, 'UTC'), '${ZERO_UUID}', '${ZERO_UUID}', '${ZERO_UUID}', d.agent_id, d.signal_key, d.source, d.status
    from discovered_leads d where d.status in ('approved', 'rejected') and d.reviewed_at >= $1 and d.reviewed_at < $2 ${ws.replace('$W', 'd.workspace_id')}
  union all select m.workspace_id, l.app_id, date_trunc('hour', m.created_at, 'UTC'), '${ZERO_UUID}', '${ZERO_UUID}', '${ZERO_UUID}', '${ZERO_UUID}', '', '', 'meetings'
    from meetings m join leads ld on ld.id = m.lead_id join lead_lists l on l.id = ld.list_id
   where m.status <> 'canceled' and m.created_at >= $1 and m.created_at < $2 ${ws.replace('$W', 'm.workspace_id')}`;

/** `sum(m)::int as m` for every counter (the reads sum the rollups with it too). */
export const sumCols = (prefix = '') => METRIC_COLS.map((m) => `sum(${prefix}${m})::int as ${m}`).join(', ');
const countCols = METRIC_COLS.map((m) => `count(*) filter (where m = '${m}')::int`).join(', ');
const cols = METRIC_COLS.join(', ');

export interface RollupResult {
  from: string;
  to: string;
  hours: number;
  rows: number;
}

/**
 * Rebuilds the rollups for the UTC hours in [from, to) (rounded out to whole hours), for one
 * workspace or all. Set-based, in one transaction under an advisory lock (two runs never interleave).
 */
export async function rollupAnalytics(
  em: EntityManager,
  window: { from: Date; to: Date; workspaceId?: string },
): Promise<RollupResult> {
  const from = floorHour(window.from);
  const to = new Date(Math.ceil(window.to.getTime() / HOUR_MS) * HOUR_MS);
  if (to <= from) return { from: from.toISOString(), to: to.toISOString(), hours: 0, rows: 0 };
  const dayFrom = new Date(Math.floor(from.getTime() / 86_400_000) * 86_400_000);
  const dayTo = new Date(Math.ceil(to.getTime() / 86_400_000) * 86_400_000);
  const ws = window.workspaceId ? `and $W = $3` : '';
  const wsOnly = window.workspaceId ? `and workspace_id = $3` : '';
  const args: unknown[] = [from, to, ...(window.workspaceId ? [window.workspaceId] : [])];
  const dayArgs: unknown[] = [dayFrom, dayTo, ...(window.workspaceId ? [window.workspaceId] : [])];
  const dims = 'workspace_id, app_id, campaign_id, step_id, variant_id, agent_id, signal_key, source';
  let rows = 0;
  await em.transactional(async (tx) => {
    const run = async (sql: string, params: unknown[]) => {
      const q = numbered(sql, params);
      return (await tx.execute<{ affectedRows: number }>(q.sql, q.args, 'run')).affectedRows;
    };
    await tx.execute(`select pg_advisory_xact_lock(hashtext('analytics-rollup'))`);
    await run(`delete from analytics_hours where hour >= $1 and hour < $2 ${wsOnly}`, args);
    rows = await run(
      `insert into analytics_hours (${dims}, hour, ${cols})
       select ${dims}, h, ${countCols} from (${FACTS(ws)}) f group by ${dims}, h`,
      args,
    );
    // The UTC days and the per-campaign hours touched by the window, derived from the hours.
    await run(`delete from analytics_days where day >= $1 and day < $2 ${wsOnly}`, dayArgs);
    await run(
      `insert into analytics_days (${dims}, day, ${cols})
       select ${dims}, date_trunc('day', hour, 'UTC'), ${sumCols()} from analytics_hours where hour >= $1 and hour < $2 ${wsOnly}
        group by ${dims}, date_trunc('day', hour, 'UTC')`,
      dayArgs,
    );
    for (const [table, key] of [
      ['analytics_series', 'campaign_id, app_id'],
      ['analytics_app', 'app_id'],
    ] as const) {
      await run(`delete from ${table}_hours where hour >= $1 and hour < $2 ${wsOnly}`, args);
      await run(
        `insert into ${table}_hours (workspace_id, ${key}, hour, ${cols})
         select workspace_id, ${key}, hour, ${sumCols()} from analytics_hours where hour >= $1 and hour < $2 ${wsOnly} group by workspace_id, ${key}, hour`,
        args,
      );
      await run(`delete from ${table}_days where day >= $1 and day < $2 ${wsOnly}`, dayArgs);
      await run(
        `insert into ${table}_days (workspace_id, ${key}, day, ${cols})
         select workspace_id, ${key}, date_trunc('day', hour, 'UTC'), ${sumCols()} from ${table}_hours where hour >= $1 and hour < $2 ${wsOnly}
          group by workspace_id, ${key}, date_trunc('day', hour, 'UTC')`,
        dayArgs,
      );
    }
  });
  return { from: from.toISOString(), to: to.toISOString(), hours: (to.getTime() - from.getTime()) / HOUR_MS, rows };
}

/** MikroORM's execute takes `?` placeholders; the rollup SQL numbers them ($1…) to reuse them: rewritten in order. */
function numbered(sql: string, params: unknown[]): { sql: string; args: unknown[] } {
  const args: unknown[] = [];
  return { sql: sql.replace(/\$(\d+)/g, (_, n: string) => (args.push(params[Number(n) - 1]), '?')), args };
}
