// The MCP transport (docs/mcp.md): the SDK's own client through discovery, registration, the
// authorization code flow with PKCE, tools, approvals; the separation of MCP and REST credentials;
// every documented status and error code of the OAuth endpoints, the approval routes and pages.
import test from 'ava';
import { createHash, randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { api, call, closeApi, createPat, createTestApp, createUser } from '../helpers/api.js';
import { createOwner } from '../helpers/billing.js';
import { approveConsent, Browser, connectMcp, hiddenFields, REDIRECT_URI } from '../helpers/mcp.js';

test.after.always(closeApi);

const structured = (r: unknown) => (r as CallToolResult).structuredContent as Record<string, any>;

async function form(path: string, fields: Record<string, string>) {
  const { base } = await api();
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any>, headers: res.headers };
}

async function registerClient(redirectUris = [REDIRECT_URI]) {
  const r = await call('POST', '/oauth/mcp/register', {
    body: { client_name: 'Raw client', redirect_uris: redirectUris },
  });
  if (r.status !== 201) throw new Error(`register: ${r.status} ${r.text}`);
  return r.body.client_id as string;
}

/** An authorization code by hand (no SDK): PKCE pair, consent in a browser. */
async function codeFor(user: Awaited<ReturnType<typeof createUser>>, clientId: string) {
  const { base } = await api();
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const url = new URL(`${base}/oauth/mcp/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'xyz',
  }).toString();
  const browser = new Browser(base);
  const code = await approveConsent(browser, url, user);
  return { code, verifier, browser, url };
}

async function tokensFor(user: Awaited<ReturnType<typeof createUser>>) {
  const clientId = await registerClient();
  const { code, verifier } = await codeFor(user, clientId);
  const t = await form('/oauth/mcp/token', {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
  });
  if (t.status !== 200) throw new Error(`token: ${t.status} ${JSON.stringify(t.body)}`);
  return { clientId, code, verifier, access: t.body.access_token as string, refresh: t.body.refresh_token as string };
}

async function mcpPost(
  token: string | undefined,
  body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
) {
  const { base } = await api();
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-06-18',
  };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
}

test('the SDK client discovers, registers, authorizes with PKCE, lists and calls tools; a risky call waits for one approval and returns its result once', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const { client, provider } = await connectMcp(u);
  t.truthy(provider.info?.client_id, 'registered dynamically');
  t.true(provider.saved!.access_token.startsWith('mcp_at_'));
  t.true(provider.saved!.refresh_token!.startsWith('mcp_rt_'));

  // tools/list: the registry of GET /api/agent/capabilities, with JSON Schema inputs.
  const { tools } = await client.listTools();
  const caps = await call('GET', `/api/agent/capabilities?app_id=${app.id}`, { token: u.accessToken });
  t.deepEqual(tools.map((x) => x.name).sort(), caps.body.capabilities.map((c: { name: string }) => c.name).sort());
  const create = tools.find((x) => x.name === 'create_lead_list')!;
  t.is(create.inputSchema.type, 'object');
  t.deepEqual(Object.keys(create.inputSchema.properties ?? {}).sort(), ['app_id', 'description', 'name']);
  t.true(tools.find((x) => x.name === 'list_lead_lists')!.annotations?.readOnlyHint);

  // A read tool runs at once, as the token's user.
  const read = await client.callTool({ name: 'list_lead_lists', arguments: { app_id: app.id } });
  t.falsy(read.isError);
  t.deepEqual(structured(read), { status: 'ok', result: [] });

  // A risky tool does not run: an approval request with a link.
  const args = { app_id: app.id, name: 'From MCP' };
  const asked = await client.callTool({ name: 'create_lead_list', arguments: args });
  t.true(asked.isError);
  const s = structured(asked);
  t.is(s.status, 'approval_required');
  t.regex(s.approve_url, new RegExp(`/oauth/mcp/approvals/${s.approval_id}$`));
  t.is((await call('GET', `/api/apps/${app.id}/lists`, { token: u.accessToken })).body.items.length, 0, 'nothing ran');

  // Asking again before approval: the same request, not a second one.
  t.is(structured(await client.callTool({ name: 'create_lead_list', arguments: args })).approval_id, s.approval_id);

  const inspected = await call('POST', '/api/mcp/approvals/inspect', {
    token: u.accessToken,
    body: { approval_id: s.approval_id },
  });
  t.is(inspected.status, 200);
  t.like(inspected.body, {
    id: s.approval_id,
    status: 'pending',
    tool: { name: 'create_lead_list', risk: 'change' },
    arguments: args,
    client: { name: 'Test MCP client' },
    decided_at: null,
  });

  // Another workspace's user: 404, as if it did not exist.
  const other = await createUser();
  t.is(
    (
      await call('POST', '/api/mcp/approvals/inspect', {
        token: other.accessToken,
        body: { approval_id: s.approval_id },
      })
    ).status,
    404,
  );
  t.is(
    (
      await call('POST', '/api/mcp/approvals/approve', {
        token: other.accessToken,
        body: { approval_id: s.approval_id },
      })
    ).body.error.code,
    'not_found',
  );

  const approved = await call('POST', '/api/mcp/approvals/approve', {
    token: u.accessToken,
    body: { approval_id: s.approval_id },
  });
  t.is(approved.status, 200);
  t.is(approved.body.status, 'approved');
  const again = await call('POST', '/api/mcp/approvals/approve', {
    token: u.accessToken,
    body: { approval_id: s.approval_id },
  });
  t.is(again.status, 409);
  t.is(again.body.error.code, 'approval_not_pending');

  // The retry (same tool, same arguments) gets the approved run's result; the tool ran once.
  const got = await client.callTool({ name: 'create_lead_list', arguments: args });
  t.falsy(got.isError, JSON.stringify(got));
  t.like(structured(got), { status: 'ok', approval_id: s.approval_id, result: { name: 'From MCP', app_id: app.id } });
  const twice = await client.callTool({ name: 'create_lead_list', arguments: { name: 'From MCP', app_id: app.id } });
  t.deepEqual(structured(twice), structured(got), 'key order does not matter; the same result');
  const lists = await call('GET', `/api/apps/${app.id}/lists`, { token: u.accessToken });
  t.deepEqual(
    lists.body.items.map((l: { name: string }) => l.name),
    ['From MCP'],
  );
  const done = await call('POST', '/api/mcp/approvals/inspect', {
    token: u.accessToken,
    body: { approval_id: s.approval_id },
  });
  t.like(done.body, { status: 'executed', result: { status: 'ok' } });
  t.truthy(done.body.executed_at);

  // Other arguments are another request.
  t.is(
    structured(await client.callTool({ name: 'create_lead_list', arguments: { app_id: app.id, name: 'Other' } }))
      .status,
    'approval_required',
  );
  await client.close();
});

test('an MCP access token is 401 on every /api route; REST credentials are 401 on /mcp', async (t) => {
  const u = await createOwner();
  const { access } = await tokensFor(u);
  for (const [method, path] of [
    ['GET', '/api/users/me'],
    ['GET', '/api/apps'],
    ['POST', '/api/mcp/approvals/inspect'],
  ] as const) {
    const r = await call(method, path, {
      token: access,
      body: method === 'POST' ? { approval_id: '018f0000-0000-7000-8000-000000000000' } : undefined,
    });
    t.is(r.status, 401, path);
    t.is(r.body.error.code, 'unauthorized');
  }
  t.is((await mcpPost(access)).status, 200, 'the same token works on /mcp');

  const pat = await createPat(u);
  for (const token of [pat, u.accessToken, undefined, 'mcp_at_not-a-token']) {
    const r = await mcpPost(token);
    t.is(r.status, 401);
    t.is(r.body.error.code, 'unauthorized');
    t.regex(
      r.headers.get('www-authenticate')!,
      /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/,
    );
  }
  // GET (no server stream) is 405 once authenticated.
  const { base } = await api();
  const get = await fetch(`${base}/mcp`, {
    headers: { authorization: `Bearer ${access}`, accept: 'text/event-stream' },
  });
  t.is(get.status, 405);
  t.is(get.headers.get('allow'), 'POST, OPTIONS');
});

test('metadata: protected resource (RFC 9728) and authorization server (RFC 8414)', async (t) => {
  const { base } = await api();
  const prm = await call('GET', '/.well-known/oauth-protected-resource/mcp');
  t.deepEqual(prm.body.resource, `${base}/mcp`);
  t.deepEqual(prm.body.authorization_servers, [base]);
  t.is((await call('GET', '/.well-known/oauth-protected-resource')).body.resource, `${base}/mcp`);
  const as = await call('GET', '/.well-known/oauth-authorization-server');
  t.like(as.body, {
    issuer: base,
    authorization_endpoint: `${base}/oauth/mcp/authorize`,
    token_endpoint: `${base}/oauth/mcp/token`,
    registration_endpoint: `${base}/oauth/mcp/register`,
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
  });
  t.is((await call('POST', '/.well-known/oauth-authorization-server')).status, 405);
});

test('registration refuses what a public client may not register: 400 invalid_redirect_uri, invalid_client_metadata', async (t) => {
  for (const uris of [['http://evil.example/cb'], ['javascript:alert(1)'], [], ['https://ok.example/cb#frag']]) {
    const r = await call('POST', '/oauth/mcp/register', { body: { redirect_uris: uris } });
    t.is(r.status, 400, JSON.stringify(uris));
    t.is(r.body.error, 'invalid_redirect_uri');
  }
  const secret = await call('POST', '/oauth/mcp/register', {
    body: { redirect_uris: ['https://ok.example/cb'], token_endpoint_auth_method: 'client_secret_basic' },
  });
  t.is(secret.body.error, 'invalid_client_metadata');
  const notJson = await call('POST', '/oauth/mcp/register', {
    rawBody: 'a=b',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.is(notJson.body.error, 'invalid_client_metadata');
  const ok = await call('POST', '/oauth/mcp/register', {
    body: {
      redirect_uris: [
        'https://ok.example/cb',
        'cursor://anysphere.cursor-retrieval/oauth/callback',
        'http://localhost:3334/cb',
      ],
    },
  });
  t.is(ok.status, 201);
  t.like(ok.body, { token_endpoint_auth_method: 'none', client_name: 'Unnamed MCP client' });
});

test('the authorization endpoint: unknown client or redirect is a 400 page (no redirect); other errors go back to the client; deny; CSRF', async (t) => {
  const u = await createUser();
  const clientId = await registerClient();
  const { base } = await api();
  const browser = new Browser(base);
  const q = (p: Record<string, string>) => `/oauth/mcp/authorize?${new URLSearchParams(p)}`;
  const good = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: 'a'.repeat(43),
    code_challenge_method: 'S256',
    state: 's1',
  };

  t.is((await browser.request('GET', q({ ...good, client_id: '018f0000-0000-7000-8000-000000000000' }))).status, 400);
  t.is((await browser.request('GET', q({ ...good, redirect_uri: 'http://127.0.0.1:9/other' }))).status, 400);
  for (const [patch, error] of [
    [{ code_challenge_method: 'plain' }, 'invalid_request'],
    [{ response_type: 'token' }, 'unsupported_response_type'],
    [{ scope: 'admin' }, 'invalid_scope'],
    [{ resource: 'https://elsewhere.example/mcp' }, 'invalid_target'],
  ] as const) {
    const r = await browser.request('GET', q({ ...good, ...patch }));
    t.is(r.status, 302);
    const back = new URL(r.location!);
    t.is(`${back.origin}${back.pathname}`, REDIRECT_URI);
    t.is(back.searchParams.get('error'), error);
    t.is(back.searchParams.get('state'), 's1');
  }
  // Not signed in: the sign-in page; a wrong password: 401 on the page; then the consent page.
  const first = await browser.request('GET', q(good));
  t.is(first.status, 200);
  t.true(first.html.includes('action="/oauth/mcp/login"'));
  t.is(first.headers.get('x-frame-options'), 'DENY');
  const wrong = await browser.signIn(u, q(good), 'wrong password 1');
  t.is(wrong.status, 401);
  t.truthy(hiddenFields(wrong.html).csrf_token, 'the page shown again carries a token');
  const offsite = await browser.request('POST', '/oauth/mcp/login', {
    email: u.email,
    password: 'x',
    return_to: 'https://evil.example/',
  });
  t.is(offsite.status, 400, 'no open redirect after sign-in');
  const cross = await browser.request(
    'POST',
    '/oauth/mcp/login',
    { email: u.email, password: 'x', return_to: q(good) },
    { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
  );
  t.is(cross.status, 403);
  const login = await browser.signIn(u, q(good));
  t.is(login.status, 303);
  t.regex(login.headers.get('set-cookie')!, /mcp_browser=.*; path=\/oauth\/mcp;.*samesite=lax; httponly/i);
  const consent = await browser.request('GET', login.location!);
  t.true(consent.html.includes('Raw client'));
  t.true(consent.html.includes(u.email));
  const fields = hiddenFields(consent.html);

  // A forged form (no or wrong CSRF token, or another site): 403, no code.
  t.is(
    (await browser.request('POST', '/oauth/mcp/authorize', { ...fields, csrf_token: 'forged', decision: 'approve' }))
      .status,
    403,
  );
  t.is(
    (
      await browser.request(
        'POST',
        '/oauth/mcp/authorize',
        { ...fields, decision: 'approve' },
        { origin: 'https://evil.example' },
      )
    ).status,
    403,
  );
  // Another session's token does not fit this session.
  const other = new Browser(base);
  await other.signIn(u, q(good));
  t.is((await other.request('POST', '/oauth/mcp/authorize', { ...fields, decision: 'approve' })).status, 403);
  // No session at all.
  t.is(
    (await new Browser(base).request('POST', '/oauth/mcp/authorize', { ...fields, decision: 'approve' })).status,
    401,
  );

  const denied = await browser.request('POST', '/oauth/mcp/authorize', { ...fields, decision: 'deny' });
  t.is(denied.status, 303);
  t.is(new URL(denied.location!).searchParams.get('error'), 'access_denied');
  const allowed = await browser.request('POST', '/oauth/mcp/authorize', { ...fields, decision: 'approve' });
  t.is(allowed.status, 303);
  const loc = new URL(allowed.location!);
  t.truthy(loc.searchParams.get('code'));
  t.is(loc.searchParams.get('state'), 's1');
  t.is(loc.searchParams.get('iss'), base);
});

test('the token endpoint: PKCE checked, a code is single use (reuse revokes its tokens), refresh tokens rotate (reuse revokes the grant)', async (t) => {
  const u = await createOwner();
  const clientId = await registerClient();
  const { code, verifier } = await codeFor(u, clientId);
  const base = { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT_URI };
  const badVerifier = await form('/oauth/mcp/token', { ...base, code_verifier: randomBytes(32).toString('base64url') });
  t.is(badVerifier.status, 400);
  t.is(badVerifier.body.error, 'invalid_grant');
  // That attempt spent the code: the right verifier now fails too.
  t.is((await form('/oauth/mcp/token', { ...base, code_verifier: verifier })).body.error, 'invalid_grant');

  const second = await codeFor(u, clientId);
  const ok = await form('/oauth/mcp/token', { ...base, code: second.code, code_verifier: second.verifier });
  t.is(ok.status, 200);
  t.like(ok.body, { token_type: 'Bearer', expires_in: 3600, scope: 'mcp' });
  t.is(ok.headers.get('cache-control'), 'no-store');
  const reuse = await form('/oauth/mcp/token', { ...base, code: second.code, code_verifier: second.verifier });
  t.is(reuse.body.error, 'invalid_grant');
  t.is((await mcpPost(ok.body.access_token)).status, 401, 'a replayed code revokes what it issued');

  const third = await tokensFor(u);
  const rotated = await form('/oauth/mcp/token', {
    grant_type: 'refresh_token',
    refresh_token: third.refresh,
    client_id: third.clientId,
  });
  t.is(rotated.status, 200);
  t.not(rotated.body.refresh_token, third.refresh);
  t.is((await mcpPost(rotated.body.access_token)).status, 200);
  const stolen = await form('/oauth/mcp/token', {
    grant_type: 'refresh_token',
    refresh_token: third.refresh,
    client_id: third.clientId,
  });
  t.is(stolen.body.error, 'invalid_grant');
  t.is((await mcpPost(rotated.body.access_token)).status, 401, 'refresh-token reuse revokes the whole grant');
  t.is(
    (
      await form('/oauth/mcp/token', {
        grant_type: 'refresh_token',
        refresh_token: rotated.body.refresh_token,
        client_id: third.clientId,
      })
    ).body.error,
    'invalid_grant',
  );

  t.is(
    (await form('/oauth/mcp/token', { grant_type: 'password', username: 'a', password: 'b' })).body.error,
    'unsupported_grant_type',
  );
  t.is((await form('/oauth/mcp/token', { grant_type: 'authorization_code' })).body.error, 'invalid_request');
  const otherClient = await registerClient();
  const fourth = await codeFor(u, clientId);
  t.is(
    (
      await form('/oauth/mcp/token', {
        ...base,
        code: fourth.code,
        code_verifier: fourth.verifier,
        client_id: otherClient,
      })
    ).body.error,
    'invalid_grant',
  );
});

test('approval routes: 400 invalid_body, 404 unknown, 409 when expired; approving in the browser page (CSRF) works once', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const { client, browser } = await connectMcp(u);
  t.is(
    (await call('POST', '/api/mcp/approvals/inspect', { token: u.accessToken, body: { approval_id: 'nope' } })).body
      .error.code,
    'invalid_body',
  );
  t.is((await call('POST', '/api/mcp/approvals/approve', { token: u.accessToken, body: {} })).status, 400);
  t.is(
    (
      await call('POST', '/api/mcp/approvals/inspect', {
        token: u.accessToken,
        body: { approval_id: '018f0000-0000-7000-8000-000000000000' },
      })
    ).status,
    404,
  );

  // Expired: approve is 409, inspect shows expired.
  const expiring = structured(
    await client.callTool({ name: 'create_lead_list', arguments: { app_id: app.id, name: 'Too late' } }),
  );
  const { services } = await api();
  await services.orm.em
    .fork()
    .getConnection()
    .execute(`update mcp_approvals set expires_at = now() - interval '1 second' where id = ?`, [expiring.approval_id]);
  const late = await call('POST', '/api/mcp/approvals/approve', {
    token: u.accessToken,
    body: { approval_id: expiring.approval_id },
  });
  t.is(late.status, 409);
  t.is(late.body.error.code, 'approval_not_pending');
  t.is(
    (
      await call('POST', '/api/mcp/approvals/inspect', {
        token: u.accessToken,
        body: { approval_id: expiring.approval_id },
      })
    ).body.status,
    'expired',
  );

  // The browser page: shows the request to its owner, approves with its CSRF token.
  const asked = structured(
    await client.callTool({ name: 'create_lead_list', arguments: { app_id: app.id, name: 'Via page' } }),
  );
  const path = new URL(asked.approve_url).pathname;
  const page = await browser.request('GET', path);
  t.is(page.status, 200);
  t.true(page.html.includes('create_lead_list'));
  t.true(page.html.includes('Via page'));
  t.is((await browser.request('POST', path, { csrf_token: 'forged' })).status, 403);
  const stranger = new Browser(browser.base);
  t.true(
    (await stranger.request('GET', path)).html.includes('action="/oauth/mcp/login"'),
    'signed out: the sign-in page',
  );
  await stranger.signIn(await createUser(), path);
  t.is((await stranger.request('GET', path)).status, 404, "another user's request is not found");
  const approved = await browser.request('POST', path, hiddenFields(page.html));
  t.is(approved.status, 200);
  t.true(approved.html.includes('Approved.'));
  const got = await client.callTool({ name: 'create_lead_list', arguments: { app_id: app.id, name: 'Via page' } });
  t.like(structured(got), { status: 'ok', result: { name: 'Via page' } });
  await client.close();
});

test('tools/call: invalid arguments and unknown tools answer errors without an approval; REST does not inherit an approval', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const { access } = await tokensFor(u);
  const bad = await mcpPost(access, {
    jsonrpc: '2.0',
    id: 2,
    method: 'tools/call',
    params: { name: 'create_lead_list', arguments: { app_id: 'x' } },
  });
  t.is(bad.status, 200);
  t.true(bad.body.result.isError);
  t.is(bad.body.result.structuredContent.result.code, 'invalid_arguments');
  const unknown = await mcpPost(access, {
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: { name: 'no_such_tool', arguments: {} },
  });
  t.is(unknown.body.result.structuredContent.result.code, 'unknown_tool');
  const { services } = await api();
  const [{ n }] = await services.orm.em
    .fork()
    .getConnection()
    .execute(`select count(*)::int as n from mcp_approvals where user_id = ?`, [u.id]);
  t.is(n, 0);
  // A REST write is unaffected by MCP approvals: it is the REST route's own rules.
  const r = await call('POST', `/api/apps/${app.id}/lists`, { token: u.accessToken, body: { name: 'REST list' } });
  t.is(r.status, 201);
  const badJson = await fetch(`${(await api()).base}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${access}`, 'content-type': 'application/json' },
    body: '{',
  });
  t.is(badJson.status, 400);
});

test('/mcp limits: the caller’s own default bucket (429 with Retry-After), bodies over BODY_LIMIT_BYTES (413); the token endpoint refuses another resource (invalid_target)', async (t) => {
  const u = await createOwner();
  const { access, clientId } = await tokensFor(u);
  const huge = await fetch(`${(await api()).base}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${access}`, 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(1_100_000) } }),
  });
  t.is(huge.status, 413);
  const { services } = await api();
  const limit = services.config.rateLimit.defaultPerMinute;
  // Fill the user's bucket as REST requests would (the same key), then /mcp is refused.
  for (let i = 0; i < limit; i += 50)
    await Promise.all(
      Array.from({ length: Math.min(50, limit - i) }, () =>
        services.rateLimiter.check(`rl:default:u:${u.id}`, limit, 60_000),
      ),
    );
  const limited = await mcpPost(access);
  t.is(limited.status, 429);
  t.truthy(limited.headers.get('retry-after'));
  t.is((await call('GET', '/api/users/me', { token: u.accessToken })).status, 429, 'one bucket with REST');

  const { code, verifier } = await codeFor(u, clientId);
  const target = await form('/oauth/mcp/token', {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    resource: 'https://elsewhere.example/mcp',
  });
  t.is(target.status, 400);
  t.is(target.body.error, 'invalid_target');
});

test('an approved call whose tool answers an error: failed, its error returned on the retry, not run again', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  t.is(
    (await call('POST', `/api/apps/${app.id}/lists`, { token: u.accessToken, body: { name: 'Taken' } })).status,
    201,
  );
  const { client } = await connectMcp(u);
  const args = { app_id: app.id, name: 'Taken' };
  const asked = structured(await client.callTool({ name: 'create_lead_list', arguments: args }));
  t.is(
    (
      await call('POST', '/api/mcp/approvals/approve', {
        token: u.accessToken,
        body: { approval_id: asked.approval_id },
      })
    ).status,
    200,
  );
  const got = await client.callTool({ name: 'create_lead_list', arguments: args });
  t.true(got.isError);
  t.like(structured(got), { status: 'error', approval_id: asked.approval_id });
  t.is(structured(got).result.status, 409);
  t.like(
    (
      await call('POST', '/api/mcp/approvals/inspect', {
        token: u.accessToken,
        body: { approval_id: asked.approval_id },
      })
    ).body,
    { status: 'failed' },
  );
  t.is(
    (
      await call('POST', '/api/mcp/approvals/approve', {
        token: u.accessToken,
        body: { approval_id: asked.approval_id },
      })
    ).status,
    409,
  );
  await client.close();
});
