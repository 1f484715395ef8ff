// Integrations (docs/integrations.md): generic destinations verified before saving, stored sealed and
// shown masked; verify without saving; test through the guarded client; update, delete (webhook
// subscriptions detached); roles, Demo, limits; cross-workspace ids; the partner install's errors.
import test from 'ava';
import { createHmac, randomUUID } from 'node:crypto';
import { DEMO_WORKSPACE_ID, seedDemo } from '../../domain/demo/seed.js';
import { resolveActor } from '../../domain/workspaces.js';
import { findTool } from '../../domain/tools/index.js';
import { encrypt } from '../../lib/crypto.js';
import { localAuthorizationCode } from '../../lib/oauth-pkce.js';
import { uuidv7 } from '../../lib/ids.js';
import { api, call, closeApi, createUser, type TestUser } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { addTeamMember } from '../helpers/db.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { installPartner } from '../helpers/partner.js';
test.after.always(closeApi);

const receivers: Receiver[] = [];
test.after.always(() => Promise.all(receivers.map((r) => r.close())));
async function receiver(status = 200) {
  const r = await startReceiver((_req, res) =>
    res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'nope'),
  );
  receivers.push(r);
  return r;
}

const as = (u: TestUser) => ({ token: u.accessToken });
const create = (u: TestUser, body: Record<string, unknown>) => call('POST', '/api/integrations', { ...as(u), body });
const count = async (u: TestUser) =>
  Number(
    (
      await (
        await em()
      ).execute(`select count(*)::int n from integrations where workspace_id = ?`, [await workspaceIdOf(u.id)])
    )[0].n,
  );

test('a JSON webhook is verified (signed) before it is saved, stored sealed and shown masked', async (t) => {
  const u = await createOwner();
  const r = await receiver();
  const secret = 'shh-secret-1234';
  const made = await create(u, { kind: 'json_webhook', name: 'Ops hook', url: `${r.url}?token=abcdefWXYZ`, secret });
  t.is(made.status, 201, made.text);
  t.like(made.body, {
    kind: 'json_webhook',
    name: 'Ops hook',
    status: 'active',
    account: null,
    sync: null,
    last_test_ok: null,
  });
  t.is(made.body.credentials.url, `${new URL(r.url).origin}/…WXYZ`);
  t.is(made.body.credentials.secret, '****1234');
  t.truthy(made.body.last_verified_at);
  // The verification request was signed with the secret.
  t.is(r.requests.length, 1);
  const req = r.requests[0];
  t.is(req.headers['x-integration-event'], 'integration.verification');
  t.is(req.headers['x-integration-signature'], `sha256=${createHmac('sha256', secret).update(req.raw).digest('hex')}`);
  // Nothing readable in the row.
  const [row] = await (await em()).execute(`select credentials_sealed from integrations where id = ?`, [made.body.id]);
  t.false(String(row.credentials_sealed).includes('abcdefWXYZ'));
  t.false(String(row.credentials_sealed).includes(secret));
  const got = await call('GET', `/api/integrations/${made.body.id}`, as(u));
  t.deepEqual(got.body, made.body);
  const list = await call('GET', '/api/integrations?kind=json_webhook', as(u));
  t.deepEqual(list.body, { items: [made.body], next_cursor: null });
  t.deepEqual((await call('GET', '/api/integrations?kind=slack_webhook', as(u))).body.items, []);
});

test('create refuses bad destinations: 400 invalid_url, blocked_destination, oauth_required, invalid_body; 422 verification_failed saves nothing', async (t) => {
  const u = await createOwner();
  const codes = async (body: Record<string, unknown>) => {
    const r = await create(u, body);
    return [r.status, r.body.error?.code];
  };
  t.deepEqual(await codes({ kind: 'slack_webhook', name: 'x', url: 'not a url' }), [400, 'invalid_url']);
  t.deepEqual(await codes({ kind: 'slack_webhook', name: 'x', url: 'https://10.1.2.3/hook' }), [
    400,
    'blocked_destination',
  ]);
  t.deepEqual(await codes({ kind: 'slack_webhook', name: 'x', url: 'https://metadata.internal/hook' }), [
    400,
    'blocked_destination',
  ]);
  t.deepEqual(await codes({ kind: 'partner', name: 'x', url: 'https://crm.example.com/' }), [400, 'oauth_required']);
  t.deepEqual(await codes({ kind: 'teams', name: 'x', url: 'https://hooks.example.com/' }), [400, 'invalid_body']);
  t.deepEqual(await codes({ kind: 'slack_webhook', url: 'https://hooks.example.com/' }), [400, 'invalid_body']);
  const down = await receiver(500);
  const refused = await create(u, { kind: 'slack_webhook', name: 'Sales channel', url: down.url });
  t.is(refused.status, 422);
  t.like(refused.body.error, {
    code: 'verification_failed',
    details: { status_code: 500, error_class: 'http_status' },
  });
  t.is(JSON.parse(down.requests[0].raw.toString()).text.length > 0, true, 'a Slack-style body: { text }');
  t.is(await count(u), 0);
  t.is((await call('POST', '/api/integrations', { body: {} })).status, 401);
});

