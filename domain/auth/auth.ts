// Sign-up, login, session tokens (short-lived JWT + rotating refresh token) and bearer authentication.
import type { EntityManager } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import type { Config } from '../../lib/config.js';
import { DUMMY_PASSWORD_HASH, hashPassword, randomSecret, sha256Hex, verifyPassword } from '../../lib/crypto.js';
import { isUuid, uuidv7 } from '../../lib/ids.js';
import { credentialsChanged } from '../../lib/credential-cache.js';
import { User, type IUser } from '../../db/entities/User.js';
import { Workspace } from '../../db/entities/Workspace.js';
import { TeamMember } from '../../db/entities/TeamMember.js';
import { Session, type ISession } from '../../db/entities/Session.js';
import { RefreshToken } from '../../db/entities/RefreshToken.js';
import { AppError, unauthorized } from '../errors.js';
import type { AuthInfo, UserSnapshot } from '../identity.js';

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

export async function startSession(
  em: EntityManager,
  config: Config,
  user: IUser,
  client: ClientInfo,
): Promise<IssuedTokens> {
  const session = em.create(Session, {
    user,
    userAgent: client.userAgent?.slice(0, 400) ?? null,
    ip: client.ip ?? null,
    expiresAt: new Date(Date.now() + config.refreshTtlSeconds * 1000),
  });
  const refreshToken = newRefreshToken(em, config, session);
  await em.flush();
  return {
    user,
    refreshToken,
    accessToken: await signAccessToken(config, user.id, session.id),
    expiresIn: config.jwt.accessTtlSeconds,
  };
}

/** A new user with the workspace every account owns (and its owner membership), unflushed. */
export function createAccount(
  em: EntityManager,
  input: { email: string; name?: string | null; passwordHash: string },
): IUser {
  const name = input.name?.trim() || null;
  const user = em.create(User, { email: input.email, name, passwordHash: input.passwordHash });
  // The workspace name column holds 200 characters; a long user name or email is cut (by code point).
  const owner = [...(name || input.email.split('@')[0])].slice(0, 200 - "'s workspace".length).join('');
  const workspace = em.create(Workspace, { owner: user, name: `${owner}'s workspace` });
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
      if (await tx.count(User, { email }))
        throw new AppError(409, 'email_taken', 'an account with this email already exists');
      return startSession(tx, config, createAccount(tx, { email, name: input.name, passwordHash }), client);
    });
  } catch (err) {
    // Two sign-ups racing for one address: the unique index decides.
    if (err instanceof UniqueConstraintViolationException)
      throw new AppError(409, 'email_taken', 'an account with this email already exists');
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
  if (!user || !user.passwordHash || !ok)
    throw new AppError(401, 'invalid_credentials', 'email or password is incorrect');
  return startSession(em, config, user, client);
}

/** Rotates a refresh token. Presenting one that was already used revokes its whole session (theft). */
export async function refresh(em: EntityManager, config: Config, token: string): Promise<IssuedTokens> {
  const now = new Date();
  const row = await em.findOne(
    RefreshToken,
    { tokenHash: sha256Hex(token) },
    { populate: ['session', 'session.user'] },
  );
  if (!row) throw unauthorized('invalid refresh token');
  const session = row.session.getEntity();
  // Claim the token atomically (autocommit): of two concurrent refreshes only one wins, and the
  // revocation below must persist even though the request then fails.
  const claimed = await em.nativeUpdate(RefreshToken, { id: row.id, usedAt: null }, { usedAt: now });
  if (claimed === 0) {
    await em.nativeUpdate(Session, { id: session.id, revokedAt: null }, { revokedAt: now });
    await credentialsChanged(session.user.id);
    throw unauthorized('refresh token was already used; the session has been revoked');
  }
  if (row.expiresAt <= now || session.revokedAt || session.expiresAt <= now)
    throw unauthorized('refresh token expired or revoked');
  session.lastUsedAt = now;
  const refreshToken = newRefreshToken(em, config, session);
  await em.flush();
  const user = session.user.getEntity();
  return {
    user,
    refreshToken,
    accessToken: await signAccessToken(config, user.id, session.id),
    expiresIn: config.jwt.accessTtlSeconds,
  };
}

export async function logout(em: EntityManager, auth: AuthInfo): Promise<void> {
  if (auth.kind === 'session' && auth.sessionId) {
    await em.nativeUpdate(Session, { id: auth.sessionId, revokedAt: null }, { revokedAt: new Date() });
    await credentialsChanged(auth.userId);
  }
}

const BEARER_RE = /^[A-Za-z0-9._~+/=-]{1,4096}$/;

/** What a bearer credential resolves to, in one database round trip: the user and their own workspace. */
export interface ResolvedCredential {
  auth: AuthInfo;
  user: UserSnapshot;
  workspace: { id: string; isDemo: boolean } | null;
  /** Epoch ms after which the credential is no longer valid (JWT or session expiry). */
  notAfter: number;
}

