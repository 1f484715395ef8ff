// The OpenAPI 3.1 document, generated from the operation declarations (the docs page is api/docs-page.ts).
// It states what the server does: each operation's generic responses are derived from its declaration
// (auth, X-Acting-As, params, query, body, rate-limit group) and follow the router's rules.
import { API_VERSION, API_VERSION_HEADER, PACKAGE_VERSION } from './api-version.js';
import { z } from 'zod';
import { PRODUCT_KINDS, ruleKind } from '../domain/access.js';
import type { Operation } from './operation.js';
import { ACCEPTED_EVENTS, TEST_EVENT } from '../domain/webhooks/events.js';
import { EVENT_DATA, EVENT_TRIGGERS, TEST_EVENT_DATA } from '../domain/webhooks/payloads.js';
import { WEBHOOK_DELIVERY_HEADERS } from '../domain/webhooks/signing.js';
import { nameComponents } from './components.js';
import { exampleOf } from './examples.js';
import { TAGS } from './tags.js';
import { documentPath, pathParamNames } from './path-params.js';
import { ErrorBody } from './schemas.js';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_KEY_MAX,
  IDEMPOTENCY_KEY_PATTERN,
  INVALID_KEY,
  KEY_IN_FLIGHT,
  KEY_MISMATCH,
  REPLAYED_HEADER,
} from './idempotency.js';
import { IDEMPOTENCY_KEY_TTL_HOURS } from '../domain/idempotency/idempotency.js';

type Json = Record<string, unknown>;

/** The router refuses NUL (U+0000) in any string of path, query or body (400), so the document does too. */
const NUL_FREE = '^[^\\u0000]*$';

/**
 * Adds the NUL rule to every request string schema that has no `format`, `pattern`, `enum` or
 * `const` of its own. Patterns written in this codebase exclude NUL by construction, and formats
 * (uuid, email, date-time) cannot contain it.
 */
function forbidNul(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(forbidNul);
  if (!node || typeof node !== 'object') return;
  const s = node as Json;
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (types.includes('string') && !('format' in s || 'pattern' in s || 'enum' in s || 'const' in s))
    s.pattern = NUL_FREE;
  // Object keys are strings too.
  if (types.includes('object') && s.additionalProperties !== false && !('propertyNames' in s))
    s.propertyNames = { pattern: NUL_FREE };
  for (const [key, value] of Object.entries(s)) {
    if (key === 'not' || key === 'const' || key === 'enum' || key === 'default' || key === 'examples') continue;
    if (key === 'properties' || key === '$defs' || key === 'patternProperties')
      Object.values(value as Json).forEach(forbidNul);
    else if (typeof value === 'object') forbidNul(value);
  }
}

/**
 * A request's defaults are stated in prose, not as `default`: openapi-typescript (and others) make a
 * property with a `default` required in the type of a named request body, so a client would have to
 * send what the server fills in. The server applies them (zod's `.default()`).
 */
function defaultsInProse(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(defaultsInProse);
  if (!node || typeof node !== 'object') return;
  const s = node as Json;
  if ('default' in s) {
    const said = `Default: ${JSON.stringify(s.default)}.`;
    s.description = typeof s.description === 'string' ? `${s.description} ${said}` : said;
    delete s.default;
  }
  for (const [key, value] of Object.entries(s))
    if (key !== 'examples' && key !== 'const' && key !== 'enum' && typeof value === 'object') defaultsInProse(value);
}

/**
 * A record keyed by an enum (`z.record(z.enum([...]), V)`) becomes an object with one property per key:
 * generators make a class of it (they ignore `propertyNames`), and `required` names defined properties.
 */
function recordAsProperties(s: Json): void {
  const keys = (s.propertyNames as { enum?: unknown[] } | undefined)?.enum;
  if (
    s.type !== 'object' ||
    !keys?.every((k) => typeof k === 'string') ||
    typeof s.additionalProperties !== 'object' ||
    s.properties
  )
    return;
  s.properties = Object.fromEntries((keys as string[]).map((k) => [k, s.additionalProperties]));
  s.additionalProperties = false;
  delete s.propertyNames;
}

