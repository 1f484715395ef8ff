import type { Context } from 'koa';
import type { Operation } from '../operation.js';
import type { Services } from '../services.js';

/**
 * Sets `ctx.state.actor`. Identity, token and membership operations ignore X-Acting-As and act as the
 * caller; elsewhere a present header (even an empty one) must be a team owner's user id, whose
 * workspace the caller then acts in (`'self'` operations check it the same way, then answer for the
 * caller's own).
 */
export const actingAs = (op: Operation, services: Services) => async (ctx: Context) => {
  const header = op.actingAs ? ctx.req.headers['x-acting-as'] : undefined;
  const value = (Array.isArray(header) ? header.join(',') : header)?.trim();
  const { authenticator } = services;
  ctx.state.actor = await authenticator.actor(ctx.state.credentialKey, ctx.state.credential, value);
  if (op.actingAs === 'self' && value !== undefined)
    ctx.state.actor = await authenticator.actor(ctx.state.credentialKey, ctx.state.credential, undefined);
};
