// AI assistance for products and agents (analyze-text/url, generate-icp, generate-keywords,
// generate-queries) and the specialist routes that list the model calls they make.
import test from 'ava';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpecialistRun } from '../../db/entities/SpecialistRun.js';
import { demoId, seedDemo } from '../../domain/demo/seed.js';
import { createServices } from '../../api/services-factory.js';
import { loadConfig } from '../../lib/config.js';
import { call, closeApi, createTestApp, createUser, listen, type TestUser } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { addTeamMember } from '../helpers/db.js';
test.after.always(closeApi);

const OTHER = '0190a000-0000-7000-8000-000000000000';
const KEY = 'sk-secret-model-key-0123456789';
const PITCH =
  'Ledgerly helps freelance designers send invoices and file tax returns without an accountant. ' +
  'It automates bookkeeping for small studios and agencies in Germany and the Nordics.';

/** A local web server: each path answers with its handler. */
async function site(
  t: { teardown(fn: () => void): void },
  routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void>,
) {
  const srv = createServer((req, res) => (routes[req.url ?? ''] ?? ((_q, r) => r.writeHead(404).end()))(req, res));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    srv.closeAllConnections();
    srv.close();
  });
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
}
const html =
  (body: string, type = 'text/html; charset=utf-8') =>
  (_q: IncomingMessage, res: ServerResponse) =>
    res.writeHead(200, { 'content-type': type }).end(body);

async function newAgent(u: TestUser, appId: string, body: Record<string, unknown> = {}) {
  const r = await call('POST', `/api/apps/${appId}/agents`, {
    token: u.accessToken,
    body: { name: 'Finder', ...body },
  });
  if (r.status !== 201) throw new Error(`agent create failed: ${r.status} ${r.text}`);
  return r.body as { id: string };
}

async function appWithProfile(u: TestUser) {
  const app = await createTestApp(u, 'Ledgerly');
  const r = await call('PUT', `/api/apps/${app.id}`, {
    token: u.accessToken,
    body: {
      description: PITCH,
      icp_description: 'Freelance designers and small design studios',
      icp_filters: { keywords: ['invoicing'] },
    },
  });
  if (r.status !== 200) throw new Error(r.text);
  return app;
}

const runs = async (u: TestUser, appId: string, q = '') =>
  (await call('GET', `/api/apps/${appId}/specialist-runs${q}`, { token: u.accessToken })).body;

/** An API whose model is the OpenAI-compatible adapter pointed at a local server answering 500. */
async function apiWithFailingModel(t: { teardown(fn: () => Promise<void> | void): void }) {
  const model = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      res
        .writeHead(500, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: `upstream exploded (key ${KEY})`, type: 'server_error' } })),
    );
  });
  await new Promise<void>((r) => model.listen(0, '127.0.0.1', r));
  const base = loadConfig();
  const services = await createServices({
    ...base,
    llm: {
      ...base.llm,
      baseUrl: `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`,
      apiKey: KEY,
      model: 'failing-model',
      maxRetries: 0,
      timeoutMs: 5000,
    },
  });
  const { base: url, server } = await listen(services);
  t.teardown(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    model.closeAllConnections();
    model.close();
    await services.close();
  });
  return url;
}

// ---------------------------------------------------------------------------------------------
// analyze-text

test('analyze-text: a suggested profile and ICP within the limits of PUT /api/apps/{id}; nothing stored; runs recorded under app_id', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u, 'Blank');
  const r = await call('POST', '/api/apps/analyze-text', {
    token: u.accessToken,
    body: { text: PITCH, app_id: app.id },
  });
  t.is(r.status, 200, r.text);
  t.is(r.body.name, 'Ledgerly');
  t.true(r.body.description.startsWith('Ledgerly helps freelance designers'));
  t.truthy(r.body.value_proposition);
  t.truthy(r.body.icp_description);
  t.deepEqual(Object.keys(r.body.icp_filters).sort(), [
    'company_sizes',
    'countries',
    'industries',
    'keywords',
    'seniorities',
    'titles',
  ]);
  t.true(
    r.body.icp_filters.countries.includes('Germany') || r.body.icp_filters.countries.length > 0,
    JSON.stringify(r.body.icp_filters),
  );
  // The suggestion can be PUT back as it is.
  const put = await call('PUT', `/api/apps/${app.id}`, { token: u.accessToken, body: r.body });
  t.is(put.status, 200, put.text);
  // The product was not changed by the analysis itself; two runs are listed under it.
  const listed = await runs(u, app.id);
  t.deepEqual(listed.items.map((x: any) => x.kind).sort(), ['icp', 'product_profile']);
  t.true(
    listed.items.every(
      (x: any) =>
        x.status === 'succeeded' &&
        x.model === 'local-deterministic-1' &&
        x.app_id === app.id &&
        x.input_summary.includes('Ledgerly'),
    ),
  );
  // A name given is kept; without app_id the runs are recorded for the workspace only.
  const named = await call('POST', '/api/apps/analyze-text', {
    token: u.accessToken,
    body: { text: PITCH, name: '  Ledgerly Pro ' },
  });
  t.is(named.body.name, 'Ledgerly Pro');
  const e = await em();
  t.is(await e.count(SpecialistRun, { workspace: await workspaceIdOf(u.id), app: null }), 2);
});

