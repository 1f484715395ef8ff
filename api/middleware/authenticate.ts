import type { Middleware } from 'koa';
import type { Operation } from '../operation.js';
import type { Services } from '../services.js';

/** Resolves the bearer credential of non-public operations into `ctx.state.auth` (see api/authenticator.ts). */
export const authenticate = (op: Operation, services: Services): Middleware => async (ctx, next) => {
  if (op.auth === 'user') {
    const { key, credential } = await services.authenticator.authenticate(ctx.get('authorization') || undefined, ctx.ip);
    ctx.state.credentialKey = key;
    ctx.state.credential = credential;
    ctx.state.auth = credential.auth;
  }
  await next();
};
