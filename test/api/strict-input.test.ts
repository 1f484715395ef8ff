// The request rules every operation shares (api/router.ts, api/middleware/body.ts): NUL and lone
// surrogates refused, bytes that are not UTF-8 refused, JSON only (415), 405 with Allow, unknown
// query parameters refused, bodies read only after authentication, database data errors as 400.
import test from 'ava';
import { request } from 'node:http';
import { z } from 'zod';
import { defineOperation } from '../../api/operation.js';
import { api, call, createPat, createUser, closeApi, listen, uniqueEmail, PASSWORD } from '../helpers/api.js';
import { User } from '../../db/entities/User.js';
test.after.always(closeApi);

/** Raw HTTP, for bytes fetch would not send as given. */
async function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<{ status: number; headers: Record<string, unknown>; json: any; ms: number }> {
  const { base } = await api();
  const url = new URL(base + path);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = request(
      { method, host: url.hostname, port: url.port, path: url.pathname + url.search, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            json: text ? JSON.parse(text) : undefined,
            ms: Date.now() - started,
          });
        });
      },
    );
    req.on('error', reject);
    if (body) req.end(body);
    else req.end();
  });
}

test('a NUL character in any JSON string is 400 invalid_body and nothing is stored (sign-up, no login needed)', async (t) => {
  const email = uniqueEmail('nul');
  const r = await call('POST', '/api/auth/signup', {
    rawBody: JSON.stringify({ email, password: PASSWORD, name: 'Eve\u0000' }),
  });
  t.is(r.status, 400);
  t.is(r.body.error.code, 'invalid_body');
  t.regex(r.body.error.message, /NUL/);
  t.deepEqual(r.body.error.details, [{ path: 'name', message: 'must not contain NUL (U+0000) characters' }]);
  const { services } = await api();
  t.is(await services.orm.em.fork().count(User, { email }), 0);
  // Nested and in keys too.
  const u = await createUser();
  const nested = await call('POST', '/api/webhooks/outbound', {
    token: u.accessToken,
    rawBody: '{"url":"https://example.com/h","events":["lead.discovered\\u0000"]}',
  });
  t.is(nested.status, 400);
  t.is(nested.body.error.code, 'invalid_body');
  const key = await call('PATCH', '/api/users/me', { token: u.accessToken, rawBody: '{"na\\u0000me":"x"}' });
  t.is(key.status, 400);
});

test('NUL in a query or path parameter is 400 with the part’s code', async (t) => {
  const u = await createUser();
  const q = await call('GET', '/api/webhooks/outbound?cursor=%00', { token: u.accessToken });
  t.is(q.status, 400);
  t.is(q.body.error.code, 'invalid_query');
  const p = await call('DELETE', '/api/users/me/api-tokens/%00', { token: u.accessToken });
  t.is(p.status, 400);
  t.is(p.body.error.code, 'invalid_id');
});

test('a body that is not valid UTF-8, or holds a lone surrogate, is 400 invalid_body (never rewritten to U+FFFD)', async (t) => {
  const email = uniqueEmail('utf8');
  const bytes = Buffer.concat([
    Buffer.from(`{"email":"${email}","password":"${PASSWORD}","name":"A`),
    Buffer.from([0xff, 0xfe]),
    Buffer.from('"}'),
  ]);
  const r = await raw(
    'POST',
    '/api/auth/signup',
    { 'content-type': 'application/json', 'content-length': String(bytes.length) },
    bytes,
  );
  t.is(r.status, 400);
  t.is(r.json.error.code, 'invalid_body');
  t.regex(r.json.error.message, /UTF-8/);
  const lone = await call('POST', '/api/auth/signup', {
    rawBody: `{"email":"${email}","password":"${PASSWORD}","name":"\\ud800x"}`,
  });
  t.is(lone.status, 400);
  t.is(lone.body.error.code, 'invalid_body');
  const { services } = await api();
  t.is(await services.orm.em.fork().count(User, { email }), 0);
  // A query string with an invalid percent-encoding is refused the same way.
  const u = await createUser();
  const q = await call('GET', '/api/webhooks/outbound?cursor=%ff', { token: u.accessToken });
  t.is(q.status, 400);
  t.is(q.body.error.code, 'invalid_query');
});

test('a JSON null body, or whitespace alone, is not an absent body: 400 invalid_body', async (t) => {
  const u = await createUser();
  const r = await call('PATCH', '/api/users/me', { token: u.accessToken, rawBody: 'null' });
  t.is(r.status, 400);
  t.is(r.body.error.code, 'invalid_body');
  const blank = await call('PATCH', '/api/users/me', { token: u.accessToken, rawBody: '\n' });
  t.is(blank.status, 400);
  t.is(blank.body.error.message, 'malformed JSON body');
  // No body at all is an empty patch.
  t.is((await call('PATCH', '/api/users/me', { token: u.accessToken })).status, 200);
});