test('analyze-text: 400 invalid_body (blank, too long, unknown field, bad app_id); 404/403 for app_id; 400 invalid_user', async (t) => {
  const u = await createOwner();
  const code = async (body: unknown, opts: { token?: string; headers?: Record<string, string> } = {}) => {
    const r = await call('POST', '/api/apps/analyze-text', {
      token: opts.token ?? u.accessToken,
      headers: opts.headers,
      body,
    });
    return `${r.status} ${r.body?.error?.code ?? ''}`.trim();
  };
  t.is(await code({ text: '   ' }), '400 invalid_body');
  t.is(await code({ text: 'x'.repeat(20_001) }), '400 invalid_body');
  t.is(await code({ text: 'x'.repeat(20_000) }), '200');
  t.is(await code({ text: 'ok', colour: 'red' }), '400 invalid_body');
  t.is(await code({ text: 'ok', app_id: 'nope' }), '400 invalid_body');
  t.is(await code({ text: 'ok', app_id: OTHER }), '404 not_found');
  const stranger = await createOwner();
  t.is(await code({ text: 'ok', app_id: (await createTestApp(stranger)).id }), '404 not_found');
  const member = await createUser();
  await addTeamMember(u.id, member.id, { appIds: [] });
  const app = await createTestApp(u);
  t.is(
    await code({ text: 'ok', app_id: app.id }, { token: member.accessToken, headers: { 'x-acting-as': u.id } }),
    '403 not_assigned',
  );
  t.is(await code({ text: 'ok' }, { headers: { 'x-acting-as': 'not-a-uuid' } }), '400 invalid_user');
  t.is(await code({ text: 'ok' }, { token: 'nope' }), '401 unauthorized');
});

// ---------------------------------------------------------------------------------------------
// analyze-url

test('analyze-url: a page fetched through the guarded client (redirect followed), HTML to text, the title as the name', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u);
  const page = `<!doctype html><html><head><title>Ledgerly</title><style>body{color:red}</style><script>track("x")</script></head>
    <body><nav>Home | Pricing</nav><h1>Invoices &amp; taxes for freelancers</h1><p>${PITCH}</p><img src="a.png"></body></html>`;
  const base = await site(t, {
    '/': (_q, res) => res.writeHead(301, { location: '/home' }).end(),
    '/home': html(page),
  });
  const r = await call('POST', '/api/apps/analyze-url', {
    token: u.accessToken,
    body: { url: `${base}/`, app_id: app.id },
  });
  t.is(r.status, 200, r.text);
  t.is(r.body.name, 'Ledgerly');
  t.like(r.body.source, { url: `${base}/home`, title: 'Ledgerly', truncated: false });
  t.true(r.body.description.includes('freelance designers'));
  const listed = await runs(u, app.id, '?kind=product_profile');
  t.is(listed.items.length, 1);
  t.false(listed.items[0].input_summary.includes('track('), 'scripts are not text');
  t.true(listed.items[0].input_summary.includes(`${base}/home`));
});

test('analyze-url: size is bounded (a 3 MiB page is cut at 2 MiB, text at 20,000 characters); plain text is read as is', async (t) => {
  const u = await createOwner();
  const big = `<html><body><p>${PITCH}</p>${'<p>more words here</p>'.repeat(150_000)}</body></html>`;
  t.true(big.length > 3 * 1024 * 1024);
  const base = await site(t, { '/big': html(big), '/plain': html(PITCH, 'text/plain') });
  const r = await call('POST', '/api/apps/analyze-url', { token: u.accessToken, body: { url: `${base}/big` } });
  t.is(r.status, 200, r.text);
  t.true(r.body.source.truncated);
  t.is(r.body.source.chars, 20_000);
  const plain = await call('POST', '/api/apps/analyze-url', { token: u.accessToken, body: { url: `${base}/plain` } });
  t.is(plain.status, 200, plain.text);
  t.is(plain.body.source.title, null);
});

