import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';

export const CREDIT_KINDS = ['grant', 'debit', 'expire'] as const;
export type CreditKind = (typeof CREDIT_KINDS)[number];
/** Where a grant came from (debits: `usage`). */
export const CREDIT_SOURCES = ['plan', 'admin', 'beta_reward', 'usage', 'expiry'] as const;
export type CreditSource = (typeof CREDIT_SOURCES)[number];

// Append-only credit ledger: the balance of a workspace is SUM(amount). Grants are positive, debits
// and expiries negative. Rows are only written by domain/billing/credits.ts, under a per-workspace lock.
export const CreditLedgerEntry = defineEntity({
  name: 'CreditLedgerEntry',
  tableName: 'credit_ledger',
  uniques: [{ properties: ['workspace', 'idempotencyKey'] }],
  // The balance is summed on every check: covering the amount makes that an index-only scan (a
  // workspace with 200k rows: 8.5 ms against 56 ms through a plain workspace_id index).
  indexes: [
    {
      name: 'credit_ledger_workspace_id_amount_index',
      expression:
        'create index "credit_ledger_workspace_id_amount_index" on "credit_ledger" ("workspace_id") include ("amount")',
    },
  ],
  checks: [
    {
      name: 'credit_ledger_amount_sign',
      expression: "(kind = 'grant' and amount > 0) or (kind <> 'grant' and amount < 0)",
    },
  ],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    amount: p.integer(),
    kind: p.enum([...CREDIT_KINDS]),
    source: p.enum([...CREDIT_SOURCES]),
    reason: p.string().length(500),
    idempotencyKey: p.string().length(200).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type ICreditLedgerEntry = InferEntity<typeof CreditLedgerEntry>;
