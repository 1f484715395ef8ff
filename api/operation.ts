// The operation contract: every REST operation is declared once with `defineOperation`. Routing,
// validation, authentication mode, rate-limit group and the OpenAPI document all come from it.
import type { Context } from 'koa';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Actor, AuthInfo } from '../domain/identity.js';
import type { IdDeclaration } from '../domain/access.js';
import type { Services } from './services.js';
import { checkOperationId, operationIdOf } from './operation-ids.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type AuthMode = 'public' | 'user';
/**
 * `agent`: the shared 20/min Operator group; `public`: unauthenticated entry points (sign-up, login,
 * refresh, invitations, OAuth start), strict per IP against credential stuffing; `default`: every
 * other route; `none`: probes and docs.
 */
export type RateGroup = 'agent' | 'public' | 'default' | 'none';

export interface HandlerInput<P, Q, B, A extends AuthMode, H = undefined> {
  params: P;
  query: Q;
  body: B;
  /** The declared request headers, validated (`undefined` when the operation declares none). */
  headers: H;
  /** The effective identity (own workspace, or the owner's with X-Acting-As). */
  actor: A extends 'user' ? Actor : undefined;
  auth: A extends 'user' ? AuthInfo : undefined;
  em: EntityManager;
  services: Services;
  ctx: Context;
  /**
   * Ids of the request's `each` batches (domain/access.ts) the caller may not see: unknown, another
   * workspace's, or of a product the member was not given (lower-case). The handler answers each such
   * item exactly as an unknown id (`not_found`).
   */
  refused: ReadonlySet<string>;
}

/** A handler may return a plain body (sent with the declared success status) or a Reply. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body?: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}
export const reply = (status: number, body?: unknown, headers?: Record<string, string>) =>
  new Reply(status, body, headers);

type AnySchema = z.ZodType;
type Out<S> = S extends AnySchema ? z.output<S> : undefined;

export interface OperationSpec<
  P extends AnySchema | undefined,
  Q extends AnySchema | undefined,
  B extends AnySchema | undefined,
  A extends AuthMode,
  H extends AnySchema | undefined = undefined,
> {
  method: HttpMethod;
  /** Path in the spec's template form, e.g. `/api/apps/{id}`. */
  path: string;
  /** Only where the path cannot say what the operation does (api/operation-ids.ts has the rule). */
  operationId?: string;
  summary: string;
  /** Longer Markdown for the OpenAPI document (e.g. a stream's event names and payloads). */
  description?: string;
  tag: string;
  /**
   * Not one of the spec's operations (../shared/spec/operations.txt) but ours, beyond it: marked
   * `x-beyond-spec: true` in the OpenAPI document, and exempt from the coverage test's "not in the
   * spec" check (which lists them instead).
   */
  beyondSpec?: boolean;
  auth: A;
  rateLimit?: RateGroup;
  /**
   * X-Acting-As: `true` (default for user routes) acts in the owner's workspace it names; `'self'`
   * checks the header the same way (400 malformed, 403 not a member there) but answers for the caller's
   * own (a buyer's offer, the plan catalog); `false`: ignored (identity, token and membership routes,
   * listed in the README).
   */
  actingAs?: boolean | 'self';
  /**
   * Behaviour in a Demo workspace (domain/demo/demo.ts). Default: reads (GET) run normally and every
   * other method answers 403 `demo_read_only` before the handler runs. `'simulate'`: the handler
   * runs and must itself return the documented demo-simulation response when `actor.isDemo`,
   * writing nothing.
   */
  demo?: 'simulate';
  params?: P;
  query?: Q;
  body?: B;
  /** The most bytes a JSON body may have (default BODY_LIMIT_BYTES); more is 413 `payload_too_large`. */
  bodyLimitBytes?: number;
  /**
   * What each id of the request names (domain/access.ts `IdRule`), by where it is: every path
   * parameter and every query or body field that reads as an id must be declared (the router refuses
   * to register the operation otherwise). The router checks them before the handler runs: another
   * workspace's is 404, a product the member was not given is 403 `not_assigned`.
   */
  ids?: IdDeclaration;
  /**
   * Request headers the operation reads: a `z.object` keyed by the header's name as documented
   * (e.g. `Idempotency-Key`; matched case-insensitively, a header sent twice is refused). Validated
   * with the path and query, before the body is read; header parameters in the document.
   */
  headers?: H;
  /**
   * A multipart/form-data request instead of a JSON body: the form's parts (a file part is a schema
   * with `.meta({ jsonSchema: BINARY })`), for the OpenAPI document. The router reads no body for
   * such an operation: the handler reads the stream itself (api/middleware/multipart.ts `readForm`)
   * once its own checks have passed, with its limits, and validates the fields with its codes.
   */
  form?: AnySchema;
  /**
   * Error code used when a part fails validation (defaults: invalid_id / invalid_query / invalid_body /
   * invalid_header); `fields`: the code of one top-level field (of the path, query or body) when the
   * first problem is there.
   */
  invalid?: { params?: string; query?: string; body?: string; headers?: string; fields?: Record<string, string> };
  /**
   * `Idempotency-Key` (api/idempotency.ts, docs/idempotency.md): a retry with the key answers the first
   * 2xx answer again instead of running twice. By default every authenticated POST that answers 201 or
   * 202 (it creates something or starts work) takes it; `true` adds another POST that creates or starts
   * work although it answers 200; `{ exempt }` leaves a 201/202 POST out and says why. A public one, a
   * multipart upload or a stream cannot take it and is left out with that reason.
   */
  idempotency?: true | { exempt: string };
  /** Success responses by status; `null` means no body. The first one is the default status. */
  responses: Record<number, AnySchema | null>;
  /** Documented error responses: status → codes. */
  errors?: Record<number, string[]>;
  /** Non-JSON success content type (e.g. text/event-stream, text/html). */
  produces?: string;
  /**
   * Other media types a success status may answer with besides JSON (e.g. a CSV download beside a
   * JSON list): status → media type → schema, for the document. The handler answers one with
   * `reply(status, body, { 'Content-Type': type })` (body: string, Buffer or stream), sent as is.
   * An error status may have one too (an HTML page for a browser, written by a `produces` handler).
   */
  alternatives?: Record<number, Record<string, AnySchema>>;
  handler: (input: HandlerInput<Out<P>, Out<Q>, Out<B>, A, Out<H>>) => Promise<unknown> | unknown;
}