test('verify checks credentials without saving: 200 valid or not, partner tokens too; 400 for a private destination', async (t) => {
  const u = await createOwner();
  const ok = await receiver();
  const down = await receiver(403);
  const good = await call('POST', '/api/integrations/verify', {
    ...as(u),
    body: { kind: 'slack_webhook', url: ok.url },
  });
  t.is(good.status, 200, good.text);
  t.deepEqual(good.body, { valid: true, status_code: 200, error_class: null, error: null, account: null });
  const bad = await call('POST', '/api/integrations/verify', {
    ...as(u),
    body: { kind: 'json_webhook', url: down.url, secret: 'abcdefgh12' },
  });
  t.like(bad.body, { valid: false, status_code: 403, error_class: 'http_status' });
  const blocked = await call('POST', '/api/integrations/verify', {
    ...as(u),
    body: { kind: 'json_webhook', url: 'https://192.168.1.1/x' },
  });
  t.is(blocked.body.error.code, 'blocked_destination');
  const token = await call('POST', '/api/integrations/verify', {
    ...as(u),
    body: { kind: 'partner', access_token: `lpt_${'a'.repeat(16)}_x` },
  });
  t.like(token.body, { valid: true, account: { id: `partner_${'a'.repeat(16)}` } });
  const refused = await call('POST', '/api/integrations/verify', {
    ...as(u),
    body: { kind: 'partner', access_token: 'nope' },
  });
  t.like(refused.body, { valid: false, error_class: 'auth' });
  t.is(
    (await call('POST', '/api/integrations/verify', { ...as(u), body: { kind: 'partner', url: ok.url } })).body.error
      .code,
    'invalid_body',
  );
  t.is(await count(u), 0, 'verify saves nothing');
});

test('update renames, disables, replaces the URL and secret after verifying; 422 leaves it unchanged; 400 invalid_field on the partner', async (t) => {
  const u = await createOwner();
  const first = await receiver();
  const second = await receiver();
  const down = await receiver(500);
  const made = (await create(u, { kind: 'json_webhook', name: 'Hook', url: first.url })).body;
  const put = (body: Record<string, unknown>) => call('PUT', `/api/integrations/${made.id}`, { ...as(u), body });
  const renamed = await put({ name: 'Renamed', enabled: false });
  t.like(renamed.body, { name: 'Renamed', status: 'disabled' });
  t.like((await put({ enabled: true })).body, { status: 'active' });
  const failed = await put({ url: down.url });
  t.is(failed.status, 422);
  t.is(failed.body.error.code, 'verification_failed');
  t.deepEqual(
    (await call('GET', `/api/integrations/${made.id}`, as(u))).body.credentials,
    made.credentials,
    'unchanged',
  );
  const moved = await put({ url: second.url, secret: 'new-secret-5678' });
  t.is(moved.status, 200, moved.text);
  t.like(moved.body.credentials, { url: `${new URL(second.url).origin}/…hook`, secret: '****5678' });
  t.truthy(second.requests[0].headers['x-integration-signature']);
  t.like((await put({ secret: null })).body.credentials, { secret: null });
  t.is((await put({})).status, 200, 'an empty update changes nothing');
  t.is((await put({ enabled: 'yes' })).body.error.code, 'invalid_body');
  t.is((await put({ url: 'https://10.0.0.9/' })).body.error.code, 'blocked_destination');
  const partner = await installPartner(u);
  const onPartner = await call('PUT', `/api/integrations/${partner.integration.id}`, {
    ...as(u),
    body: { url: second.url },
  });
  t.is(onPartner.status, 400);
  t.is(onPartner.body.error.code, 'invalid_field');
});