/**
 * Schemas whose rule zod cannot describe (e.g. a query integer parsed from digits) carry their exact
 * JSON Schema as `.meta({ jsonSchema })`; it replaces what zod would generate.
 */
const override = (ctx: { zodSchema: unknown; jsonSchema: Json }) => {
  // z.email() is checked by zod's own regex, which `pattern` states; `format: email` would add the
  // reader's idea of an email address (e.g. RFC 5321 length limits) that the server does not apply.
  if (ctx.jsonSchema.format === 'email' && ctx.jsonSchema.pattern) delete ctx.jsonSchema.format;
  recordAsProperties(ctx.jsonSchema);
  const exact = (z.globalRegistry.get(ctx.zodSchema as z.ZodType) as { jsonSchema?: Json } | undefined)?.jsonSchema;
  if (!exact) return;
  for (const key of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[key];
  Object.assign(ctx.jsonSchema, structuredClone(exact));
};

/**
 * Named schemas (`.meta({ id })`, e.g. the recursive JsonValue) that zod puts in a schema's local
 * `$defs`. In an OpenAPI document `#/$defs/…` would point at the document's root, so they move to
 * `components.schemas`; the input variant of a schema that is also an output (it carries the NUL rule)
 * gets an `Input` suffix, a request body keeps its name.
 */
let hoisted: Record<string, Json> = {};
/** The error statuses operations answer (their shared responses go in the document). */
let usedErrorStatuses = new Set<number>();

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output'): Json => {
  const {
    $schema: _drop,
    $defs,
    ...rest
  } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any', override }) as Json;
  if (io === 'input') {
    forbidNul(rest);
    defaultsInProse(rest);
  }
  if (!$defs) return rest;
  const names = Object.keys($defs as Json);
  const anonymous = names.find((n) => n.startsWith('__schema'));
  if (anonymous) throw new Error(`a recursive schema without an id (${anonymous}): give it .meta({ id })`);
  const named = (n: string) => (io === 'input' && !n.endsWith('Body') ? `${n}Input` : n);
  const local = new RegExp(`"#/\\$defs/(${names.join('|')})"`, 'g');
  const relink = <T>(node: T): T =>
    JSON.parse(JSON.stringify(node).replace(local, (_, n: string) => `"#/components/schemas/${named(n)}"`)) as T;
  for (const [name, def] of Object.entries($defs as Json)) {
    if (io === 'input') {
      forbidNul(def);
      defaultsInProse(def);
    }
    const component = relink(def as Json);
    const seen = hoisted[named(name)];
    if (seen && JSON.stringify(seen) !== JSON.stringify(component))
      throw new Error(`component ${named(name)} has two shapes`);
    hoisted[named(name)] = component;
  }
  return relink(rest);
};

function parameters(
  schema: z.ZodType | undefined,
  where: 'path' | 'query' | 'header',
  names = new Map<string, string>(),
): Json[] {
  if (!schema) return [];
  const s = jsonSchema(schema, 'input') as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(s.properties ?? {}).map(([name, prop]) => ({
    name: names.get(name) ?? name,
    in: where,
    required: where === 'path' || (s.required ?? []).includes(name),
    schema: prop,
  }));
}

/** What domain/workspaces.ts accepts in X-Acting-As (lib/ids.ts isUuid). */
const ACTING_AS = {
  name: 'X-Acting-As',
  in: 'header',
  required: false,
  description:
    'Act in the workspace of this team owner (400 invalid_user when empty or malformed, 403 not_assigned when not a member)',
  schema: {
    type: 'string',
    format: 'uuid',
    pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  },
};

/** `Idempotency-Key` (api/idempotency.ts): one component, referenced by every operation that takes it. */
const IDEMPOTENCY_KEY = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header',
  required: false,
  description: `Makes a retry safe (docs/idempotency.md): within ${IDEMPOTENCY_KEY_TTL_HOURS} hours, the same key with the same request (method, path, query, body) answers the first 2xx answer again, with \`${REPLAYED_HEADER}: true\`, and does nothing; with another request it is 422 ${KEY_MISMATCH}; while the first request runs, 409 ${KEY_IN_FLIGHT}. An error answer is not kept (the key can be used again). Keys are per user and acting workspace. 1–${IDEMPOTENCY_KEY_MAX} printable ASCII characters, not starting or ending with a space (400 ${INVALID_KEY}).`,
  schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX, pattern: IDEMPOTENCY_KEY_PATTERN },
  example: '5f0c1c52-8d0e-4d55-9a57-2f3b7c1e9d40',
};

