// Direct set-up of plan and credit states (purchases happen in the web app, not through this API).
import { Workspace } from '../../db/entities/Workspace.js';
import type { SubscriptionStatus } from '../../db/entities/Subscription.js';
import { grantCredits } from '../../domain/billing/credits.js';
import { setPlan } from '../../domain/billing/plans.js';
import { api, createUser, type TestUser } from './api.js';

export async function em() {
  return (await api()).services.orm.em.fork();
}

export async function workspaceIdOf(userId: string): Promise<string> {
  return (await (await em()).findOneOrFail(Workspace, { owner: userId })).id;
}

export async function setUserPlan(
  userId: string,
  plan: string,
  opts: { status?: SubscriptionStatus; currentPeriodEnd?: Date | null } = {},
) {
  return setPlan(await em(), await workspaceIdOf(userId), plan, opts);
}

export async function grant(
  userId: string,
  amount: number,
  source: 'admin' | 'beta_reward' | 'plan' = 'admin',
  reason = 'test grant',
) {
  return grantCredits(await em(), await workspaceIdOf(userId), amount, { reason, source });
}

/** A user whose workspace is on the `pro` plan, for tests that need a team or several products. */
export async function createOwner(name?: string): Promise<TestUser> {
  const u = await createUser(name);
  await setUserPlan(u.id, 'pro');
  return u;
}
