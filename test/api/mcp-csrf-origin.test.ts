// The MCP browser forms' CSRF tokens and the `/mcp` Origin check (docs/mcp.md, "Browser sign-in and
// CSRF", "Origin"), and the OAuth endpoints' error descriptions, all through real HTTP: a forged or
// token-less submit is 403 `csrf_failed` and changes nothing; the genuine one works; `/mcp` refuses a
// foreign Origin (DNS rebinding) and serves allowed origins and non-browser clients.
import test, { type ExecutionContext } from 'ava';
import { createHash, randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createServices } from '../../api/services-factory.js';
import { loadConfig, mcpOrigins } from '../../lib/config.js';
import { api, call, closeApi, createTestApp, createUser, listen, type TestUser } from '../helpers/api.js';
import { createOwner } from '../helpers/billing.js';
import { approveConsent, Browser, connectMcp, hiddenFields, REDIRECT_URI } from '../helpers/mcp.js';

test.after.always(closeApi);

const FOREIGN = 'https://evil.example';

async function sql<T = Record<string, any>>(query: string, params: unknown[] = []): Promise<T[]> {
  const { services } = await api();
  return (await services.orm.em.fork().getConnection().execute(query, params)) as T[];
}

async function registerClient() {
  const r = await call('POST', '/oauth/mcp/register', {
    body: { client_name: 'CSRF client', redirect_uris: [REDIRECT_URI] },
  });
  if (r.status !== 201) throw new Error(`register: ${r.status} ${r.text}`);
  return r.body.client_id as string;
}

function authorizePath(clientId: string, state = 's1') {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
  });
  return { path: `/oauth/mcp/authorize?${q}`, verifier };
}

