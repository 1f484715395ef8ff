/**
 * The credit ledger: the ONE place where credits are granted, held, debited and counted.
 *
 * Design: credits are integers in an append-only table (`credit_ledger`); the balance is the SUM of
 * a workspace's rows (grants > 0, debits and expiries < 0, enforced by a CHECK constraint). There is
 * no mutable balance column. Work in flight holds credits (`credit_holds`, one row per debit key,
 * counted until it expires): what a workspace can spend is its balance minus its live holds. Every
 * write takes a per-workspace transaction-scoped advisory lock
 * (`pg_advisory_xact_lock(hashtext('credits:' || workspace_id))`), so concurrent holds and debits
 * are serialised and the balance minus the holds never goes below zero.
 *
 * How other domains use it:
 * - Pay for work inside the SAME transaction that does the work:
 *     await em.transactional(async (tx) => {
 *       await debitCredits(tx, actor.workspaceId, 1, { key: `agent-msg:${messageId}`, reason: 'Operator message' });
 *       ...the work, written with `tx`...
 *     });
 *   If the work fails the transaction rolls back and the debit with it. A repeated `key` returns the
 *   original debit and writes nothing (idempotent retries). Not enough credits → 402
 *   `insufficient_credits`. Called outside a transaction it opens its own.
 * - Before a paid provider call (a model, the enrichment provider), hold the credits first, in the
 *   transaction that decides the call may run: `holdCredits(tx, workspaceId, n, { key, reason, ttlMs })`
 *   with the key of the debit that will pay for it. The debit with that key consumes the hold;
 *   `releaseCredits` gives it back when the call fails or charges nothing; a hold nobody settles
 *   (its process died) stops counting at its expiry. `withCreditHold` does all three for a call
 *   made within one request or activity.
 * - `await requireCredits(em, workspaceId, n)` checks without holding or debiting (a quote, a bulk
 *   job whose steps hold their own credits) → 402 `insufficient_credits`.
 * - `creditBalance(em, workspaceId)` reads the balance (holds not deducted); `availableCredits`
 *   what can be spent now.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { CreditLedgerEntry, type CreditSource, type ICreditLedgerEntry } from '../../db/entities/CreditLedgerEntry.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { AppError } from '../errors.js';
import { uuidv7 } from '../../lib/ids.js';
import { creditsDebited } from '../../lib/metrics.js';
import { afterCommit } from '../../db/after-commit.js';

/** Serialises credit writes of one workspace until the surrounding transaction ends. */
async function lockWorkspaceCredits(tx: EntityManager, workspaceId: string): Promise<void> {
  await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`credits:${workspaceId}`]);
}

/** Runs `fn` in the caller's transaction if there is one, else in a new one. */
function inTransaction<T>(em: EntityManager, fn: (tx: EntityManager) => Promise<T>): Promise<T> {
  return em.isInTransaction() ? fn(em) : em.transactional(fn);
}

/** Counts `amount` in outreach_credits_debited_total once committed: a debit rolled back with its work (and made again on retry) counts once. */
function countOnCommit(tx: EntityManager, amount: number): void {
  afterCommit(tx, () => creditsDebited.inc(amount));
}

function positiveInt(amount: number): void {
  if (!Number.isSafeInteger(amount) || amount <= 0)
    throw new AppError(400, 'invalid_amount', 'credit amounts are positive integers');
}

export async function creditBalance(em: EntityManager, workspaceId: string): Promise<number> {
  const rows = await em.execute<{ balance: string | number }[]>(
    'select coalesce(sum(amount), 0) as balance from credit_ledger where workspace_id = ?',
    [workspaceId],
  );
  return Number(rows[0].balance);
}

interface Standing {
  balance: number;
  /** Live holds (not expired). */
  held: number;
  available: number;
}

async function standing(em: EntityManager, workspaceId: string): Promise<Standing> {
  const [r] = await em.execute<{ balance: string | number; held: string | number }[]>(
    `select (select coalesce(sum(amount), 0) from credit_ledger where workspace_id = ?) as balance,
            (select coalesce(sum(amount), 0) from credit_holds where workspace_id = ? and expires_at > now()) as held`,
    [workspaceId, workspaceId],
  );
  const balance = Number(r.balance);
  const held = Number(r.held);
  return { balance, held, available: balance - held };
}

/** What the workspace can spend now: its balance minus its live holds. */
export async function availableCredits(em: EntityManager, workspaceId: string): Promise<number> {
  return (await standing(em, workspaceId)).available;
}

/** 402 unless `amount` is available (balance minus live holds); returns what is available. */
export async function requireCredits(em: EntityManager, workspaceId: string, amount: number): Promise<number> {
  const s = await standing(em, workspaceId);
  if (s.available < amount) throw insufficient(s, amount);
  return s.available;
}