test('test sends a test record through the guarded client and reports the outcome; a private address is refused; 409 test_not_supported', async (t) => {
  const u = await createOwner();
  const r = await receiver();
  const made = (await create(u, { kind: 'json_webhook', name: 'Hook', url: r.url, secret: 'abcdefgh99' })).body;
  const sent = await call('POST', `/api/integrations/${made.id}/test`, as(u));
  t.is(sent.status, 200, sent.text);
  t.like(sent.body, { integration_id: made.id, success: true, status_code: 200, error_class: null });
  const body = JSON.parse(r.requests[1].raw.toString());
  t.like(body, { type: 'integration.test', data: { integration_id: made.id, record: { kind: 'lead' } } });
  t.like((await call('GET', `/api/integrations/${made.id}`, as(u))).body, { last_test_ok: true });

  // A saved destination that is (now) private: the guarded client refuses it.
  const e = await em();
  const ws = await workspaceIdOf(u.id);
  const { services } = await api();
  const privateId = uuidv7();
  await e.execute(
    `insert into integrations (id, workspace_id, provider, name, status, credentials_sealed, credential_hint, created_at, updated_at) values (?, ?, 'slack_webhook', 'Old', 'active', ?, '{}', now(), now())`,
    [
      privateId,
      ws,
      encrypt(
        JSON.stringify({ kind: 'webhook', url: 'https://10.20.30.40/hook', secret: null }),
        services.config.encryptionKey,
      ),
    ],
  );
  const blocked = await call('POST', `/api/integrations/${privateId}/test`, as(u));
  t.like(blocked.body, { success: false, status_code: null, error_class: 'blocked_destination' });
  t.like((await call('GET', `/api/integrations/${privateId}`, as(u))).body, { last_test_ok: false });

  const other = uuidv7();
  await e.execute(
    `insert into integrations (id, workspace_id, provider, name, created_at, updated_at) values (?, ?, 'hubspot', 'CRM', now(), now())`,
    [other, ws],
  );
  const unsupported = await call('POST', `/api/integrations/${other}/test`, as(u));
  t.is(unsupported.status, 409);
  t.is(unsupported.body.error.code, 'test_not_supported');

  const partner = await installPartner(u);
  t.like((await call('POST', `/api/integrations/${partner.integration.id}/test`, as(u))).body, {
    success: true,
    error_class: null,
  });
});

test('delete keeps the webhook subscriptions that referenced it, detached; the integration is gone', async (t) => {
  const u = await createOwner();
  const r = await receiver();
  const made = (await create(u, { kind: 'slack_webhook', name: 'Hook', url: r.url })).body;
  const sub = await call('POST', '/api/webhooks/outbound', {
    ...as(u),
    body: { url: 'https://hooks.example.com/x', events: ['lead.discovered'], integration_id: made.id },
  });
  t.is(sub.status, 201, sub.text);
  const del = await call('DELETE', `/api/integrations/${made.id}`, as(u));
  t.is(del.status, 200, del.text);
  t.deepEqual(del.body, { id: made.id, deleted: true, detached_webhook_subscriptions: 1 });
  const subs = (await call('GET', '/api/webhooks/outbound', as(u))).body.items;
  t.like(subs[0], { id: sub.body.id, integration_id: null, active: true });
  t.is((await call('GET', `/api/integrations/${made.id}`, as(u))).status, 404);
  t.is((await call('DELETE', `/api/integrations/${made.id}`, as(u))).status, 404);
});

test('another workspace’s integration is 404 on every id route and stays unchanged; malformed ids are 400 invalid_id', async (t) => {
  const a = await createOwner();
  const b = await createOwner();
  const r = await receiver();
  const theirs = (await create(b, { kind: 'slack_webhook', name: 'Theirs', url: r.url })).body;
  const sent = r.requests.length;
  for (const [method, path, body] of [
    ['GET', `/api/integrations/${theirs.id}`, undefined],
    ['PUT', `/api/integrations/${theirs.id}`, { name: 'Hijacked' }],
    ['POST', `/api/integrations/${theirs.id}/test`, undefined],
    ['DELETE', `/api/integrations/${theirs.id}`, undefined],
  ] as const) {
    const res = await call(method, path, { ...as(a), body });
    t.is(res.status, 404, `${method} ${path}`);
    t.is(res.body.error.code, 'not_found');
  }
  t.deepEqual((await call('GET', `/api/integrations/${theirs.id}`, as(b))).body, theirs, 'unchanged');
  t.is(r.requests.length, sent, 'nothing sent');
  t.deepEqual((await call('GET', '/api/integrations', as(a))).body.items, []);
  t.is((await call('GET', '/api/integrations/not-a-uuid', as(a))).body.error.code, 'invalid_id');
  t.is(
    (
      await call('POST', '/api/integrations/partner/events/nope/confirm', {
        ...as(a),
        body: { resolution: 'keep_ours' },
      })
    ).body.error.code,
    'invalid_id',
  );
});