async function form(path: string, fields: Record<string, string>) {
  const { base } = await api();
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** Tokens by hand: register, consent in a browser, exchange the code. */
async function tokensFor(user: TestUser) {
  const { base } = await api();
  const clientId = await registerClient();
  const { path, verifier } = authorizePath(clientId);
  const code = await approveConsent(new Browser(base), new URL(base + path), user);
  const r = await form('/oauth/mcp/token', {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
  });
  if (r.status !== 200) throw new Error(`token: ${r.status} ${JSON.stringify(r.body)}`);
  return { clientId, access: r.body.access_token as string, refresh: r.body.refresh_token as string };
}

const sessionsOf = async (userId: string) =>
  (await sql<{ n: number }>(`select count(*)::int as n from sessions where user_id = ?`, [userId]))[0].n;
const grantsOf = async (clientId: string) =>
  (await sql<{ n: number }>(`select count(*)::int as n from mcp_grants where client_id = ?`, [clientId]))[0].n;

function refusedAsCsrf(t: ExecutionContext, r: { status: number; html: string; headers: Headers }, what: string) {
  t.is(r.status, 403, what);
  t.is(r.headers.get('x-error-code'), 'csrf_failed', what);
  t.true(r.html.includes('csrf_failed'), what);
  t.is(r.headers.get('set-cookie')?.includes('mcp_browser=') ?? false, false, `${what}: no sign-in cookie`);
}

// ---------------------------------------------------------------------------------------------
// The sign-in form

test('the sign-in form carries a token bound to this browser and request; without it, with a wrong or foreign one, nobody is signed in', async (t) => {
  const u = await createUser();
  const clientId = await registerClient();
  const { base } = await api();
  const { path } = authorizePath(clientId);
  const browser = new Browser(base);

  const page = await browser.request('GET', path);
  t.is(page.status, 200);
  const fields = hiddenFields(page.html);
  t.is(fields.return_to, path);
  t.regex(fields.csrf_token, /^[A-Za-z0-9_-]{43}$/, 'the form carries a CSRF token');
  const cookie = page.headers.getSetCookie().find((c) => c.startsWith('mcp_csrf='));
  t.truthy(cookie, 'the double-submit cookie is set');
  t.regex(cookie!, /; path=\/oauth\/mcp/i);
  t.regex(cookie!, /; samesite=strict/i);
  t.regex(cookie!, /; httponly/i);

  const sessions = await sessionsOf(u.id);
  const submit = (b: Browser, f: Record<string, string | undefined>) =>
    b.request(
      'POST',
      '/oauth/mcp/login',
      Object.fromEntries(
        Object.entries({ ...f, email: u.email, password: 'correct horse 42' }).filter(([, v]) => v !== undefined),
      ) as Record<string, string>,
    );

  refusedAsCsrf(t, await submit(browser, { return_to: path }), 'no token');
  refusedAsCsrf(t, await submit(browser, { return_to: path, csrf_token: '' }), 'empty token');
  refusedAsCsrf(t, await submit(browser, { return_to: path, csrf_token: 'A'.repeat(43) }), 'wrong token');
  refusedAsCsrf(t, await submit(browser, { return_to: path, csrf_token: fields.csrf_token + 'x' }), 'altered token');

  // An attacker's own valid pair (token + its cookie) does not work in the victim's browser.
  const attacker = new Browser(base);
  const attackerFields = await attacker.loginForm(path);
  refusedAsCsrf(t, await submit(new Browser(base), attackerFields), "a token without its browser's cookie");
  refusedAsCsrf(t, await submit(browser, attackerFields), "another browser's token");

  // A token is for the request whose page showed it (the pending authorization request).
  const other = authorizePath(clientId, 's2').path;
  refusedAsCsrf(
    t,
    await submit(browser, { return_to: other, csrf_token: fields.csrf_token }),
    'the token of another request',
  );

  // Nothing changed: no session, and the browser is still signed out.
  t.is(await sessionsOf(u.id), sessions);
  t.true((await browser.request('GET', path)).html.includes('action="/oauth/mcp/login"'));

  // Several tabs share the browser's nonce: the first page's form still works after a second page loaded.
  const second = await browser.request('GET', other);
  t.falsy(
    second.headers.getSetCookie().find((c) => c.startsWith('mcp_csrf=')),
    'the nonce is kept, not replaced',
  );
  const ok = await submit(browser, fields);
  t.is(ok.status, 303);
  t.is(ok.location, path);
  t.regex(ok.headers.get('set-cookie')!, /mcp_browser=/);
  t.is(await sessionsOf(u.id), sessions + 1);
  t.true(
    (await browser.request('GET', path)).html.includes('action="/oauth/mcp/authorize"'),
    'signed in: the consent page',
  );
});

test('the sign-in page of an approval link carries a token for that link', async (t) => {
  const u = await createUser();
  const { base } = await api();
  const path = '/oauth/mcp/approvals/018f0000-0000-7000-8000-000000000000';
  const browser = new Browser(base);
  const fields = await browser.loginForm(path);
  t.is(fields.return_to, path);
  t.truthy(fields.csrf_token);
  refusedAsCsrf(
    t,
    await browser.request('POST', '/oauth/mcp/login', {
      return_to: path,
      email: u.email,
      password: 'correct horse 42',
    }),
    'no token',
  );
  const ok = await browser.signIn(u, path);
  t.is(ok.status, 303);
  t.is((await browser.request('GET', path)).status, 404, 'signed in: that request is not theirs');
});

// ---------------------------------------------------------------------------------------------
// The consent and approval forms

test('the consent form: a missing or wrong token is 403 csrf_failed and issues no code; the right one does', async (t) => {
  const u = await createUser();
  const clientId = await registerClient();
  const { base } = await api();
  const { path } = authorizePath(clientId);
  const browser = new Browser(base);
  t.is((await browser.signIn(u, path)).status, 303);
  const consent = await browser.request('GET', path);
  const fields = hiddenFields(consent.html);
  t.regex(fields.csrf_token, /^[A-Za-z0-9_-]{43}$/);

  const { csrf_token: _drop, ...withoutToken } = fields;
  for (const [what, f] of [
    ['no token', withoutToken],
    ['wrong token', { ...fields, csrf_token: 'A'.repeat(43) }],
  ] as const) {
    for (const decision of ['approve', 'deny']) {
      const r = await browser.request('POST', '/oauth/mcp/authorize', { ...f, decision });
      refusedAsCsrf(t, r, `${what}, ${decision}`);
      t.is(r.location, null, 'no redirect to the client');
    }
  }
  // The token of this consent does not fit another request of the same client (another PKCE challenge).
  const another = hiddenFields((await browser.request('GET', authorizePath(clientId, 's2').path)).html);
  refusedAsCsrf(
    t,
    await browser.request('POST', '/oauth/mcp/authorize', {
      ...another,
      csrf_token: fields.csrf_token,
      decision: 'approve',
    }),
    'token of another request',
  );
  t.is(await grantsOf(clientId), 0, 'no code was issued');

  const ok = await browser.request('POST', '/oauth/mcp/authorize', { ...fields, decision: 'approve' });
  t.is(ok.status, 303);
  t.truthy(new URL(ok.location!).searchParams.get('code'));
  t.is(await grantsOf(clientId), 1);
});

test('the approval form: a missing or wrong token is 403 csrf_failed and the request stays pending; the right one approves', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const { client, browser } = await connectMcp(u);
  const asked = (await client.callTool({
    name: 'create_lead_list',
    arguments: { app_id: app.id, name: 'CSRF list' },
  })) as CallToolResult;
  const id = (asked.structuredContent as Record<string, string>).approval_id;
  const path = `/oauth/mcp/approvals/${id}`;
  const page = await browser.request('GET', path);
  t.truthy(hiddenFields(page.html).csrf_token);
  const status = async () =>
    (await call('POST', '/api/mcp/approvals/inspect', { token: u.accessToken, body: { approval_id: id } })).body.status;

  refusedAsCsrf(t, await browser.request('POST', path, {}), 'no token');
  refusedAsCsrf(t, await browser.request('POST', path, { csrf_token: 'A'.repeat(43) }), 'wrong token');
  refusedAsCsrf(
    t,
    await browser.request('POST', path, hiddenFields(page.html), { origin: FOREIGN, 'sec-fetch-site': 'cross-site' }),
    'the right token from another site',
  );
  t.is(await status(), 'pending', 'nothing changed');

  const ok = await browser.request('POST', path, hiddenFields(page.html));
  t.is(ok.status, 200);
  t.true(ok.html.includes('Approved.'));
  t.not(await status(), 'pending');
  await client.close();
});