test('a JSON operation with a non-JSON body is 415 unsupported_media_type', async (t) => {
  const body = { email: uniqueEmail(), password: 'x' };
  for (const [type, payload] of [
    ['application/x-www-form-urlencoded', 'email=a%40b.c&password=x'],
    ['text/plain', JSON.stringify(body)],
    ['application/xml', '<login><email>a@b.c</email></login>'],
    [
      'multipart/form-data; boundary=x',
      '--x\r\nContent-Disposition: form-data; name="email"\r\n\r\na@b.c\r\n--x--\r\n',
    ],
    ['application/json; charset=latin1', JSON.stringify(body)],
  ]) {
    const r = await call('POST', '/api/auth/login', { rawBody: payload, headers: { 'content-type': type } });
    t.is(r.status, 415, type);
    t.is(r.body.error.code, 'unsupported_media_type', type);
  }
  // A body without a Content-Type is not JSON either.
  const bytes = Buffer.from(JSON.stringify(body));
  const none = await raw('POST', '/api/auth/login', { 'content-length': String(bytes.length) }, bytes);
  t.is(none.status, 415);
  // application/json with an explicit UTF-8 charset and +json types are JSON.
  const ok = await call('POST', '/api/auth/login', {
    rawBody: JSON.stringify(body),
    headers: { 'content-type': 'application/vnd.api+json; charset=UTF-8' },
  });
  t.is(ok.status, 401);
});

test('a compressed JSON body is 415 (its bytes could not be checked as UTF-8); a __proto__ key is 400 invalid_body', async (t) => {
  const { gzipSync } = await import('node:zlib');
  const json = JSON.stringify({ email: uniqueEmail(), password: 'x' });
  for (const encoding of ['gzip', 'br', 'x-unknown']) {
    const bytes = encoding === 'gzip' ? gzipSync(json) : Buffer.from(json);
    const r = await raw(
      'POST',
      '/api/auth/login',
      { 'content-type': 'application/json', 'content-encoding': encoding, 'content-length': String(bytes.length) },
      bytes,
    );
    t.is(r.status, 415, encoding);
    t.is(r.json.error.code, 'unsupported_media_type', encoding);
  }
  // `identity` is no encoding at all: read as usual (wrong password → 401).
  const plain = Buffer.from(json);
  t.is(
    (
      await raw(
        'POST',
        '/api/auth/login',
        { 'content-type': 'application/json', 'content-encoding': 'identity', 'content-length': String(plain.length) },
        plain,
      )
    ).status,
    401,
  );
  // Prototype poisoning is refused by the parser itself, before any schema sees the body.
  const poisoned = Buffer.from('{"__proto__":{"admin":true},"email":"a@b.c","password":"x"}');
  const r = await raw(
    'POST',
    '/api/auth/login',
    { 'content-type': 'application/json', 'content-length': String(poisoned.length) },
    poisoned,
  );
  t.is(r.status, 400);
  t.is(r.json.error.code, 'invalid_body');
});

test('a method the path does not support is 405 with Allow (TRACE included); OPTIONS answers 204 with Allow', async (t) => {
  for (const method of ['PATCH', 'PUT', 'TRACE', 'POST']) {
    const r = await raw(method, '/api/users/me/sessions', {});
    t.is(r.status, 405, method);
    t.is(r.json.error.code, 'method_not_allowed', method);
    t.is(r.headers.allow, 'HEAD, GET', method);
  }
  const profile = await raw('PUT', '/api/users/me', {});
  t.is(profile.status, 405);
  t.deepEqual(String(profile.headers.allow).split(', ').sort(), ['GET', 'HEAD', 'PATCH']);
  const options = await raw('OPTIONS', '/api/users/me', {});
  t.is(options.status, 204);
  t.truthy(options.headers.allow);
  // A static path beside a parameterised sibling (`/test-url` vs `/{id}`) lists only its own methods.
  const sibling = await raw('OPTIONS', '/api/webhooks/outbound/test-url', {});
  t.is(sibling.headers.allow, 'POST');
  const unknown = await raw('TRACE', '/api/nope', {});
  t.is(unknown.status, 404);
  t.is(unknown.json.error.code, 'not_found');
});

