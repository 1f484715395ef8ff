import type { Context } from 'koa';
import type { Services } from '../services.js';

/** Resolves the bearer credential into `ctx.state.auth` (see api/authenticator.ts). For `auth: 'user'` operations. */
export const authenticate = (services: Services) => async (ctx: Context) => {
  const { key, credential } = await services.authenticator.authenticate(ctx.get('authorization') || undefined, ctx.ip);
  ctx.state.credentialKey = key;
  ctx.state.credential = credential;
  ctx.state.auth = credential.auth;
};