const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
const always = { 'X-Request-Id': header('X-Request-Id'), [API_VERSION_HEADER]: header(API_VERSION_HEADER) };
const rateLimited = { ...always, RateLimit: header('RateLimit'), 'RateLimit-Policy': header('RateLimit-Policy') };

/** Status → codes: the declared ones plus those the router's generic rules produce for this operation. */
function errorCodes(op: Operation): Map<number, Set<string>> {
  const codes = new Map<number, Set<string>>();
  const add = (status: number, ...cs: string[]) => {
    const set = codes.get(status) ?? codes.set(status, new Set()).get(status)!;
    for (const c of cs) set.add(c);
  };
  for (const [status, cs] of Object.entries(op.errors ?? {})) add(Number(status), ...cs);
  // Unknown query parameters are refused on every operation.
  add(400, op.invalid?.query ?? 'invalid_query');
  if (op.auth === 'user') add(401, 'unauthorized');
  if (op.auth === 'user' && op.actingAs) {
    add(400, 'invalid_user');
    add(403, 'not_assigned');
    // The router's Demo rule (api/middleware/demo.ts) refuses acting-as writes in Demo workspaces.
    if (op.method !== 'GET' && op.demo !== 'simulate') add(403, 'demo_read_only');
  }
  if (op.params) add(400, op.invalid?.params ?? 'invalid_id');
  if (op.params) add(404, 'not_found');
  // The router's id checks (domain/access.ts): an id not found answers its declared code, one of a
  // product the member was not given 403 not_assigned.
  if (op.auth === 'user')
    for (const rules of [op.ids?.path, op.ids?.query, op.ids?.body])
      for (const rule of Object.values(rules ?? {})) {
        // A child not inside its parent: its declared code (404 not_found by default).
        if (typeof rule === 'object' && 'within' in rule && !('each' in rule))
          add(...(rule.missing ?? [404, 'not_found']));
        const kind = ruleKind(rule);
        if (!kind) continue;
        const [status, code] =
          typeof rule === 'object' && 'missing' in rule && rule.missing ? rule.missing : [404, 'not_found'];
        add(status, code);
        if (PRODUCT_KINDS.includes(kind)) add(403, 'not_assigned');
      }
  if (op.headers) add(400, op.invalid?.headers ?? 'invalid_header');
  if (op.idempotent) {
    add(400, INVALID_KEY);
    add(409, KEY_IN_FLIGHT);
    add(422, KEY_MISMATCH);
  }
  for (const code of Object.values(op.invalid?.fields ?? {})) add(400, code);
  if (op.body) {
    add(400, op.invalid?.body ?? 'invalid_body');
    add(413, 'payload_too_large');
    add(415, 'unsupported_media_type');
  }
  // Failed authentication is throttled per IP too, so every authenticated operation can answer 429.
  if (op.rateLimit !== 'none' || op.auth === 'user') add(429, 'rate_limited');
  return new Map([...codes].sort(([a], [b]) => a - b));
}

/** The multipart media type object: the form's schema, and each file part encoded as a file. */
function formContent(form: z.ZodType): Json {
  const schema = jsonSchema(form, 'input') as { properties?: Record<string, Json> };
  const files = Object.entries(schema.properties ?? {}).filter(([, p]) => p.format === 'binary');
  return {
    schema,
    ...(files.length
      ? { encoding: Object.fromEntries(files.map(([name]) => [name, { contentType: 'application/octet-stream' }])) }
      : {}),
  };
}

