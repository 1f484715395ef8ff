// Connecting an email account with Google or Microsoft (docs/email.md "Connecting with Google or
// Microsoft") through the API, against a local authorization server speaking each provider's token
// endpoint and the test mail server behind an XOAUTH2 gateway (test/helpers/mail-oauth.ts): the 400
// when a provider is not configured, the start → authorize → callback flow, the callback's refusals,
// and the token store: one refresh across concurrent callers (Microsoft's rotated refresh token kept),
// a revoked grant disconnecting the account (`oauth_revoked`, `account.disconnected`), an outage retried
// without a disconnection.
import test from 'ava';
import { decrypt } from '../../lib/crypto.js';
import type { Config } from '../../lib/config.js';
import { MailOAuthClient } from '../../lib/connectors/mailbox/oauth.js';
import { MailConnectError } from '../../lib/connectors/mailbox/settings.js';
import { ConnectorError } from '../../lib/connectors/types.js';
import { mailTokenSource } from '../../domain/mailbox/oauth-tokens.js';
import { api, call, closeApi, listen, type TestUser } from '../helpers/api.js';
import { createOwner, em } from '../helpers/billing.js';
import { createMailbox, mailServer, uniqueAddress } from '../helpers/mail-server.js';
import { testAuthServer, xoauth2Gateway, type OAuthStyle, type TestAuthServer } from '../helpers/mail-oauth.js';
test.after.always(closeApi);

const BASE = '/api/platform-accounts';
const as = (u: TestUser, body?: unknown) => ({ token: u.accessToken, ...(body === undefined ? {} : { body }) });

interface Rig {
  auth: TestAuthServer;
  base: string;
  config: Config;
  close(): Promise<void>;
}

/** An API whose `style` provider points at a local authorization server and, through the gateway, at the test mail server. */
async function rig(style: OAuthStyle): Promise<Rig> {
  const { services } = await api();
  const auth = await testAuthServer(style);
  const m = mailServer();
  const gw = await xoauth2Gateway(m, auth, () => 'secret');
  const provider = {
    ...services.config.mailOAuth[style],
    clientId: auth.clientId,
    clientSecret: auth.clientSecret,
    authorizeUrl: `${auth.url}/authorize`,
    tokenUrl: `${auth.url}/token`,
    smtp: { host: m.host, port: gw.smtpPort, security: 'none' },
    imap: { host: m.host, port: gw.imapPort, security: 'none' },
  };
  const config: Config = { ...services.config, mailOAuth: { ...services.config.mailOAuth, [style]: provider } };
  const { base } = await listen({ ...services, config });
  provider.redirectUri = `${base}/oauth/mailbox/${style}/callback`;
  return {
    auth,
    base,
    config,
    async close() {
      await gw.close();
      await auth.close();
    },
  };
}

