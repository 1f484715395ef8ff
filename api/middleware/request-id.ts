import type { Middleware } from 'koa';
import { uuidv7 } from '../../lib/ids.js';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Takes the caller's X-Request-Id when it is safe to echo, else mints one; always echoes it back. */
export const requestId = (): Middleware => async (ctx, next) => {
  const incoming = ctx.get('x-request-id');
  ctx.state.requestId = SAFE_ID.test(incoming) ? incoming : uuidv7();
  ctx.set('X-Request-Id', ctx.state.requestId);
  await next();
};