test('analyze-url: 422 no_text (not HTML, empty page); 502 fetch_failed with the error class (HTTP 500, connection refused, redirect loop)', async (t) => {
  const u = await createOwner();
  const base = await site(t, {
    '/pdf': html('%PDF-1.7', 'application/pdf'),
    '/empty': html('<html><head><script>x()</script></head><body>  <img src=x> </body></html>'),
    '/broken': (_q, res) => res.writeHead(500).end('oops'),
    '/loop': (_q, res) => res.writeHead(302, { location: '/loop' }).end(),
  });
  const post = (url: string) => call('POST', '/api/apps/analyze-url', { token: u.accessToken, body: { url } });
  const pdf = await post(`${base}/pdf`);
  t.is(pdf.status, 422);
  t.like(pdf.body.error, { code: 'no_text', details: { content_type: 'application/pdf' } });
  t.is((await post(`${base}/empty`)).body.error.code, 'no_text');
  const broken = await post(`${base}/broken`);
  t.is(broken.status, 502);
  t.like(broken.body.error, { code: 'fetch_failed', details: { error_class: 'http_status', status_code: 500 } });
  // A port nobody listens on.
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
  const refused = await post(`http://127.0.0.1:${port}/`);
  t.is(refused.status, 502);
  t.is(refused.body.error.details.error_class, 'connection_error');
  const loop = await post(`${base}/loop`);
  t.is(loop.status, 502);
  t.like(loop.body.error.details, { error_class: 'http_status', status_code: 302 });
});

test('analyze-url: 400 invalid_url and blocked_destination (private and loopback addresses not allow-listed, also after a redirect)', async (t) => {
  const u = await createOwner();
  const post = async (url: unknown) => {
    const r = await call('POST', '/api/apps/analyze-url', { token: u.accessToken, body: { url } });
    return `${r.status} ${r.body.error?.code}`;
  };
  for (const url of [
    'not a url',
    'ftp://example.com/',
    'http://example.com/',
    'https://user:pw@example.com/',
    'https://8.8.8.8/',
  ])
    t.is(await post(url), '400 invalid_url', url);
  for (const url of [
    'https://10.1.2.3/',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/',
    'https://127.0.0.2/',
    'https://localhost.localdomain/',
    'https://printer.local/',
  ]) {
    t.is(await post(url), '400 blocked_destination', url);
  }
  t.is(await post(42), '400 invalid_body');
  // An allow-listed page redirecting to a private address: the hop is refused like a first URL.
  const base = await site(t, { '/go': (_q, res) => res.writeHead(302, { location: 'https://10.0.0.7/admin' }).end() });
  t.is(await post(`${base}/go`), '400 blocked_destination');
});

// ---------------------------------------------------------------------------------------------
// generate-icp

test('generate-icp: a proposal from the stored profile (nothing stored); 422 no_text without a profile; 404 across workspaces; 400 invalid_id', async (t) => {
  const u = await createOwner();
  const app = await appWithProfile(u);
  const before = (await call('GET', `/api/apps/${app.id}`, { token: u.accessToken })).body;
  const r = await call('POST', `/api/apps/${app.id}/generate-icp`, { token: u.accessToken });
  t.is(r.status, 200, r.text);
  t.truthy(r.body.icp_description);
  t.true(Array.isArray(r.body.icp_filters.titles));
  t.deepEqual((await call('GET', `/api/apps/${app.id}`, { token: u.accessToken })).body, before, 'nothing stored');
  const listed = await runs(u, app.id, '?kind=icp');
  t.is(listed.items.length, 1);
  t.like(listed.items[0], { kind: 'icp', status: 'succeeded', agent_id: null });
  const blank = await createTestApp(u, 'Blank');
  const empty = await call('POST', `/api/apps/${blank.id}/generate-icp`, { token: u.accessToken });
  t.is(empty.status, 422);
  t.is(empty.body.error.code, 'no_text');
  const stranger = await createOwner();
  t.is(
    (await call('POST', `/api/apps/${app.id}/generate-icp`, { token: stranger.accessToken })).body.error.code,
    'not_found',
  );
  t.is((await call('POST', `/api/apps/${OTHER}/generate-icp`, { token: u.accessToken })).status, 404);
  t.is((await call('POST', '/api/apps/nope/generate-icp', { token: u.accessToken })).body.error.code, 'invalid_id');
  const member = await createUser();
  await addTeamMember(u.id, member.id, { appIds: [] });
  t.is(
    (
      await call('POST', `/api/apps/${app.id}/generate-icp`, {
        token: member.accessToken,
        headers: { 'x-acting-as': u.id },
      })
    ).body.error.code,
    'not_assigned',
  );
});

