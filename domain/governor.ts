/**
 * The per-account rate governor (docs/governor.md), consulted at send time: a caller asks for a slot
 * for one action of one sender account and gets either a grant, consumed atomically, or the earliest
 * time one may open and why not now.
 *
 * One transaction per request: lock the account's `account_governors` row `for update`, read this
 * week's counters, decide (domain/governor-rules.ts), and on a grant count it and push the gap
 * forward. Requests for one account queue on its row lock, so concurrent callers can never exceed a
 * cap; different accounts never wait for each other. Four statements at most (lock, counters,
 * write, plus a one-off insert of the row on the account's first request) between BEGIN and COMMIT.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { ACTION_TYPES, type ActionType, type IPlatformAccount } from '../db/entities/PlatformAccount.js';
import { notFound } from './errors.js';
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
} from './governor-rules.js';
import { localDate, weekStart } from './governor-time.js';
import { effectivePlan, entitlementsFor } from './plans.js';

export {
  DEFAULT_CAPS,
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
} from './governor-rules.js';
export { nextWorkingTime } from './governor-time.js';

export type SlotAnswer =
  | { granted: true; grantedAt: Date; nextEarliestAt: Date | null }
  /** `retryAt` is null only when no time can be named: not connected, or no working day. */
  | { granted: false; reason: RefusalReason; retryAt: Date | null };

export interface SlotOptions {
  now?: Date;
  /** Source of the jitter, in [0, 1); Math.random unless a test injects one. */
  random?: () => number;
}

interface LockedRow {
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
  next_allowed_at: string | Date | null;
  plan: string | null;
  plan_status: string | null;
  current_period_end: string | Date | null;
}

// The account, its plan and the governor row, locking only the latter: account edits and plan
// changes are not blocked, and a request sees them from the next one on.
const LOCK = `select a.workspace_id, a.status, a.time_zone, a.working_hours, a.caps, a.min_gap_seconds, a.jitter_seconds,
    a.warmup_started_at, a.warmup_skipped_at, g.next_allowed_at, s.plan, s.status as plan_status, s.current_period_end
  from account_governors g
  join platform_accounts a on a.id = g.account_id
  left join subscriptions s on s.workspace_id = a.workspace_id
  where g.account_id = ? for update of g`;

// Its own statement, after the lock: a statement's snapshot is taken when it starts, so counters read
// in the locking statement could predate the commit of the request it waited for.
const COUNTERS = `select action, day::text as day, count from account_usage where account_id = ? and day >= ?::date`;

const GRANT = `with counted as (
    insert into account_usage (account_id, action, day, count) values (?, ?, ?::date, 1)
    on conflict (account_id, action, day) do update set count = account_usage.count + 1
  )
  update account_governors set last_action_at = ?, next_allowed_at = ?, updated_at = ? where account_id = ?`;

const toDate = (v: string | Date | null | undefined): Date | null => (v == null ? null : new Date(v));

const toAccount = (r: LockedRow): GovernedAccount => ({
  status: r.status,
  timeZone: r.time_zone,
  workingHours: r.working_hours,
  caps: r.caps ?? {},
  minGapSeconds: r.min_gap_seconds,
  jitterSeconds: r.jitter_seconds,
  warmupStartedAt: toDate(r.warmup_started_at),
  warmupSkippedAt: toDate(r.warmup_skipped_at),
});

async function inTransaction<T>(em: EntityManager, fn: (tx: EntityManager) => Promise<T>): Promise<T> {
  return em.isInTransaction() ? fn(em) : em.transactional(fn);
}

/**
 * Ask for a slot for `action` on account `accountId`. A grant is counted before this returns (in the
 * caller's transaction when there is one, else in its own). 404 `not_found` for an unknown account.
 */
export async function requestSlot(em: EntityManager, accountId: string, action: ActionType, opts: SlotOptions = {}): Promise<SlotAnswer> {
  const now = opts.now ?? new Date();
  const random = opts.random ?? Math.random;
  return inTransaction(em, async (tx) => {
    let [row]: LockedRow[] = await tx.execute(LOCK, [accountId]);
    if (!row) {
      // First request of this account: create its row (a concurrent first request may win the race).
      await tx.execute(
        'insert into account_governors (account_id, updated_at) select id, ? from platform_accounts where id = ? on conflict do nothing',
        [now, accountId],
      );
      [row] = await tx.execute(LOCK, [accountId]);
      if (!row) throw notFound('account');
    }
    const account = toAccount(row);
    const plan = effectivePlan(row.plan ? { plan: row.plan, status: row.plan_status as never, currentPeriodEnd: toDate(row.current_period_end) } : null, now);
    const today = row.status === 'connected' ? localDate(now, account.timeZone) : null;
    const usage: UsageRow[] = today ? await tx.execute(COUNTERS, [accountId, weekStart(today)]) : [];
    const state: GovernorState = { account, planCaps: plan.entitlements.senderCaps, nextAllowedAt: toDate(row.next_allowed_at), usage };

    const reason = refusalAt(state, action, now);
    if (reason) return { granted: false, reason, retryAt: earliestSlot(state, action, now) };

    const nextAllowedAt = new Date(now.getTime() + gapMs(account, random));
    await tx.execute(GRANT, [accountId, action, today, now, nextAllowedAt, now, accountId]);
    const after: GovernorState = { ...state, nextAllowedAt, usage: [...usage, { action, day: today!, count: 1 }] };
    return { granted: true, grantedAt: now, nextEarliestAt: earliestSlot(after, action, now) };
  });
}

/**
 * Give back a granted slot whose action never reached the connector: the day's count goes down by
 * one and, unless a later slot was granted since, the gap it started is lifted. Not idempotent by
 * itself: call it once, in the transaction that records the action as not sent.
 */
export async function releaseSlot(em: EntityManager, accountId: string, action: ActionType, grantedAt: Date): Promise<void> {
  await em.execute(
    `with released as (
       update account_usage u set count = u.count - 1
       from platform_accounts a
       where a.id = u.account_id and u.account_id = ? and u.action = ? and u.count > 0
         and u.day = (?::timestamptz at time zone a.time_zone)::date
     )
     update account_governors set next_allowed_at = last_action_at, updated_at = now() where account_id = ? and last_action_at = ?`,
    [accountId, action, grantedAt, accountId, grantedAt],
  );
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
  const [gov]: { next_allowed_at: string | Date | null }[] = await em.execute('select next_allowed_at from account_governors where account_id = ?', [account.id]);
  const rows: UsageRow[] = await em.execute(COUNTERS, [account.id, weekStart(localDate(now, account.timeZone))]);
  const state: GovernorState = { account, planCaps: plan, nextAllowedAt: toDate(gov?.next_allowed_at), usage: rows };
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
