import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { PlatformAccount } from './PlatformAccount.js';

// The rate governor's per-account row (domain/governor/governor.ts). Every grant moves `version` on in the
// statement that counts it, so a request that decided on an older version loses its compare-and-set
// and decides again under this row's lock. Created by the account's first grant.
export const AccountGovernor = defineEntity({
  name: 'AccountGovernor',
  tableName: 'account_governors',
  properties: (p) => ({
    account: p.manyToOne(PlatformAccount).primary().ref().deleteRule('cascade'),
    /** Bumped by every grant and release. */
    version: p.integer().default(0),
    /** When the last slot was granted (any action type). */
    lastActionAt: p.datetime().nullable(),
    /** The last grant plus the minimum gap and its jitter: no slot before this. */
    nextAllowedAt: p.datetime().nullable(),
    /** The connector answered "rate limited": no slot of any type before this (docs/governor.md). */
    throttledUntil: p.datetime().nullable(),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type IAccountGovernor = InferEntity<typeof AccountGovernor>;
