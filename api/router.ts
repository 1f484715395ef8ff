// Builds the Koa router from the operation declarations. Per route, in order: authentication →
// acting-as → demo read-only guard → rate limit → input (params, query, declared headers and Idempotency-Key,
// then the body is read) → validation → handler (under the request's Idempotency-Key, api/idempotency.ts) →
// response mapping. Unmatched requests get 404, or 405 with `Allow`.
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../domain/errors.js';
import { Reply, successStatus, type Operation } from './operation.js';
import type { Services } from './services.js';
import { authenticate } from './middleware/authenticate.js';
import { actingAs } from './middleware/acting-as.js';
import { rateLimit } from './middleware/rate-limit.js';
import { demoGuard } from './middleware/demo.js';
import { findBadString, jsonBodyReader } from './middleware/body.js';
import { authorizeRequest, idFields, type RequestParts } from '../domain/access.js';
import { readIdempotencyKey, withIdempotencyKey, type Answer } from './idempotency.js';
import type { Actor } from '../domain/identity.js';
import { pathParamNames } from './path-params.js';
import { parse as parseQueryString } from 'node:querystring';

const toKoaPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

function invalid(code: string, what: string, details: { path: string; message: string }[]): AppError {
  return new AppError(
    400,
    code,
    `invalid ${what}: ${details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join('; ')}`,
    details,
  );
}

/** The part's code, or the field's own code (`invalid.fields`) when the first problem is in that field. */
const codeFor = (code: string, fields: Record<string, string> | undefined, path: string) =>
  fields?.[path.split('.')[0]] ?? code;

/**
 * What the text rule reads: all of it, except that an object schema which drops unknown keys (a
 * provider's callback, whose extra fields are ignored) is checked on the keys it keeps: what is
 * dropped is never stored, and a schema-valid request is not refused for it.
 */
function kept(schema: z.ZodType | undefined, value: unknown): unknown {
  if (!(schema instanceof z.ZodObject) || schema.def.catchall !== undefined) return value;
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => Object.hasOwn(schema.shape, k)));
}

function parsePart(
  schema: z.ZodType | undefined,
  value: unknown,
  code: string,
  what: string,
  fields?: Record<string, string>,
  names?: Map<string, string>,
): unknown {
  // A path parameter is reported by its public name (api/path-params.ts).
  const named = (path: string) => names?.get(path) ?? path;
  const bad = findBadString(kept(schema, value));
  if (bad) throw invalid(codeFor(code, fields, bad.path), what, [{ path: named(bad.path), message: bad.reason }]);
  if (!schema) return undefined;
  const r = schema.safeParse(value);
  if (!r.success) {
    const details = r.error.issues.map((i) => ({ path: named(i.path.join('.')), message: i.message }));
    throw invalid(codeFor(code, fields, details[0].path), what, details);
  }
  return r.data;
}

/** Query keys an operation accepts; `undefined` when its schema is not a plain object (no key check). */
function queryKeys(op: Operation): Set<string> | undefined {
  if (!op.query) return new Set();
  return op.query instanceof z.ZodObject ? new Set(Object.keys(op.query.shape)) : undefined;
}

/**
 * One rule for every operation: the query string must be valid percent-encoded UTF-8 (never
 * silently rewritten with U+FFFD) and may name only the parameters the operation declares.
 */
function checkQueryString(qs: string, allowed: Set<string> | undefined, code: string): void {
  if (!qs) return;
  for (const pair of qs.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const rawKey = eq === -1 ? pair : pair.slice(0, eq);
    let key: string;
    try {
      key = decodeURIComponent(rawKey.replace(/\+/g, ' '));
      if (eq !== -1) decodeURIComponent(pair.slice(eq + 1).replace(/\+/g, ' '));
    } catch {
      throw invalid(code, 'query', [{ path: '', message: 'the query string is not valid percent-encoded UTF-8' }]);
    }
    if (allowed && !allowed.has(key)) {
      const known = [...allowed].join(', ') || 'none';
      throw invalid(code, 'query', [{ path: key, message: `unknown query parameter (accepted: ${known})` }]);
    }
  }
}

/**
 * The declared headers (`op.headers`), by their lower-cased names. A header sent twice (which Node
 * would join with commas) is refused rather than read as one value.
 */
function readHeaders(ctx: Context, schema: z.ZodType, code: string): unknown {
  const names = schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
  const raw: Record<string, string> = {};
  for (const name of names) {
    const values = ctx.req.headersDistinct[name.toLowerCase()];
    if (!values) continue;
    if (values.length > 1) throw invalid(code, 'header', [{ path: name, message: 'sent more than once' }]);
    raw[name] = values[0];
  }
  return parsePart(schema, raw, code, 'header');
}

/**
 * The ids an operation takes that its `ids` declaration does not cover: every path parameter, and
 * every query or body field that carries an id (domain/access.ts `idFields`: uuid-formatted, or named
 * like an id, at any depth). `buildRouter` refuses to register such an operation.
 */
