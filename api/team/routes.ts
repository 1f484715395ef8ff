import type { Context } from 'koa';
import { defineOperation, reply } from '../operation.js';
import { IdParams } from '../schemas.js';
import { AuthResult, Password, toAuthResult } from '../auth/schemas.js';
import { User } from '../../db/entities/User.js';
import { authenticateBearer } from '../../domain/auth/auth.js';
import { badRequest } from '../../domain/errors.js';
import {
  acceptInvitation,
  createInvitation,
  deliverInvitation,
  invitationByToken,
  listAudit,
  listInvitations,
  listMembers,
  removeMember,
  revokeInvitation,
  setMemberAccess,
  setMemberRole,
} from '../../domain/team/team.js';
import { page, toPageRequest } from '../../lib/pagination.js';
import {
  AcceptBody,
  AccessBody,
  AuditPage,
  CreateInvitationBody,
  InvitationPage,
  InvitationView,
  MemberPage,
  MemberView,
  PageQuery,
  PublicInvitationView,
  RoleBody,
  TokenParams,
  toAuditEventView,
  toInvitationView,
  toMemberView,
} from './schemas.js';

const tag = 'team';
const client = (ctx: Context) => ({ userAgent: ctx.get('user-agent') || undefined, ip: ctx.ip });
const actingErrors = { 401: ['unauthorized'] };

export const listMembersOp = defineOperation({
  method: 'GET',
  path: '/api/team/members',
  summary: 'Members of the effective workspace (any member may read)',
  tag,
  auth: 'user',
  query: PageQuery,
  responses: { 200: MemberPage },
  errors: { 400: ['invalid_query', 'invalid_user'], 401: ['unauthorized'], 403: ['not_assigned'] },
  handler: async ({ em, actor, query }) =>
    page(await listMembers(em, actor, toPageRequest(query)), query.limit, toMemberView),
});

export const listAuditOp = defineOperation({
  method: 'GET',
  path: '/api/team/members/audit',
  summary: 'Audit log of team changes, newest first (owner and admins)',
  tag,
  auth: 'user',
  query: PageQuery,
  responses: { 200: AuditPage },
  errors: { 400: ['invalid_query', 'invalid_user'], 401: ['unauthorized'], 403: ['forbidden_role', 'not_assigned'] },
  handler: async ({ em, actor, query }) =>
    page(await listAudit(em, actor, toPageRequest(query)), query.limit, toAuditEventView),
});

export const removeMemberOp = defineOperation({
  method: 'DELETE',
  path: '/api/team/members/{id}',
  ids: { path: { id: 'member' } },
  summary: 'Remove a member from the team (a member may remove themselves)',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 204: null },
  errors: {
    ...actingErrors,
    400: ['invalid_id', 'invalid_user'],
    403: ['forbidden_role', 'not_assigned'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params }) => {
    await removeMember(em, actor, params.id);
  },
});

export const updateMemberAccessOp = defineOperation({
  method: 'PUT',
  path: '/api/team/members/{id}',
  ids: { path: { id: 'member' }, body: { app_ids: { kind: 'app', missing: [400, 'invalid_app'] } } },
  summary: "Set a member's product access: all products, or the listed ones",
  tag,
  auth: 'user',
  params: IdParams,
  body: AccessBody,
  responses: { 200: MemberView },
  errors: {
    ...actingErrors,
    400: ['invalid_id', 'invalid_body', 'invalid_app', 'invalid_user'],
    403: ['forbidden_role', 'not_assigned'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params, body }) => toMemberView(await setMemberAccess(em, actor, params.id, body)),
});

export const updateMemberRoleOp = defineOperation({
  method: 'PATCH',
  path: '/api/team/members/{id}/role',
  ids: { path: { id: 'member' } },
  summary: "Change a member's role (admin or member; the owner cannot be changed)",
  tag,
  auth: 'user',
  params: IdParams,
  body: RoleBody,
  responses: { 200: MemberView },
  errors: {
    ...actingErrors,
    400: ['invalid_id', 'invalid_body', 'invalid_user'],
    403: ['forbidden_role', 'not_assigned'],
    404: ['not_found'],
  },
  handler: async ({ em, actor, params, body }) => toMemberView(await setMemberRole(em, actor, params.id, body.role)),
});

