// The `account_near_cap` insight (docs/insights.md) as a pure rule: a connected sender account, past
// its warm-up, that ran at ≥ 90 % of its daily cap on at least 3 of its last 7 local days, or has
// used ≥ 90 % of its weekly cap this ISO week, for some action type. The recommendation raises the
// caps of those types by a quarter within the plan's bounds; when they already are at the bounds,
// more volume needs another sender account (or a bigger plan), and the action says so.
import { ACTION_TYPES, type ActionType, type Caps } from '../../db/entities/PlatformAccount.js';
import { configuredCaps, warmupDay, type UsageRow } from '../governor/rules.js';
import { addDays, localDate, weekStart } from '../governor/time.js';
import { effectivePlan } from '../billing/plans.js';

export const NEAR_CAP_SHARE = 0.9;
export const NEAR_CAP_DAYS = 7;
export const NEAR_CAP_MIN_DAYS = 3;
/** How much a recommendation raises a cap (within the plan's bound). */
export const CAP_RAISE = 1.25;

/** One connected account with its counters of the last NEAR_CAP_DAYS local days (insights.ts reads it). */
export interface NearCapAccountRow {
  id: string;
  workspace_id: string;
  display_name: string;
  channel: string;
  caps: Caps | null;
  time_zone: string;
  warmup_started_at: Date | string | null;
  warmup_skipped_at: Date | string | null;
  plan: string | null;
  plan_status: string | null;
  current_period_end: Date | string | null;
  usage: UsageRow[];
}

export interface NearCapFinding {
  workspace_id: string;
  app_id: null;
  kind: 'account_near_cap';
  subject_id: string;
  title: string;
  detail: Record<string, unknown>;
  action: Record<string, unknown>;
}

const date = (v: Date | string | null) => (v == null ? null : new Date(v));

export function nearCapFindings(rows: NearCapAccountRow[], now: Date): NearCapFinding[] {
  const out: NearCapFinding[] = [];
  for (const r of rows) {
    const account = {
      caps: r.caps ?? {},
      timeZone: r.time_zone,
      warmupStartedAt: date(r.warmup_started_at),
      warmupSkippedAt: date(r.warmup_skipped_at),
    };
    // During warm-up the ramp is the limit by design: being near it is expected, not a finding.
    if (warmupDay(account, now) !== null) continue;
    const sub = r.plan
      ? { plan: r.plan, status: r.plan_status as never, currentPeriodEnd: date(r.current_period_end) }
      : null;
    const planCaps = effectivePlan(sub, now).entitlements.senderCaps;
    const caps = configuredCaps(account, planCaps);
    const today = localDate(now, r.time_zone);
    const since = addDays(today, 1 - NEAR_CAP_DAYS);
    const monday = weekStart(today); // within the 7 days read: the week so far is among them
    const types: Record<string, unknown>[] = [];
    const raise: Caps = {};
    for (const type of ACTION_TYPES) {
      const { daily, weekly } = caps[type];
      const busyDays = r.usage.filter(
        (u) => u.action === type && u.day >= since && u.day <= today && u.count >= NEAR_CAP_SHARE * daily,
      ).length;
      const week = r.usage
        .filter((u) => u.action === type && u.day >= monday && u.day <= today)
        .reduce((n, u) => n + u.count, 0);
      if (busyDays < NEAR_CAP_MIN_DAYS && week < NEAR_CAP_SHARE * weekly) continue;
      const next = raised(caps[type], planCaps[type]);
      types.push({
        action: type,
        busy_days: busyDays,
        days: NEAR_CAP_DAYS,
        week,
        daily,
        weekly,
        plan_daily: planCaps[type].daily,
        plan_weekly: planCaps[type].weekly,
      });
      if (next) raise[type] = next;
    }
    if (!types.length) continue;
    const names = types.map((t) => t.action as ActionType);
    const raisable = Object.keys(raise).length > 0;
    out.push({
      workspace_id: r.workspace_id,
      app_id: null,
      kind: 'account_near_cap',
      subject_id: r.id,
      title: `Sender account "${r.display_name}" is near its ${names.join(', ')} cap${names.length > 1 ? 's' : ''}${raisable ? '' : ' (the plan’s bound)'}`,
      detail: { account_id: r.id, channel: r.channel, types },
      action: raisable
        ? { type: 'raise_account_caps', account_id: r.id, caps: raise }
        : { type: 'add_sender_account', channel: r.channel },
    });
  }
  return out;
}

/** Both caps a quarter higher (at least one more), within the plan's bound; null when nothing can rise. */
function raised(
  cur: { daily: number; weekly: number },
  bound: { daily: number; weekly: number },
): { daily: number; weekly: number } | null {
  const daily = Math.min(bound.daily, Math.max(cur.daily + 1, Math.ceil(cur.daily * CAP_RAISE)));
  const weekly = Math.min(bound.weekly, Math.max(cur.weekly + 1, Math.ceil(cur.weekly * CAP_RAISE), daily));
  return daily > cur.daily || weekly > cur.weekly ? { daily, weekly } : null;
}

/**
 * The suggested caps that are still a raise over what the account has set now (a setting made since
 * the refresh is never lowered). A type the account never set is compared with nothing: the
 * suggestion was computed from the default, so it applies.
 */
export function raisesOnly(suggested: Caps, current: Caps): Caps {
  const out: Caps = {};
  for (const [type, pair] of Object.entries(suggested) as [ActionType, { daily: number; weekly: number }][]) {
    const set = current[type];
    if (!set || pair.daily > set.daily || pair.weekly > set.weekly)
      out[type] = set ? { daily: Math.max(pair.daily, set.daily), weekly: Math.max(pair.weekly, set.weekly) } : pair;
  }
  return out;
}
