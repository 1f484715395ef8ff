import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';

// Credits set aside for work in flight (a paid provider call) until the work is charged or given up
// (docs/plans-and-credits.md, "Holds"). The key is the idempotency key of the debit the hold becomes;
// a hold past `expiresAt` no longer counts. Rows are only written by domain/billing/credits.ts, under
// the workspace's credit lock.
export const CreditHold = defineEntity({
  name: 'CreditHold',
  tableName: 'credit_holds',
  uniques: [{ properties: ['workspace', 'idempotencyKey'] }],
  // Summed (the live ones) on every credit check, like the ledger.
  indexes: [
    {
      name: 'credit_holds_workspace_id_amount_index',
      expression:
        'create index "credit_holds_workspace_id_amount_index" on "credit_holds" ("workspace_id") include ("amount", "expires_at")',
    },
  ],
  checks: [{ name: 'credit_holds_amount_positive', expression: 'amount > 0' }],
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade'),
    idempotencyKey: p.string().length(200),
    amount: p.integer(),
    reason: p.string().length(500),
    expiresAt: p.datetime(),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type ICreditHold = InferEntity<typeof CreditHold>;
