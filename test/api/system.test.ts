import test from 'ava';
import { api, call, closeApi, listen } from '../helpers/api.js';
import { connectRedis } from '../../lib/redis.js';
test.after.always(closeApi);

test('GET /healthz answers 200 without credentials', async (t) => {
  const r = await call('GET', '/healthz');
  t.is(r.status, 200);
  t.deepEqual(r.body, { status: 'ok' });
});

test('GET /readyz reports PostgreSQL, Redis, Temporal and a polling worker', async (t) => {
  const r = await call('GET', '/readyz');
  t.is(r.status, 200, r.text);
  t.is(r.body.status, 'ready');
  for (const dep of ['postgres', 'redis', 'temporal', 'worker']) t.true(r.body.checks[dep].ok, dep);
});

test('unknown route is 404 not_found with the error body', async (t) => {
  const r = await call('GET', '/api/definitely-not-here');
  t.is(r.status, 404);
  t.is(r.body.error.code, 'not_found');
  t.is(typeof r.body.error.message, 'string');
});

test('wrong method is 405 with Allow', async (t) => {
  const r = await call('DELETE', '/api/auth/signup');
  t.is(r.status, 405);
  t.is(r.body.error.code, 'method_not_allowed');
  t.regex(r.headers.get('allow') ?? '', /POST/);
});

test('malformed JSON is 400 invalid_body, never a 500', async (t) => {
  const r = await call('POST', '/api/auth/signup', { rawBody: '{"email": "a@b.c", ' });
  t.is(r.status, 400);
  t.is(r.body.error.code, 'invalid_body');
  t.notRegex(r.text, /at .*\.ts:\d+/); // no stack trace
});

test('a body over the size limit is 413 payload_too_large', async (t) => {
  const r = await call('POST', '/api/auth/login', {
    rawBody: JSON.stringify({ email: 'x'.repeat(2 * 1024 * 1024), password: 'y' }),
  });
  t.is(r.status, 413);
  t.is(r.body.error.code, 'payload_too_large');
});

test('responses carry a request id and security headers; a safe incoming id is echoed', async (t) => {
  const r = await call('GET', '/healthz', { headers: { 'x-request-id': 'abc-123' } });
  t.is(r.headers.get('x-request-id'), 'abc-123');
  t.is(r.headers.get('x-content-type-options'), 'nosniff');
  t.is(r.headers.get('x-frame-options'), 'DENY');
  const unsafe = await call('GET', '/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
  t.not(unsafe.headers.get('x-request-id'), 'bad id with spaces');
  const err = await call('GET', '/api/nope', { headers: { 'x-request-id': 'req-9' } });
  t.is(err.body.error.request_id, 'req-9');
});

test('GET /openapi.json is an OpenAPI 3.1 document of the declared operations', async (t) => {
  const r = await call('GET', '/openapi.json');
  t.is(r.status, 200);
  t.is(r.body.openapi, '3.1.0');
  const signup = r.body.paths['/api/auth/signup'].post;
  t.deepEqual(signup.security, []);
  // Bodies and resources are named components, referenced from the operation.
  t.deepEqual(signup.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/SignupBody' });
  t.truthy(r.body.components.schemas.SignupBody.properties.email);
  t.truthy(signup.responses['409']);
  t.deepEqual(r.body.paths['/api/users/me'].get.security, [{ bearer: [] }]);
});

test('every $ref of /openapi.json resolves within the document (recursive schemas live in components)', async (t) => {
  const doc = (await call('GET', '/openapi.json')).body;
  const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]);
  t.true(refs.some((ref) => ref === '#/components/schemas/JsonValue')); // agents' icp_filters and config
  for (const ref of new Set(refs)) {
    t.true(ref.startsWith('#/'), ref);
    const target = ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], doc);
    t.truthy(target, `${ref} resolves`);
  }
  t.false(JSON.stringify(doc).includes('"$defs"'));
});

test('GET /metrics exposes Prometheus metrics including request latency by operation', async (t) => {
  await call('GET', '/healthz');
  const r = await call('GET', '/metrics');
  t.is(r.status, 200);
  t.regex(r.text, /http_request_duration_seconds_count\{operation="getHealth"\} \d+/);
  t.regex(r.text, /http_requests_total\{operation="getHealth",status_class="2xx"\} \d+/);
  t.regex(r.text, /process_cpu_user_seconds_total/);
});

test('GET /readyz is 503 not_ready naming the dependency that is down', async (t) => {
  const { services } = await api();
  const dead = connectRedis('redis://127.0.0.1:1');
  dead.on('error', () => {});
  t.teardown(() => dead.disconnect());
  const { base } = await listen({ ...services, redis: dead });
  const r = await call('GET', '/readyz', { base });
  t.is(r.status, 503);
  t.is(r.body.error.code, 'not_ready');
  t.false(r.body.error.details.redis.ok);
  t.true(r.body.error.details.postgres.ok);
  t.true(r.body.error.details.temporal.ok);
});
