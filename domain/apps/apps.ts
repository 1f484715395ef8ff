// Products (apps) of a workspace. Minimal here; the products issue extends it.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { requireWithinLimit } from '../billing/plans.js';
import { App, type IApp } from '../../db/entities/App.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { AppError, notFound } from '../errors.js';
import type { Actor } from '../identity.js';
import { keyset, type PageRequest } from '../../lib/pagination.js';

export async function listApps(em: EntityManager, actor: Actor, page: PageRequest): Promise<IApp[]> {
  const k = keyset(page);
  const id = { ...k.where.id, ...(actor.allApps ? {} : { $in: actor.appIds }) };
  return em.find(App, { workspace: actor.workspaceId, ...(page.after || !actor.allApps ? { id } : {}) }, k.options);
}

/** Loads a product of the actor's workspace (404 otherwise). Who may touch it was checked before: domain/access.ts. */
export async function requireApp(em: EntityManager, actor: Actor, appId: string): Promise<IApp> {
  const app = await em.findOne(App, { id: appId, workspace: actor.workspaceId });
  if (!app) throw notFound('app');
  return app;
}

export async function createApp(
  em: EntityManager,
  actor: Actor,
  input: { name: string; description?: string | null; website_url?: string | null },
): Promise<IApp> {
  // Members with access to only some products may not add new ones to the owner's workspace.
  if (actor.actingAs && actor.role === 'member')
    throw new AppError(403, 'not_assigned', 'only owners and admins can create products');
  return em.transactional(async (tx) => {
    // The workspace row lock makes count-then-insert safe against concurrent creates.
    const workspace = await tx.findOneOrFail(Workspace, actor.workspaceId, { lockMode: LockMode.PESSIMISTIC_WRITE });
    await requireWithinLimit(tx, actor, 'apps', await tx.count(App, { workspace }));
    const app = tx.create(App, {
      workspace,
      name: input.name.trim(),
      description: input.description ?? null,
      websiteUrl: input.website_url ?? null,
    });
    await tx.flush();
    return app;
  });
}

export interface AppPatch {
  name?: string;
  description?: string | null;
  website_url?: string | null;
  value_proposition?: string | null;
  icp_description?: string | null;
  icp_filters?: Record<string, unknown> | null;
}

/** Updates the product profile; absent fields stay, null clears. */
export async function updateApp(em: EntityManager, actor: Actor, appId: string, patch: AppPatch): Promise<IApp> {
  const app = await requireApp(em, actor, appId);
  if (patch.name !== undefined) app.name = patch.name.trim();
  if (patch.description !== undefined) app.description = patch.description;
  if (patch.website_url !== undefined) app.websiteUrl = patch.website_url;
  if (patch.value_proposition !== undefined) app.valueProposition = patch.value_proposition;
  if (patch.icp_description !== undefined) app.icpDescription = patch.icp_description;
  if (patch.icp_filters !== undefined) app.icpFilters = patch.icp_filters;
  await em.flush();
  return app;
}

export interface AppStats {
  app_id: string;
  name: string;
  agents: number;
  active_agents: number;
  lists: number;
  leads: number;
}

/**
 * Per-product counts for the products the actor can access: one grouped query per table, each on
 * an indexed workspace/app column (no per-product loop).
 */
export async function appStats(em: EntityManager, actor: Actor): Promise<AppStats[]> {
  const apps = await em.find(
    App,
    { workspace: actor.workspaceId, ...(actor.allApps ? {} : { id: { $in: actor.appIds } }) },
    { orderBy: { id: 'asc' }, fields: ['id', 'name'] },
  );
  if (apps.length === 0) return [];
  const ids = apps.map((a) => a.id);
  const conn = em.getConnection();
  const [agents, lists, leads] = await Promise.all([
    conn.execute<{ app_id: string; n: string; active: string }[]>(
      `select app_id, count(*) as n, count(*) filter (where status = 'active') as active from discovery_agents where workspace_id = ? and app_id in (?) group by app_id`,
      [actor.workspaceId, ids],
    ),
    conn.execute<{ app_id: string; n: string }[]>(
      `select app_id, count(*) as n from lead_lists where workspace_id = ? and app_id in (?) group by app_id`,
      [actor.workspaceId, ids],
    ),
    conn.execute<{ app_id: string; n: string }[]>(
      `select l.app_id, count(*) as n from leads d join lead_lists l on l.id = d.list_id where l.workspace_id = ? and l.app_id in (?) group by l.app_id`,
      [actor.workspaceId, ids],
    ),
  ]);
  const by = <T extends { app_id: string }>(rows: T[]) => new Map(rows.map((r) => [r.app_id, r]));
  const [a, l, d] = [by(agents), by(lists), by(leads)];
  return apps.map((app) => ({
    app_id: app.id,
    name: app.name,
    agents: Number(a.get(app.id)?.n ?? 0),
    active_agents: Number(a.get(app.id)?.active ?? 0),
    lists: Number(l.get(app.id)?.n ?? 0),
    leads: Number(d.get(app.id)?.n ?? 0),
  }));
}
