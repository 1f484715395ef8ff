// The HTTP partner CRM adapter against a local server speaking wire format v1 (docs/integrations.md
// "Partner wire format"): the OAuth token endpoint (form body, HTTP Basic, PKCE verifier), the
// account, the batch upsert by external id with its per-record answers and resolutions, errors
// coded; and a sync page of the domain driven through it (pushed once, nothing twice).
import test from 'ava';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { syncPartnerPage } from '../../domain/integrations/partner-sync.js';
import { encrypt } from '../../lib/crypto.js';
import { uuidv7 } from '../../lib/ids.js';
import { pkceChallenge } from '../../lib/oauth-pkce.js';
import { createPartner, HttpPartner, PartnerError, type PartnerRecord } from '../../lib/partner/index.js';
import { api, call, closeApi, createTestApp } from '../helpers/api.js';
import { createOwner, em, workspaceIdOf } from '../helpers/billing.js';
import { seedContacts } from '../helpers/contacts.js';
test.after.always(closeApi);

interface Seen {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A tiny partner CRM: upserts by (type, external_id); a lead whose email starts with `dup` is a possible duplicate unless resolved. */
async function partnerServer(
  t: { teardown(fn: () => Promise<void> | void): void },
  answer?: (s: Seen, res: ServerResponse) => boolean,
) {
  const seen: Seen[] = [];
  const store = new Map<string, string>();
  const json = (res: ServerResponse, status: number, body: unknown) =>
    void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const s: Seen = {
        method: req.method ?? '',
        path: new URL(req.url ?? '/', 'http://x').pathname,
        headers: req.headers,
        body,
      };
      seen.push(s);
      if (answer?.(s, res)) return;
      if (`${s.method} ${s.path}` === 'POST /crm/oauth/token') {
        if (s.headers.authorization !== `Basic ${Buffer.from('client-1:secret-1').toString('base64')}`)
          return json(res, 401, { error: 'invalid_client' });
        const form = new URLSearchParams(body);
        if (
          form.get('grant_type') === 'authorization_code' &&
          form.get('code') === 'good' &&
          pkceChallenge(form.get('code_verifier') ?? '') === pkceChallenge('v'.repeat(50))
        ) {
          return json(res, 200, {
            access_token: 'at-1',
            refresh_token: 'rt-1',
            expires_in: 3600,
            token_type: 'Bearer',
          });
        }
        if (form.get('grant_type') === 'refresh_token' && form.get('refresh_token') === 'rt-1')
          return json(res, 200, { access_token: 'at-1', token_type: 'Bearer' });
        return json(res, 400, { error: 'invalid_grant' });
      }
      if (s.headers.authorization !== 'Bearer at-1') return json(res, 401, { error: 'unauthorized' });
      if (`${s.method} ${s.path}` === 'GET /crm/v1/account')
        return json(res, 200, { id: 'acct-1', name: ' Partner Inc ' });
      if (`${s.method} ${s.path}` === 'POST /crm/v1/records/upsert') {
        const { records } = JSON.parse(body) as {
          records: {
            type: string;
            external_id: string;
            fields: Record<string, unknown>;
            resolution?: { mode: string; id?: string };
          }[];
        };
        return json(res, 200, {
          results: records.map((r) => {
            const key = `${r.type}:${r.external_id}`;
            if (!store.has(key) && !r.resolution && String(r.fields.email ?? '').startsWith('dup'))
              return { external_id: r.external_id, status: 'duplicate', duplicate: { id: 'crm-77', match: 'email' } };
            const id = r.resolution?.mode === 'link' ? r.resolution.id : `crm-${key}`;
            const fields = JSON.stringify(r.fields);
            const status = store.get(key) === fields ? 'unchanged' : 'upserted';
            store.set(key, fields);
            return { external_id: r.external_id, status, id };
          }),
        });
      }
      json(res, 404, { error: 'not_found' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/crm/`;
  const partner = new HttpPartner({
    baseUrl: base,
    authorizeUrl: 'https://crm.example.com/oauth/authorize',
    tokenUrl: `${base}oauth/token`,
    clientId: 'client-1',
    clientSecret: 'secret-1',
    scope: 'records.write',
    timeoutMs: 2_000,
  });
  t.teardown(() => partner.close());
  return { seen, store, partner, base };
}

const code = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return err instanceof PartnerError ? err.code : String(err);
  }
};

test('OAuth: the authorization URL carries the S256 challenge; the code is exchanged with the verifier over HTTP Basic; refused grants are auth errors', async (t) => {
  const { partner, seen } = await partnerServer(t);
  const url = new URL(
    partner.authorizationUrl({
      state: 'st',
      redirectUri: 'https://app.example.com/oauth/partner/callback',
      codeChallenge: pkceChallenge('v'.repeat(50)),
    }),
  );
  t.is(url.origin + url.pathname, 'https://crm.example.com/oauth/authorize');
  t.like(Object.fromEntries(url.searchParams), {
    response_type: 'code',
    client_id: 'client-1',
    state: 'st',
    scope: 'records.write',
    code_challenge: pkceChallenge('v'.repeat(50)),
    code_challenge_method: 'S256',
  });
  const tokens = await partner.exchangeCode({
    code: 'good',
    redirectUri: 'https://app.example.com/oauth/partner/callback',
    codeVerifier: 'v'.repeat(50),
  });
  t.is(tokens.accessToken, 'at-1');
  t.is(tokens.refreshToken, 'rt-1');
  t.true(tokens.expiresAt!.getTime() > Date.now());
  const form = new URLSearchParams(seen[0].body);
  t.like(Object.fromEntries(form), {
    grant_type: 'authorization_code',
    code: 'good',
    code_verifier: 'v'.repeat(50),
    client_id: 'client-1',
  });
  t.is(seen[0].headers['content-type'], 'application/x-www-form-urlencoded');
  t.is(await code(partner.exchangeCode({ code: 'good', redirectUri: 'x', codeVerifier: 'wrong' })), 'auth');
  t.like(await partner.refresh('rt-1'), { accessToken: 'at-1', refreshToken: null, expiresAt: null });
  t.is(await code(partner.refresh('rt-x')), 'auth');
});

test('account and upsert: bearer token, one answer per record, resolutions on the wire, Idempotency-Key; errors coded', async (t) => {
  const { partner, seen } = await partnerServer(t);
  t.deepEqual(await partner.account('at-1'), { accountId: 'acct-1', name: 'Partner Inc' });
  t.is(await code(partner.account('expired')), 'auth');
  const records: PartnerRecord[] = [
    { kind: 'lead', externalId: 'L1', fields: { email: 'ada@example.test', title: 'CEO' } },
    { kind: 'lead', externalId: 'L2', fields: { email: 'dup@example.test' } },
  ];
  t.deepEqual(await partner.upsert('at-1', records), [
    { externalId: 'L1', status: 'upserted', partnerId: 'crm-lead:L1' },
    { externalId: 'L2', status: 'duplicate', candidate: { partnerId: 'crm-77', match: 'email', fields: {} } },
  ]);
  const sent = seen.at(-1)!;
  t.regex(String(sent.headers['idempotency-key']), /^[0-9a-f]{64}$/);
  t.deepEqual(JSON.parse(sent.body).records[0], {
    type: 'lead',
    external_id: 'L1',
    fields: { email: 'ada@example.test', title: 'CEO' },
  });
  t.deepEqual(
    await partner.upsert('at-1', [records[0], { ...records[1], resolve: { mode: 'link', partnerId: 'crm-77' } }]),
    [
      { externalId: 'L1', status: 'unchanged', partnerId: 'crm-lead:L1' },
      { externalId: 'L2', status: 'upserted', partnerId: 'crm-77' },
    ],
  );
  t.deepEqual(JSON.parse(seen.at(-1)!.body).records[1].resolution, { mode: 'link', id: 'crm-77' });
  t.deepEqual(await partner.upsert('at-1', []), []);
});

test('failures: 429/5xx are retryable, a bad shape or answers out of order are bad_response, an unreachable partner unavailable', async (t) => {
  let mode = '';
  const { partner } = await partnerServer(t, (s, res) => {
    if (!s.path.endsWith('records/upsert') || !mode) return false;
    if (mode === '429') res.writeHead(429, { 'retry-after': '7' }).end();
    else if (mode === '503') res.writeHead(503).end();
    else if (mode === 'shape')
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ results: [{ external_id: 'L1', status: 'maybe' }] }));
    else
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ results: [{ external_id: 'other', status: 'upserted', id: 'x' }] }));
    return true;
  });
  const one: PartnerRecord[] = [{ kind: 'lead', externalId: 'L1', fields: {} }];
  mode = '429';
  const limited = await partner.upsert('at-1', one).catch((e: PartnerError) => e);
  t.like(limited, { code: 'rate_limited', retryable: true, retryAfterSeconds: 7 });
  mode = '503';
  t.is(await code(partner.upsert('at-1', one)), 'unavailable');
  mode = 'shape';
  t.is(await code(partner.upsert('at-1', one)), 'bad_response');
  mode = 'order';
  t.is(await code(partner.upsert('at-1', one)), 'bad_response');
  const closed = new HttpPartner({
    baseUrl: 'http://127.0.0.1:9/',
    authorizeUrl: 'http://127.0.0.1:9/a',
    tokenUrl: 'http://127.0.0.1:9/t',
    clientId: 'c',
    clientSecret: 's',
    scope: null,
    timeoutMs: 1_000,
  });
  t.is(await code(closed.account('at-1')), 'unavailable');
  await closed.close();
});

test('configuration: local without PARTNER_BASE_URL; HTTP with its client, default authorize and token URLs; missing client or bad URL refused', (t) => {
  const base = {
    baseUrl: null,
    authorizeUrl: null,
    tokenUrl: null,
    clientId: null,
    clientSecret: null,
    scope: null,
    timeoutMs: 1000,
  };
  const orm = { em: null as never };
  t.true(createPartner(base, 'http://127.0.0.1:3000', orm).local);
  const http = createPartner(
    { ...base, baseUrl: 'https://crm.example.com/api', clientId: 'c', clientSecret: 's' },
    'http://x',
    orm,
  );
  t.false(http.local);
  t.true(
    http
      .authorizationUrl({ state: 's', redirectUri: 'r', codeChallenge: 'c' })
      .startsWith('https://crm.example.com/api/oauth/authorize?'),
  );
  t.throws(() => createPartner({ ...base, baseUrl: 'https://crm.example.com' }, 'http://x', orm), {
    message: /PARTNER_CLIENT_ID/,
  });
  t.throws(() => createPartner({ ...base, baseUrl: 'ftp://crm', clientId: 'c', clientSecret: 's' }, 'http://x', orm), {
    message: /PARTNER_BASE_URL/,
  });
});

test('a sync page through the HTTP adapter pushes each record once; a duplicate waits as a partner event; a refused token marks the integration', async (t) => {
  const { partner, seen } = await partnerServer(t);
  const { services } = await api();
  const u = await createOwner();
  const ws = await workspaceIdOf(u.id);
  const app = await createTestApp(u);
  const list = (
    await call('POST', `/api/apps/${app.id}/lists`, { token: u.accessToken, body: { name: `L ${randomUUID()}` } })
  ).body;
  await seedContacts(ws, [
    { email: 'ada@example.test', lists: [list.id] },
    { email: 'dup.bo@example.test', lists: [list.id] },
  ]);
  const id = uuidv7();
  const seal = (token: string) =>
    encrypt(
      JSON.stringify({ kind: 'partner', accessToken: token, refreshToken: null, expiresAt: null }),
      services.config.encryptionKey,
    );
  const e = await em();
  await e.execute(
    `insert into integrations (id, workspace_id, provider, name, status, credentials_sealed, credential_hint, account_id, created_at, updated_at) values (?, ?, 'partner', 'CRM', 'active', ?, '{}', 'acct-1', now(), now())`,
    [id, ws, seal('at-1')],
  );
  const deps = { partner, config: services.config };
  t.like(await syncPartnerPage(e.fork() as never, deps, id, 'lead', 50), { done: true, read: 2, pushed: 1, held: 1 });
  const upserts = () => seen.filter((s) => s.path.endsWith('records/upsert')).length;
  t.is(upserts(), 1);
  t.like(await syncPartnerPage(e.fork() as never, deps, id, 'lead', 50), { done: true, read: 0, pushed: 0 });
  await e.execute(`delete from partner_sync_cursors where integration_id = ?`, [id]);
  t.like(await syncPartnerPage(e.fork() as never, deps, id, 'lead', 50), { read: 2, pushed: 0, held: 0 });
  t.is(upserts(), 1, 'known versions and held records are not sent again');
  const [event] = await e.execute(`select kind, state, details from partner_events where integration_id = ?`, [id]);
  t.like(event, { kind: 'possible_duplicate', state: 'pending', details: { partner_id: 'crm-77', match: 'email' } });

  await e.execute(`update integrations set credentials_sealed = ? where id = ?`, [seal('revoked'), id]);
  await e.execute(`delete from partner_pushes where integration_id = ?`, [id]);
  await e.execute(`delete from partner_sync_cursors where integration_id = ?`, [id]);
  await t.throwsAsync(syncPartnerPage(e.fork() as never, deps, id, 'lead', 50), { instanceOf: PartnerError });
  const [row] = await e.execute(`select status, status_reason from integrations where id = ?`, [id]);
  t.is(row.status, 'invalid_credentials');
  t.like(await syncPartnerPage(e.fork() as never, deps, id, 'lead', 50), {
    done: true,
    skipped: 'invalid_credentials',
  });
});