/** The shared error responses (components.responses), one per status, named as HTTP names it. */
const ERROR_RESPONSES: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  402: 'PaymentRequired',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Gone',
  412: 'PreconditionFailed',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  422: 'UnprocessableEntity',
  423: 'Locked',
  428: 'PreconditionRequired',
  429: 'TooManyRequests',
  500: 'InternalServerError',
  502: 'BadGateway',
  503: 'ServiceUnavailable',
  504: 'GatewayTimeout',
};

/** The error responses operations use, each an ApiError with the headers every answer carries. */
function errorResponses(statuses: Set<number>): Json {
  const out: Json = {};
  for (const status of [...statuses].sort((a, b) => a - b)) {
    const name = ERROR_RESPONSES[status];
    out[name] = {
      description: `${name.replace(/(?<=[a-z])(?=[A-Z])/g, ' ')}: an ApiError; the operation lists the codes it answers with this status (its x-error-codes and description)`,
      headers: {
        ...always,
        RateLimit: header('RateLimit'),
        'RateLimit-Policy': header('RateLimit-Policy'),
        ...(status === 429 ? { 'Retry-After': header('Retry-After') } : {}),
      },
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/ApiError' },
          example: {
            error: { ...(ERROR_EXAMPLES[status] ?? ERROR_EXAMPLES[400]), request_id: 'req_01JDXK4T9Q5M2V7B8N3C6F0A1E' },
          },
        },
      },
    };
  }
  return out;
}

/** A typical answer per status, for the shared responses' examples. */
const ERROR_EXAMPLES: Record<number, { code: string; message: string; details?: unknown }> = {
  400: {
    code: 'invalid_body',
    message: 'invalid body: name: Too small: expected string to have >=1 characters',
    details: [{ path: 'name', message: 'Too small: expected string to have >=1 characters' }],
  },
  401: { code: 'unauthorized', message: 'missing or invalid bearer token' },
  402: { code: 'insufficient_credits', message: 'not enough credits: 12 needed, 3 left this month' },
  403: { code: 'not_assigned', message: 'you are not assigned to this product' },
  404: { code: 'not_found', message: 'campaign not found' },
  405: { code: 'method_not_allowed', message: 'PATCH is not allowed here (allowed: GET, PUT)' },
  409: { code: 'invalid_transition', message: 'a completed campaign cannot be paused' },
  410: { code: 'invitation_expired', message: 'this invitation expired; ask for a new one' },
  413: { code: 'payload_too_large', message: 'the body is larger than 1 MiB' },
  415: { code: 'unsupported_media_type', message: 'send application/json' },
  422: { code: 'idempotency_key_mismatch', message: 'this Idempotency-Key was used for another request' },
  429: { code: 'rate_limited', message: 'too many requests; retry after 12 seconds' },
  500: { code: 'internal', message: 'something went wrong on our side; the request id helps us find it' },
  502: { code: 'provider_unavailable', message: 'the provider did not answer; try again shortly' },
  503: { code: 'unavailable', message: 'the service is restarting; retry after 5 seconds' },
  504: { code: 'preview_timeout', message: 'the preview took longer than 30 seconds' },
};

