// Sign-up, login, session tokens (short-lived JWT + rotating refresh token) and bearer authentication.
import type { EntityManager } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { SignJWT, jwtVerify } from 'jose';
import type { Config } from '../lib/config.js';
import { DUMMY_PASSWORD_HASH, hashPassword, randomSecret, sha256Hex, verifyPassword } from '../lib/crypto.js';
import { isUuid, uuidv7 } from '../lib/ids.js';
import { User, type IUser } from '../db/entities/User.js';
import { Workspace } from '../db/entities/Workspace.js';
import { TeamMember } from '../db/entities/TeamMember.js';
import { Session, type ISession } from '../db/entities/Session.js';
import { RefreshToken } from '../db/entities/RefreshToken.js';
import { ApiToken } from '../db/entities/ApiToken.js';
import { AppError, unauthorized } from './errors.js';
import type { AuthInfo } from './identity.js';

export const PAT_PREFIX = 'pat_';
const REFRESH_PREFIX = 'rt_';
const JWT_ALG = 'HS256';

export interface IssuedTokens {
  user: IUser;
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

export interface ClientInfo {
  userAgent?: string;
  ip?: string;
}

export const normaliseEmail = (email: string) => email.trim().toLowerCase();

async function signAccessToken(config: Config, userId: string, sessionId: string): Promise<string> {
  return new SignJWT({ sid: sessionId })
    .setProtectedHeader({ alg: JWT_ALG, typ: 'JWT' })
    .setSubject(userId)
    .setIssuer(config.jwt.issuer)
    .setAudience(config.jwt.audience)
    .setJti(uuidv7())
    .setIssuedAt()
    .setExpirationTime(`${config.jwt.accessTtlSeconds}s`)
    .sign(config.jwt.secret);
}

function newRefreshToken(em: EntityManager, config: Config, session: ISession): string {
  const token = randomSecret(REFRESH_PREFIX);
  em.create(RefreshToken, {
    session,
    tokenHash: sha256Hex(token),
    expiresAt: new Date(Date.now() + config.refreshTtlSeconds * 1000),
  });
  return token;
}

export async function startSession(em: EntityManager, config: Config, user: IUser, client: ClientInfo): Promise<IssuedTokens> {
  const session = em.create(Session, {
    user,
    userAgent: client.userAgent?.slice(0, 400) ?? null,
    ip: client.ip ?? null,
    expiresAt: new Date(Date.now() + config.refreshTtlSeconds * 1000),
  });
  const refreshToken = newRefreshToken(em, config, session);
  await em.flush();
  return { user, refreshToken, accessToken: await signAccessToken(config, user.id, session.id), expiresIn: config.jwt.accessTtlSeconds };
}

/** A new user with the workspace every account owns (and its owner membership), unflushed. */
export function createAccount(em: EntityManager, input: { email: string; name?: string | null; passwordHash: string }): IUser {
  const name = input.name?.trim() || null;
  const user = em.create(User, { email: input.email, name, passwordHash: input.passwordHash });
  const workspace = em.create(Workspace, { owner: user, name: `${name || input.email.split('@')[0]}'s workspace` });
  em.create(TeamMember, { workspace, user, role: 'owner', allApps: true, appIds: [] });
  return user;
}

export async function signup(
  em: EntityManager,
  config: Config,
  input: { email: string; password: string; name?: string | null },
  client: ClientInfo,
): Promise<IssuedTokens> {
  const email = normaliseEmail(input.email);
  const passwordHash = await hashPassword(input.password);
  try {
    return await em.transactional(async (tx) => {
      if (await tx.count(User, { email })) throw new AppError(409, 'email_taken', 'an account with this email already exists');
      return startSession(tx, config, createAccount(tx, { email, name: input.name, passwordHash }), client);
    });
  } catch (err) {
    // Two sign-ups racing for one address: the unique index decides.
    if (err instanceof UniqueConstraintViolationException) throw new AppError(409, 'email_taken', 'an account with this email already exists');
    throw err;
  }
}

export async function login(
  em: EntityManager,
  config: Config,
  input: { email: string; password: string },
  client: ClientInfo,
): Promise<IssuedTokens> {
  const user = await em.findOne(User, { email: normaliseEmail(input.email) });
  // Verify against a dummy hash for unknown users so the timing does not reveal which emails exist.
  const ok = await verifyPassword(input.password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
  if (!user || !user.passwordHash || !ok) throw new AppError(401, 'invalid_credentials', 'email or password is incorrect');
  return startSession(em, config, user, client);
}

/** Rotates a refresh token. Presenting one that was already used revokes its whole session (theft). */
export async function refresh(em: EntityManager, config: Config, token: string): Promise<IssuedTokens> {
  const now = new Date();
  const row = await em.findOne(RefreshToken, { tokenHash: sha256Hex(token) }, { populate: ['session', 'session.user'] });
  if (!row) throw unauthorized('invalid refresh token');
  const session = row.session.getEntity();
  // Claim the token atomically (autocommit): of two concurrent refreshes only one wins, and the
  // revocation below must persist even though the request then fails.
  const claimed = await em.nativeUpdate(RefreshToken, { id: row.id, usedAt: null }, { usedAt: now });
  if (claimed === 0) {
    await em.nativeUpdate(Session, { id: session.id, revokedAt: null }, { revokedAt: now });
    throw unauthorized('refresh token was already used; the session has been revoked');
  }
  if (row.expiresAt <= now || session.revokedAt || session.expiresAt <= now) throw unauthorized('refresh token expired or revoked');
  session.lastUsedAt = now;
  const refreshToken = newRefreshToken(em, config, session);
  await em.flush();
  const user = session.user.getEntity();
  return { user, refreshToken, accessToken: await signAccessToken(config, user.id, session.id), expiresIn: config.jwt.accessTtlSeconds };
}

export async function logout(em: EntityManager, auth: AuthInfo): Promise<void> {
  if (auth.kind === 'session' && auth.sessionId) {
    await em.nativeUpdate(Session, { id: auth.sessionId, revokedAt: null }, { revokedAt: new Date() });
  }
}

const BEARER_RE = /^[A-Za-z0-9._~+/=-]{1,4096}$/;

/** Resolves a bearer credential to the user it belongs to, or throws 401 `unauthorized`. */
export async function authenticateBearer(em: EntityManager, config: Config, header: string | undefined): Promise<AuthInfo> {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? '');
  if (!match || !BEARER_RE.test(match[1])) throw unauthorized(header ? 'malformed bearer credential' : 'authentication required');
  const token = match[1];
  if (token.startsWith(PAT_PREFIX)) return authenticatePat(em, token);
  if (token.split('.').length === 3) return authenticateJwt(em, config, token);
  throw unauthorized('invalid bearer credential');
}

async function authenticatePat(em: EntityManager, token: string): Promise<AuthInfo> {
  const row = await em.findOne(ApiToken, { tokenHash: sha256Hex(token), revokedAt: null });
  if (!row) throw unauthorized('invalid or revoked token');
  const now = Date.now();
  // Record use at most once a minute, so authentication is not a write on every request.
  if (!row.lastUsedAt || now - row.lastUsedAt.getTime() > 60_000) {
    await em.nativeUpdate(ApiToken, { id: row.id }, { lastUsedAt: new Date(now) });
  }
  return { userId: row.user.id, kind: 'pat', tokenId: row.id };
}

async function authenticateJwt(em: EntityManager, config: Config, token: string): Promise<AuthInfo> {
  let sub: string | undefined;
  let sid: unknown;
  try {
    const { payload } = await jwtVerify(token, config.jwt.secret, {
      algorithms: [JWT_ALG],
      issuer: config.jwt.issuer,
      audience: config.jwt.audience,
      requiredClaims: ['exp', 'sub', 'sid'],
    });
    sub = payload.sub;
    sid = payload.sid;
  } catch {
    throw unauthorized('invalid or expired token');
  }
  if (!isUuid(sub) || !isUuid(sid)) throw unauthorized('invalid token');
  const session = await em.findOne(Session, { id: sid, user: sub, revokedAt: null, expiresAt: { $gt: new Date() } });
  if (!session) throw unauthorized('session revoked or expired');
  // Like PAT use, session activity is recorded at most once a minute.
  if (Date.now() - session.lastUsedAt.getTime() > 60_000) await em.nativeUpdate(Session, { id: sid }, { lastUsedAt: new Date() });
  return { userId: sub, kind: 'session', sessionId: sid };
}