export function undeclaredIds(op: Pick<Operation, 'path' | 'query' | 'body' | 'ids'>): string[] {
  const missing: string[] = [];
  for (const [, name] of op.path.matchAll(/\{([^}]+)\}/g)) if (!op.ids?.path?.[name]) missing.push(`path.${name}`);
  for (const name of idFields(op.query)) if (!op.ids?.query?.[name]) missing.push(`query.${name}`);
  for (const name of idFields(op.body)) if (!op.ids?.body?.[name]) missing.push(`body.${name}`);
  // A child declared `within` its parent must name a parent this request declares.
  const maps = [op.ids?.path, op.ids?.query, op.ids?.body].map((m) => Object.entries(m ?? {}));
  const declared = new Set(maps.flatMap((m) => m.map(([name]) => name)));
  for (const [name, rule] of maps.flat())
    if (typeof rule === 'object' && 'within' in rule && !declared.has(rule.within))
      missing.push(`${name} (within ${rule.within}, undeclared)`);
  return missing;
}

/** What a handler receives; `em` stays lazy (a handler that never touches the database forks nothing). */
class Input {
  readonly actor: unknown;
  readonly auth: unknown;
  constructor(
    readonly refused: ReadonlySet<string>,
    readonly params: unknown,
    readonly query: unknown,
    readonly body: unknown,
    readonly headers: unknown,
    readonly ctx: Context,
    readonly services: Services,
  ) {
    this.actor = ctx.state.actor;
    this.auth = ctx.state.auth;
  }
  get em(): EntityManager {
    return this.ctx.state.em;
  }
}

/** The code each part of a request is refused with (an operation may name its own). */
const refusalCodes = (op: Operation) => ({
  params: op.invalid?.params ?? 'invalid_id',
  query: op.invalid?.query ?? 'invalid_query',
  body: op.invalid?.body ?? 'invalid_body',
  headers: op.invalid?.headers ?? 'invalid_header',
});

/**
 * The router's checks of a request's path, query and JSON body, in its order and with its codes, but
 * without a request or a database (no ids are looked up): the refusal, or undefined. Tests hold the
 * document's request examples to it.
 */
