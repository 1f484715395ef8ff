// Team of a workspace: members and their roles/product access, invitations, and the audit log.
// Every change locks the workspace row (serialising concurrent team changes, so e.g. two identical
// invitations cannot both pass the duplicate check) and writes its audit event in the same transaction.
import { LockMode, ref } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { runtimeSettings, type Config } from '../../lib/config.js';
import { DUMMY_PASSWORD_HASH, hashPassword, randomSecret, sha256Hex, verifyPassword } from '../../lib/crypto.js';
import type { EmailSender } from '../../lib/email.js';
import { keyset, type PageRequest } from '../../lib/pagination.js';
import { App } from '../../db/entities/App.js';
import { TeamMember, type ITeamMember } from '../../db/entities/TeamMember.js';
import { TeamInvitation, type ITeamInvitation, type InvitationRole } from '../../db/entities/TeamInvitation.js';
import { TeamAuditEvent, type ITeamAuditEvent, type TeamAuditAction } from '../../db/entities/TeamAuditEvent.js';
import { User, type IUser } from '../../db/entities/User.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { requireWithinLimit } from '../billing/plans.js';
import { createAccount, normaliseEmail, startSession, type ClientInfo, type IssuedTokens } from '../auth/auth.js';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import type { Actor, AuthInfo } from '../identity.js';
import { credentialsChanged } from '../../lib/credential-cache.js';

export const INVITATION_PREFIX = 'inv_';

/** Invitation lifetime: `INVITATION_TTL_DAYS` (default 7). */
export function invitationTtlMs(): number {
  return runtimeSettings.invitationTtlDays() * 24 * 3600 * 1000;
}

export const forbiddenRole = (message: string) => new AppError(403, 'forbidden_role', message);

/** Owners and admins manage the team; plain members may only read the member list. */
function requireManager(actor: Actor): void {
  if (actor.role !== 'owner' && actor.role !== 'admin') throw forbiddenRole('only the owner or an admin can do this');
}

/**
 * Who may change `target`: the owner row is immutable; the owner may change anyone else; an admin
 * may change only plain members.
 */
function requireCanManage(actor: Actor, target: ITeamMember): void {
  requireManager(actor);
  if (target.role === 'owner') throw forbiddenRole('the workspace owner cannot be removed or changed');
  if (actor.role === 'admin' && target.role !== 'member')
    throw forbiddenRole('admins can only change members, not other admins');
}

/** Locks the workspace row and re-reads the actor's current role in it (it may have changed). */
async function lockTeam(tx: EntityManager, actor: Actor): Promise<Actor> {
  await tx.findOneOrFail(Workspace, actor.workspaceId, { lockMode: LockMode.PESSIMISTIC_WRITE });
  if (!actor.actingAs) return actor;
  const me = await tx.findOne(TeamMember, { workspace: actor.workspaceId, user: actor.userId });
  if (!me) throw new AppError(403, 'not_assigned', 'you are not a member of that workspace');
  return { ...actor, role: me.role, allApps: me.allApps, appIds: me.appIds };
}

function audit(
  tx: EntityManager,
  workspaceId: string,
  actorId: string,
  action: TeamAuditAction,
  target: { memberId?: string; invitationId?: string },
  details: Record<string, unknown>,
): void {
  tx.create(TeamAuditEvent, {
    workspace: tx.getReference(Workspace, workspaceId),
    actor: tx.getReference(User, actorId),
    action,
    targetMemberId: target.memberId ?? null,
    targetInvitationId: target.invitationId ?? null,
    details,
  });
}

async function requireWorkspaceApps(em: EntityManager, workspaceId: string, appIds: string[]): Promise<string[]> {
  const unique = [...new Set(appIds.map((a) => a.toLowerCase()))];
  if (unique.length === 0) return unique;
  const found = await em.count(App, { id: { $in: unique }, workspace: workspaceId });
  if (found !== unique.length) throw badRequest('invalid_app', 'every app id must be a product of this workspace');
  return unique;
}

// ---- members ----

