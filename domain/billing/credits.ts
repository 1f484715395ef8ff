/**
 * The credit ledger: the ONE place where credits are granted, debited and counted.
 *
 * Design: credits are integers in an append-only table (`credit_ledger`); the balance is the SUM of
 * a workspace's rows (grants > 0, debits and expiries < 0, enforced by a CHECK constraint). There is
 * no mutable balance column. Every write takes a per-workspace transaction-scoped advisory lock
 * (`pg_advisory_xact_lock(hashtext('credits:' || workspace_id))`), so concurrent debits are
 * serialised and can never overdraw.
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
 * - `await requireCredits(em, workspaceId, n)` checks without debiting (e.g. before starting a
 *   workflow whose activity will debit later) → 402 `insufficient_credits`.
 * - `creditBalance(em, workspaceId)` reads the balance.
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
  if (!Number.isSafeInteger(amount) || amount <= 0) throw new AppError(400, 'invalid_amount', 'credit amounts are positive integers');
}

export async function creditBalance(em: EntityManager, workspaceId: string): Promise<number> {
  const rows = await em.execute<{ balance: string | number }[]>('select coalesce(sum(amount), 0) as balance from credit_ledger where workspace_id = ?', [workspaceId]);
  return Number(rows[0].balance);
}

export async function requireCredits(em: EntityManager, workspaceId: string, amount: number): Promise<number> {
  const balance = await creditBalance(em, workspaceId);
  if (balance < amount) throw insufficient(balance, amount);
  return balance;
}

const insufficient = (balance: number, amount: number) =>
  new AppError(402, 'insufficient_credits', `not enough credits: ${amount} needed, ${balance} available`, { balance, required: amount });

async function existing(tx: EntityManager, workspaceId: string, key: string | undefined): Promise<ICreditLedgerEntry | null> {
  if (!key) return null;
  return tx.findOne(CreditLedgerEntry, { workspace: workspaceId, idempotencyKey: key });
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
    const balance = await creditBalance(tx, workspaceId);
    if (balance < amount) throw insufficient(balance, amount);
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
export async function ledgerEntries(em: EntityManager, workspaceId: string, filter: { source?: CreditSource } = {}): Promise<ICreditLedgerEntry[]> {
  return em.find(CreditLedgerEntry, { workspace: workspaceId, ...(filter.source ? { source: filter.source } : {}) }, { orderBy: { id: 'desc' } });
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
    const balance = await creditBalance(tx, workspaceId);
    if (!unique.length) return { created: [], charged: 0, balance };
    const prior: { idempotency_key: string }[] = await tx.execute(
      'select idempotency_key from credit_ledger where workspace_id = ? and idempotency_key = any(array(select json_array_elements_text(?::json)))',
      [workspaceId, JSON.stringify(unique.map((e) => e.key))],
    );
    const seen = new Set(prior.map((p) => p.idempotency_key));
    const fresh = unique.filter((e) => !seen.has(e.key));
    const charged = fresh.reduce((n, e) => n + e.amount, 0);
    if (balance < charged) throw insufficient(balance, charged);
    if (fresh.length) {
      await tx.execute(
        `insert into credit_ledger (id, workspace_id, amount, kind, source, reason, idempotency_key, created_at)
         select v.id, ?, -v.amount, 'debit', 'usage', ?, v.key, now() from json_to_recordset(?::json) as v(id uuid, amount int, key text)`,
        [workspaceId, reason.slice(0, 500), JSON.stringify(fresh.map((e) => ({ id: uuidv7(), amount: e.amount, key: e.key })))],
      );
      countOnCommit(tx, charged);
    }
    return { created: fresh.map((e) => e.key), charged, balance: balance - charged };
  });
}
