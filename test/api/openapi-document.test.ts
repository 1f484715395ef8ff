// The OpenAPI document as a generator and a reader need it: examples that validate, named components
// referenced everywhere, no recursion, no boolean `const`, declared tags, error codes as enums, and a
// `webhooks` section whose payloads match what the service sends.
import test from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { allOperations } from '../../api/operations.js';
import { buildOpenApi } from '../../api/openapi.js';
import { documentPath } from '../../api/path-params.js';
import {
  ACCEPTED_EVENTS,
  TEST_EVENT,
  sampleEnvelope,
  testEventData,
  envelopeJson,
} from '../../domain/webhooks/events.js';

type Json = Record<string, unknown>;
const doc = buildOpenApi(allOperations()) as Json & {
  paths: Record<string, Record<string, Json>>;
  webhooks: Record<string, { post: Json }>;
  components: { schemas: Record<string, Json> };
  tags: { name: string; description: string }[];
};
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
addFormats(ajv);
ajv.addSchema({ ...doc, $id: 'https://outreach.invalid/doc' });

const pointer = (parts: string[]) =>
  `https://outreach.invalid/doc#/${parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
const at = (parts: string[]) => parts.reduce<unknown>((node, key) => (node as Json)[key], doc);
// One validator per distinct schema (error envelopes and referenced resources repeat): compiling is the slow part.
const validators = new Map<string, ReturnType<typeof ajv.compile>>();
const validate = (parts: string[], value: unknown): string | null => {
  const key = JSON.stringify(at(parts));
  const v = validators.get(key) ?? validators.set(key, ajv.compile({ $ref: pointer(parts) })).get(key)!;
  return v(value) ? null : ajv.errorsText(v.errors);
};

const operations = [
  ...Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({
      where: ['paths', path, method],
      label: `${method.toUpperCase()} ${path}`,
      op,
    })),
  ),
  ...Object.entries(doc.webhooks).map(([event, item]) => ({
    where: ['webhooks', event, 'post'],
    label: `webhook ${event}`,
    op: item.post,
  })),
];

test('every operation has a request example (body and each parameter) and a response example, each valid against its schema', (t) => {
  let checked = 0;
  for (const { where, label, op } of operations) {
    const params = (op.parameters ?? []) as Json[];
    params.forEach((p, i) => {
      // A shared parameter (`#/components/parameters/…`, e.g. Idempotency-Key) is checked where it is declared.
      const ref = typeof p.$ref === 'string' ? p.$ref.split('/').slice(1) : undefined;
      const param = ref ? (at(ref) as Json) : p;
      const schema = ref ? [...ref, 'schema'] : [...where, 'parameters', String(i), 'schema'];
      t.true('example' in param, `${label}: parameter ${param.name as string} has an example`);
      t.is(validate(schema, param.example), null, `${label}: parameter ${param.name as string}`);
      checked++;
    });
    const body = op.requestBody as { content: Record<string, Json> } | undefined;
    for (const [media, content] of Object.entries(body?.content ?? {})) {
      t.true('example' in content, `${label}: request ${media} has an example`);
      t.is(
        validate([...where, 'requestBody', 'content', media, 'schema'], content.example),
        null,
        `${label}: request ${media}`,
      );
      checked++;
    }
    const responses = Object.entries((op.responses ?? {}) as Record<string, { content?: Record<string, Json> }>);
    t.true(responses.length > 0, label);
    for (const [status, response] of responses)
      for (const [media, content] of Object.entries(response.content ?? {})) {
        t.true('example' in content, `${label}: ${status} ${media} has an example`);
        t.is(
          validate([...where, 'responses', status, 'content', media, 'schema'], content.example),
          null,
          `${label}: ${status} ${media}`,
        );
        checked++;
      }
    // An operation with neither body nor parameters (GET /api/users/me) has nothing to exemplify in the request.
    t.true(
      responses.some(([, r]) => r.content) ||
        responses.every(([s, r]) => s === '204' || s === '200' || s === '302' || s === '304' || '$ref' in r),
      `${label}: a response example`,
    );
  }
  // The shared error responses carry theirs.
  for (const [name, r] of Object.entries(
    (doc.components as unknown as { responses: Record<string, Json> }).responses,
  )) {
    const content = (r.content as Record<string, Json>)['application/json'];
    t.is(
      validate(['components', 'responses', name, 'content', 'application/json', 'schema'], content.example),
      null,
      name,
    );
    checked++;
  }
  t.true(checked > 1000, `${checked} examples checked`);
});

test('component schemas are not recursive (generators fail on recursion)', (t) => {
  const schemas = doc.components.schemas;
  const refsOf = (name: string) =>
    [...JSON.stringify(schemas[name]).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]);
  for (const start of Object.keys(schemas)) {
    const seen = new Set<string>();
    const stack = refsOf(start);
    while (stack.length) {
      const next = stack.pop()!;
      t.not(next, start, `${start} reaches itself`);
      if (next === start || seen.has(next)) continue;
      seen.add(next);
      stack.push(...refsOf(next));
    }
  }
  t.deepEqual(doc.components.schemas.JsonValue, {
    description: 'Any JSON value: string, number, boolean, null, array or object.',
  });
});