// ---------------------------------------------------------------------------------------------
// /mcp and Origin

async function mcpPost(base: string, token: string | undefined, headers: Record<string, string> = {}, method = 'POST') {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-06-18',
    ...headers,
  };
  if (token) h.authorization = `Bearer ${token}`;
  const res = await fetch(`${base}/mcp`, {
    method,
    headers: h,
    body: method === 'POST' ? JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) : undefined,
  });
  const text = await res.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  return { status: res.status, headers: res.headers, body };
}

test('/mcp: a foreign Origin is 403 on every method (before authentication); the service’s own origin and no Origin work', async (t) => {
  const u = await createOwner();
  const { access } = await tokensFor(u);
  const { base, services } = await api();
  const own = new URL(services.config.publicBaseUrl).origin;
  t.deepEqual(services.config.mcpAllowedOrigins, mcpOrigins(services.config.publicBaseUrl));

  for (const origin of [FOREIGN, 'http://localhost.evil.example:3000', 'null', 'not an origin']) {
    const r = await mcpPost(base, access, { origin });
    t.is(r.status, 403, origin);
    t.is(r.body.jsonrpc, '2.0');
    t.is(r.body.error.code, -32000);
    t.regex(r.body.error.message, /Origin .* is not allowed/);
    t.is(r.headers.get('access-control-allow-origin'), null, 'a foreign page cannot read the answer');
  }
  t.is((await mcpPost(base, undefined, { origin: FOREIGN })).status, 403, 'checked before the token');
  t.is((await mcpPost(base, access, { origin: FOREIGN }, 'GET')).status, 403);
  t.is((await mcpPost(base, access, { origin: FOREIGN }, 'DELETE')).status, 403);
  t.is(
    (await mcpPost(base, access, { origin: FOREIGN, 'access-control-request-method': 'POST' }, 'OPTIONS')).status,
    403,
    'the preflight fails',
  );

  // DNS rebinding: the Host the request reached is not trusted as an origin.
  if (new URL(base).origin !== own)
    t.is(
      (await mcpPost(base, access, { origin: new URL(base).origin })).status,
      403,
      'the origin of the Host header is not allowed by itself',
    );

  const allowed = await mcpPost(base, access, { origin: own });
  t.is(allowed.status, 200);
  t.true(Array.isArray(allowed.body.result.tools));
  t.is(allowed.headers.get('access-control-allow-origin'), own);
  t.regex(allowed.headers.get('vary') ?? '', /origin/i);
  t.is((await mcpPost(base, access, { origin: own, 'access-control-request-method': 'POST' }, 'OPTIONS')).status, 204);
  t.is((await mcpPost(base, undefined, { origin: own })).status, 401, 'an allowed origin still needs a token');

  const noOrigin = await mcpPost(base, access);
  t.is(noOrigin.status, 200, 'non-browser clients send no Origin');
  t.true(Array.isArray(noOrigin.body.result.tools));
});

