import { z } from 'zod';
import type { ITeamMember } from '../../db/entities/TeamMember.js';
import type { ITeamInvitation } from '../../db/entities/TeamInvitation.js';
import { TEAM_AUDIT_ACTIONS, type ITeamAuditEvent } from '../../db/entities/TeamAuditEvent.js';
import type { IUser } from '../../db/entities/User.js';
import { invitationStatus } from '../../domain/team/team.js';
import { pageQuery, pageSchema } from '../../lib/pagination.js';
import { Email, Password } from '../auth/schemas.js';
import { Timestamp, text } from '../schemas.js';

export const PageQuery = z.object(pageQuery).strict();

const UserRef = z.object({ id: z.uuid(), email: z.string(), name: z.string().nullable() });
const toUserRef = (u: IUser | null | undefined) => (u ? { id: u.id, email: u.email, name: u.name ?? null } : null);

export const MemberView = z.object({
  id: z.uuid(),
  user_id: z.uuid(),
  email: z.string(),
  name: z.string().nullable(),
  role: z.enum(['owner', 'admin', 'member']),
  all_apps: z.boolean(),
  app_ids: z.array(z.uuid()),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const MemberPage = pageSchema(MemberView);

export const toMemberView = (m: ITeamMember): z.infer<typeof MemberView> => {
  const u = m.user.getEntity();
  return {
    id: m.id,
    user_id: u.id,
    email: u.email,
    name: u.name ?? null,
    role: m.role,
    all_apps: m.allApps,
    app_ids: m.allApps ? [] : m.appIds,
    created_at: m.createdAt.toISOString(),
    updated_at: m.updatedAt.toISOString(),
  };
};

export const RoleBody = z.object({ role: z.enum(['admin', 'member']) }).strict();
export const AccessBody = z
  .object({ all_apps: z.boolean(), app_ids: z.array(z.uuid()).max(500).default([]) })
  .strict()
  .refine((b) => b.all_apps || b.app_ids.length > 0, {
    message: 'app_ids must name at least one product when all_apps is false',
    path: ['app_ids'],
  })
  // if/then rather than oneOf over `const` booleans: generators ignore the rule and keep one class.
  .meta({
    if: { properties: { all_apps: { enum: [false] } } },
    then: { properties: { app_ids: { minItems: 1 } }, required: ['app_ids'] },
  });

export const AuditEventView = z.object({
  id: z.uuid(),
  action: z.enum(TEAM_AUDIT_ACTIONS),
  actor: UserRef.nullable(),
  target_member_id: z.uuid().nullable(),
  target_invitation_id: z.uuid().nullable(),
  details: z.record(z.string(), z.unknown()),
  created_at: Timestamp,
});
export const AuditPage = pageSchema(AuditEventView);
export const toAuditEventView = (e: ITeamAuditEvent): z.infer<typeof AuditEventView> => ({
  id: e.id,
  action: e.action,
  actor: toUserRef(e.actor?.getEntity()),
  target_member_id: e.targetMemberId ?? null,
  target_invitation_id: e.targetInvitationId ?? null,
  details: e.details,
  created_at: e.createdAt.toISOString(),
});

export const InvitationView = z.object({
  id: z.uuid(),
  email: z.string(),
  role: z.enum(['admin', 'member']),
  all_apps: z.boolean(),
  app_ids: z.array(z.uuid()),
  status: z.enum(['pending', 'accepted', 'revoked', 'expired']),
  email_status: z.enum(['pending', 'sent', 'failed']),
  invited_by: UserRef.nullable(),
  expires_at: Timestamp,
  accepted_at: Timestamp.nullable(),
  revoked_at: Timestamp.nullable(),
  created_at: Timestamp,
});
export const InvitationPage = pageSchema(InvitationView);
export const toInvitationView = (i: ITeamInvitation): z.infer<typeof InvitationView> => ({
  id: i.id,
  email: i.email,
  role: i.role,
  all_apps: i.allApps,
  app_ids: i.appIds,
  status: invitationStatus(i),
  email_status: i.emailStatus,
  invited_by: toUserRef(i.invitedBy?.getEntity()),
  expires_at: i.expiresAt.toISOString(),
  accepted_at: i.acceptedAt ? i.acceptedAt.toISOString() : null,
  revoked_at: i.revokedAt ? i.revokedAt.toISOString() : null,
  created_at: i.createdAt.toISOString(),
});

export const CreateInvitationBody = z
  .object({
    email: Email,
    role: z.enum(['admin', 'member']),
    all_apps: z.boolean().optional(),
    app_ids: z.array(z.uuid()).max(500).optional(),
  })
  .strict()
  .refine((b) => !(b.all_apps === false && !b.app_ids?.length), {
    message: 'app_ids must name at least one product when all_apps is false',
    path: ['app_ids'],
  })
  // all_apps false needs at least one product; absent or true does not.
  .meta({
    if: { properties: { all_apps: { enum: [false] } }, required: ['all_apps'] },
    then: { properties: { app_ids: { minItems: 1 } }, required: ['app_ids'] },
  });

// Any string: a malformed token is simply not found (404), like an unknown one.
export const TokenParams = z.object({ token: z.string() });

/** What an invitee sees before accepting: no ids beyond the owner's (needed for X-Acting-As), no secrets. */
export const PublicInvitationView = z.object({
  workspace: z.object({ name: z.string(), owner_id: z.uuid() }),
  inviter: z.object({ name: z.string().nullable(), email: z.string() }).nullable(),
  email: z.string(),
  role: z.enum(['admin', 'member']),
  account_exists: z.boolean(),
  expires_at: Timestamp,
});

export const AcceptBody = z
  .object({ name: text({ max: 200, trim: true }).optional(), password: text({ max: 200 }).optional() })
  .strict();
export { Password };
