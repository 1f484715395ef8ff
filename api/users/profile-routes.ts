// Profile, password and sessions of the authenticated user (identity routes: X-Acting-As is ignored).
import { z } from 'zod';
import { defineOperation } from '../operation.js';
import { IdParams } from '../schemas.js';
import { Password } from '../auth/schemas.js';
import { changePassword, listSessions, revokeSession, updateProfile } from '../../domain/users/users.js';
import { page, pageQuery, pageSchema, toPageRequest } from '../../lib/pagination.js';
import { ChangePasswordBody, SessionView, UpdateProfileBody, UserView, toSessionView, toUserView } from './schemas.js';

const tag = 'users';

export const updateMe = defineOperation({
  method: 'PATCH',
  path: '/api/users/me',
  summary: 'Update name, timezone (IANA) and locale (BCP 47) of the authenticated user',
  tag,
  auth: 'user',
  actingAs: false,
  body: UpdateProfileBody,
  responses: { 200: UserView },
  errors: { 400: ['invalid_body'], 401: ['unauthorized'] },
  handler: async ({ em, auth, body }) => toUserView(await updateProfile(em, auth.userId, body)),
});

export const changePasswordOp = defineOperation({
  method: 'POST',
  path: '/api/users/me/change-password',
  summary: "Change the password; revokes the user's other sessions (the calling one stays)",
  tag,
  auth: 'user',
  actingAs: false,
  body: ChangePasswordBody.extend({ new_password: Password }),
  responses: { 204: null },
  errors: { 400: ['invalid_body', 'invalid_current_password'], 401: ['unauthorized'] },
  handler: async ({ em, auth, body }) => {
    await changePassword(em, auth, body.current_password, body.new_password);
  },
});

export const listSessionsOp = defineOperation({
  method: 'GET',
  path: '/api/users/me/sessions',
  summary: 'Live sessions of the authenticated user, newest first; `current` marks the calling one',
  tag,
  auth: 'user',
  actingAs: false,
  query: z.object(pageQuery).strict(),
  responses: { 200: pageSchema(SessionView) },
  errors: { 400: ['invalid_query'], 401: ['unauthorized'] },
  handler: async ({ em, auth, query }) =>
    page(await listSessions(em, auth.userId, toPageRequest(query)), query.limit, (s) =>
      toSessionView(s, auth.sessionId),
    ),
});

export const revokeSessionOp = defineOperation({
  method: 'DELETE',
  path: '/api/users/me/sessions/{id}',
  ids: { path: { id: { own: 'a session of the caller' } } },
  summary: 'Revoke one of your sessions (revoking the current one logs out)',
  tag,
  auth: 'user',
  actingAs: false,
  params: IdParams,
  responses: { 204: null },
  errors: { 400: ['invalid_id'], 401: ['unauthorized'], 404: ['not_found'] },
  handler: async ({ em, auth, params }) => {
    await revokeSession(em, auth.userId, params.id);
  },
});