test('members read but do not manage (403 not_assigned); Demo workspaces are read-only (403 demo_read_only); 409 integration_limit_reached', async (t) => {
  const owner = await createOwner();
  const member = await createUser();
  await addTeamMember(owner.id, member.id, { role: 'member' });
  const r = await receiver();
  const made = (await create(owner, { kind: 'slack_webhook', name: 'Hook', url: r.url })).body;
  const acting = { token: member.accessToken, headers: { 'x-acting-as': owner.id } };
  t.is((await call('GET', `/api/integrations/${made.id}`, acting)).status, 200);
  for (const [method, path, body] of [
    ['POST', '/api/integrations', { kind: 'slack_webhook', name: 'x', url: r.url }],
    ['PUT', `/api/integrations/${made.id}`, { name: 'x' }],
    ['DELETE', `/api/integrations/${made.id}`, undefined],
    ['POST', '/api/integrations/partner/install', undefined],
  ] as const) {
    const res = await call(method, path, { ...acting, body });
    t.is(res.status, 403, `${method} ${path}`);
    t.is(res.body.error.code, 'not_assigned');
  }
  // A member may test (it changes nothing but the last test's outcome).
  t.is((await call('POST', `/api/integrations/${made.id}/test`, acting)).status, 200);

  await seedDemo(await em());
  const visitor = await createUser();
  await call('POST', '/api/me/workspaces/demo/join', as(visitor));
  const demo = {
    token: visitor.accessToken,
    headers: {
      'x-acting-as': (
        await (await em()).execute(`select owner_id from workspaces where id = ?`, [DEMO_WORKSPACE_ID])
      )[0].owner_id,
    },
  };
  // The Demo shows an installed partner CRM and a Slack channel, a conflict waiting and a confirmed duplicate.
  const demoList = await call('GET', '/api/integrations', demo);
  t.deepEqual(demoList.body.items.map((i: { kind: string }) => i.kind).sort(), ['partner', 'slack_webhook']);
  const demoEvents = (await call('GET', '/api/integrations/partner/events', demo)).body.items;
  t.deepEqual(
    demoEvents.map((e: { kind: string; state: string }) => `${e.kind}:${e.state}`),
    ['field_conflict:pending', 'possible_duplicate:confirmed'],
  );
  const refused = await call('POST', '/api/integrations', {
    ...demo,
    body: { kind: 'slack_webhook', name: 'x', url: r.url },
  });
  t.is(refused.status, 403);
  t.is(refused.body.error.code, 'demo_read_only');

  const ws = await workspaceIdOf(owner.id);
  await (
    await em()
  ).execute(
    `insert into integrations (id, workspace_id, provider, name, created_at, updated_at) select gen_random_uuid(), ?, 'json_webhook', 'filler ' || g, now(), now() from generate_series(1, 49) g`,
    [ws],
  );
  const full = await create(owner, { kind: 'slack_webhook', name: 'one too many', url: r.url });
  t.is(full.status, 409);
  t.is(full.body.error.code, 'integration_limit_reached');
});

