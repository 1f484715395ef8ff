/**
 * The Demo workspace rules: the ONE place that says what may happen in a Demo workspace.
 *
 * - The shared Demo workspace (`Workspace.isDemo`, seeded by domain/demo/seed.ts) is read-only for
 *   everyone. The Actor carries `isDemo` (set in domain/workspaces.ts from `Workspace.isDemo`).
 * - Generic rule, applied by the router to every operation (see `demoGuard` in api/router.ts): in a
 *   Demo workspace, any non-GET operation answers 403 `demo_read_only`, unless the operation
 *   declares `demo: 'simulate'` in its defineOperation spec. Such an operation must itself return
 *   its documented demo-simulation response when `actor.isDemo` (and write nothing).
 * - Domain code that writes on behalf of an actor outside a request (workflows, activities, tools
 *   run by the Operator) calls `assertWritable(actor)` first; code that would send external traffic
 *   (webhooks, messages) checks `actor.isDemo` / `isDemoWorkspace()` and sends nothing.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { TeamMember, type ITeamMember } from '../../db/entities/TeamMember.js';
import { User } from '../../db/entities/User.js';
import { Workspace, type IWorkspace } from '../../db/entities/Workspace.js';
import { DEMO_WORKSPACE_ID, seedDemo } from './seed.js';
import { AppError } from '../errors.js';
import type { Actor } from '../identity.js';

export { DEMO_WORKSPACE_ID, DEMO_USER_ID } from './seed.js';

/** How an operation behaves in a Demo workspace: refused (default for writes) or simulated. */
export type DemoMode = 'read_only' | 'simulate';

export const demoReadOnly = () => new AppError(403, 'demo_read_only', 'the Demo workspace is read-only');

/** 403 `demo_read_only` if the actor works in a Demo workspace. */
export function assertWritable(actor: Pick<Actor, 'isDemo'>): void {
  if (actor.isDemo) throw demoReadOnly();
}

/** The router's generic rule: reads are allowed, writes only if the operation simulates them. */
export function assertOperationAllowed(
  actor: Pick<Actor, 'isDemo'>,
  method: string,
  mode: DemoMode = 'read_only',
): void {
  if (method === 'GET' || method === 'HEAD' || mode === 'simulate') return;
  assertWritable(actor);
}

export async function isDemoWorkspace(em: EntityManager, workspaceId: string): Promise<boolean> {
  return (await em.count(Workspace, { id: workspaceId, isDemo: true })) > 0;
}

/** The shared Demo workspace, seeded first if it is missing. */
export async function ensureDemoWorkspace(em: EntityManager): Promise<IWorkspace> {
  const ws = await em.findOne(Workspace, DEMO_WORKSPACE_ID);
  if (ws) return ws;
  await seedDemo(em);
  return em.findOneOrFail(Workspace, DEMO_WORKSPACE_ID);
}

/** Adds the user as a `member` of the Demo workspace (idempotent). `created` tells a new membership. */
export async function joinDemo(em: EntityManager, userId: string): Promise<{ member: ITeamMember; created: boolean }> {
  const workspace = await ensureDemoWorkspace(em);
  const existing = await em.findOne(TeamMember, { workspace, user: userId }, { populate: ['workspace'] });
  if (existing) return { member: existing, created: false };
  try {
    const member = await em.fork().transactional(async (tx) => {
      const m = tx.create(TeamMember, {
        workspace: tx.getReference(Workspace, workspace.id),
        user: tx.getReference(User, userId),
        role: 'member',
        allApps: true,
        appIds: [],
      });
      await tx.flush();
      return m.id;
    });
    return { member: await em.findOneOrFail(TeamMember, member, { populate: ['workspace'] }), created: true };
  } catch (err) {
    // Two joins racing: the unique (workspace, user) index decides; the loser returns the winner's row.
    if (!(err instanceof UniqueConstraintViolationException)) throw err;
    return {
      member: await em
        .fork()
        .findOneOrFail(TeamMember, { workspace: workspace.id, user: userId }, { populate: ['workspace'] }),
      created: false,
    };
  }
}