export function requestRefusal(
  op: Operation,
  request: { params: Record<string, string>; querystring: string; body?: unknown },
): AppError | undefined {
  const codes = refusalCodes(op);
  const fields = op.invalid?.fields;
  try {
    parsePart(op.params, request.params, codes.params, 'path parameter', fields, pathParamNames(op.path));
    if (request.querystring) {
      checkQueryString(request.querystring, queryKeys(op), codes.query);
      parsePart(op.query, { ...parseQueryString(request.querystring) }, codes.query, 'query', fields);
    } else if (op.query) parsePart(op.query, {}, codes.query, 'query', fields);
    if (op.body) parsePart(op.body, request.body === undefined ? {} : request.body, codes.body, 'body', fields);
    return undefined;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
}

function handle(op: Operation, services: Services): (ctx: Context) => Promise<void> {
  const status = successStatus(op);
  const validateResponses = !services.config.production;
  const keys = queryKeys(op);
  const paramNames = pathParamNames(op.path);
  const codes = refusalCodes(op);
  // The declared ids are checked (domain/access.ts) once their part is valid: path ids before the
  // query and body are read (a stranger's resource is 404 whatever the body), query and body ids
  // after their validation (a malformed request is 400 first).
  const ids = op.auth === 'user' ? op.ids : undefined;
  const readBody = op.body ? jsonBodyReader(op.bodyLimitBytes ?? services.config.bodyLimitBytes) : undefined;
  // Ids of `each` batches the caller may not see: the handler answers them as not found.
  const authorize = async (
    ctx: Context,
    part: 'path' | 'query' | 'body',
    parts: RequestParts,
    refused: Set<string>,
  ) => {
    if (!ids?.[part]) return;
    for (const id of await authorizeRequest(ctx.state.em, ctx.state.actor as Actor, ids, part, parts[part], parts))
      refused.add(id);
  };
  return async (ctx: Context) => {
    const refused = new Set<string>();
    const params = parsePart(op.params, ctx.params, codes.params, 'path parameter', op.invalid?.fields, paramNames);
    const parts: RequestParts = { path: params };
    await authorize(ctx, 'path', parts, refused);
    let query: unknown;
    if (ctx.querystring) {
      checkQueryString(ctx.querystring, keys, codes.query);
      query = parsePart(op.query, ctx.query, codes.query, 'query', op.invalid?.fields);
    } else if (op.query) query = parsePart(op.query, {}, codes.query, 'query', op.invalid?.fields);
    parts.query = query;
    await authorize(ctx, 'query', parts, refused);
    const headers = op.headers ? readHeaders(ctx, op.headers, codes.headers) : undefined;
    // Idempotency-Key (api/idempotency.ts): checked with the other headers, before the body is read.
    const key = op.idempotent ? readIdempotencyKey(ctx) : undefined;
    // No body at all is `{}` (every field optional); a JSON `null` is a body, and not an object.
    const raw = readBody ? await readBody(ctx) : undefined;
    const sent = raw === undefined ? {} : raw;
    const body = op.body ? parsePart(op.body, sent, codes.body, 'body', op.invalid?.fields) : undefined;
    parts.body = body;
    await authorize(ctx, 'body', parts, refused);
    const run = () => op.handler(new Input(refused, params, query, body, headers, ctx, services) as never);
    if (op.produces) {
      await run(); // streaming/HTML handlers write ctx.body themselves
      return;
    }
    // The answer, checked against its declaration, before it is sent (or stored for a key's replays).
    const respond = async (): Promise<Answer> => {
      const result = await run();
      const r = result instanceof Reply ? result : new Reply(status, result);
      const media = r.headers['Content-Type']?.split(';')[0].trim();
      // A declared alternative (a download): not JSON, not validated here.
      if (media && op.alternatives?.[r.status]?.[media]) return { reply: r, body: r.body };
      const schema = op.responses[r.status];
      if (schema === null || r.status === 204) return { reply: r, body: null };
      if (validateResponses && schema) {
        // Outside production a response that drifts from its declared schema is a bug: fail loudly.
        const check = schema.safeParse(r.body);
        if (!check.success)
          throw new Error(`response of ${op.operationId} does not match its schema: ${check.error.message}`);
      }
      return { reply: r, body: r.body };
    };
    const { reply: r, body: out } =
      key === undefined ? await respond() : await withIdempotencyKey(op, ctx, services, key, sent, respond);
    ctx.status = r.status;
    ctx.set(r.headers);
    ctx.body = out;
  };
}

export function buildRouter(operations: Operation[], services: Services): Router {
  const router = new Router({ exclusive: 'specificity' });
  for (const op of operations) {
    const missing = undeclaredIds(op);
    if (missing.length)
      throw new Error(
        `${op.operationId}: declare what these ids name in \`ids\` (domain/access.ts IdRule): ${missing.join(', ')}`,
      );
    // The steps this operation needs, in order, run by one function (not a middleware chain per
    // route): fewer promises and closures per request.
    const steps: ((ctx: Context) => unknown)[] = [];
    if (op.auth === 'user') steps.push(authenticate(services), actingAs(op, services), demoGuard(op));
    if (op.rateLimit !== 'none') steps.push(rateLimit(op, services));
    steps.push(handle(op, services));
    const route: Middleware = async (ctx) => {
      ctx.state.operation = op;
      for (const step of steps) await step(ctx);
    };
    router.register(toKoaPath(op.path), [op.method], route, { name: op.operationId });
  }
  return router;
}

/**
 * The router's middleware, with a fast path for the paths without parameters: a request whose
 * method and path are exactly those of such a route goes straight to the route the router itself
 * chooses for them (computed once here with its own matching and `specificity` rule), instead of a
 * regular-expression test of every one of the ~280 routes and a middleware chain built per request.
 * Anything else (parameters, a trailing slash, another case, HEAD) goes through the router as before.
 */
export function routes(router: Router): Middleware {
  const viaRouter = router.routes() as unknown as Middleware;
  const direct = new Map<string, Middleware>();
  for (const layer of router.stack) {
    if (typeof layer.path !== 'string' || layer.paramNames.length) continue;
    for (const method of layer.methods) {
      const key = `${method} ${layer.path}`;
      if (method === 'HEAD' || direct.has(key)) continue;
      let chosen: (typeof router.stack)[number] | undefined;
      for (const l of router.match(layer.path, method).pathAndMethod)
        if (!chosen || l.paramNames.length < chosen.paramNames.length) chosen = l;
      if (chosen && chosen.methods.length && !chosen.paramNames.length && chosen.stack.length === 1)
        direct.set(key, chosen.stack[0] as unknown as Middleware);
    }
  }
  return (ctx, next) => {
    const route = direct.get(`${ctx.method} ${ctx.path}`);
    if (!route) return viaRouter(ctx, next);
    ctx.params = {}; // as the router sets it for a route without parameters
    return route(ctx, next);
  };
}

/**
 * After the router: a path no operation declares is 404; a known path with another method is 405
 * with `Allow` (any method, TRACE included); OPTIONS on a known path answers 204 with `Allow`.
 */
export function unmatched(router: Router): Middleware {
  return async (ctx) => {
    const matched = router.match(ctx.path, ctx.method).path;
    if (matched.length === 0) throw new AppError(404, 'not_found', `no route for ${ctx.method} ${ctx.path}`);
    // `/audit` and `/{id}` both match `/audit`: Allow lists the methods of the most specific path
    // (the fewest parameters), as the router itself prefers it.
    const params = (l: (typeof matched)[number]) => l.paramNames.length;
    const fewest = Math.min(...matched.map(params));
    const allow = [...new Set(matched.filter((l) => params(l) === fewest).flatMap((l) => l.methods))].join(', ');
    ctx.set('Allow', allow);
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    throw new AppError(405, 'method_not_allowed', `${ctx.method} is not allowed here; allowed: ${allow}`);
  };
}
