// The workspaces a user can work in (own + team memberships, the Demo one included), and leaving one.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TeamRole } from '../../db/entities/TeamMember.js';
import { TeamMember } from '../../db/entities/TeamMember.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { AppError, notFound } from '../errors.js';
import { credentialsChanged } from '../../lib/credential-cache.js';

export interface MyWorkspace {
  id: string;
  name: string;
  ownerId: string;
  role: TeamRole;
  /** The membership row (use it to leave); null only for an own workspace without an owner row. */
  memberId: string | null;
  isDemo: boolean;
}

export async function listMyWorkspaces(em: EntityManager, userId: string): Promise<MyWorkspace[]> {
  const [own, memberships] = await Promise.all([
    em.findOne(Workspace, { owner: userId }),
    em.find(TeamMember, { user: userId }, { populate: ['workspace'], orderBy: { createdAt: 'asc', id: 'asc' } }),
  ]);
  const out: MyWorkspace[] = [];
  const ownRow = own ? memberships.find((m) => m.workspace.id === own.id) : undefined;
  if (own)
    out.push({
      id: own.id,
      name: own.name,
      ownerId: userId,
      role: 'owner',
      memberId: ownRow?.id ?? null,
      isDemo: own.isDemo,
    });
  for (const m of memberships) {
    if (own && m.workspace.id === own.id) continue;
    const ws = m.workspace.getEntity();
    out.push({ id: ws.id, name: ws.name, ownerId: ws.owner.id, role: m.role, memberId: m.id, isDemo: ws.isDemo });
  }
  return out;
}

/**
 * Leaves a workspace by membership id. Someone else's (or an unknown) membership → 404; the
 * caller's own workspace (or any owner membership) → 403 `owner_cannot_leave`.
 */
export async function leaveWorkspace(em: EntityManager, userId: string, memberId: string): Promise<void> {
  const member = await em.findOne(TeamMember, { id: memberId, user: userId }, { populate: ['workspace'] });
  if (!member) throw notFound('membership');
  if (member.role === 'owner' || member.workspace.getEntity().owner.id === userId) {
    throw new AppError(403, 'owner_cannot_leave', 'you cannot leave a workspace you own');
  }
  await em.nativeDelete(TeamMember, { id: member.id });
  await credentialsChanged(userId);
}
