import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { User } from './User.js';
import { Workspace } from './Workspace.js';

export const INVITATION_ROLES = ['admin', 'member'] as const;
export type InvitationRole = (typeof INVITATION_ROLES)[number];
export const EMAIL_STATUSES = ['pending', 'sent', 'failed'] as const;

// An invitation to join a workspace's team. Only the SHA-256 of the token is kept; the token itself
// travels only in the invitation email. Pending = not accepted, not revoked, not expired.
export const TeamInvitation = defineEntity({
  name: 'TeamInvitation',
  tableName: 'team_invitations',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
    invitedBy: p.manyToOne(User).ref().nullable().deleteRule('set null'),
    // Stored lower-cased.
    email: p.string().length(320).index(),
    role: p.enum([...INVITATION_ROLES]),
    allApps: p.boolean().default(true),
    appIds: p.json<string[]>().default('[]' as never),
    tokenHash: p.string().length(64).unique().hidden(),
    expiresAt: p.datetime(),
    acceptedAt: p.datetime().nullable(),
    acceptedBy: p.manyToOne(User).ref().nullable().deleteRule('set null'),
    revokedAt: p.datetime().nullable(),
    emailStatus: p.enum([...EMAIL_STATUSES]).default('pending'),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type ITeamInvitation = InferEntity<typeof TeamInvitation>;
