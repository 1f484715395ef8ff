import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { Workspace } from './Workspace.js';

export const SUBSCRIPTION_STATUSES = ['active', 'none', 'past_due', 'canceled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

// The plan of a workspace (one row at most; no row = the free plan with status `none`). Purchases
// happen in the web app; here it is set by support staff (`npm run admin -- set-plan`). The plan id
// is a key of the catalog in domain/billing/plans.ts.
export const Subscription = defineEntity({
  name: 'Subscription',
  tableName: 'subscriptions',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().unique().deleteRule('cascade'),
    plan: p.string().length(32),
    status: p.enum([...SUBSCRIPTION_STATUSES]),
    currentPeriodEnd: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }),
});
export type ISubscription = InferEntity<typeof Subscription>;