/** Parses `Authorization: Bearer <token>`; throws 401 for a missing or malformed header. */
export function bearerToken(header: string | undefined): string {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? '');
  if (!match || !BEARER_RE.test(match[1]))
    throw unauthorized(header ? 'malformed bearer credential' : 'authentication required');
  return match[1];
}

/** Resolves a bearer credential to the user it belongs to, or throws 401 `unauthorized`. Uncached. */
export async function authenticateBearer(
  em: EntityManager,
  config: Config,
  header: string | undefined,
): Promise<AuthInfo> {
  return (await resolveCredential(em, config, bearerToken(header))).auth;
}

/**
 * A bearer credential checked without the database: a session JWT's signature and claims (jose), or
 * a personal access token's format and tag. Only what passes costs a database round trip.
 */
export type VerifiedBearer =
  | {
      kind: 'pat';
      token: string;
      /** carries a valid tag: minted by us (see `mintPersonalAccessToken`) */ tagged: boolean;
    }
  | { kind: 'session'; userId: string; sessionId: string; /** JWT expiry, epoch ms */ expiresAt: number };

// A personal access token is `pat_` + 43 base64url characters (32 bytes): 22 random bytes (176 bits)
// followed by a 10-byte HMAC-SHA256 tag of them, keyed by a key derived from the JWT secret. The tag
// lets the authenticator tell a token we minted from a guessed one with no database work (as the
// signature does for a JWT), so a throttled address can still use a new valid token. Tokens minted
// before tags existed (32 random bytes) have the same format and stay valid; they are just untagged.
const PAT_RE = /^pat_[A-Za-z0-9_-]{43}$/;
const PAT_RANDOM_BYTES = 22;
const PAT_TAG_BYTES = 10;
const patTagKeys = new WeakMap<Uint8Array, Buffer>();

function patTag(config: Pick<Config, 'jwt'>, random: Buffer): Buffer {
  let key = patTagKeys.get(config.jwt.secret);
  if (!key)
    patTagKeys.set(
      config.jwt.secret,
      (key = createHmac('sha256', config.jwt.secret).update('personal-access-token-tag:v1').digest()),
    );
  return createHmac('sha256', key).update(random).digest().subarray(0, PAT_TAG_BYTES);
}

/** A new personal access token secret (shown once; only its SHA-256 is stored). */
export function mintPersonalAccessToken(config: Pick<Config, 'jwt'>): string {
  const random = randomBytes(PAT_RANDOM_BYTES);
  return PAT_PREFIX + Buffer.concat([random, patTag(config, random)]).toString('base64url');
}

/** True when a well-formed token carries a valid tag (canonical base64url only). */
export function isTaggedPat(config: Pick<Config, 'jwt'>, token: string): boolean {
  const body = token.slice(PAT_PREFIX.length);
  const raw = Buffer.from(body, 'base64url');
  if (raw.length !== PAT_RANDOM_BYTES + PAT_TAG_BYTES || raw.toString('base64url') !== body) return false;
  return timingSafeEqual(raw.subarray(PAT_RANDOM_BYTES), patTag(config, raw.subarray(0, PAT_RANDOM_BYTES)));
}

/** Checks a bearer credential without the database; throws 401 `unauthorized` for one that cannot be valid. */
export async function verifyBearer(config: Config, token: string): Promise<VerifiedBearer> {
  if (token.startsWith(PAT_PREFIX)) {
    if (!PAT_RE.test(token)) throw unauthorized('invalid or revoked token');
    return { kind: 'pat', token, tagged: isTaggedPat(config, token) };
  }
  if (token.split('.').length !== 3) throw unauthorized('invalid bearer credential');
  let payload;
  try {
    ({ payload } = await jwtVerify(token, config.jwt.secret, {
      algorithms: [JWT_ALG],
      issuer: config.jwt.issuer,
      audience: config.jwt.audience,
      requiredClaims: ['exp', 'sub', 'sid'],
    }));
  } catch {
    throw unauthorized('invalid or expired token');
  }
  const { sub, sid, exp } = payload;
  if (!isUuid(sub) || !isUuid(sid)) throw unauthorized('invalid token');
  return { kind: 'session', userId: sub, sessionId: sid, expiresAt: (exp ?? 0) * 1000 };
}

/** Loads a verified credential: one database statement; 401 when revoked, expired or unknown. Uncached. */
export async function loadCredential(em: EntityManager, verified: VerifiedBearer): Promise<ResolvedCredential> {
  return verified.kind === 'pat' ? resolvePat(em, verified.token) : resolveSession(em, verified);
}