test('bodies are read after routing and authentication: an unauthenticated or unknown request is answered without reading a large body', async (t) => {
  const big = Buffer.alloc(900 * 1024, 'a');
  const unauth = await raw(
    'POST',
    '/api/webhooks/outbound',
    { 'content-type': 'application/json', 'content-length': String(big.length) },
    big,
  );
  t.is(unauth.status, 401);
  t.is(unauth.json.error.code, 'unauthorized');
  const unknown = await raw(
    'POST',
    '/api/no-such-route',
    { 'content-type': 'application/json', 'content-length': String(big.length) },
    big,
  );
  t.is(unknown.status, 404);
  // The same body on an authenticated request is read, and refused as malformed JSON (not 413: it fits).
  const u = await createUser();
  const authed = await raw(
    'POST',
    '/api/webhooks/outbound',
    {
      'content-type': 'application/json',
      'content-length': String(big.length),
      authorization: `Bearer ${u.accessToken}`,
    },
    big,
  );
  t.is(authed.status, 400);
  t.is(authed.json.error.code, 'invalid_body');
  // Over the limit, once authenticated: 413.
  const huge = Buffer.alloc(1024 * 1024 + 10, 'a');
  const tooBig = await raw(
    'POST',
    '/api/webhooks/outbound',
    {
      'content-type': 'application/json',
      'content-length': String(huge.length),
      authorization: `Bearer ${u.accessToken}`,
    },
    huge,
  );
  t.is(tooBig.status, 413);
  t.is(tooBig.json.error.code, 'payload_too_large');
});

test('unknown query parameters are 400 invalid_query on every operation, with the accepted names', async (t) => {
  const u = await createUser();
  const list = await call('GET', '/api/webhooks/outbound?limt=5', { token: u.accessToken });
  t.is(list.status, 400);
  t.is(list.body.error.code, 'invalid_query');
  t.is(list.body.error.details[0].path, 'limt');
  t.regex(list.body.error.details[0].message, /accepted: .*limit/);
  const noQuery = await call('GET', '/api/users/me?verbose=1', { token: u.accessToken });
  t.is(noQuery.status, 400);
  t.is(noQuery.body.error.code, 'invalid_query');
  t.is((await call('GET', '/api/webhooks/outbound?limit=5', { token: u.accessToken })).status, 200);
});

test('an empty X-Acting-As header is treated like a malformed one: 400 invalid_user', async (t) => {
  const u = await createUser();
  const { base } = await api();
  // fetch drops empty header values, so this goes over raw HTTP.
  const r = await raw('GET', '/api/apps', { authorization: `Bearer ${u.accessToken}`, 'x-acting-as': '' });
  t.is(r.status, 400);
  t.is(r.json.error.code, 'invalid_user');
  t.truthy(base);
  // Identity routes ignore the header altogether.
  const me = await raw('GET', '/api/users/me', { authorization: `Bearer ${u.accessToken}`, 'x-acting-as': '' });
  t.is(me.status, 200);
});

test('a database data error (bytes the encoding cannot hold) maps to 400, never 500', async (t) => {
  const { services } = await api();
  const probe = defineOperation({
    method: 'POST',
    path: '/api/probe/encoding',
    summary: 'test probe',
    tag: 'test',
    auth: 'public',
    rateLimit: 'none',
    responses: { 200: z.object({}) },
    handler: async ({ em }) => {
      await em.getConnection().execute(`select convert_from('\\x6100'::bytea, 'UTF8')`);
      return {};
    },
  });
  const range = defineOperation({
    method: 'GET',
    path: '/api/probe/range',
    summary: 'test probe',
    tag: 'test',
    auth: 'public',
    rateLimit: 'none',
    responses: { 200: z.object({}) },
    handler: async ({ em }) => {
      await em.getConnection().execute(`select 2147483647::int + 1`);
      return {};
    },
  });
  const { base } = await listen(services, [probe, range]);
  const r = await call('POST', '/api/probe/encoding', { base });
  t.is(r.status, 400);
  t.is(r.body.error.code, 'invalid_request');
  t.notRegex(r.text, /convert_from|stack|\n\s+at /);
  const o = await call('GET', '/api/probe/range', { base });
  t.is(o.status, 400);
});

test('a PAT keeps working across requests (cache hits) and answers /api/users/me with the profile', async (t) => {
  const u = await createUser('Cached Person');
  const pat = await createPat(u);
  const first = await call('GET', '/api/users/me', { token: pat });
  const second = await call('GET', '/api/users/me', { token: pat });
  t.is(first.status, 200);
  t.deepEqual(second.body, first.body);
  t.is(first.body.name, 'Cached Person');
  // A profile change is visible at once (the cache is invalidated on write).
  await call('PATCH', '/api/users/me', { token: pat, body: { name: 'Renamed' } });
  t.is((await call('GET', '/api/users/me', { token: pat })).body.name, 'Renamed');
});
