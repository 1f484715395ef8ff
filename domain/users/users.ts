// Profile, password and session management of the authenticated user (identity routes: never acting-as).
import type { EntityManager } from '@mikro-orm/postgresql';
import { User, type IUser } from '../../db/entities/User.js';
import { Session, type ISession } from '../../db/entities/Session.js';
import { hashPassword, verifyPassword, DUMMY_PASSWORD_HASH } from '../../lib/crypto.js';
import { keyset, type PageRequest } from '../../lib/pagination.js';
import { badRequest, notFound } from '../errors.js';
import type { AuthInfo } from '../identity.js';
import { credentialsChanged } from '../../lib/credential-cache.js';

export interface ProfilePatch {
  name?: string | null;
  timezone?: string | null;
  locale?: string | null;
}

export async function updateProfile(em: EntityManager, userId: string, patch: ProfilePatch): Promise<IUser> {
  const user = await em.findOneOrFail(User, userId);
  if (patch.name !== undefined) user.name = patch.name?.trim() || null;
  if (patch.timezone !== undefined) user.timezone = patch.timezone;
  if (patch.locale !== undefined) user.locale = patch.locale;
  await em.flush();
  await credentialsChanged(userId); // cached credentials carry the profile
  return user;
}

/**
 * Changes the password after checking the current one (400 `invalid_current_password`: the bearer
 * is valid, so this is not a 401). Every other live session of the user is revoked; the calling
 * session (if the caller uses one) stays. Personal access tokens are not affected.
 */
export async function changePassword(em: EntityManager, auth: AuthInfo, current: string, next: string): Promise<void> {
  const user = await em.findOneOrFail(User, auth.userId);
  const ok = await verifyPassword(current, user.passwordHash ?? DUMMY_PASSWORD_HASH);
  if (!ok || !user.passwordHash) throw badRequest('invalid_current_password', 'the current password is incorrect');
  user.passwordHash = await hashPassword(next);
  await em.transactional(async (tx) => {
    await tx.flush();
    const others = auth.kind === 'session' && auth.sessionId ? { id: { $ne: auth.sessionId } } : {};
    await tx.nativeUpdate(Session, { user: auth.userId, revokedAt: null, ...others }, { revokedAt: new Date() });
  });
  await credentialsChanged(auth.userId);
}

const live = () => ({ revokedAt: null, expiresAt: { $gt: new Date() } });

/** Live sessions, newest first. */
export function listSessions(em: EntityManager, userId: string, page: PageRequest): Promise<ISession[]> {
  const k = keyset(page, 'desc');
  return em.find(Session, { user: userId, ...live(), ...k.where }, k.options);
}

/** Revokes one live session of the user; another user's (or an already dead) session is 404. */
export async function revokeSession(em: EntityManager, userId: string, sessionId: string): Promise<void> {
  const n = await em.nativeUpdate(Session, { id: sessionId, user: userId, ...live() }, { revokedAt: new Date() });
  if (n === 0) throw notFound('session');
  await credentialsChanged(userId);
}