/** `verifyBearer` then `loadCredential`. Uncached and unthrottled (the request path uses api/authenticator.ts). */
export async function resolveCredential(em: EntityManager, config: Config, token: string): Promise<ResolvedCredential> {
  return loadCredential(em, await verifyBearer(config, token));
}

interface CredentialRow {
  credential_id: string;
  user_id: string;
  email: string;
  name: string | null;
  timezone: string | null;
  locale: string | null;
  created_at: Date;
  updated_at: Date;
  workspace_id: string | null;
  is_demo: boolean | null;
  expires_at?: Date;
}

// The credential, its user and the user's workspace in one statement. The data-modifying CTE records
// the use (at most once a minute) in the same round trip; later uses are batched by UsageRecorder.
const USER_COLUMNS = `u.id as user_id, u.email, u.name, u.timezone, u.locale, u.created_at, u.updated_at, w.id as workspace_id, w.is_demo`;
const PAT_SQL = `
with tok as (select id, user_id, last_used_at from api_tokens where token_hash = ? and revoked_at is null),
touched as (
  update api_tokens t set last_used_at = now() from tok
  where t.id = tok.id and (tok.last_used_at is null or tok.last_used_at < now() - interval '60 seconds') returning t.id)
select tok.id as credential_id, ${USER_COLUMNS}
from tok join users u on u.id = tok.user_id left join workspaces w on w.owner_id = u.id`;
const SESSION_SQL = `
with s as (select id, user_id, last_used_at, expires_at from sessions where id = ? and user_id = ? and revoked_at is null and expires_at > now()),
touched as (
  update sessions x set last_used_at = now() from s
  where x.id = s.id and s.last_used_at < now() - interval '60 seconds' returning x.id)
select s.id as credential_id, s.expires_at, ${USER_COLUMNS}
from s join users u on u.id = s.user_id left join workspaces w on w.owner_id = u.id`;

function toResolved(row: CredentialRow, auth: AuthInfo, notAfter: number): ResolvedCredential {
  const user: UserSnapshot = {
    id: row.user_id,
    email: row.email,
    name: row.name,
    timezone: row.timezone,
    locale: row.locale,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
  return {
    auth: { ...auth, user },
    user,
    workspace: row.workspace_id ? { id: row.workspace_id, isDemo: !!row.is_demo } : null,
    notAfter,
  };
}

async function resolvePat(em: EntityManager, token: string): Promise<ResolvedCredential> {
  const [row] = (await em.getConnection().execute(PAT_SQL, [sha256Hex(token)])) as CredentialRow[];
  if (!row) throw unauthorized('invalid or revoked token');
  return toResolved(row, { userId: row.user_id, kind: 'pat', tokenId: row.credential_id }, Infinity);
}

async function resolveSession(
  em: EntityManager,
  v: Extract<VerifiedBearer, { kind: 'session' }>,
): Promise<ResolvedCredential> {
  const [row] = (await em.getConnection().execute(SESSION_SQL, [v.sessionId, v.userId])) as CredentialRow[];
  if (!row) throw unauthorized('session revoked or expired');
  const notAfter = Math.min(v.expiresAt, new Date(row.expires_at!).getTime());
  return toResolved(row, { userId: v.userId, kind: 'session', sessionId: v.sessionId }, notAfter);
}

/**
 * Uses of cached credentials, written in batches (one UPDATE per table) instead of one write per
 * request. Each credential is recorded at most once a minute, as before.
 */
export class UsageRecorder {
  private pending = { pat: new Map<string, Date>(), session: new Map<string, Date>() };
  private lastRecorded = new Map<string, number>();

  record(auth: AuthInfo, now = Date.now()): void {
    const id = auth.kind === 'pat' ? auth.tokenId : auth.sessionId;
    if (!id) return;
    const last = this.lastRecorded.get(id);
    if (last !== undefined && now - last < 60_000) return;
    if (this.lastRecorded.size > 50_000) this.lastRecorded.clear();
    this.lastRecorded.set(id, now);
    if (last !== undefined) this.pending[auth.kind].set(id, new Date(now)); // the first use was written by the lookup
  }

  async flush(em: EntityManager): Promise<void> {
    const batches = [
      ['api_tokens', this.pending.pat],
      ['sessions', this.pending.session],
    ] as const;
    this.pending = { pat: new Map(), session: new Map() };
    for (const [table, rows] of batches) {
      if (rows.size === 0) continue;
      // Arrays go as PostgreSQL array literals (the query builder would expand a JS array into a list).
      const ids = `{${[...rows.keys()].join(',')}}`;
      const ats = `{${[...rows.values()].map((d) => `"${d.toISOString()}"`).join(',')}}`;
      await em
        .getConnection()
        .execute(
          `update ${table} t set last_used_at = greatest(t.last_used_at, v.at) from unnest(?::uuid[], ?::timestamptz[]) as v(id, at) where t.id = v.id`,
          [ids, ats],
        );
    }
  }
}