// ---------------------------------------------------------------------------------------------
// generate-keywords and generate-queries

test('generate-keywords: a comma-separated string, stored on the agent; a keywords run with agent_id; errors 400/403/404', async (t) => {
  const u = await createOwner();
  const app = await appWithProfile(u);
  const agent = await newAgent(u, app.id, {
    icp_description: 'Freelance designers who hate invoicing and bookkeeping',
  });
  const r = await call('POST', `/api/agents/${agent.id}/generate-keywords`, { token: u.accessToken });
  t.is(r.status, 200, r.text);
  t.is(typeof r.body.keywords, 'string');
  t.regex(r.body.keywords, /^[^,]+(, [^,]+)+$/);
  t.true(r.body.keywords.includes('invoic'), r.body.keywords);
  t.is(r.body.simulated, undefined);
  t.is((await call('GET', `/api/agents/${agent.id}`, { token: u.accessToken })).body.keywords, r.body.keywords);
  const listed = await runs(u, app.id, `?agent_id=${agent.id}`);
  t.is(listed.items.length, 1);
  t.like(listed.items[0], { kind: 'keywords', agent_id: agent.id, status: 'succeeded' });
  t.deepEqual(listed.items[0].result.keywords.length > 0, true);

  const stranger = await createOwner();
  t.is(
    (await call('POST', `/api/agents/${agent.id}/generate-keywords`, { token: stranger.accessToken })).body.error.code,
    'not_found',
  );
  t.is((await call('POST', `/api/agents/${OTHER}/generate-keywords`, { token: u.accessToken })).status, 404);
  t.is((await call('POST', '/api/agents/x/generate-keywords', { token: u.accessToken })).body.error.code, 'invalid_id');
  t.is(
    (
      await call('POST', `/api/agents/${agent.id}/generate-keywords`, {
        token: u.accessToken,
        headers: { 'x-acting-as': 'x' },
      })
    ).body.error.code,
    'invalid_user',
  );
  const member = await createUser();
  await addTeamMember(u.id, member.id, { appIds: [] });
  t.is(
    (
      await call('POST', `/api/agents/${agent.id}/generate-keywords`, {
        token: member.accessToken,
        headers: { 'x-acting-as': u.id },
      })
    ).body.error.code,
    'not_assigned',
  );
});

test('generate-queries: 422 no_keywords before any keyword; then queries stored as the newsforum source’s config.queries (other keys kept)', async (t) => {
  const u = await createOwner();
  const app = await createTestApp(u, 'Bare');
  const agent = await newAgent(u, app.id);
  const path = `/api/agents/${agent.id}/sources/newsforum/generate-queries`;
  const none = await call('POST', path, { token: u.accessToken });
  t.is(none.status, 422);
  t.is(none.body.error.code, 'no_keywords');
  t.is(
    (
      await call('PUT', `/api/agents/${agent.id}/sources/newsforum`, {
        token: u.accessToken,
        body: { enabled: false, config: { language: 'en', queries: ['old'] } },
      })
    ).status,
    200,
  );
  await call('PUT', `/api/agents/${agent.id}/signals`, {
    token: u.accessToken,
    body: { signals: [{ kind: 'post_keywords', name: 'Pain', keywords: ['invoice software', 'tax return'] }] },
  });
  const r = await call('POST', path, { token: u.accessToken });
  t.is(r.status, 200, r.text);
  t.true(r.body.queries.length > 0);
  t.true(r.body.queries.some((q: string) => q.includes('invoice software')));
  const sources = (await call('GET', `/api/agents/${agent.id}/sources`, { token: u.accessToken })).body;
  const forum = sources.find((s: any) => s.source === 'newsforum');
  t.deepEqual(forum.config, { language: 'en', queries: r.body.queries });
  t.false(forum.enabled, 'an existing source keeps its enabled flag');
  t.like((await runs(u, app.id, '?kind=queries')).items[0], { agent_id: agent.id, status: 'succeeded' });
  // A source never configured is created enabled, as its first PUT would.
  const other = await newAgent(u, (await createTestApp(u, 'Second')).id);
  await call('PUT', `/api/agents/${other.id}/signals`, {
    token: u.accessToken,
    body: { signals: [{ kind: 'post_keywords', name: 'Pain', keywords: ['bookkeeping'] }] },
  });
  t.is(
    (await call('POST', `/api/agents/${other.id}/sources/newsforum/generate-queries`, { token: u.accessToken })).status,
    200,
  );
  t.true(
    (await call('GET', `/api/agents/${other.id}/sources`, { token: u.accessToken })).body.find(
      (s: any) => s.source === 'newsforum',
    ).enabled,
  );

  const stranger = await createOwner();
  t.is((await call('POST', path, { token: stranger.accessToken })).body.error.code, 'not_found');
  t.is(
    (await call('POST', '/api/agents/x/sources/newsforum/generate-queries', { token: u.accessToken })).body.error.code,
    'invalid_id',
  );
});

