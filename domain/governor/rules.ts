/**
 * The governor's rules as pure functions (no database): default caps, plan clamping, the warm-up
 * ramp, validation of user-set limits, and the decision for one request given the account's
 * counters. domain/governor/governor.ts feeds them the rows it read under the account's lock.
 */
import { ACTION_TYPES, type ActionType, type Caps, type IPlatformAccount } from '../../db/entities/PlatformAccount.js';
import { AppError } from '../errors.js';
import {
  addDays,
  daysBetween,
  localDate,
  nextWorkingTime,
  startOfNextDay,
  startOfNextWeek,
  weekStart,
  type LocalDate,
} from './time.js';

export interface CapPair {
  daily: number;
  weekly: number;
}
export type CapTable = Record<ActionType, CapPair>;

/** The account fields the governor reads. */
export type GovernedAccount = Pick<
  IPlatformAccount,
  | 'status'
  | 'timeZone'
  | 'workingHours'
  | 'caps'
  | 'minGapSeconds'
  | 'jitterSeconds'
  | 'warmupStartedAt'
  | 'warmupSkippedAt'
> & {
  /** The connector that holds it (its defaults: CONNECTOR_DEFAULT_CAPS); absent: DEFAULT_CAPS. */
  connector?: string;
};

export const REFUSAL_REASONS = [
  'not_connected',
  /** The connector answered a send "rate limited" (docs/governor.md "Throttled by the provider"). */
  'throttled',
  'cap_weekly',
  'cap_daily',
  'warmup',
  'outside_hours',
  'gap',
] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** Caps of an account that set none for a type; within the free plan's bounds, so valid on every plan. */
export const DEFAULT_CAPS: CapTable = {
  email: { daily: 40, weekly: 200 },
  invitation: { daily: 15, weekly: 75 },
  message: { daily: 40, weekly: 200 },
  profile_view: { daily: 60, weekly: 300 },
};

/**
 * Defaults of the accounts a connector holds, where its service names lower limits than DEFAULT_CAPS
 * allows (docs/governor.md): an account's own caps override them, the plan bounds them. Unipile's
 * LinkedIn accounts: invitations spread over working days within LinkedIn's weekly quota (Unipile
 * recommends at most ~100 a day and 200 a week for a paid account, far fewer for a new one), messages
 * and profile views within its daily guidance (80–100 views a day).
 */
export const CONNECTOR_DEFAULT_CAPS: Readonly<Record<string, Partial<CapTable>>> = {
  unipile: {
    invitation: { daily: 20, weekly: 100 },
    message: { daily: 80, weekly: 400 },
    profile_view: { daily: 80, weekly: 400 },
  },
};

/** The default caps of an account held by `connector` (DEFAULT_CAPS, with the connector's own where it has them). */
export const defaultCaps = (connector: string | null | undefined): CapTable => ({
  ...DEFAULT_CAPS,
  ...(connector ? CONNECTOR_DEFAULT_CAPS[connector] : undefined),
});

/** Allowed ranges of the account's gap settings, in seconds. */
export const GAP_LIMITS = { minGapSeconds: { min: 30, max: 3600 }, jitterSeconds: { min: 0, max: 1800 } } as const;

/** Warm-up lasts this many local calendar days, the day it started being day 1. */
export const WARMUP_DAYS = 14;

/**
 * Day n of warm-up (1 … 14) at `now`, or null when it does not apply: never started, skipped, or
 * over (from day 15). Days are the account's local calendar days.
 */
export function warmupDay(
  account: Pick<GovernedAccount, 'timeZone' | 'warmupStartedAt' | 'warmupSkippedAt'>,
  now: Date,
): number | null {
  if (!account.warmupStartedAt || account.warmupSkippedAt) return null;
  const n = Math.max(
    1,
    daysBetween(localDate(account.warmupStartedAt, account.timeZone), localDate(now, account.timeZone)) + 1,
  );
  return n <= WARMUP_DAYS ? n : null;
}

/**
 * A cap on warm-up day n: 20 % on day 1 rising linearly to 100 % on day 14, i.e.
 * floor(cap × (20 + 80·(n−1)/13) / 100), and at least 1. Integer arithmetic, so day 14 is exact.
 */
export const rampedCap = (cap: number, day: number): number =>
  Math.max(1, Math.floor((cap * (260 + 80 * (day - 1))) / 1300));

/** The account's own caps (its setting, else the default) clamped to the plan's bounds. */
export function configuredCaps(
  account: Pick<GovernedAccount, 'caps'> & { connector?: string },
  planCaps: CapTable,
): CapTable {
  const out = {} as CapTable;
  const defaults = defaultCaps(account.connector);
  for (const type of ACTION_TYPES) {
    const set = account.caps?.[type] ?? defaults[type];
    // A downgraded plan lowers the bound under an earlier setting: the plan wins.
    const weekly = Math.min(set.weekly, planCaps[type].weekly);
    out[type] = { daily: Math.min(set.daily, planCaps[type].daily, weekly), weekly };
  }
  return out;
}

/** Caps in force at `now`: configured caps, ramped while warm-up applies. */
export function effectiveCaps(
  account: Pick<GovernedAccount, 'caps' | 'timeZone' | 'warmupStartedAt' | 'warmupSkippedAt'> & { connector?: string },
  planCaps: CapTable,
  now: Date,
): CapTable {
  const caps = configuredCaps(account, planCaps);
  const day = warmupDay(account, now);
  if (day === null) return caps;
  const out = {} as CapTable;
  for (const type of ACTION_TYPES)
    out[type] = { daily: rampedCap(caps[type].daily, day), weekly: rampedCap(caps[type].weekly, day) };
  return out;
}

