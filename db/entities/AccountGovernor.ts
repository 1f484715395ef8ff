import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { PlatformAccount } from './PlatformAccount.js';

// The rate governor's per-account row (domain/governor.ts). Every slot request locks it `for update`,
// so the requests of one account are serialised while other accounts proceed in parallel. Created
// lazily by the first request.
export const AccountGovernor = defineEntity({
  name: 'AccountGovernor',
  tableName: 'account_governors',
  properties: (p) => ({
    account: p.manyToOne(PlatformAccount).primary().ref().deleteRule('cascade'),
    /** When the last slot was granted (any action type). */
    lastActionAt: p.datetime().nullable(),
    /** The last grant plus the minimum gap and its jitter: no slot before this. */
    nextAllowedAt: p.datetime().nullable(),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  }),
});
export type IAccountGovernor = InferEntity<typeof AccountGovernor>;