function operationObject(op: Operation): Json {
  const limited = op.rateLimit !== 'none';
  const responses: Json = {};
  for (const [status, schema] of Object.entries(op.responses)) {
    const headers = {
      ...(limited ? rateLimited : always),
      ...(op.idempotent ? { [REPLAYED_HEADER]: header(REPLAYED_HEADER) } : {}),
    };
    const more = Object.entries(op.alternatives?.[Number(status)] ?? {}).map(([media, s]) => [
      media,
      { schema: jsonSchema(s, 'output') },
    ]);
    responses[status] = schema
      ? {
          description: 'Success',
          headers,
          content: {
            [op.produces ?? 'application/json']: { schema: jsonSchema(schema, 'output') },
            ...Object.fromEntries(more),
          },
        }
      : {
          description:
            Number(status) === 304 ? 'Not modified: the ETag sent in If-None-Match is current' : 'Success, no content',
          headers,
        };
  }
  const errors = errorCodes(op);
  for (const status of errors.keys()) {
    const name = ERROR_RESPONSES[status];
    if (!name) throw new Error(`${op.operationId}: no shared response for status ${status} (ERROR_RESPONSES)`);
    usedErrorStatuses.add(status);
    // An error status may also have another media type (e.g. the HTML page a browser is shown): that
    // response is the operation's own, its JSON part still the one ApiError.
    const more = Object.entries(op.alternatives?.[status] ?? {}).map(([media, s]) => [
      media,
      { schema: jsonSchema(s, 'output') },
    ]);
    responses[status] = more.length
      ? {
          description: `${name}: the codes in x-error-codes`,
          headers: status === 429 ? { ...rateLimited, 'Retry-After': header('Retry-After') } : rateLimited,
          content: {
            'application/json': { schema: { $ref: '#/components/schemas/ApiError' } },
            ...Object.fromEntries(more),
          },
        }
      : { $ref: `#/components/responses/${name}` };
  }
  const declared = [...errors].map(([status, cs]) => `${status} ${[...cs].join(', ')}`);
  return {
    operationId: op.operationId,
    summary: op.summary,
    ...(declared.length || op.description
      ? {
          description: [op.description, declared.length ? `Error codes: ${declared.join('; ')}.` : '']
            .filter(Boolean)
            .join('\n\n'),
        }
      : {}),
    tags: [op.tag],
    security: op.auth === 'public' ? [] : [{ bearer: [] }],
    parameters: [
      ...parameters(op.params, 'path', pathParamNames(op.path)),
      ...parameters(op.query, 'query'),
      ...parameters(op.headers, 'header'),
      ...(op.idempotent ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
      ...(op.auth === 'user' && op.actingAs ? [ACTING_AS] : []),
    ],
    // The server reads a missing body as `{}`, so a body is required only where `{}` is refused.
    ...(op.body
      ? {
          requestBody: {
            required: !op.body.safeParse({}).success,
            content: { 'application/json': { schema: jsonSchema(op.body, 'input') } },
          },
        }
      : {}),
    ...(op.form ? { requestBody: { required: true, content: { 'multipart/form-data': formContent(op.form) } } } : {}),
    responses,
    // The codes each error status answers here, for clients and for the contract test's check.
    'x-error-codes': Object.fromEntries([...errors].map(([status, cs]) => [String(status), [...cs]])),
    'x-rate-limit-group': op.rateLimit,
    ...(op.beyondSpec ? { 'x-beyond-spec': true } : {}),
  };
}

const DESCRIPTION = `Lead discovery and outreach workspace.

Every error is JSON: {"error": {"code", "message", "details"?, "request_id"}}. Rules that hold for every operation:
- A method the path does not declare is 405 method_not_allowed with an Allow header; an unknown path is 404 not_found.
- Unknown query parameters are 400 invalid_query; a string containing NUL (U+0000) in the path, query or body is 400 (invalid_id, invalid_query, invalid_body).
- Bodies are JSON (file uploads excepted: multipart/form-data, with their own codes): another content type is 415 unsupported_media_type, a body over the size limit 413 payload_too_large, malformed JSON or invalid UTF-8 400 invalid_body.
- Rate-limited operations answer 429 rate_limited with Retry-After, and carry RateLimit and RateLimit-Policy headers; failed authentication is throttled per IP.
- While PostgreSQL or the job service (Temporal) is down or restarting, any operation may answer 503 unavailable with Retry-After (within about 10 s, never hanging); repeat the request after that many seconds. A write cut off at its commit may have been applied: repeat writes that carry a client key, or read before repeating.
- Operations that create something or start work take an optional Idempotency-Key header (the IdempotencyKey parameter): repeated within ${IDEMPOTENCY_KEY_TTL_HOURS} hours with the same request, it answers the first 2xx answer again with ${REPLAYED_HEADER}: true and does nothing; with another request 422 ${KEY_MISMATCH}; while the first runs 409 ${KEY_IN_FLIGHT}. Error answers are not kept. Keys are per user and acting workspace.`;

/** 201 responses link to the operations on the created resource (`<path>/{id}…`), for clients and stateful testers. */
function addLinks(operations: Operation[], paths: Record<string, Record<string, Json>>): void {
  for (const op of operations) {
    if (!op.responses[201]) continue;
    const targets = operations.filter((o) => o.path.startsWith(`${op.path}/{id}`));
    if (!targets.length) continue;
    const created = (paths[documentPath(op.path)][op.method.toLowerCase()].responses as Record<string, Json>)['201'];
    const idName = (t: Operation) => pathParamNames(t.path).get('id') ?? 'id';
    created.links = Object.fromEntries(
      targets.map((t) => [
        t.operationId,
        { operationId: t.operationId, parameters: { [idName(t)]: '$response.body#/id' } },
      ]),
    );
  }
}

/** `lead.discovered` → `LeadDiscovered`. */
const pascal = (name: string) => name.replace(/(^|[._-])([a-z])/g, (_, __, c: string) => c.toUpperCase());

/**
 * The `webhooks` section: one entry per event a subscription may list (and the generic test event),
 * each a POST this service sends, with its envelope as a named schema and the delivery headers.
 */
function webhooks(): Json {
  const out: Json = {};
  const events: [string, z.ZodType, string][] = [
    ...ACCEPTED_EVENTS.map((e) => [e, EVENT_DATA[e], EVENT_TRIGGERS[e]] as [string, z.ZodType, string]),
    [
      TEST_EVENT,
      TEST_EVENT_DATA,
      'Sent by POST /api/webhooks/outbound/{id}/test and test-url without an `event` query.',
    ],
  ];
  for (const [event, data, trigger] of events) {
    const name = `${pascal(event)}Event`;
    hoisted[`${pascal(event)}Data`] = jsonSchema(data, 'output');
    hoisted[name] = {
      type: 'object',
      description: `The body of a \`${event}\` delivery: the envelope every event shares.`,
      properties: {
        event: { type: 'string', enum: [event] },
        timestamp: {
          type: 'string',
          format: 'date-time',
          description: 'ISO 8601 UTC time of the envelope (the time of the change).',
        },
        data: { $ref: `#/components/schemas/${pascal(event)}Data` },
      },
      required: ['event', 'timestamp', 'data'],
    };
    out[event] = {
      post: {
        operationId: `webhook${pascal(event)}`,
        summary: `${event}: ${trigger}`,
        description:
          'Sent to each active subscription listing this event, with a ten-second timeout and no retry of a failed or non-2xx attempt (docs/webhooks.md). Verify the signature before parsing.',
        tags: ['webhook-events'],
        // A request this service sends, not one a client makes: generators honour x-internal and make no
        // client method of it (openapi-generator writes code that does not compile for a 3.1 webhook).
        'x-internal': true,
        security: [], // signed by this service (the headers below), not called with a token
        parameters: WEBHOOK_DELIVERY_HEADERS.map((h) => ({
          ...h,
          schema: { ...h.schema },
          ...(h.name === 'X-Service-Event' ? { schema: { type: 'string', enum: [event] }, example: event } : {}),
        })),
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } },
        },
        responses: { '200': { description: 'Any 2xx status acknowledges the delivery; the body is ignored.' } },
      },
    };
  }
  return out;
}