export interface LimitsInput {
  caps?: Caps;
  minGapSeconds?: number;
  jitterSeconds?: number;
}

/**
 * 400 `invalid_limits` unless every cap is an integer in 1 … the plan's maximum, weekly ≥ daily,
 * and the gap settings are within GAP_LIMITS. `details` lists each offending field (API names) with
 * its allowed range.
 */
export function validateCaps(input: LimitsInput, planCaps: CapTable): void {
  const issues: { path: string; message: string; min?: number; max?: number }[] = [];
  const check = (path: string, value: unknown, min: number, max: number) => {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      issues.push({ path, message: `must be an integer from ${min} to ${max}`, min, max });
      return false;
    }
    return true;
  };
  for (const [type, pair] of Object.entries(input.caps ?? {})) {
    if (!(ACTION_TYPES as readonly string[]).includes(type)) {
      issues.push({ path: `caps.${type}`, message: `unknown action type; types: ${ACTION_TYPES.join(', ')}` });
      continue;
    }
    const bound = planCaps[type as ActionType];
    const dailyOk = check(`caps.${type}.daily`, pair?.daily, 1, bound.daily);
    const weeklyOk = check(`caps.${type}.weekly`, pair?.weekly, 1, bound.weekly);
    if (dailyOk && weeklyOk && pair.weekly < pair.daily) {
      issues.push({
        path: `caps.${type}.weekly`,
        message: 'must be at least the daily cap',
        min: pair.daily,
        max: bound.weekly,
      });
    }
  }
  if (input.minGapSeconds !== undefined)
    check('min_gap_seconds', input.minGapSeconds, GAP_LIMITS.minGapSeconds.min, GAP_LIMITS.minGapSeconds.max);
  if (input.jitterSeconds !== undefined)
    check('jitter_seconds', input.jitterSeconds, GAP_LIMITS.jitterSeconds.min, GAP_LIMITS.jitterSeconds.max);
  if (issues.length) {
    throw new AppError(
      400,
      'invalid_limits',
      `limits out of range: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`,
      issues,
    );
  }
}

/** Slots granted on one local day. */
export interface UsageRow {
  action: string;
  day: LocalDate;
  count: number;
}

/** What the governor knows about one account when it decides. */
export interface GovernorState {
  account: GovernedAccount;
  planCaps: CapTable;
  nextAllowedAt: Date | null;
  /** The connector asked the account to slow down until then (a rate-limited send); absent or null: it did not. */
  throttledUntil?: Date | null;
  /** Rows of the current ISO week (earlier rows are ignored). */
  usage: UsageRow[];
}

export function countsAt(state: GovernorState, action: ActionType, at: Date): { today: number; week: number } {
  const today = localDate(at, state.account.timeZone);
  const monday = weekStart(today);
  const sunday = addDays(monday, 6);
  let day = 0;
  let week = 0;
  for (const r of state.usage) {
    if (r.action !== action || r.day < monday || r.day > sunday) continue;
    week += r.count;
    if (r.day === today) day += r.count;
  }
  return { today: day, week };
}

/** Why a request at `now` cannot be granted, or null when it can. Caps first: they wait longest. */
export function refusalAt(state: GovernorState, action: ActionType, now: Date): RefusalReason | null {
  const { account } = state;
  if (account.status !== 'connected') return 'not_connected';
  if (state.throttledUntil && state.throttledUntil > now) return 'throttled';
  const caps = effectiveCaps(account, state.planCaps, now);
  const full = configuredCaps(account, state.planCaps);
  const { today, week } = countsAt(state, action, now);
  if (week >= caps[action].weekly) return week < full[action].weekly ? 'warmup' : 'cap_weekly';
  if (today >= caps[action].daily) return today < full[action].daily ? 'warmup' : 'cap_daily';
  if (nextWorkingTime(account, now)?.getTime() !== now.getTime()) return 'outside_hours';
  if (state.nextAllowedAt && state.nextAllowedAt > now) return 'gap';
  return null;
}

/**
 * The earliest instant ≥ `from` at which a request for `action` would be granted, assuming nothing
 * else is granted meanwhile: after the gap, in working hours, on a day and week with room under the
 * caps in force then. Null for an account that is not connected or has no working day.
 */
export function earliestSlot(state: GovernorState, action: ActionType, from: Date): Date | null {
  const { account } = state;
  if (account.status !== 'connected') return null;
  let t = from;
  for (const bound of [state.nextAllowedAt, state.throttledUntil]) if (bound && bound > t) t = bound;
  // Each step moves t to a later day, week or opening; a handful settle any combination.
  for (let i = 0; i < 32; i++) {
    const caps = effectiveCaps(account, state.planCaps, t)[action];
    const { today, week } = countsAt(state, action, t);
    if (week >= caps.weekly) t = startOfNextWeek(t, account.timeZone);
    else if (today >= caps.daily) t = startOfNextDay(t, account.timeZone);
    else {
      const open = nextWorkingTime(account, t);
      if (!open || open.getTime() === t.getTime()) return open;
      t = open;
    }
  }
  return null;
}

/** The gap after a grant: the minimum plus `random()` × jitter, in whole milliseconds. */
export const gapMs = (
  account: Pick<GovernedAccount, 'minGapSeconds' | 'jitterSeconds'>,
  random: () => number,
): number => Math.round((account.minGapSeconds + random() * account.jitterSeconds) * 1000);
