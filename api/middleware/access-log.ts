import type { Middleware } from 'koa';
import type { Logger } from '../../lib/logger.js';
import { httpDuration } from '../../lib/metrics.js';

/** One JSON line per request, with a per-request child logger for handlers (`ctx.state.log`). */
export const accessLog = (logger: Logger): Middleware => async (ctx, next) => {
  const started = process.hrtime.bigint();
  // The per-request child logger is built only when a handler or the error mapper uses it.
  let log: Logger | undefined;
  Object.defineProperty(ctx.state, 'log', { get: () => (log ??= logger.child({ request_id: ctx.state.requestId })), configurable: true });
  try {
    await next();
  } finally {
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    // Unmatched routes share one label so that scanners cannot blow up the metric's cardinality.
    httpDuration.observe({ operation: ctx.state.operation?.operationId ?? 'unmatched', method: ctx.method, status: String(ctx.status) }, ms / 1000);
    const line = {
      request_id: ctx.state.requestId,
      method: ctx.method,
      path: ctx.path,
      status: ctx.status,
      duration_ms: Math.round(ms * 10) / 10,
      user_id: ctx.state.auth?.userId,
      operation: ctx.state.operation?.operationId,
    };
    if (ctx.status >= 500 && ctx.status !== 503) logger.error(line, 'request failed');
    else if (ctx.status >= 500) logger.warn(line, 'unavailable');
    else logger.info(line, 'request');
  }
};