const insufficient = (s: Standing, amount: number) =>
  new AppError(
    402,
    'insufficient_credits',
    `not enough credits: ${amount} needed, ${s.available} available${s.held ? ` (${s.held} held by work in progress)` : ''}`,
    { balance: s.balance, held: s.held, required: amount },
  );

async function existing(
  tx: EntityManager,
  workspaceId: string,
  key: string | undefined,
): Promise<ICreditLedgerEntry | null> {
  if (!key) return null;
  return tx.findOne(CreditLedgerEntry, { workspace: workspaceId, idempotencyKey: key });
}

async function dropHolds(tx: EntityManager, workspaceId: string, keys: string[]): Promise<void> {
  await tx.execute(
    'delete from credit_holds where workspace_id = ? and idempotency_key = any(array(select json_array_elements_text(?::json)))',
    [workspaceId, JSON.stringify(keys)],
  );
}

export interface DebitOptions {
  /** Idempotency key, unique per workspace: a repeated key returns the first debit. */
  key?: string;
  reason: string;
}

/**
 * Debits `amount` credits. Returns the ledger row and whether it was written now (`created: false`
 * for a repeated key: the original row, even if the repeat asked for a different amount).
 */
export async function debitCredits(
  em: EntityManager,
  workspaceId: string,
  amount: number,
  opts: DebitOptions,
): Promise<{ entry: ICreditLedgerEntry; created: boolean; balance: number }> {
  positiveInt(amount);
  return inTransaction(em, async (tx) => {
    await lockWorkspaceCredits(tx, workspaceId);
    const prior = await existing(tx, workspaceId, opts.key);
    if (prior) return { entry: prior, created: false, balance: await creditBalance(tx, workspaceId) };
    // The hold taken for this work (same key) becomes this debit: it no longer counts against it.
    if (opts.key) await dropHolds(tx, workspaceId, [opts.key]);
    const s = await standing(tx, workspaceId);
    if (s.available < amount) throw insufficient(s, amount);
    const balance = s.balance;
    const entry = tx.create(CreditLedgerEntry, {
      workspace: tx.getReference(Workspace, workspaceId),
      amount: -amount,
      kind: 'debit',
      source: 'usage',
      reason: opts.reason.slice(0, 500),
      idempotencyKey: opts.key ?? null,
    });
    await tx.flush();
    countOnCommit(tx, amount);
    return { entry, created: true, balance: balance - amount };
  });
}

/** Grants credits (plan period, support, beta rewards). Idempotent by `key` like debits. */
export async function grantCredits(
  em: EntityManager,
  workspaceId: string,
  amount: number,
  opts: { key?: string; reason: string; source: Exclude<CreditSource, 'usage' | 'expiry'> },
): Promise<{ entry: ICreditLedgerEntry; created: boolean; balance: number }> {
  positiveInt(amount);
  return inTransaction(em, async (tx) => {
    await lockWorkspaceCredits(tx, workspaceId);
    const prior = await existing(tx, workspaceId, opts.key);
    if (prior) return { entry: prior, created: false, balance: await creditBalance(tx, workspaceId) };
    const entry = tx.create(CreditLedgerEntry, {
      workspace: tx.getReference(Workspace, workspaceId),
      amount,
      kind: 'grant',
      source: opts.source,
      reason: opts.reason.slice(0, 500),
      idempotencyKey: opts.key ?? null,
    });
    await tx.flush();
    return { entry, created: true, balance: await creditBalance(tx, workspaceId) };
  });
}

/** Ledger rows of a workspace, newest first (optionally only one source). */
export async function ledgerEntries(
  em: EntityManager,
  workspaceId: string,
  filter: { source?: CreditSource } = {},
): Promise<ICreditLedgerEntry[]> {
  return em.find(
    CreditLedgerEntry,
    { workspace: workspaceId, ...(filter.source ? { source: filter.source } : {}) },
    { orderBy: { id: 'desc' } },
  );
}

/**
 * Debits many entries at once, each idempotent by its key (a key already in the ledger is skipped,
 * as with `debitCredits`): one lock, one read of the keys, one multi-row insert, whatever the number
 * of entries. All or nothing: 402 `insufficient_credits` when the balance cannot cover the new ones.
 * Call it inside the transaction of the work it pays for.
 */
