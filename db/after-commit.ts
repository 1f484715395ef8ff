// Work to run once a transaction has committed, never when it rolls back: `afterCommit(em, fn)` runs
// `fn` at once outside a transaction, else when the outermost transaction around `em` commits (the
// subscriber below is registered in db/mikro-orm.config.ts). For side effects outside PostgreSQL that
// must follow the data, e.g. counting a credit debit in lib/metrics.ts.
import type { EntityManager, EventSubscriber, Knex, TransactionEventArgs } from '@mikro-orm/postgresql';

const pending = new WeakMap<object, (() => void)[]>();

export function afterCommit(em: EntityManager, fn: () => void): void {
  let trx = em.getTransactionContext<Knex.Transaction>();
  if (!trx) return fn();
  while (trx.parentTransaction) trx = trx.parentTransaction; // a savepoint commits nothing yet
  const fns = pending.get(trx) ?? [];
  fns.push(fn);
  pending.set(trx, fns);
}

export class AfterCommitHooks implements EventSubscriber {
  afterTransactionCommit(args: TransactionEventArgs): void {
    const fns = args.transaction ? pending.get(args.transaction) : undefined;
    if (!fns) return;
    pending.delete(args.transaction!);
    for (const fn of fns) fn();
  }

  afterTransactionRollback(args: TransactionEventArgs): void {
    if (args.transaction) pending.delete(args.transaction);
  }
}