/**
 * `const: true|false` becomes a one-value boolean enum: openapi-python-client writes invalid Python
 * for a boolean `const` (`Trueand`), and every generator reads the enum as a boolean.
 */
function booleanEnums(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(booleanEnums);
  if (!node || typeof node !== 'object') return;
  const s = node as Json;
  if (typeof s.const === 'boolean') {
    s.type = 'boolean';
    s.enum = [s.const];
    delete s.const;
  }
  Object.values(s).forEach(booleanEnums);
}

/** An example on every parameter, request body and response content, built from its schema. */
function addExamples(doc: Json): void {
  const components = (doc.components as { schemas: Record<string, Json> }).schemas;
  const operations = [...Object.values(doc.paths as Json), ...Object.values(doc.webhooks as Json)].flatMap(
    (item) => Object.values(item as Json) as Json[],
  );
  for (const op of operations) {
    for (const p of (op.parameters ?? []) as Json[])
      if (!('example' in p) && !('$ref' in p)) p.example = exampleOf(p.schema, components, p.name as string);
    const bodies = [op.requestBody, ...Object.values((op.responses ?? {}) as Json)] as (
      { content?: Record<string, Json> } | undefined
    )[];
    for (const body of bodies)
      for (const media of Object.values(body?.content ?? {})) media.example ??= exampleOf(media.schema, components);
  }
}