test('no boolean const anywhere (openapi-python-client writes invalid Python for it)', (t) => {
  t.false(/"const":(true|false)/.test(JSON.stringify(doc)));
});

test('resources are named components, referenced rather than inlined', (t) => {
  const schemas = doc.components.schemas;
  for (const name of [
    'Campaign',
    'CampaignPage',
    'App',
    'LeadList',
    'Lead',
    'Contact',
    'Agent',
    'WebhookSubscription',
    'Conversation',
    'Meeting',
    'ApiError',
  ])
    t.truthy(schemas[name], `components.schemas.${name}`);
  t.true(Object.keys(schemas).length > 200);
  // No inline schema of an operation is a copy of a named component.
  const named = new Map(Object.entries(schemas).map(([n, s]) => [JSON.stringify(s), n]));
  const walk = (node: unknown, label: string): void => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach((n) => walk(n, label));
    const copy = named.get(JSON.stringify(node));
    if (copy && (node as Json).type === 'object') t.fail(`${label}: an inline copy of ${copy}`);
    Object.values(node).forEach((n) => walk(n, label));
  };
  for (const { label, op } of operations) walk({ body: op.requestBody, responses: op.responses }, label);
  const getCampaign = doc.paths['/api/campaigns/{campaignId}'].get as {
    responses: Record<string, { content: Record<string, { schema: Json }> }>;
  };
  t.deepEqual(getCampaign.responses['200'].content['application/json'].schema, {
    $ref: '#/components/schemas/Campaign',
  });
});

test('every tag used is declared with a sentence, in a tags array', (t) => {
  const declared = new Map(doc.tags.map((tag) => [tag.name, tag.description]));
  for (const { label, op } of operations)
    for (const tag of op.tags as string[]) {
      t.true(declared.has(tag), `${label}: tag ${tag}`);
      t.regex(declared.get(tag) ?? '', /^[A-Z].{10,}\.$/, tag);
    }
});

test('error responses are the shared ones (one ApiError), and each operation lists its codes: the declared and the router’s', (t) => {
  const createCampaign = doc.paths['/api/apps/{appId}/campaigns'].post as Json & {
    responses: Record<string, Json>;
    'x-error-codes': Record<string, string[]>;
  };
  const codes = createCampaign['x-error-codes'];
  t.true(codes['400'].includes('invalid_body'));
  t.true(codes['401'].includes('unauthorized'));
  t.true(codes['429'].includes('rate_limited'));
  t.deepEqual(createCampaign.responses['404'], { $ref: '#/components/responses/NotFound' });
  const responses = (doc.components as unknown as { responses: Record<string, Json> }).responses;
  for (const [name, r] of Object.entries(responses))
    t.deepEqual(
      (r.content as Record<string, Json>)['application/json'].schema,
      { $ref: '#/components/schemas/ApiError' },
      name,
    );
  for (const op of allOperations()) {
    const o = doc.paths[documentPath(op.path)][op.method.toLowerCase()] as Json & {
      responses: Record<string, Json>;
      'x-error-codes': Record<string, string[]>;
    };
    for (const [status, cs] of Object.entries(op.errors ?? {}))
      for (const code of cs) t.true(o['x-error-codes'][status]?.includes(code), `${op.operationId} ${status} ${code}`);
    // Every error status is answered with an ApiError: the shared response, or its own with that schema.
    for (const status of Object.keys(o['x-error-codes'])) {
      const r = o.responses[status];
      t.truthy(r, `${op.operationId} ${status}`);
      if (r && !('$ref' in r))
        t.deepEqual(
          (r.content as Record<string, Json>)['application/json'].schema,
          { $ref: '#/components/schemas/ApiError' },
          `${op.operationId} ${status}`,
        );
    }
  }
});

test('the webhooks section documents every event with the delivery headers, and the samples the service sends validate', (t) => {
  for (const event of [...ACCEPTED_EVENTS, TEST_EVENT]) {
    const post = doc.webhooks[event]?.post as { parameters: { name: string }[] } | undefined;
    t.truthy(post, event);
    const headers = post!.parameters.map((p) => p.name);
    for (const h of ['X-Service-Event', 'X-Service-Signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature'])
      t.true(headers.includes(h), `${event}: ${h}`);
  }
  const schemaOf = (event: string) => [
    'webhooks',
    event,
    'post',
    'requestBody',
    'content',
    'application/json',
    'schema',
  ];
  for (const event of ACCEPTED_EVENTS)
    t.is(validate(schemaOf(event), JSON.parse(JSON.stringify(sampleEnvelope(event)))), null, event);
  t.is(validate(schemaOf(TEST_EVENT), JSON.parse(envelopeJson(TEST_EVENT, testEventData(null)))), null, TEST_EVENT);
  // The envelope's event name is fixed per webhook.
  t.not(
    validate(schemaOf('lead.discovered'), { ...sampleEnvelope('lead.discovered'), event: 'action.executed' }),
    null,
  );
});
