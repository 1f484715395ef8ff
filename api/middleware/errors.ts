// The single place where errors become HTTP: domain AppErrors, validation failures, body-parser
// errors, ORM errors, and dependencies being down (503 with Retry-After; the jobs port turns Temporal's
// own errors into AppErrors, jobs/temporal.ts). Anything
// unrecognised is a 500 with no internals in the body.
import type { Context, Middleware } from 'koa';
import {
  NotFoundError,
  UniqueConstraintViolationException,
  ForeignKeyConstraintViolationException,
} from '@mikro-orm/core';
import { ZodError } from 'zod';
import { AppError } from '../../domain/errors.js';
import { isDatabaseUnavailable } from '../../db/orm.js';

export function errorBody(ctx: Context, code: string, message: string, details?: unknown) {
  return { error: { code, message, ...(details === undefined ? {} : { details }), request_id: ctx.state.requestId } };
}

const STATUS_CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
};

/**
 * PostgreSQL SQLSTATE class 22 ("data exception": bytes the encoding cannot hold, NUL in text or
 * JSONB, values out of range or too long, malformed literals) is always caused by input.
 */
function dataException(err: unknown): AppError | undefined {
  const e = err as { code?: unknown; sqlState?: unknown; cause?: unknown };
  const state = [e?.sqlState, e?.code, (e?.cause as { code?: unknown } | undefined)?.code].find(
    (c) => typeof c === 'string' && /^22[0-9A-Z]{3}$/.test(c),
  ) as string | undefined;
  if (!state) return undefined;
  const message =
    state === '22021' || state === '22P05'
      ? 'text contains characters that cannot be stored'
      : 'a value is out of range or not in the expected form';
  return new AppError(400, 'invalid_request', message);
}

const unavailable = (message: string) => new AppError(503, 'unavailable', message, undefined, { 'Retry-After': '2' });

function classify(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  const data = dataException(err);
  if (data) return data;
  if (err instanceof ZodError) return new AppError(400, 'invalid_body', 'request validation failed', err.issues);
  if (err instanceof NotFoundError) return new AppError(404, 'not_found', 'not found');
  if (err instanceof UniqueConstraintViolationException)
    return new AppError(409, 'conflict', 'resource already exists');
  if (err instanceof ForeignKeyConstraintViolationException)
    return new AppError(409, 'conflict', 'referenced resource is missing or still in use');
  // A dependency is down, restarting or saturated (PostgreSQL unreachable or no pooled connection in
  // time; Temporal unreachable or timing out): the request is worth repeating shortly, so 503 with
  // Retry-After (what clients and load balancers retry on), never a 500. The process needs no
  // restart: the next request uses the dependency again once it is back.
  if (isDatabaseUnavailable(err)) return unavailable('the database is unavailable; retry shortly');
  const e = err as { status?: number; statusCode?: number; type?: string; expose?: boolean; message?: string };
  const status = e?.status ?? e?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new AppError(
      status,
      STATUS_CODES[status] ?? 'invalid_request',
      e.expose && e.message ? e.message : 'bad request',
    );
  }
  return undefined;
}

export const errorMapper = (): Middleware => async (ctx, next) => {
  try {
    await next();
  } catch (err) {
    const known = classify(err);
    if (known) {
      ctx.status = known.status;
      if (known.headers) ctx.set(known.headers);
      ctx.body = errorBody(ctx, known.code, known.message, known.details);
      // 503: a dependency outage, expected and self-healing (the access log counts them too).
      if (known.status === 503) ctx.state.log?.warn({ err: String(err) }, known.message);
      else if (known.status >= 500) ctx.state.log?.error({ err }, known.message);
      return;
    }
    ctx.state.log?.error({ err }, 'unhandled error');
    ctx.status = 500;
    ctx.body = errorBody(ctx, 'internal', 'internal server error');
  }
};
