import type { Context } from 'koa';
import type { Operation } from '../operation.js';
import type { Services } from '../services.js';

/**
 * Sets `ctx.state.actor`. Identity and token operations ignore X-Acting-As and act as the caller;
 * elsewhere a present header (even an empty one) must be a team owner's user id.
 */
export const actingAs = (op: Operation, services: Services) => async (ctx: Context) => {
  const header = op.actingAs ? ctx.req.headers['x-acting-as'] : undefined;
  const value = Array.isArray(header) ? header.join(',') : header;
  ctx.state.actor = await services.authenticator.actor(ctx.state.credentialKey, ctx.state.credential, value?.trim());
};