test('a failing model: 500 ai_error with the LLM code in details (never the key); the specialist run is recorded as failed', async (t) => {
  const base = await apiWithFailingModel(t);
  const u = await createOwner();
  const app = await appWithProfile(u);
  const agent = await newAgent(u, app.id);
  const r = await call('POST', `/api/agents/${agent.id}/generate-keywords`, { token: u.accessToken, base });
  t.is(r.status, 500);
  t.like(r.body.error, {
    code: 'ai_error',
    message: 'failed to generate keywords',
    details: { llm_code: 'unavailable', upstream_status: 500, retryable: true },
  });
  t.false(r.text.includes(KEY));
  t.is((await call('GET', `/api/agents/${agent.id}`, { token: u.accessToken })).body.keywords, null, 'nothing stored');
  const failed = await runs(u, app.id, '?status=failed');
  t.is(failed.items.length, 1);
  t.like(failed.items[0], { kind: 'keywords', model: 'failing-model', error_code: 'unavailable', result: null });
  t.false(JSON.stringify(failed.items[0]).includes(KEY));
  // Every AI operation maps it the same way.
  for (const [path, body] of [
    [`/api/apps/${app.id}/generate-icp`, undefined],
    ['/api/apps/analyze-text', { text: PITCH }],
    [`/api/agents/${agent.id}/sources/newsforum/generate-queries`, undefined],
  ] as const) {
    if (path.includes('generate-queries'))
      await call('PUT', `/api/agents/${agent.id}/signals`, {
        token: u.accessToken,
        body: { signals: [{ kind: 'post_keywords', name: 'x', keywords: ['invoices'] }] },
      });
    const x = await call('POST', path, { token: u.accessToken, base, body });
    t.is(`${x.status} ${x.body.error?.code}`, '500 ai_error', path);
  }
});

// ---------------------------------------------------------------------------------------------
// specialist routes