test('partner install: the URL carries a state bound to the user and workspace and an S256 challenge; the callback refuses a spent state, a refusal and a wrong verifier', async (t) => {
  const u = await createOwner();
  const start = await call('POST', '/api/integrations/partner/install', as(u));
  t.is(start.status, 200, start.text);
  const url = new URL(start.body.authorization_url);
  t.is(url.pathname, '/oauth/partner/local/authorize');
  t.is(url.searchParams.get('state'), start.body.state);
  t.is(url.searchParams.get('code_challenge_method'), 'S256');
  t.regex(url.searchParams.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
  t.true(start.body.redirect_uri.endsWith('/oauth/partner/callback'));
  const [stored] = await (
    await em()
  ).execute(`select * from partner_oauth_states where workspace_id = ?`, [await workspaceIdOf(u.id)]);
  t.is(stored.user_id, u.id);
  t.not(stored.state_hash, start.body.state, 'stored hashed');

  const callback = (q: Record<string, string>) => call('GET', `/oauth/partner/callback?${new URLSearchParams(q)}`);
  const denied = await callback({ state: start.body.state, error: 'access_denied' });
  t.is(denied.status, 400);
  t.is(denied.body.error.code, 'oauth_denied');
  t.is(
    (await callback({ state: start.body.state, code: 'lc_x' })).body.error.code,
    'invalid_state',
    'spent by the refusal',
  );
  t.is((await callback({ code: 'lc_x' })).body.error.code, 'invalid_state');
  const again = (await call('POST', '/api/integrations/partner/install', as(u))).body;
  const forged = localAuthorizationCode({
    provider: 'partner',
    redirectUri: again.redirect_uri,
    codeChallenge: 'A'.repeat(43),
  });
  const pkce = await callback({ state: again.state, code: forged });
  t.is(pkce.status, 400);
  t.is(pkce.body.error.code, 'oauth_denied');
  t.is(await count(u), 0);
  // The local authorize page only sends codes to our callback.
  const wrong = new URL(again.authorization_url);
  wrong.searchParams.set('redirect_uri', 'https://evil.example.com/cb');
  t.is((await call('GET', wrong.pathname + wrong.search)).body.error.code, 'invalid_redirect_uri');
});

test('partner install: the user who started must still manage the workspace (403 not_assigned); installing again replaces the tokens of the same integration', async (t) => {
  const owner = await createOwner();
  const admin = await createUser();
  await addTeamMember(owner.id, admin.id, { role: 'admin' });
  const acting = { token: admin.accessToken, headers: { 'x-acting-as': owner.id } };
  const start = await call('POST', '/api/integrations/partner/install', acting);
  t.is(start.status, 200, start.text);
  await (await em()).execute(`update team_members set role = 'member' where user_id = ?`, [admin.id]);
  const authorize = new URL(start.body.authorization_url);
  const consent = await fetch((await api()).base + authorize.pathname + authorize.search, { redirect: 'manual' });
  const back = new URL(consent.headers.get('location')!);
  const refused = await call('GET', back.pathname + back.search);
  t.is(refused.status, 403);
  t.is(refused.body.error.code, 'not_assigned');

  const first = await installPartner(owner);
  t.true(first.created);
  t.like(first.integration, { kind: 'partner', status: 'active' });
  t.regex(first.integration.credentials.access_token, /^lpt_…[0-9a-z]{4}$/);
  t.is(first.sync_workflow_id, `partner-sync:${first.integration.id}`);
  const second = await installPartner(owner);
  t.false(second.created);
  t.is(second.integration.id, first.integration.id);
});

test('Operator tools: list_integrations (read), test_integration (send), sync_partner_now (change)', async (t) => {
  const u = await createOwner();
  const r = await receiver();
  const made = (await create(u, { kind: 'slack_webhook', name: 'Hook', url: r.url })).body;
  const { services } = await api();
  const e = services.orm.em.fork();
  const actor = await resolveActor(e as never, { userId: u.id, kind: 'session' }, undefined);
  const ctx = { em: e as never, actor, jobs: services.jobs, config: services.config, providers: services };
  t.is(findTool('list_integrations')!.risk, 'read');
  t.is(findTool('test_integration')!.risk, 'send');
  t.is(findTool('sync_partner_now')!.risk, 'change');
  const listed = (await findTool('list_integrations')!.run(ctx, { limit: 50 })) as { id: string }[];
  t.deepEqual(
    listed.map((i) => i.id),
    [made.id],
  );
  t.like(await findTool('test_integration')!.run(ctx, { integration_id: made.id }), {
    success: true,
    status_code: 200,
  });
  await t.throwsAsync(findTool('sync_partner_now')!.run(ctx, { integration_id: made.id }), {
    message: /only the partner/,
  });
  const partner = await installPartner(u);
  const sync = (await findTool('sync_partner_now')!.run(ctx, { integration_id: partner.integration.id })) as {
    workflow_id: string;
  };
  t.is(sync.workflow_id, `partner-sync:${partner.integration.id}`);
  await t.throwsAsync(findTool('test_integration')!.run(ctx, { integration_id: randomUUID() }), {
    message: /not found/,
  });
});