async function emailAccount(u: TestUser, base?: string): Promise<string> {
  const r = await call('POST', BASE, {
    ...as(u, { channel: 'email', display_name: 'Ana', time_zone: 'Europe/Paris' }),
    base,
  });
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.text}`);
  return r.body.id as string;
}

/** start → the browser at the authorization server → its redirect to our callback. */
async function connectWithOAuth(r: Rig, u: TestUser, accountId: string, address: string) {
  r.auth.signIn = address;
  const start = await call('POST', `${BASE}/${accountId}/oauth/${r.auth.style}/start`, { ...as(u, {}), base: r.base });
  if (start.status !== 200) throw new Error(`start failed: ${start.status} ${start.text}`);
  const consent = await fetch(start.body.authorization_url, { redirect: 'manual' });
  const back = new URL(consent.headers.get('location')!);
  return { start, callback: await call('GET', back.pathname + back.search, { base: r.base }) };
}

test('a provider not configured: the start answers 400 oauth_not_configured naming the variables to set', async (t) => {
  const u = await createOwner();
  const id = await emailAccount(u);
  for (const [provider, prefix] of [
    ['google', 'MAIL_OAUTH_GOOGLE'],
    ['microsoft', 'MAIL_OAUTH_MICROSOFT'],
  ] as const) {
    const r = await call('POST', `${BASE}/${id}/oauth/${provider}/start`, as(u, {}));
    t.is(r.status, 400, r.text);
    t.is(r.body.error.code, 'oauth_not_configured');
    t.true(r.body.error.message.includes(`${prefix}_CLIENT_ID`), r.body.error.message);
    t.true(r.body.error.message.includes(`${prefix}_CLIENT_SECRET`), r.body.error.message);
  }
  const unknown = await call('POST', `${BASE}/${id}/oauth/yahoo/start`, as(u, {}));
  t.is(unknown.status, 400, unknown.text);
});

test('Google style: start → consent → callback connects the mailbox on the mail connector with XOAUTH2; the state and errors are checked', async (t) => {
  const r = await rig('google');
  t.teardown(() => r.close());
  const { services } = await api();
  const u = await createOwner();
  const address = await createMailbox(uniqueAddress('ana', 'gmail.test'));
  const id = await emailAccount(u, r.base);

  const { start, callback } = await connectWithOAuth(r, u, id, address);
  const url = new URL(start.body.authorization_url);
  t.is(url.origin + url.pathname, `${r.auth.url}/authorize`);
  t.is(url.searchParams.get('code_challenge_method'), 'S256');
  t.is(url.searchParams.get('scope'), 'https://mail.google.com/ openid email');
  t.is(url.searchParams.get('access_type'), 'offline');
  t.is(start.body.redirect_uri, `${r.base}/oauth/mailbox/google/callback`);
  t.is(callback.status, 200, callback.text);
  t.like(callback.body, {
    status: 'connected',
    account: {
      status: 'connected',
      connector: 'mail',
      connector_account_id: `mail:${id}`,
      address,
      has_credentials: true,
    },
    sync_workflow_id: `mailbox-sync:${id}`,
  });
  const ok = r.auth.requests.filter((q) => q.grantType === 'authorization_code');
  t.is(ok.length, 1);
  // The settings are sealed on the account (no secret in them), the tokens sealed in their own row.
  const db = await em();
  const [row] = await db.execute<{ credentials_sealed: string }[]>(
    `select credentials_sealed from platform_accounts where id = ?`,
    [id],
  );
  t.like(JSON.parse(decrypt(row.credentials_sealed, services.config.encryptionKey)), {
    auth: 'oauth',
    oauth_provider: 'google',
    email: address,
  });
  const [tok] = await db.execute<{ tokens_sealed: string; provider: string }[]>(
    `select tokens_sealed, provider from mailbox_oauth_tokens where account_id = ?`,
    [id],
  );
  t.is(tok.provider, 'google');
  t.false(tok.tokens_sealed.includes('rt-'), 'sealed');
  t.truthy(JSON.parse(decrypt(tok.tokens_sealed, services.config.encryptionKey)).refresh_token);

  // The same state again: the account is connected (409); a forged state, a denial.
  const again = await call('GET', `/oauth/mailbox/google/callback?code=x&state=${start.body.state}`, { base: r.base });
  t.is(again.status, 409, again.text);
  const forged = await call('GET', `/oauth/mailbox/google/callback?code=x&state=${start.body.state}x`, {
    base: r.base,
  });
  t.is(forged.body.error.code, 'invalid_state');
  const otherProvider = await call('GET', `/oauth/mailbox/microsoft/callback?code=x&state=${start.body.state}`, {
    base: r.base,
  });
  t.is(otherProvider.body.error.code, 'invalid_state');

  const id2 = await emailAccount(u, r.base);
  const s2 = await call('POST', `${BASE}/${id2}/oauth/google/start`, { ...as(u, {}), base: r.base });
  const denied = await call('GET', `/oauth/mailbox/google/callback?error=access_denied&state=${s2.body.state}`, {
    base: r.base,
  });
  t.is(denied.status, 400);
  t.is(denied.body.error.code, 'oauth_denied');
  const badCode = await call('GET', `/oauth/mailbox/google/callback?code=nope&state=${s2.body.state}`, {
    base: r.base,
  });
  t.is(badCode.body.error.code, 'oauth_denied');
  for (const a of [id, id2]) await call('DELETE', `${BASE}/${a}`, { ...as(u, {}), base: r.base });
});

test('the token store, Microsoft style: two concurrent refreshes make one token request and keep the rotated refresh token; an outage is retried without a disconnection; a revoked grant disconnects with oauth_revoked', async (t) => {
  const r = await rig('microsoft');
  t.teardown(() => r.close());
  const { services } = await api();
  const u = await createOwner();
  const address = await createMailbox(uniqueAddress('bo', 'outlook.test'));
  const id = await emailAccount(u, r.base);
  const { callback } = await connectWithOAuth(r, u, id, address);
  t.is(callback.status, 200, callback.text);
  t.is(callback.body.account.address, address);

  // Two processes' token stores (their own clients and EntityManagers), the token about to expire.
  const source = () =>
    mailTokenSource({
      em: () => services.orm.em.fork(),
      client: new MailOAuthClient(r.config.mailOAuth, { allowHosts: ['127.0.0.1'], backoffMs: 50 }),
      encryptionKey: services.config.encryptionKey,
    });
  const [a, b] = [source(), source()];
  const expire = () =>
    services.orm.em
      .fork()
      .execute(
        `update mailbox_oauth_tokens set refreshed_at = now() - interval '1 hour', expires_at = now() + interval '10 seconds' where account_id = ?`,
        [id],
      );
  await expire();
  const before = r.auth.requests.length;
  const [ta, tb] = await Promise.all([a(id), b(id)]);
  t.is(ta.accessToken, tb.accessToken, 'both callers get the one new token');
  const refreshes = r.auth.requests.slice(before).filter((q) => q.grantType === 'refresh_token');
  t.is(refreshes.length, 1, 'one token request');
  t.true(r.auth.live(address, ta.accessToken));
  // Fresh now: asked again, no request.
  t.is((await a(id)).accessToken, ta.accessToken);
  t.is(r.auth.requests.length, before + 1);
  // The rotated refresh token was kept: the next refresh works (the first one is spent at the server).
  await expire();
  const tc = await b(id);
  t.not(tc.accessToken, ta.accessToken);
  t.is(r.auth.requests.at(-1)!.status, 200);
  t.not(r.auth.requests.at(-1)!.refreshToken, refreshes[0].refreshToken, 'the rotated refresh token was used');

  // An outage at the token endpoint: retried (503 twice, then the answer), no disconnection.
  await expire();
  r.auth.failNext(2);
  const td = await a(id);
  t.true(r.auth.live(address, td.accessToken));
  // A longer one: `unavailable` (the activity retries), still connected.
  await expire();
  r.auth.failNext(10);
  const down = await t.throwsAsync(a(id));
  t.true(down instanceof ConnectorError && down.code === 'unavailable', String(down));
  const status = async () =>
    (
      await (
        await em()
      ).execute<{ status: string; status_reason: string | null }[]>(
        `select status, status_reason from platform_accounts where id = ?`,
        [id],
      )
    )[0];
  t.like(await status(), { status: 'connected' });

  // Revoked: the account is disconnected with oauth_revoked, once, with its event.
  r.auth.failNext(0);
  r.auth.revoke(address);
  await expire();
  for (const r of await Promise.allSettled([a(id), b(id)])) {
    const gone = r.status === 'rejected' ? (r.reason as unknown) : null;
    t.true(gone instanceof MailConnectError && gone.reason === 'oauth_revoked', String(gone));
  }
  t.like(await status(), { status: 'disconnected', status_reason: 'oauth_revoked' });
  const events = await (
    await em()
  ).execute<{ n: string }[]>(
    `select count(*) as n from webhook_events where name = 'account.disconnected' and body like ?`,
    [`%${id}%`],
  );
  t.is(Number(events[0].n), 1, 'one account.disconnected');
  await t.throwsAsync(a(id), { instanceOf: MailConnectError });
  await call('DELETE', `${BASE}/${id}`, { ...as(u, {}), base: r.base });
});