test('specialist routes: list with filters and cursor pages, one run, activity; 404 across workspaces and products; 400s', async (t) => {
  const u = await createOwner();
  const app = await appWithProfile(u);
  const agent = await newAgent(u, app.id, { icp_description: 'designers' });
  await call('POST', `/api/agents/${agent.id}/generate-keywords`, { token: u.accessToken });
  await call('POST', `/api/apps/${app.id}/generate-icp`, { token: u.accessToken });
  await call('POST', '/api/apps/analyze-text', { token: u.accessToken, body: { text: PITCH, app_id: app.id } });
  const all = await runs(u, app.id);
  t.is(all.items.length, 4);
  t.deepEqual(
    all.items.map((x: any) => x.id),
    [...all.items.map((x: any) => x.id)].sort().reverse(),
    'newest first',
  );
  const first = await runs(u, app.id, '?limit=3');
  t.is(first.items.length, 3);
  const second = await runs(u, app.id, `?limit=3&cursor=${first.next_cursor}`);
  t.deepEqual(
    [...first.items, ...second.items].map((x: any) => x.id),
    all.items.map((x: any) => x.id),
  );
  t.is(second.next_cursor, null);
  t.is((await runs(u, app.id, '?kind=icp')).items.length, 2);
  t.is((await runs(u, app.id, '?status=running')).items.length, 0);
  const one = await call('GET', `/api/apps/${app.id}/specialist-runs/${all.items[0].id}`, { token: u.accessToken });
  t.deepEqual(one.body, all.items[0]);
  const activity = await call('GET', `/api/apps/${app.id}/specialist-activity?days=7`, { token: u.accessToken });
  t.is(activity.status, 200, activity.text);
  t.like(activity.body, { app_id: app.id, days: 7, totals: { runs: 4, succeeded: 4, failed: 0 } });
  t.is(activity.body.by_day.length, 7);
  t.is((await call('GET', `/api/apps/${app.id}/specialist-activity`, { token: u.accessToken })).body.days, 30);

  // Another workspace: 404 on every route; another product of the same workspace: the run is 404.
  const stranger = await createOwner();
  for (const path of [`/specialist-runs`, `/specialist-runs/${all.items[0].id}`, `/specialist-activity`]) {
    t.is(
      (await call('GET', `/api/apps/${app.id}${path}`, { token: stranger.accessToken })).body.error.code,
      'not_found',
      path,
    );
  }
  const strangerApp = await createTestApp(stranger);
  t.is(
    (
      await call('GET', `/api/apps/${strangerApp.id}/specialist-runs/${all.items[0].id}`, {
        token: stranger.accessToken,
      })
    ).status,
    404,
  );
  const sibling = await createTestApp(u, 'Sibling');
  t.is(
    (await call('GET', `/api/apps/${sibling.id}/specialist-runs/${all.items[0].id}`, { token: u.accessToken })).status,
    404,
  );
  t.is((await runs(u, sibling.id)).items.length, 0);
  const member = await createUser();
  await addTeamMember(u.id, member.id, { appIds: [sibling.id] });
  t.is(
    (
      await call('GET', `/api/apps/${app.id}/specialist-runs`, {
        token: member.accessToken,
        headers: { 'x-acting-as': u.id },
      })
    ).body.error.code,
    'not_assigned',
  );
  // Validation.
  for (const q of ['?days=0', '?days=91', '?days=x'])
    t.is(
      (await call('GET', `/api/apps/${app.id}/specialist-activity${q}`, { token: u.accessToken })).body.error.code,
      'invalid_query',
      q,
    );
  for (const q of ['?status=done', '?agent_id=x', '?limit=0', '?kind='])
    t.is(
      (await call('GET', `/api/apps/${app.id}/specialist-runs${q}`, { token: u.accessToken })).body.error.code,
      'invalid_query',
      q,
    );
  t.is(
    (await call('GET', `/api/apps/${app.id}/specialist-runs/nope`, { token: u.accessToken })).body.error.code,
    'invalid_id',
  );
  t.is(
    (await call('GET', `/api/apps/nope/specialist-activity`, { token: u.accessToken })).body.error.code,
    'invalid_id',
  );
});

// ---------------------------------------------------------------------------------------------
// Demo

test('Demo workspace: AI operations answer (local model) with nothing stored and no specialist run', async (t) => {
  await seedDemo(await em());
  const u = await createUser();
  t.true((await call('POST', '/api/me/workspaces/demo/join', { token: u.accessToken })).status < 300);
  const demo = { token: u.accessToken, headers: { 'x-acting-as': demoId(1) } };
  const agentId = demoId(0x300);
  const appId = demoId(0x100);
  const before = await call('GET', `/api/agents/${agentId}`, demo);
  const sourcesBefore = await call('GET', `/api/agents/${agentId}/sources`, demo);
  const runsBefore = (await call('GET', `/api/apps/${appId}/specialist-runs`, demo)).body.items.length;

  const kw = await call('POST', `/api/agents/${agentId}/generate-keywords`, demo);
  t.is(kw.status, 200, kw.text);
  t.like(kw.body, { simulated: true });
  t.true(kw.body.keywords.length > 0);
  const q = await call('POST', `/api/agents/${agentId}/sources/newsforum/generate-queries`, demo);
  t.is(q.status, 200, q.text);
  t.like(q.body, { simulated: true });
  t.is((await call('POST', `/api/apps/${appId}/generate-icp`, demo)).status, 200);
  t.is((await call('POST', '/api/apps/analyze-text', { ...demo, body: { text: PITCH, app_id: appId } })).status, 200);

  t.deepEqual((await call('GET', `/api/agents/${agentId}`, demo)).body, before.body, 'agent unchanged');
  t.deepEqual(
    (await call('GET', `/api/agents/${agentId}/sources`, demo)).body,
    sourcesBefore.body,
    'sources unchanged',
  );
  t.is(
    (await call('GET', `/api/apps/${appId}/specialist-runs`, demo)).body.items.length,
    runsBefore,
    'no run recorded',
  );
});