test('/mcp: the configured allow-list (MCP_ALLOWED_ORIGINS) is honoured', async (t) => {
  // How the variable is read: comma-separated origins, normalised as browsers send them, plus the service's own.
  t.deepEqual(
    mcpOrigins(
      'https://api.example.test/base',
      ' https://App.example.test:443/ , http://localhost:6274,vscode-webview://ABC ',
    ),
    ['https://api.example.test', 'https://app.example.test', 'http://localhost:6274', 'vscode-webview://abc'],
  );
  t.deepEqual(mcpOrigins('http://127.0.0.1:3000', undefined), ['http://127.0.0.1:3000']);
  for (const bad of ['https://app.example.test/path', 'app.example.test', '*', 'https://user@app.example.test']) {
    t.throws(() => mcpOrigins('http://127.0.0.1:3000', bad), { message: /MCP_ALLOWED_ORIGINS/ }, bad);
  }

  const u = await createOwner();
  const { access } = await tokensFor(u);
  const config = {
    ...loadConfig(),
    mcpAllowedOrigins: mcpOrigins(loadConfig().publicBaseUrl, 'https://app.example.test,http://localhost:6274'),
  };
  const services = await createServices(config);
  t.teardown(() => services.close());
  const { base } = await listen(services);
  const own = new URL(config.publicBaseUrl).origin;
  for (const origin of ['https://app.example.test', 'http://localhost:6274', own]) {
    const r = await mcpPost(base, access, { origin });
    t.is(r.status, 200, origin);
    t.is(r.headers.get('access-control-allow-origin'), origin);
  }
  t.is((await mcpPost(base, access, { origin: 'https://app.example.test.evil.example' })).status, 403);
  t.is(
    (await mcpPost(base, access, { origin: 'http://localhost:6275' })).status,
    403,
    'the port is part of the origin',
  );
  t.is((await mcpPost(base, access, { origin: 'http://app.example.test' })).status, 403, 'so is the scheme');
  t.is((await mcpPost(base, access)).status, 200);
});

// ---------------------------------------------------------------------------------------------
// Error descriptions say what is wrong