export function buildOpenApi(operations: Operation[]): Json {
  const paths: Record<string, Record<string, Json>> = {};
  hoisted = {};
  usedErrorStatuses = new Set();
  nameComponents();
  const undeclared = operations.find((op) => !TAGS[op.tag]);
  if (undeclared) throw new Error(`${undeclared.operationId}: tag "${undeclared.tag}" is not declared in api/tags.ts`);
  for (const op of operations) (paths[documentPath(op.path)] ??= {})[op.method.toLowerCase()] = operationObject(op);
  addLinks(operations, paths);
  const used = new Set([...operations.map((op) => op.tag), 'webhook-events']);
  jsonSchema(ErrorBody, 'output'); // hoists components.schemas.ApiError, which every error response refers to
  const doc: Json = {
    openapi: '3.1.0',
    info: {
      title: 'Outreach service API',
      version: PACKAGE_VERSION,
      description: DESCRIPTION,
      'x-api-version': API_VERSION,
    },
    servers: [{ url: '/' }],
    tags: Object.entries(TAGS)
      .filter(([name]) => used.has(name))
      .map(([name, description]) => ({ name, description })),
    webhooks: webhooks(),
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'Personal access token (pat_…) or session JWT' },
      },
      schemas: hoisted,
      responses: errorResponses(usedErrorStatuses),
      parameters: { IdempotencyKey: IDEMPOTENCY_KEY },
      headers: {
        [REPLAYED_HEADER]: {
          description: `"true" on an answer replayed for a repeated ${IDEMPOTENCY_KEY_HEADER} (the first request's answer; nothing was done again); absent otherwise`,
          schema: { type: 'string', enum: ['true'] },
        },
        [API_VERSION_HEADER]: {
          description: `The API's version (a date; \`info.x-api-version\`); \`info.version\` is the same date as a package version`,
          required: true,
          schema: { type: 'string', enum: [API_VERSION] },
        },
        'X-Request-Id': {
          description: 'The request id (the caller’s X-Request-Id when safe to echo)',
          required: true,
          schema: { type: 'string', minLength: 1 },
        },
        RateLimit: {
          description: 'Remaining requests and seconds until the window frees one: "<group>";r=<n>;t=<s>',
          schema: { type: 'string' },
        },
        'RateLimit-Policy': {
          description: 'The group\'s quota and window: "<group>";q=<n>;w=60',
          schema: { type: 'string' },
        },
        'Retry-After': {
          description: 'Seconds to wait before retrying',
          required: true,
          schema: { type: 'integer', minimum: 0 },
        },
      },
    },
    paths,
  };
  booleanEnums(doc);
  const named = plainInputNames(doc);
  addExamples(named);
  return named;
}

/**
 * `XInput` is the input variant of a schema that is also an output: where it is identical to `X`
 * (nothing for the NUL rule to add), or `X` is not an output at all, it takes the plain name.
 */
function plainInputNames(doc: Json): Json {
  const schemas = (doc.components as { schemas: Record<string, Json> }).schemas;
  const rename = new Map<string, string>();
  for (const name of Object.keys(schemas)) {
    if (!name.endsWith('Input')) continue;
    const plain = name.slice(0, -'Input'.length);
    if (!(plain in schemas) || JSON.stringify(schemas[plain]) === JSON.stringify(schemas[name]))
      rename.set(name, plain);
  }
  if (!rename.size) return doc;
  const text = JSON.stringify(doc).replace(/"#\/components\/schemas\/([A-Za-z0-9_]+)"/g, (m, n: string) =>
    rename.has(n) ? `"#/components/schemas/${rename.get(n)}"` : m,
  );
  const out = JSON.parse(text) as Json;
  const outSchemas = (out.components as { schemas: Record<string, Json> }).schemas;
  for (const [from, to] of rename) {
    outSchemas[to] ??= outSchemas[from];
    delete outSchemas[from];
  }
  return out;
}
