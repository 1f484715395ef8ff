// Personal access tokens: shown once at creation, stored as SHA-256, revocable.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiToken, type IApiToken } from '../../db/entities/ApiToken.js';
import { User } from '../../db/entities/User.js';
import { sha256Hex } from '../../lib/crypto.js';
import type { Config } from '../../lib/config.js';
import { AppError, notFound } from '../errors.js';
import { mintPersonalAccessToken } from './auth.js';
import { credentialsChanged } from '../../lib/credential-cache.js';

export const MAX_ACTIVE_TOKENS = 50;

export function listTokens(em: EntityManager, userId: string): Promise<IApiToken[]> {
  return em.find(ApiToken, { user: userId, revokedAt: null }, { orderBy: { id: 'desc' } });
}

export async function createToken(
  em: EntityManager,
  config: Pick<Config, 'jwt'>,
  userId: string,
  name: string,
): Promise<{ token: IApiToken; secret: string }> {
  if ((await em.count(ApiToken, { user: userId, revokedAt: null })) >= MAX_ACTIVE_TOKENS) {
    throw new AppError(409, 'token_limit_reached', `at most ${MAX_ACTIVE_TOKENS} active tokens; revoke one first`);
  }
  const secret = mintPersonalAccessToken(config); // tagged, so it can be told from a guess without the database
  const token = em.create(ApiToken, {
    user: em.getReference(User, userId),
    name: name.trim(),
    tokenHash: sha256Hex(secret),
    prefix: secret.slice(0, 12),
  });
  await em.flush();
  return { token, secret };
}

export async function revokeToken(em: EntityManager, userId: string, tokenId: string): Promise<void> {
  const n = await em.nativeUpdate(ApiToken, { id: tokenId, user: userId, revokedAt: null }, { revokedAt: new Date() });
  if (n === 0) throw notFound('token');
  await credentialsChanged(userId);
}
