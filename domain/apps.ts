// Products (apps) of a workspace. Minimal here; the products issue extends it.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { requireWithinLimit } from './plans.js';
import { App, type IApp } from '../db/entities/App.js';
import { Workspace } from '../db/entities/Workspace.js';
import { AppError, notFound } from './errors.js';
import { canAccessApp, type Actor } from './identity.js';
import type { PageRequest } from '../lib/pagination.js';

export async function listApps(em: EntityManager, actor: Actor, page: PageRequest): Promise<IApp[]> {
  const id: { $gt?: string; $in?: string[] } = {};
  if (page.after) id.$gt = page.after;
  if (!actor.allApps) id.$in = actor.appIds;
  return em.find(App, { workspace: actor.workspaceId, ...(page.after || !actor.allApps ? { id } : {}) }, { orderBy: { id: 'asc' }, limit: page.limit + 1 });
}

/** Loads a product of the actor's workspace: 404 if it is not there, 403 if the member lacks access. */
export async function requireApp(em: EntityManager, actor: Actor, appId: string): Promise<IApp> {
  const app = await em.findOne(App, { id: appId, workspace: actor.workspaceId });
  if (!app) throw notFound('app');
  if (!canAccessApp(actor, app.id)) throw new AppError(403, 'not_assigned', 'you have no access to this product');
  return app;
}

export async function createApp(
  em: EntityManager,
  actor: Actor,
  input: { name: string; description?: string | null; website_url?: string | null },
): Promise<IApp> {
  // Members with access to only some products may not add new ones to the owner's workspace.
  if (actor.actingAs && actor.role === 'member') throw new AppError(403, 'not_assigned', 'only owners and admins can create products');
  return em.transactional(async (tx) => {
    // The workspace row lock makes count-then-insert safe against concurrent creates.
    const workspace = await tx.findOneOrFail(Workspace, actor.workspaceId, { lockMode: LockMode.PESSIMISTIC_WRITE });
    await requireWithinLimit(tx, actor, 'apps', await tx.count(App, { workspace }));
    const app = tx.create(App, { workspace, name: input.name.trim(), description: input.description ?? null, websiteUrl: input.website_url ?? null });
    await tx.flush();
    return app;
  });
}
