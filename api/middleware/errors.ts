// The single place where errors become HTTP: domain AppErrors, validation failures, body-parser
// errors, ORM and Temporal errors. Anything unrecognised is a 500 with no internals in the body.
import type { Context, Middleware } from 'koa';
import { NotFoundError, UniqueConstraintViolationException, ForeignKeyConstraintViolationException } from '@mikro-orm/core';
import { WorkflowNotFoundError } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ZodError } from 'zod';
import { AppError } from '../../domain/errors.js';

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

function classify(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  if (err instanceof ZodError) return new AppError(400, 'invalid_body', 'request validation failed', err.issues);
  if (err instanceof NotFoundError) return new AppError(404, 'not_found', 'not found');
  if (err instanceof UniqueConstraintViolationException) return new AppError(409, 'conflict', 'resource already exists');
  if (err instanceof ForeignKeyConstraintViolationException) return new AppError(409, 'conflict', 'referenced resource is missing or still in use');
  if (err instanceof WorkflowNotFoundError) return new AppError(404, 'not_found', 'job not found');
  if (err instanceof WorkflowExecutionAlreadyStartedError) return new AppError(409, 'already_started', 'job already started');
  const e = err as { status?: number; statusCode?: number; type?: string; expose?: boolean; message?: string };
  const status = e?.status ?? e?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Body-parser failures: malformed JSON and oversize bodies.
    if (e.type === 'entity.parse.failed' || (status === 400 && /json|parse/i.test(e.message ?? ''))) {
      return new AppError(400, 'invalid_body', 'malformed JSON body');
    }
    if (status === 413) return new AppError(413, 'payload_too_large', 'request body too large');
    return new AppError(status, STATUS_CODES[status] ?? 'invalid_request', e.expose && e.message ? e.message : 'bad request');
  }
  return undefined;
}

export const errorMapper = (): Middleware => async (ctx, next) => {
  try {
    await next();
    // Router fall-through: give 404/405 the standard JSON error body.
    if (ctx.body === undefined || ctx.body === null) {
      // Assigning a body resets an implicit status to 200, so the status is set again explicitly.
      const status = ctx.status;
      if (status === 404) ctx.body = errorBody(ctx, 'not_found', `no route for ${ctx.method} ${ctx.path}`);
      else if (status === 405) ctx.body = errorBody(ctx, 'method_not_allowed', `${ctx.method} is not allowed here; allowed: ${ctx.response.get('Allow')}`);
      else if (status === 501) ctx.body = errorBody(ctx, 'not_implemented', `${ctx.method} is not supported`);
      ctx.status = status;
    }
  } catch (err) {
    const known = classify(err);
    if (known) {
      ctx.status = known.status;
      ctx.body = errorBody(ctx, known.code, known.message, known.details);
      if (known.status >= 500) ctx.state.log?.error({ err }, known.message);
      return;
    }
    ctx.state.log?.error({ err }, 'unhandled error');
    ctx.status = 500;
    ctx.body = errorBody(ctx, 'internal', 'internal server error');
  }
};
