/**
 * The per-account rate governor (docs/governor.md), consulted at send time: a caller asks for a slot
 * for one action of one sender account and gets either a grant, consumed atomically, or the earliest
 * time one may open and why not now.
 *
 * Per request: one statement reads everything the decision needs (account, plan, the governor row's
 * version and gap, this week's counters) in one snapshot; the rules decide in process
 * (domain/governor/rules.ts); a grant is one compare-and-set statement that counts it only if the
 * governor row is still at the version read. A refusal is one statement, a grant two, with no
 * transaction and no lock held between round trips. A lost race reads again, then falls back to
 * the row lock (`for update`), so concurrent callers can never exceed a cap.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { ACTION_TYPES, type ActionType, type IPlatformAccount } from '../../db/entities/PlatformAccount.js';
import { notFound } from '../errors.js';
import { governorRefusals } from '../../lib/metrics.js';
import {
  configuredCaps,
  countsAt,
  earliestSlot,
  effectiveCaps,
  gapMs,
  refusalAt,
  warmupDay,
  WARMUP_DAYS,
  type CapPair,
  type GovernedAccount,
  type GovernorState,
  type RefusalReason,
  type UsageRow,
} from './rules.js';
import { localDate, weekStart } from './time.js';
import { effectivePlan, entitlementsFor } from '../billing/plans.js';

export {
  CONNECTOR_DEFAULT_CAPS,
  DEFAULT_CAPS,
  defaultCaps,
  GAP_LIMITS,
  REFUSAL_REASONS,
  WARMUP_DAYS,
  configuredCaps,
  effectiveCaps,
  rampedCap,
  validateCaps,
  warmupDay,
  type CapPair,
  type CapTable,
  type GovernedAccount,
  type LimitsInput,
  type RefusalReason,
} from './rules.js';
export { nextWorkingTime } from './time.js';

export type SlotAnswer =
  | { granted: true; grantedAt: Date; nextEarliestAt: Date | null }
  /** `retryAt` is null only when no time can be named: not connected, or no working day. */
  | { granted: false; reason: RefusalReason; retryAt: Date | null };

export interface SlotOptions {
  now?: Date;
  /** Source of the jitter, in [0, 1); Math.random unless a test injects one. */
  random?: () => number;
}

interface StateRow {
  workspace_id: string;
  status: string;
  time_zone: string;
  working_hours: GovernedAccount['workingHours'];
  caps: GovernedAccount['caps'];
  min_gap_seconds: number;
  jitter_seconds: number;
  // Raw rows carry timestamps as the driver gives them (strings here): see toDate.
  warmup_started_at: string | Date | null;
  warmup_skipped_at: string | Date | null;
  /** Null when the account has no governor row yet (no request so far). */
  version: number | null;
  next_allowed_at: string | Date | null;
  throttled_until: string | Date | null;
  connector: string;
  plan: string | null;
  plan_status: string | null;
  current_period_end: string | Date | null;
  /** This week's counters, when read in the same statement (the optimistic path). */
  usage?: UsageRow[];
}

const STATE_COLUMNS = `a.workspace_id, a.status, a.time_zone, a.working_hours, a.caps, a.min_gap_seconds, a.jitter_seconds,
    a.warmup_started_at, a.warmup_skipped_at, g.version, g.next_allowed_at, g.throttled_until, a.connector, s.plan, s.status as plan_status, s.current_period_end`;

// Everything a decision needs in one statement, hence one snapshot. Counters of the last eight days
// (from the UTC date): that covers the local ISO week in any zone (the rules ignore older rows).
const READ = `select ${STATE_COLUMNS},
    coalesce((select json_agg(json_build_object('action', u.action, 'day', u.day, 'count', u.count))
      from account_usage u where u.account_id = a.id and u.day >= ?::date), '[]') as usage
  from platform_accounts a
  left join account_governors g on g.account_id = a.id
  left join subscriptions s on s.workspace_id = a.workspace_id
  where a.id = ?`;

// The grant as one compare-and-set statement: the governor row moves to the next version only if it
// is still at the version the decision read (ON CONFLICT DO UPDATE checks the latest committed row,
// waiting for a concurrent writer), and the day's counter goes up only if it did. A new account's
// row is inserted here. Zero rows back: someone else changed the account meanwhile.
const GRANT_IF_UNCHANGED = `with g as (
    insert into account_governors as g (account_id, version, last_action_at, next_allowed_at, updated_at) values (?, 1, ?, ?, ?)
    on conflict (account_id) do update
      set version = g.version + 1, last_action_at = excluded.last_action_at, next_allowed_at = excluded.next_allowed_at, updated_at = excluded.updated_at
      where g.version = ?
    returning account_id
  ), counted as (
    insert into account_usage (account_id, action, day, count) select account_id, ?, ?::date, 1 from g
    on conflict (account_id, action, day) do update set count = account_usage.count + 1
  )
  select count(*)::int as granted from g`;