export async function debitCreditsBatch(
  em: EntityManager,
  workspaceId: string,
  entries: { key: string; amount: number }[],
  reason: string,
): Promise<{ created: string[]; charged: number; balance: number }> {
  entries.forEach((e) => positiveInt(e.amount));
  return inTransaction(em, async (tx) => {
    await lockWorkspaceCredits(tx, workspaceId);
    const unique = [...new Map(entries.map((e) => [e.key, e])).values()];
    if (!unique.length) return { created: [], charged: 0, balance: await creditBalance(tx, workspaceId) };
    const prior: { idempotency_key: string }[] = await tx.execute(
      'select idempotency_key from credit_ledger where workspace_id = ? and idempotency_key = any(array(select json_array_elements_text(?::json)))',
      [workspaceId, JSON.stringify(unique.map((e) => e.key))],
    );
    const seen = new Set(prior.map((p) => p.idempotency_key));
    const fresh = unique.filter((e) => !seen.has(e.key));
    const charged = fresh.reduce((n, e) => n + e.amount, 0);
    if (fresh.length)
      await dropHolds(
        tx,
        workspaceId,
        fresh.map((e) => e.key),
      );
    const s = await standing(tx, workspaceId);
    if (s.available < charged) throw insufficient(s, charged);
    const balance = s.balance;
    if (fresh.length) {
      await tx.execute(
        `insert into credit_ledger (id, workspace_id, amount, kind, source, reason, idempotency_key, created_at)
         select v.id, ?, -v.amount, 'debit', 'usage', ?, v.key, now() from json_to_recordset(?::json) as v(id uuid, amount int, key text)`,
        [
          workspaceId,
          reason.slice(0, 500),
          JSON.stringify(fresh.map((e) => ({ id: uuidv7(), amount: e.amount, key: e.key }))),
        ],
      );
      countOnCommit(tx, charged);
    }
    return { created: fresh.map((e) => e.key), charged, balance: balance - charged };
  });
}

// ---------------------------------------------------------------------------------------------
// Holds: credits set aside before a paid provider call (docs/plans-and-credits.md, "Holds").

/** How long the hold of a call made within one request or activity counts if its process dies before settling it. */
export const HOLD_TTL_MS = 15 * 60_000;

export interface HoldOptions {
  /** The idempotency key of the debit that will pay for the work: that debit consumes the hold. */
  key: string;
  reason: string;
  /** The hold stops counting this long after it was taken (or last renewed) unless settled before. */
  ttlMs: number;
}

/**
 * Holds `amount` credits for the work `opts.key` will pay for, so the provider is called only for
 * work that can be charged. Holding the same key again renews it (a retry, the next step of a long
 * job); expired holds of the workspace are cleared on the way. Returns `paid` (nothing held) when the
 * key was already debited. 402 `insufficient_credits` when the balance minus the other live holds
 * cannot cover it. Call it in the transaction that records the decision to run (it commits with it).
 */
export async function holdCredits(
  em: EntityManager,
  workspaceId: string,
  amount: number,
  opts: HoldOptions,
): Promise<'held' | 'paid'> {
  positiveInt(amount);
  return inTransaction(em, async (tx) => {
    await lockWorkspaceCredits(tx, workspaceId);
    if (await existing(tx, workspaceId, opts.key)) return 'paid';
    // Lapsed holds count for nothing: the workspace's next hold deletes them (and this key's own,
    // re-inserted below with a fresh expiry).
    await tx.execute(
      'delete from credit_holds where workspace_id = ? and (expires_at <= now() or idempotency_key = ?)',
      [workspaceId, opts.key],
    );
    const s = await standing(tx, workspaceId);
    if (s.available < amount) throw insufficient(s, amount);
    await tx.execute(
      `insert into credit_holds (id, workspace_id, idempotency_key, amount, reason, expires_at, created_at)
       values (?, ?, ?, ?, ?, now() + ? * interval '1 millisecond', now())`,
      [uuidv7(), workspaceId, opts.key, amount, opts.reason.slice(0, 500), Math.max(1, Math.round(opts.ttlMs))],
    );
    return 'held';
  });
}

/** Gives back the hold of `key` (the work failed or charged nothing). A no-op once its debit consumed it. */
export async function releaseCredits(em: EntityManager, workspaceId: string, key: string): Promise<void> {
  // No lock: deleting a hold only makes credits available.
  await em.execute('delete from credit_holds where workspace_id = ? and idempotency_key = ?', [workspaceId, key]);
}

/**
 * A paid provider call made within one request or activity: holds `amount` under `opts.key` (402
 * before `work` runs), runs `work` — which debits with the same key in the transaction recording its
 * result — then releases whatever is still held (the work failed or charged nothing). Free work
 * (`amount` 0) just runs.
 */
export async function withCreditHold<T>(
  em: EntityManager,
  workspaceId: string,
  amount: number,
  opts: HoldOptions,
  work: () => Promise<T>,
): Promise<T> {
  if (amount === 0) return work();
  await holdCredits(em, workspaceId, amount, opts);
  try {
    return await work();
  } finally {
    // A release that fails (the database is gone) leaves the hold to lapse at its expiry.
    await releaseCredits(em, workspaceId, opts.key).catch(() => undefined);
  }
}
