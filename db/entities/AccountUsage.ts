import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { PlatformAccount } from './PlatformAccount.js';

// Slots granted per account, action type and local calendar day (the account's time zone). A week's
// count is the sum of its ISO week's days (at most seven rows), so no second counter can drift.
export const AccountUsage = defineEntity({
  name: 'AccountUsage',
  tableName: 'account_usage',
  checks: [{ name: 'account_usage_count_non_negative', expression: '"count" >= 0' }],
  properties: (p) => ({
    account: p.manyToOne(PlatformAccount).primary().ref().deleteRule('cascade'),
    action: p.string().length(20).primary(),
    day: p.date().primary(),
    count: p.integer().default(0),
  }),
});
export type IAccountUsage = InferEntity<typeof AccountUsage>;