// The fallback after a lost race: lock the row, then read the counters in a statement of their own
// (a statement's snapshot is taken when it starts, so counters read by the locking statement could
// predate the commit of the request it waited for).
const LOCK = `select ${STATE_COLUMNS}
  from account_governors g
  join platform_accounts a on a.id = g.account_id
  left join subscriptions s on s.workspace_id = a.workspace_id
  where g.account_id = ? for update of g`;

const COUNTERS = `select action, day::text as day, count from account_usage where account_id = ? and day >= ?::date`;

const GRANT = `with counted as (
    insert into account_usage (account_id, action, day, count) values (?, ?, ?::date, 1)
    on conflict (account_id, action, day) do update set count = account_usage.count + 1
  )
  update account_governors set version = version + 1, last_action_at = ?, next_allowed_at = ?, updated_at = ? where account_id = ?`;

const toDate = (v: string | Date | null | undefined): Date | null => (v == null ? null : new Date(v));

function stateOf(r: StateRow, usage: UsageRow[], now: Date): GovernorState {
  const account: GovernedAccount = {
    status: r.status,
    timeZone: r.time_zone,
    workingHours: r.working_hours,
    caps: r.caps ?? {},
    minGapSeconds: r.min_gap_seconds,
    jitterSeconds: r.jitter_seconds,
    warmupStartedAt: toDate(r.warmup_started_at),
    warmupSkippedAt: toDate(r.warmup_skipped_at),
    connector: r.connector,
  };
  const sub = r.plan
    ? { plan: r.plan, status: r.plan_status as never, currentPeriodEnd: toDate(r.current_period_end) }
    : null;
  return {
    account,
    planCaps: effectivePlan(sub, now).entitlements.senderCaps,
    nextAllowedAt: toDate(r.next_allowed_at),
    throttledUntil: toDate(r.throttled_until),
    usage,
  };
}

type Decision = { answer: SlotAnswer; grant?: { day: string; nextAllowedAt: Date } };

function decide(state: GovernorState, action: ActionType, now: Date, random: () => number): Decision {
  const reason = refusalAt(state, action, now);
  if (reason) return { answer: { granted: false, reason, retryAt: earliestSlot(state, action, now) } };
  const day = localDate(now, state.account.timeZone);
  const nextAllowedAt = new Date(now.getTime() + gapMs(state.account, random));
  const after: GovernorState = { ...state, nextAllowedAt, usage: [...state.usage, { action, day, count: 1 }] };
  return {
    answer: { granted: true, grantedAt: now, nextEarliestAt: earliestSlot(after, action, now) },
    grant: { day, nextAllowedAt },
  };
}

// A lost compare-and-set is usually settled by reading again (the winner's gap now refuses); a second
// loss means the account is contended, and the row lock then queues the callers instead.
const OPTIMISTIC_ATTEMPTS = 2;

type Exec = <T = unknown>(sql: string, params: unknown[]) => Promise<T>;

/**
 * Statements on the connection directly, in the caller's transaction when there is one: this hot
 * path has no entities, so it skips the unit of work an `em.transactional` would set up and flush.
 */
function executor(em: EntityManager) {
  const conn = em.getConnection();
  const ctx = em.getTransactionContext();
  const on =
    (trx: typeof ctx): Exec =>
    <R>(sql: string, params: unknown[]) =>
      conn.execute(sql, params, 'all', trx) as Promise<R>;
  return {
    exec: on(ctx),
    transaction: <T>(fn: (exec: Exec) => Promise<T>): Promise<T> =>
      ctx ? fn(on(ctx)) : conn.transactional((trx) => fn(on(trx))),
  };
}

/**
 * Ask for a slot for `action` on account `accountId`. A grant is counted before this returns (in the
 * caller's transaction when there is one). 404 `not_found` for an unknown account.
 *
 * Optimistic first: one read, then (for a grant) one compare-and-set statement; no transaction,
 * no lock held across round trips. A refusal costs the read alone. When the compare-and-set finds
 * that another request changed the account in between, the request reads and decides again; after a
 * second loss it is decided under the account's row lock, which always settles it.
 */
export async function requestSlot(
  em: EntityManager,
  accountId: string,
  action: ActionType,
  opts: SlotOptions = {},
): Promise<SlotAnswer> {
  const answer = await decideSlot(em, accountId, action, opts);
  if (!answer.granted) governorRefusals.inc({ reason: answer.reason });
  return answer;
}