export function listMembers(em: EntityManager, actor: Actor, page: PageRequest): Promise<ITeamMember[]> {
  const k = keyset(page);
  return em.find(TeamMember, { workspace: actor.workspaceId, ...k.where }, { populate: ['user'], ...k.options });
}

async function findMember(tx: EntityManager, actor: Actor, memberId: string): Promise<ITeamMember> {
  const m = await tx.findOne(TeamMember, { id: memberId, workspace: actor.workspaceId }, { populate: ['user'] });
  if (!m) throw notFound('team member');
  return m;
}

/** Removes a member. A non-owner may also remove themselves (leave the team). */
export async function removeMember(em: EntityManager, actor: Actor, memberId: string): Promise<void> {
  await em
    .transactional(async (tx) => {
      const me = await lockTeam(tx, actor);
      const target = await findMember(tx, me, memberId);
      const self = target.user.id === me.userId;
      if (!(self && target.role !== 'owner')) requireCanManage(me, target);
      audit(
        tx,
        me.workspaceId,
        me.userId,
        'member.removed',
        { memberId: target.id },
        { user_id: target.user.id, email: target.user.getEntity().email, role: target.role },
      );
      tx.remove(target);
      await tx.flush();
      return target.user.id;
    })
    .then(credentialsChanged);
}

export async function setMemberRole(
  em: EntityManager,
  actor: Actor,
  memberId: string,
  role: InvitationRole,
): Promise<ITeamMember> {
  return withInvalidation(
    em.transactional(async (tx) => {
      const me = await lockTeam(tx, actor);
      const target = await findMember(tx, me, memberId);
      requireCanManage(me, target);
      if (target.role !== role) {
        audit(
          tx,
          me.workspaceId,
          me.userId,
          'member.role_changed',
          { memberId: target.id },
          { user_id: target.user.id, from: target.role, to: role },
        );
        target.role = role;
        await tx.flush();
      }
      return target;
    }),
  );
}

/** After a member's role or product access changed (committed), cached acting-as identities are stale. */
async function withInvalidation(done: Promise<ITeamMember>): Promise<ITeamMember> {
  const member = await done;
  await credentialsChanged(member.user.id);
  return member;
}

export async function setMemberAccess(
  em: EntityManager,
  actor: Actor,
  memberId: string,
  access: { all_apps: boolean; app_ids: string[] },
): Promise<ITeamMember> {
  return withInvalidation(
    em.transactional(async (tx) => {
      const me = await lockTeam(tx, actor);
      const target = await findMember(tx, me, memberId);
      requireCanManage(me, target);
      const appIds = access.all_apps ? [] : await requireWorkspaceApps(tx, me.workspaceId, access.app_ids);
      audit(
        tx,
        me.workspaceId,
        me.userId,
        'member.access_changed',
        { memberId: target.id },
        {
          user_id: target.user.id,
          from: { all_apps: target.allApps, app_ids: target.appIds },
          to: { all_apps: access.all_apps, app_ids: appIds },
        },
      );
      target.allApps = access.all_apps;
      target.appIds = appIds;
      await tx.flush();
      return target;
    }),
  );
}

export function listAudit(em: EntityManager, actor: Actor, page: PageRequest): Promise<ITeamAuditEvent[]> {
  requireManager(actor);
  const k = keyset(page, 'desc');
  return em.find(TeamAuditEvent, { workspace: actor.workspaceId, ...k.where }, { populate: ['actor'], ...k.options });
}

// ---- invitations ----

export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

export function invitationStatus(inv: ITeamInvitation, now = new Date()): InvitationStatus {
  if (inv.acceptedAt) return 'accepted';
  if (inv.revokedAt) return 'revoked';
  if (inv.expiresAt <= now) return 'expired';
  return 'pending';
}

export function listInvitations(em: EntityManager, actor: Actor, page: PageRequest): Promise<ITeamInvitation[]> {
  requireManager(actor);
  const k = keyset(page, 'desc');
  return em.find(
    TeamInvitation,
    { workspace: actor.workspaceId, ...k.where },
    { populate: ['invitedBy'], ...k.options },
  );
}

export interface NewInvitation {
  email: string;
  role: InvitationRole;
  all_apps?: boolean;
  app_ids?: string[];
}