export type Operation = OperationSpec<
  AnySchema | undefined,
  AnySchema | undefined,
  AnySchema | undefined,
  AuthMode,
  AnySchema | undefined
> & {
  rateLimit: RateGroup;
  actingAs: boolean | 'self';
  operationId: string;
  /** Takes `Idempotency-Key` (resolved from `idempotency`, see there). */
  idempotent: boolean;
  /** A POST answering 201 or 202 that does not take it: why (declared, or what it lacks). */
  idempotencyExempt?: string;
};

/** A POST that answers 201 or 202: it creates something or starts work. */
const createsOrStarts = (spec: Pick<OperationSpec<never, never, never, AuthMode>, 'method' | 'responses'>) =>
  spec.method === 'POST' && (201 in spec.responses || 202 in spec.responses);

/**
 * Whether the operation takes `Idempotency-Key`, and if a 201/202 POST does not, why. The router's rule
 * needs a user (keys are per user), a JSON body it reads itself (to fingerprint it) and a JSON answer
 * it can store: a 201/202 POST that lacks one is left out with that reason, and `true` on an operation
 * that lacks one is refused at start-up rather than ignored.
 */
function idempotencyOf(
  spec: OperationSpec<never, never, never, AuthMode>,
  id: string,
): { idempotent: boolean; idempotencyExempt?: string } {
  const decl = spec.idempotency;
  if (decl !== undefined && decl !== true) {
    if (!decl.exempt.trim()) throw new Error(`${id}: idempotency.exempt needs its reason`);
    return { idempotent: false, idempotencyExempt: decl.exempt };
  }
  const unfit = [
    spec.method !== 'POST' && 'not a POST',
    spec.auth !== 'user' && 'public: keys are per user, and there is none',
    spec.form &&
      'a multipart upload: streamed to the handler, never read by the router, so there is no body to fingerprint',
    spec.produces && `answers ${spec.produces}: a stream, not an answer to store`,
    spec.alternatives && 'answers other media types than JSON',
  ].filter((u): u is string => typeof u === 'string');
  if (decl === true) {
    if (unfit.length) throw new Error(`${id}: cannot take Idempotency-Key: ${unfit.join('; ')}`);
    return { idempotent: true };
  }
  if (!createsOrStarts(spec)) return { idempotent: false };
  return unfit.length ? { idempotent: false, idempotencyExempt: unfit.join('; ') } : { idempotent: true };
}

export function defineOperation<
  P extends AnySchema | undefined = undefined,
  Q extends AnySchema | undefined = undefined,
  B extends AnySchema | undefined = undefined,
  A extends AuthMode = 'user',
  H extends AnySchema | undefined = undefined,
>(spec: OperationSpec<P, Q, B, A, H>): Operation {
  const id = spec.operationId ?? operationIdOf(spec.method, spec.path);
  const wrong = checkOperationId(id);
  if (wrong) throw new Error(`${spec.method} ${spec.path}: operationId ${id} ${wrong} (api/operation-ids.ts)`);
  return {
    ...(spec as unknown as Operation),
    rateLimit:
      spec.rateLimit ?? (spec.path.startsWith('/api/agent/') ? 'agent' : spec.auth === 'public' ? 'public' : 'default'),
    actingAs: spec.actingAs ?? spec.auth === 'user',
    operationId: id,
    ...idempotencyOf(spec as never, id),
  };
}

export const successStatus = (op: Operation): number => Number(Object.keys(op.responses)[0]);
