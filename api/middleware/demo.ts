import type { Context } from 'koa';
import { assertOperationAllowed } from '../../domain/demo/demo.js';
import type { Operation } from '../operation.js';

/** Demo workspaces are read-only: non-GET operations answer 403 `demo_read_only` unless they declare `demo: 'simulate'`. */
export const demoGuard = (op: Operation) => (ctx: Context) => {
  if (ctx.state.actor)
    assertOperationAllowed(ctx.state.actor, op.method, op.demo === 'simulate' ? 'simulate' : 'read_only');
};