/** Creates a pending invitation; the token is returned once (for the email) and stored hashed. */
export async function createInvitation(
  em: EntityManager,
  actor: Actor,
  input: NewInvitation,
): Promise<{ invitation: ITeamInvitation; token: string }> {
  const email = normaliseEmail(input.email);
  return em.transactional(async (tx) => {
    const me = await lockTeam(tx, actor);
    requireManager(me);
    if (await tx.count(TeamMember, { workspace: me.workspaceId, user: { email } }))
      throw conflict('already_member', 'this person is already a member of the team');
    const now = new Date();
    if (
      await tx.count(TeamInvitation, {
        workspace: me.workspaceId,
        email,
        acceptedAt: null,
        revokedAt: null,
        expiresAt: { $gt: now },
      })
    ) {
      throw conflict('already_invited', 'a pending invitation for this email already exists');
    }
    // Seats: members (the owner included) plus pending invitations, which become members on accept.
    const [members, pending] = await Promise.all([
      tx.count(TeamMember, { workspace: me.workspaceId }),
      tx.count(TeamInvitation, {
        workspace: me.workspaceId,
        acceptedAt: null,
        revokedAt: null,
        expiresAt: { $gt: now },
      }),
    ]);
    await requireWithinLimit(tx, me, 'seats', members + pending);
    const allApps = input.all_apps ?? !(input.app_ids && input.app_ids.length > 0);
    const appIds = allApps ? [] : await requireWorkspaceApps(tx, me.workspaceId, input.app_ids ?? []);
    const token = randomSecret(INVITATION_PREFIX);
    const invitation = tx.create(TeamInvitation, {
      workspace: tx.getReference(Workspace, me.workspaceId),
      invitedBy: tx.getReference(User, me.userId),
      email,
      role: input.role,
      allApps,
      appIds,
      tokenHash: sha256Hex(token),
      expiresAt: new Date(now.getTime() + invitationTtlMs()),
      emailStatus: 'pending',
    });
    await tx.flush();
    audit(
      tx,
      me.workspaceId,
      me.userId,
      'invitation.created',
      { invitationId: invitation.id },
      { email, role: input.role, all_apps: allApps, app_ids: appIds },
    );
    await tx.flush();
    await tx.populate(invitation, ['invitedBy']);
    return { invitation, token };
  });
}

export async function revokeInvitation(em: EntityManager, actor: Actor, invitationId: string): Promise<void> {
  await em.transactional(async (tx) => {
    const me = await lockTeam(tx, actor);
    requireManager(me);
    const inv = await tx.findOne(TeamInvitation, { id: invitationId, workspace: me.workspaceId });
    if (!inv) throw notFound('invitation');
    if (inv.acceptedAt || inv.revokedAt)
      throw conflict('invitation_not_pending', 'the invitation was already accepted or revoked');
    inv.revokedAt = new Date();
    audit(
      tx,
      me.workspaceId,
      me.userId,
      'invitation.revoked',
      { invitationId: inv.id },
      { email: inv.email, role: inv.role },
    );
    await tx.flush();
  });
}

/**
 * Sends the invitation email after the invitation was committed, and records the outcome in
 * `email_status` (`sent` | `failed`): a mail failure never undoes the invitation, and the owner can
 * revoke and re-invite. Returns the recorded status.
 */
export async function deliverInvitation(
  orm: MikroORM,
  sender: EmailSender,
  config: Config,
  invitation: ITeamInvitation,
  token: string,
  onError: (err: unknown) => void = () => {},
): Promise<'sent' | 'failed'> {
  const em = orm.em.fork();
  const ws = await em.findOneOrFail(Workspace, invitation.workspace.id);
  const inviter = invitation.invitedBy ? await em.findOne(User, invitation.invitedBy.id) : null;
  const who = inviter ? inviter.name || inviter.email : 'A team owner';
  const link = `${config.publicBaseUrl.replace(/\/+$/, '')}/invite/${token}`;
  const text = [
    `${who} invited you to join "${ws.name}" as ${invitation.role}.`,
    '',
    `Accept the invitation: ${link}`,
    '',
    `The link expires at ${invitation.expiresAt.toISOString()}. If you did not expect this email, ignore it.`,
  ].join('\n');
  let status: 'sent' | 'failed' = 'sent';
  try {
    await sender.send({ to: invitation.email, subject: `${who} invited you to ${ws.name}`, text });
  } catch (err) {
    status = 'failed';
    onError(err);
  }
  await em.nativeUpdate(TeamInvitation, { id: invitation.id }, { emailStatus: status });
  invitation.emailStatus = status;
  return status;
}

