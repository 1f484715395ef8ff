import { defineEntity, type InferEntity } from '@mikro-orm/core';
import { uuidv7 } from '../../lib/ids.js';
import { User } from './User.js';
import { Workspace } from './Workspace.js';

export const TEAM_AUDIT_ACTIONS = [
  'invitation.created',
  'invitation.revoked',
  'invitation.accepted',
  'member.removed',
  'member.role_changed',
  'member.access_changed',
] as const;
export type TeamAuditAction = (typeof TEAM_AUDIT_ACTIONS)[number];

// Append-only log of team changes, written in the same transaction as the change. Targets are plain
// ids (no foreign keys) so that the history survives the removal of the member or invitation.
export const TeamAuditEvent = defineEntity({
  name: 'TeamAuditEvent',
  tableName: 'team_audit_events',
  properties: (p) => ({
    id: p
      .uuid()
      .primary()
      .onCreate(() => uuidv7()),
    workspace: p.manyToOne(Workspace).ref().deleteRule('cascade').index(),
    actor: p.manyToOne(User).ref().nullable().deleteRule('set null'),
    action: p.enum([...TEAM_AUDIT_ACTIONS]),
    targetMemberId: p.uuid().nullable(),
    targetInvitationId: p.uuid().nullable(),
    details: p.json<Record<string, unknown>>().default('{}' as never),
    createdAt: p.datetime().onCreate(() => new Date()),
  }),
});
export type ITeamAuditEvent = InferEntity<typeof TeamAuditEvent>;
