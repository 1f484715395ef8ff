import { z } from 'zod';
import { defineOperation } from '../operation.js';
import { IdParams } from '../schemas.js';
import { User } from '../../db/entities/User.js';
import { createToken, listTokens, revokeToken } from '../../domain/auth/api-tokens.js';
import { ApiTokenView, CreateApiTokenBody, CreatedApiToken, UserView, toApiTokenView, toUserView } from './schemas.js';

const tag = 'users';

export const getMe = defineOperation({
  method: 'GET',
  path: '/api/users/me',
  summary: 'The authenticated user',
  tag,
  auth: 'user',
  actingAs: false,
  responses: { 200: UserView.extend({ workspace_id: z.uuid() }) },
  errors: { 401: ['unauthorized'] },
  // The profile comes with the credential (one lookup on a cache miss, none on a hit).
  // `input.em` is read only when needed: a request answered from the credential forks no EntityManager.
  handler: async (input) => ({
    ...toUserView(input.auth.user ?? (await input.em.findOneOrFail(User, input.auth.userId))),
    workspace_id: input.actor.workspaceId,
  }),
});

export const listApiTokens = defineOperation({
  method: 'GET',
  path: '/api/users/me/api-tokens',
  summary: 'Personal access tokens of the authenticated user (secrets are never shown again)',
  tag,
  auth: 'user',
  actingAs: false,
  responses: { 200: z.array(ApiTokenView) },
  errors: { 401: ['unauthorized'] },
  handler: async ({ em, auth }) => (await listTokens(em, auth.userId)).map(toApiTokenView),
});

export const createApiToken = defineOperation({
  method: 'POST',
  path: '/api/users/me/api-tokens',
  idempotency: {
    exempt:
      'the token is shown once and only its SHA-256 is kept: a replay would have to keep the token itself for 24 hours; a client unsure whether one was made lists its tokens and revokes the extra',
  },
  summary: 'Create a personal access token; the secret is returned only in this response',
  tag,
  auth: 'user',
  actingAs: false,
  body: CreateApiTokenBody,
  responses: { 201: CreatedApiToken },
  errors: { 400: ['invalid_body'], 401: ['unauthorized'], 409: ['token_limit_reached'] },
  handler: async ({ em, services, auth, body }) => {
    const { token, secret } = await createToken(em, services.config, auth.userId, body.name);
    return { ...toApiTokenView(token), token: secret };
  },
});

export const deleteApiToken = defineOperation({
  method: 'DELETE',
  path: '/api/users/me/api-tokens/{id}',
  ids: { path: { id: { own: 'an API token of the caller' } } },
  summary: 'Revoke a personal access token',
  tag,
  auth: 'user',
  actingAs: false,
  params: IdParams,
  responses: { 204: null },
  errors: { 400: ['invalid_id'], 401: ['unauthorized'], 404: ['not_found'] },
  handler: async ({ em, auth, params }) => {
    await revokeToken(em, auth.userId, params.id);
  },
});