async function findByToken(
  em: EntityManager,
  token: string,
  forAccept = false,
  lock = false,
): Promise<ITeamInvitation> {
  const where = { tokenHash: sha256Hex(token) };
  const inv = forAccept
    ? await em.findOne(TeamInvitation, where, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } : {})
    : await em.findOne(TeamInvitation, where, { populate: ['workspace', 'workspace.owner', 'invitedBy'] });
  if (!inv) throw notFound('invitation');
  const status = invitationStatus(inv);
  if (status === 'revoked') throw new AppError(410, 'invitation_revoked', 'this invitation was revoked');
  if (status === 'accepted') throw conflict('invitation_used', 'this invitation was already accepted');
  if (status === 'expired') throw new AppError(410, 'invitation_expired', 'this invitation has expired');
  return inv;
}

/** The public view of a pending invitation (404/409/410 otherwise). */
export const invitationByToken = (em: EntityManager, token: string) => findByToken(em, token);

export interface AcceptInput {
  name?: string;
  password?: string;
}

/**
 * Accepts a pending invitation (single use) and starts a session for the invitee.
 * - No account with the invited email: one is created (with its own workspace, as at sign-up); `password` is required.
 * - An account exists: the caller must prove it is that account, with its `password` or a bearer
 *   credential of that same user (401 `invalid_credentials` otherwise). A bearer of another user is
 *   403 `email_mismatch` — an invitation is for the address it was sent to.
 */
export async function acceptInvitation(
  em: EntityManager,
  config: Config,
  token: string,
  input: AcceptInput,
  bearer: AuthInfo | undefined,
  client: ClientInfo,
  validatePassword: (p: string | undefined) => string,
): Promise<{ tokens: IssuedTokens; created: boolean }> {
  return em.transactional(async (tx) => {
    // Same lock order as every other team change (workspace row, then the invitation row), so an
    // accept racing a revoke cannot deadlock; the invitation is then re-read under its own lock.
    const first = await findByToken(tx, token, true, false);
    const workspace = await tx.findOneOrFail(Workspace, first.workspace.id, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const inv = await findByToken(tx, token, true, true);
    let user: IUser | null = await tx.findOne(User, { email: inv.email });
    let created = false;
    if (user) {
      if (bearer) {
        if (bearer.userId !== user.id)
          throw new AppError(403, 'email_mismatch', 'this invitation was sent to another email address');
      } else {
        const ok = await verifyPassword(input.password ?? '', user.passwordHash ?? DUMMY_PASSWORD_HASH);
        if (!ok || !user.passwordHash || !input.password) {
          throw new AppError(
            401,
            'invalid_credentials',
            'an account with this email exists: sign in or give its password to accept',
          );
        }
      }
      if (await tx.count(TeamMember, { workspace, user }))
        throw conflict('already_member', 'you are already a member of this team');
    } else {
      if (bearer) throw new AppError(403, 'email_mismatch', 'this invitation was sent to another email address');
      const password = validatePassword(input.password);
      user = createAccount(tx, { email: inv.email, name: input.name, passwordHash: await hashPassword(password) });
      created = true;
    }
    const member = tx.create(TeamMember, { workspace, user, role: inv.role, allApps: inv.allApps, appIds: inv.appIds });
    inv.acceptedAt = new Date();
    inv.acceptedBy = ref(user);
    await tx.flush();
    audit(
      tx,
      workspace.id,
      user.id,
      'invitation.accepted',
      { memberId: member.id, invitationId: inv.id },
      { email: inv.email, role: inv.role, new_account: created },
    );
    const tokens = await startSession(tx, config, user, client);
    return { tokens, created };
  });
}
