// Direct database set-up for states that later issues will reach through the API (e.g. team
// membership before invitations exist).
import { TeamMember } from '../../db/entities/TeamMember.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { User } from '../../db/entities/User.js';
import { api } from './api.js';
import { credentialsChanged } from '../../lib/credential-cache.js';

export async function addTeamMember(ownerId: string, memberId: string, access: { role?: 'admin' | 'member'; appIds?: string[] } = {}) {
  const em = (await api()).services.orm.em.fork();
  const workspace = await em.findOneOrFail(Workspace, { owner: ownerId });
  const member = em.create(TeamMember, {
    workspace,
    user: em.getReference(User, memberId),
    role: access.role ?? 'member',
    allApps: access.appIds === undefined,
    appIds: access.appIds ?? [],
  });
  await em.flush();
  return member.id;
}

export async function removeTeamMember(id: string) {
  const em = (await api()).services.orm.em.fork();
  const member = await em.findOneOrFail(TeamMember, id);
  await em.nativeDelete(TeamMember, { id });
  await credentialsChanged(member.user.id); // as the domain's removal does, for the credential cache
}
