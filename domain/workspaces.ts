// Resolving the effective workspace of a request (own, or a team owner's via X-Acting-As).
import type { EntityManager } from '@mikro-orm/postgresql';
import { TeamMember } from '../db/entities/TeamMember.js';
import { Workspace } from '../db/entities/Workspace.js';
import { isUuid } from '../lib/ids.js';
import { AppError, unauthorized } from './errors.js';
import type { Actor, AuthInfo } from './identity.js';

export async function ownActor(em: EntityManager, auth: AuthInfo): Promise<Actor> {
  const ws = await em.findOne(Workspace, { owner: auth.userId }, { fields: ['id', 'isDemo'] });
  if (!ws) throw unauthorized('account has no workspace');
  return {
    userId: auth.userId,
    workspaceId: ws.id,
    ownerId: auth.userId,
    role: 'owner',
    allApps: true,
    appIds: [],
    actingAs: false,
    isDemo: ws.isDemo,
  };
}

/**
 * `X-Acting-As: <owner uuid>` selects the workspace of that owner. The caller must be a current team
 * member there; product access is checked where a product is named (see canAccessApp).
 */
export async function resolveActor(em: EntityManager, auth: AuthInfo, actingAs: string | undefined): Promise<Actor> {
  if (actingAs === undefined || actingAs === '') return ownActor(em, auth);
  if (!isUuid(actingAs)) throw new AppError(400, 'invalid_user', 'X-Acting-As must be a user id (UUID)');
  if (actingAs.toLowerCase() === auth.userId) return ownActor(em, auth);
  const member = await em.findOne(
    TeamMember,
    { user: auth.userId, workspace: { owner: actingAs.toLowerCase() } },
    { populate: ['workspace'] },
  );
  if (!member) throw new AppError(403, 'not_assigned', 'you are not a member of that workspace');
  return {
    userId: auth.userId,
    workspaceId: member.workspace.id,
    ownerId: actingAs.toLowerCase(),
    role: member.role,
    allApps: member.allApps,
    appIds: member.appIds,
    actingAs: true,
    isDemo: member.workspace.$.isDemo,
  };
}
