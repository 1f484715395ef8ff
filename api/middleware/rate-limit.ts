import type { Context } from 'koa';
import { AppError } from '../../domain/errors.js';
import type { Operation } from '../operation.js';
import type { Services } from '../services.js';

const PERIOD_MS = 60_000;

/**
 * Per-user (per-IP when unauthenticated) limits by operation group. The bucket is always the
 * caller's own, also when acting for someone else. Headers follow the IETF RateLimit fields draft.
 */
export const rateLimit = (op: Operation, services: Services) => {
  const group = op.rateLimit as Exclude<typeof op.rateLimit, 'none'>;
  const { agentPerMinute, publicPerMinute, defaultPerMinute } = services.config.rateLimit;
  const limit = { agent: agentPerMinute, public: publicPerMinute, default: defaultPerMinute }[group];
  const policy = `"${group}";q=${limit};w=${PERIOD_MS / 1000}`;
  return async (ctx: Context) => {
    const subject = ctx.state.auth?.userId ? `u:${ctx.state.auth.userId}` : `ip:${ctx.ip}`;
    const d = await services.rateLimiter.check(`rl:${group}:${subject}`, limit, PERIOD_MS);
    ctx.set('RateLimit-Policy', policy);
    ctx.set('RateLimit', `"${group}";r=${d.remaining};t=${d.reset}`);
    if (!d.allowed) {
      ctx.set('Retry-After', String(d.retryAfter));
      throw new AppError(
        429,
        'rate_limited',
        `rate limit exceeded: ${limit} requests per minute; retry after ${d.retryAfter} s`,
      );
    }
  };
};
