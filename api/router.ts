// Builds the Koa router from the operation declarations. Per route, in order: authentication →
// acting-as → demo read-only guard → rate limit → validation → handler → response mapping.
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { z } from 'zod';
import { AppError } from '../domain/errors.js';
import { Reply, successStatus, type Operation } from './operation.js';
import type { Services } from './services.js';
import { authenticate } from './middleware/authenticate.js';
import { actingAs } from './middleware/acting-as.js';
import { rateLimit } from './middleware/rate-limit.js';
import { demoGuard } from './middleware/demo.js';

const toKoaPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

function parsePart(schema: z.ZodType | undefined, value: unknown, code: string, what: string): unknown {
  if (!schema) return undefined;
  const r = schema.safeParse(value);
  if (!r.success) {
    const details = r.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
    throw new AppError(400, code, `invalid ${what}: ${details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join('; ')}`, details);
  }
  return r.data;
}

function handle(op: Operation, services: Services): Middleware {
  const status = successStatus(op);
  const validateResponses = process.env.NODE_ENV !== 'production';
  return async (ctx: Context) => {
    const result = await op.handler({
      params: parsePart(op.params, ctx.params, op.invalid?.params ?? 'invalid_id', 'path parameter'),
      query: parsePart(op.query, ctx.query, op.invalid?.query ?? 'invalid_query', 'query'),
      body: parsePart(op.body, ctx.request.body ?? {}, op.invalid?.body ?? 'invalid_body', 'body'),
      actor: ctx.state.actor,
      auth: ctx.state.auth,
      em: ctx.state.em,
      services,
      ctx,
    } as never);
    if (op.produces) return; // streaming/HTML handlers write ctx.body themselves
    const r = result instanceof Reply ? result : new Reply(status, result);
    ctx.status = r.status;
    ctx.set(r.headers);
    const schema = op.responses[r.status];
    if (schema === null || r.status === 204) {
      ctx.body = null;
      return;
    }
    if (validateResponses && schema) {
      // Outside production a response that drifts from its declared schema is a bug: fail loudly.
      const check = schema.safeParse(r.body);
      if (!check.success) throw new Error(`response of ${op.operationId} does not match its schema: ${check.error.message}`);
    }
    ctx.body = r.body;
  };
}

export function buildRouter(operations: Operation[], services: Services): Router {
  const router = new Router({ exclusive: 'specificity' });
  for (const op of operations) {
    const bind: Middleware = async (ctx, next) => {
      ctx.state.operation = op;
      ctx.state.em = services.orm.em.fork();
      await next();
    };
    router.register(toKoaPath(op.path), [op.method], [
      bind,
      authenticate(op, services),
      actingAs(op),
      demoGuard(op),
      rateLimit(op, services),
      handle(op, services),
    ] as never, { name: op.operationId });
  }
  return router;
}
