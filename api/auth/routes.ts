import type { Context } from 'koa';
import { defineOperation } from '../operation.js';
import { login, logout, refresh, signup } from '../../domain/auth/auth.js';
import { AppError } from '../../domain/errors.js';
import { AuthResult, LoginBody, RefreshBody, SignupBody, toAuthResult } from './schemas.js';

const tag = 'auth';
const client = (ctx: Context) => ({ userAgent: ctx.get('user-agent') || undefined, ip: ctx.ip });

export const signupOp = defineOperation({
  method: 'POST',
  path: '/api/auth/signup',
  idempotency: {
    exempt:
      'public (no user to key on), and its answer is a session: a replay would hand the same access and refresh tokens out again, which rotation forbids; a repeat is 409 email_taken',
  },
  summary: 'Create an account (and its workspace) and start a session',
  tag,
  auth: 'public',
  body: SignupBody,
  responses: { 201: AuthResult },
  errors: { 400: ['invalid_body'], 409: ['email_taken'], 429: ['rate_limited'] },
  handler: async ({ em, services, body, ctx }) => toAuthResult(await signup(em, services.config, body, client(ctx))),
});

export const loginOp = defineOperation({
  method: 'POST',
  path: '/api/auth/login',
  summary: 'Start a session with email and password',
  tag,
  auth: 'public',
  body: LoginBody,
  responses: { 200: AuthResult },
  description:
    'A wrong email or password counts as a failed authentication of the client address (as a bad bearer credential does): past `RATE_LIMIT_AUTH_FAILURES_PER_MINUTE` in 60 s further wrong ones are 429 `rate_limited` with `Retry-After`. A correct password is never refused by that block.',
  errors: { 400: ['invalid_body'], 401: ['invalid_credentials'], 429: ['rate_limited'] },
  handler: async ({ em, services, body, ctx }) => {
    try {
      return toAuthResult(await login(em, services.config, body, client(ctx)));
    } catch (err) {
      if (err instanceof AppError && err.status === 401) return services.authenticator.loginFailed(ctx.ip, err);
      throw err;
    }
  },
});

export const refreshOp = defineOperation({
  method: 'POST',
  path: '/api/auth/refresh',
  operationId: 'refreshSession',
  summary: 'Exchange a refresh token for new tokens; the old refresh token is spent',
  tag,
  auth: 'public',
  body: RefreshBody,
  responses: { 200: AuthResult },
  errors: { 400: ['invalid_body'], 401: ['unauthorized'] },
  handler: async ({ em, services, body }) => toAuthResult(await refresh(em, services.config, body.refresh_token)),
});

export const logoutOp = defineOperation({
  method: 'POST',
  path: '/api/auth/logout',
  summary: 'Revoke the current session (a no-op for personal access tokens)',
  tag,
  auth: 'user',
  actingAs: false,
  responses: { 204: null },
  errors: { 401: ['unauthorized'] },
  handler: async ({ em, auth }) => {
    await logout(em, auth);
  },
});
