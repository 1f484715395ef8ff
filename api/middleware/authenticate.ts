import type { Middleware } from 'koa';
import { authenticateBearer } from '../../domain/auth.js';
import type { Operation } from '../operation.js';
import type { Services } from '../services.js';

/** Resolves the bearer credential of non-public operations into `ctx.state.auth`. */
export const authenticate = (op: Operation, services: Services): Middleware => async (ctx, next) => {
  if (op.auth === 'user') {
    ctx.state.auth = await authenticateBearer(ctx.state.em, services.config, ctx.get('authorization') || undefined);
  }
  await next();
};
