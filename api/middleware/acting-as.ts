import type { Middleware } from 'koa';
import { ownActor, resolveActor } from '../../domain/workspaces.js';
import type { Operation } from '../operation.js';

/** Sets `ctx.state.actor`. Identity and token operations ignore X-Acting-As and act as the caller. */
export const actingAs = (op: Operation): Middleware => async (ctx, next) => {
  if (op.auth === 'user') {
    const header = ctx.get('x-acting-as') || undefined;
    ctx.state.actor = op.actingAs ? await resolveActor(ctx.state.em, ctx.state.auth, header) : await ownActor(ctx.state.em, ctx.state.auth);
  }
  await next();
};