export const listInvitationsOp = defineOperation({
  method: 'GET',
  path: '/api/team/invitations',
  summary: 'Invitations of the effective workspace, newest first (owner and admins)',
  tag,
  auth: 'user',
  query: PageQuery,
  responses: { 200: InvitationPage },
  errors: { 400: ['invalid_query', 'invalid_user'], 401: ['unauthorized'], 403: ['forbidden_role', 'not_assigned'] },
  handler: async ({ em, actor, query }) =>
    page(await listInvitations(em, actor, toPageRequest(query)), query.limit, toInvitationView),
});

export const createInvitationOp = defineOperation({
  method: 'POST',
  path: '/api/team/invitations',
  ids: { body: { app_ids: { kind: 'app', missing: [400, 'invalid_app'] } } },
  summary: 'Invite someone by email; the link is sent by email only (email_status tells whether it went out)',
  tag,
  auth: 'user',
  body: CreateInvitationBody,
  responses: { 201: InvitationView },
  errors: {
    ...actingErrors,
    400: ['invalid_body', 'invalid_app', 'invalid_user'],
    403: ['forbidden_role', 'not_assigned', 'plan_limit_reached'],
    409: ['already_member', 'already_invited'],
  },
  handler: async ({ em, actor, body, services }) => {
    const { invitation, token } = await createInvitation(em, actor, body);
    await deliverInvitation(services.orm, services.email, services.config, invitation, token, (err) =>
      services.logger.warn({ err, invitationId: invitation.id }, 'invitation email failed'),
    );
    return toInvitationView(invitation);
  },
});

export const revokeInvitationOp = defineOperation({
  method: 'DELETE',
  path: '/api/team/invitations/{id}',
  ids: { path: { id: 'invitation' } },
  summary: 'Revoke a pending invitation',
  tag,
  auth: 'user',
  params: IdParams,
  responses: { 204: null },
  errors: {
    ...actingErrors,
    400: ['invalid_id', 'invalid_user'],
    403: ['forbidden_role', 'not_assigned'],
    404: ['not_found'],
    409: ['invitation_not_pending'],
  },
  handler: async ({ em, actor, params }) => {
    await revokeInvitation(em, actor, params.id);
  },
});

const tokenErrors = { 404: ['not_found'], 409: ['invitation_used'], 410: ['invitation_expired', 'invitation_revoked'] };

export const getInvitationByTokenOp = defineOperation({
  method: 'GET',
  path: '/api/team/invitations/by-token/{token}',
  ids: { path: { token: { value: 'an invitation token: it is the credential' } } },
  summary: 'Look up a pending invitation by the token from its email (public)',
  tag,
  auth: 'public',
  params: TokenParams,
  responses: { 200: PublicInvitationView },
  errors: tokenErrors,
  handler: async ({ em, params }) => {
    const inv = await invitationByToken(em, params.token);
    const ws = inv.workspace.getEntity();
    const inviter = inv.invitedBy?.getEntity();
    return {
      workspace: { name: ws.name, owner_id: ws.owner.id },
      inviter: inviter ? { name: inviter.name ?? null, email: inviter.email } : null,
      email: inv.email,
      role: inv.role,
      account_exists: (await em.count(User, { email: inv.email })) > 0,
      expires_at: inv.expiresAt.toISOString(),
    };
  },
});

export const acceptInvitationOp = defineOperation({
  method: 'POST',
  path: '/api/team/invitations/by-token/{token}/accept',
  ids: { path: { token: { value: 'an invitation token: it is the credential' } } },
  summary: 'Accept an invitation: creates the account (201) or joins an existing one (200), and starts a session',
  tag,
  auth: 'public',
  params: TokenParams,
  body: AcceptBody,
  responses: { 200: AuthResult, 201: AuthResult },
  errors: {
    400: ['invalid_body'],
    401: ['invalid_credentials', 'unauthorized'],
    403: ['email_mismatch'],
    ...tokenErrors,
    409: ['invitation_used', 'already_member'],
  },
  handler: async ({ em, services, params, body, ctx }) => {
    const header = ctx.get('authorization');
    const bearer = header ? await authenticateBearer(em, services.config, header) : undefined;
    const validatePassword = (p: string | undefined): string => {
      const r = Password.safeParse(p);
      if (!r.success)
        throw badRequest(
          'invalid_body',
          `password: ${r.error.issues.map((i) => i.message).join('; ')}`,
          r.error.issues.map((i) => ({ path: 'password', message: i.message })),
        );
      return r.data;
    };
    const { tokens, created } = await acceptInvitation(
      em,
      services.config,
      params.token,
      body,
      bearer,
      client(ctx),
      validatePassword,
    );
    return reply(created ? 201 : 200, toAuthResult(tokens));
  },
});