async function decideSlot(
  em: EntityManager,
  accountId: string,
  action: ActionType,
  opts: SlotOptions,
): Promise<SlotAnswer> {
  const random = opts.random ?? Math.random;
  const { exec, transaction } = executor(em);
  const clock = () => opts.now ?? new Date();

  for (let attempt = 0; attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
    const since = new Date(clock().getTime() - 8 * 86_400_000).toISOString().slice(0, 10);
    const [row] = await exec<StateRow[]>(READ, [since, accountId]);
    if (!row) throw notFound('account');
    // The clock is read after the state: a grant committed before the read can never look later than now.
    const now = clock();
    const d = decide(stateOf(row, row.usage ?? [], now), action, now, random);
    if (!d.grant) return d.answer;
    const [cas] = await exec<{ granted: number }[]>(GRANT_IF_UNCHANGED, [
      accountId,
      now,
      d.grant.nextAllowedAt,
      now,
      row.version,
      action,
      d.grant.day,
    ]);
    if (cas.granted) return d.answer;
  }

  return transaction(async (tx) => {
    const [locked] = await tx<StateRow[]>(LOCK, [accountId]);
    if (!locked) throw notFound('account'); // deleted since the read (the lost race created the row)
    // The clock is read once the lock is held: a request that queued behind another must not decide
    // at a time earlier than the grant it waited for.
    const now = clock();
    const usage = await tx<UsageRow[]>(COUNTERS, [accountId, weekStart(localDate(now, locked.time_zone))]);
    const d = decide(stateOf(locked, usage, now), action, now, random);
    if (d.grant) await tx(GRANT, [accountId, action, d.grant.day, now, d.grant.nextAllowedAt, now, accountId]);
    return d.answer;
  });
}

/**
 * Give back a granted slot whose action never reached the connector: the day's count goes down by
 * one and, unless a later slot was granted since, the gap it started is lifted. Not idempotent by
 * itself: call it once, in the transaction that records the action as not sent.
 */
export async function releaseSlot(
  em: EntityManager,
  accountId: string,
  action: ActionType,
  grantedAt: Date,
): Promise<void> {
  await em.execute(
    `with released as (
       update account_usage u set count = u.count - 1
       from platform_accounts a
       where a.id = u.account_id and u.account_id = ? and u.action = ? and u.count > 0
         and u.day = (?::timestamptz at time zone a.time_zone)::date
     )
     update account_governors set version = version + 1, next_allowed_at = last_action_at, updated_at = now() where account_id = ? and last_action_at = ?`,
    [accountId, action, grantedAt, accountId, grantedAt],
  );
}

/**
 * The connector answered the account "rate limited" (docs/governor.md "Throttled by the provider"): no
 * slot of any type before `until` (refusal `throttled`). A later throttle extends it, an earlier one
 * never shortens it; the version moves on, so a decision read before it loses its compare-and-set.
 * Returns the time the account is throttled until.
 */
export async function throttleAccount(em: EntityManager, accountId: string, until: Date): Promise<Date> {
  const [r] = await em.execute<{ throttled_until: string | Date }[]>(
    `insert into account_governors as g (account_id, version, throttled_until, updated_at) values (?, 1, ?, now())
     on conflict (account_id) do update
       set version = g.version + 1, throttled_until = greatest(g.throttled_until, excluded.throttled_until), updated_at = now()
     returning throttled_until`,
    [accountId, until],
  );
  return new Date(r.throttled_until);
}

export interface ActionUsage {
  action: ActionType;
  /** Slots granted on the account's current local day and ISO week. */
  today: number;
  week: number;
  /** Caps in force now (warm-up applied) and the configured caps they ramp to. */
  caps: CapPair;
  fullCaps: CapPair;
  /** Day n of WARMUP_DAYS while warm-up applies, else null. */
  warmup: { day: number; of: number } | null;
  /** When a request for this type could next be granted; null when not connected. */
  nextSlotAt: Date | null;
}

/** The account's counters and limits per action type, as the account routes show them. */
export async function usage(em: EntityManager, account: IPlatformAccount, now = new Date()): Promise<ActionUsage[]> {
  const plan = (await entitlementsFor(em, account.workspace.id)).entitlements.senderCaps;
  const [gov]: { next_allowed_at: string | Date | null; throttled_until: string | Date | null }[] = await em.execute(
    'select next_allowed_at, throttled_until from account_governors where account_id = ?',
    [account.id],
  );
  const rows: UsageRow[] = await em.execute(COUNTERS, [account.id, weekStart(localDate(now, account.timeZone))]);
  const state: GovernorState = {
    account,
    planCaps: plan,
    nextAllowedAt: toDate(gov?.next_allowed_at),
    throttledUntil: toDate(gov?.throttled_until),
    usage: rows,
  };
  const caps = effectiveCaps(account, plan, now);
  const full = configuredCaps(account, plan);
  const day = warmupDay(account, now);
  return ACTION_TYPES.map((action) => ({
    action,
    ...countsAt(state, action, now),
    caps: caps[action],
    fullCaps: full[action],
    warmup: day === null ? null : { day, of: WARMUP_DAYS },
    nextSlotAt: earliestSlot(state, action, now),
  }));
}
