import type { Middleware } from 'koa';
import { accessLogger } from '../../lib/logger.js';
import { observeRequest } from '../../lib/metrics.js';

const SECRET_IN_PATH = /\{token\}/;

/** One JSON line per request (handlers log through `ctx.state.log`, see api/request-state.ts). */
export const accessLog = (): Middleware => async (ctx, next) => {
  const started = process.hrtime.bigint();
  try {
    await next();
  } finally {
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const op = ctx.state.operation;
    // Unmatched routes share one label so that scanners cannot blow up the metric's cardinality.
    observeRequest(op?.operationId ?? 'unmatched', ctx.status, ms / 1000);
    const line = {
      request_id: ctx.state.requestId,
      method: ctx.method,
      // A path that carries a secret (invitation tokens) is logged as its template.
      path: op && SECRET_IN_PATH.test(op.path) ? op.path : ctx.path,
      status: ctx.status,
      duration_ms: Math.round(ms * 10) / 10,
      user_id: ctx.state.auth?.userId,
      operation: op?.operationId,
    };
    if (ctx.status >= 500 && ctx.status !== 503) accessLogger.error(line, 'request failed');
    else if (ctx.status >= 500) accessLogger.warn(line, 'unavailable');
    else accessLogger.info(line, 'request');
  }
};