test('OAuth error descriptions name the actual problem', async (t) => {
  const u = await createOwner();
  const { base } = await api();

  // register
  const noUris = await call('POST', '/oauth/mcp/register', { body: { client_name: 'x' } });
  t.like(noUris.body, { error: 'invalid_redirect_uri' });
  t.regex(noUris.body.error_description, /redirect_uris is required/);
  t.regex(
    (await call('POST', '/oauth/mcp/register', { body: { redirect_uris: 'https://a.example/cb' } })).body
      .error_description,
    /array of strings/,
  );
  t.regex((await call('POST', '/oauth/mcp/register', { rawBody: '[1]' })).body.error_description, /must be an object/);
  t.regex((await call('POST', '/oauth/mcp/register', { rawBody: '{' })).body.error_description, /not valid JSON/);

  // authorize: what goes back to the client says which PKCE rule failed
  const clientId = await registerClient();
  const browser = new Browser(base);
  const back = async (p: Record<string, string>) => {
    const r = await browser.request('GET', `/oauth/mcp/authorize?${new URLSearchParams(p)}`);
    t.is(r.status, 302);
    const q = new URL(r.location!).searchParams;
    return { error: q.get('error'), description: q.get('error_description') ?? '' };
  };
  const good = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: 'a'.repeat(43),
    code_challenge_method: 'S256',
    state: 's',
  };
  const { code_challenge: _c, ...noChallenge } = good;
  t.regex((await back(noChallenge)).description, /code_challenge \(PKCE\) is required/);
  t.regex((await back({ ...good, code_challenge: 'short' })).description, /code_challenge must be 43-128 characters/);
  t.regex((await back({ ...good, code_challenge_method: 'plain' })).description, /"plain" is not supported: only S256/);
  const { response_type: _r, ...noType } = good;
  t.like(await back(noType), { error: 'invalid_request', description: 'response_type is required (code)' });
  t.like(await back({ ...good, response_type: 'token' }), { error: 'unsupported_response_type' });
  const twoUris = (
    await call('POST', '/oauth/mcp/register', { body: { redirect_uris: [REDIRECT_URI, 'http://127.0.0.1:9/other'] } })
  ).body.client_id;
  const { redirect_uri: _u, ...noRedirect } = good;
  const ambiguous = await browser.request(
    'GET',
    `/oauth/mcp/authorize?${new URLSearchParams({ ...noRedirect, client_id: twoUris })}`,
  );
  t.is(ambiguous.status, 400);
  t.true(ambiguous.html.includes('has no redirect_uri, and the client registered several'));
  t.true(
    (
      await browser.request(
        'GET',
        `/oauth/mcp/authorize?${new URLSearchParams({ ...good, redirect_uri: 'http://127.0.0.1:9/nope' })}`,
      )
    ).html.includes('does not exactly match'),
  );

  // token
  const tokenError = async (p: Record<string, string>) => (await form('/oauth/mcp/token', p)).body;
  t.like(await tokenError({ grant_type: 'authorization_code', code: 'x', client_id: clientId }), {
    error: 'invalid_request',
    error_description: 'missing parameter: code_verifier',
  });
  t.like(await tokenError({ client_id: clientId }), {
    error: 'invalid_request',
    error_description: 'grant_type is required (authorization_code or refresh_token)',
  });
  const verifier = randomBytes(32).toString('base64url');
  t.like(
    await tokenError({
      grant_type: 'authorization_code',
      code: 'mcp_code_unknown',
      code_verifier: verifier,
      client_id: clientId,
    }),
    { error: 'invalid_grant', error_description: 'unknown authorization code' },
  );
  const jsonNumber = await call('POST', '/oauth/mcp/token', {
    body: { grant_type: 'authorization_code', code: 12, code_verifier: verifier, client_id: clientId },
  });
  t.like(jsonNumber.body, { error: 'invalid_request', error_description: 'code must be a string' });

  const exchange = async (mutate: (p: { path: string; verifier: string }) => Promise<Record<string, string>>) => {
    const p = authorizePath(clientId);
    const code = await approveConsent(new Browser(base), new URL(base + p.path), u);
    return {
      code,
      body: await tokenError({
        grant_type: 'authorization_code',
        code,
        client_id: clientId,
        redirect_uri: REDIRECT_URI,
        code_verifier: p.verifier,
        ...(await mutate(p)),
      }),
    };
  };
  // An expired code is not "unknown": it says it expired.
  const expired = await exchange(async () => {
    await sql(
      `update mcp_grants set code_expires_at = now() - interval '1 second' where client_id = ? and code_used_at is null`,
      [clientId],
    );
    return {};
  });
  t.like(expired.body, { error: 'invalid_grant' });
  t.regex(expired.body.error_description, /authorization code expired/);
  const mismatch = await exchange(async () => ({ redirect_uri: 'http://127.0.0.1:9/other' }));
  t.regex(mismatch.body.error_description, /redirect_uri differs from the one of the authorization request/);
  // After a failed attempt no tokens were issued; the reuse message does not claim otherwise.
  const reused = await tokenError({
    grant_type: 'authorization_code',
    code: mismatch.code,
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
  });
  t.regex(reused.error_description, /already presented once/);

  // refresh: a wrong scope does not spend the token; an access token is named as such; expiry is said.
  const tokens = await tokensFor(u);
  t.like(
    await tokenError({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh,
      client_id: tokens.clientId,
      scope: 'admin',
    }),
    { error: 'invalid_scope' },
  );
  t.like(await tokenError({ grant_type: 'refresh_token', refresh_token: tokens.access, client_id: tokens.clientId }), {
    error: 'invalid_grant',
    error_description: 'that is an access token (mcp_at_…), not a refresh token (mcp_rt_…)',
  });
  t.like(await tokenError({ grant_type: 'refresh_token', client_id: tokens.clientId }), {
    error: 'invalid_request',
    error_description: 'missing parameter: refresh_token',
  });
  const rotated = await form('/oauth/mcp/token', {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh,
    client_id: tokens.clientId,
  });
  t.is(rotated.status, 200, 'the refused scope did not spend the refresh token');
  await sql(`update mcp_tokens set expires_at = now() - interval '1 second' where token_hash = ?`, [
    createHash('sha256').update(rotated.body.refresh_token).digest('hex'),
  ]);
  t.like(
    await tokenError({
      grant_type: 'refresh_token',
      refresh_token: rotated.body.refresh_token,
      client_id: tokens.clientId,
    }),
    {
      error: 'invalid_grant',
      error_description: 'the refresh token expired; authorize again',
    },
  );
});
