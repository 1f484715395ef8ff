import test from 'ava';
import { decodeJwt } from 'jose';
import { call, closeApi } from '../helpers/api.js';
import { loadConfig } from '../../lib/config.js';
import { OAUTH_STATE_TTL_SECONDS, oauthProviders, startOAuth, verifyOAuthState } from '../../lib/oauth.js';
test.after.always(closeApi);

test('the local provider (default when none is configured) answers an authorization URL with a signed state', async (t) => {
  const r = await call('GET', '/api/auth/oauth/local/start');
  t.is(r.status, 200, r.text);
  t.is(r.body.provider, 'local');
  const url = new URL(r.body.authorization_url);
  t.is(url.searchParams.get('response_type'), 'code');
  t.is(url.searchParams.get('client_id'), 'local-client');
  t.regex(url.searchParams.get('redirect_uri')!, /\/api\/auth\/oauth\/local\/callback$/);
  t.is(url.searchParams.get('scope'), 'openid email profile');
  t.is(url.searchParams.get('state'), r.body.state);
  const claims = decodeJwt(r.body.state);
  t.is(typeof claims.nonce, 'string');
  t.is(claims.exp! - claims.iat!, OAUTH_STATE_TTL_SECONDS);
  t.is(new Date(r.body.expires_at).getTime(), claims.exp! * 1000);
  const verified = await verifyOAuthState(loadConfig(), r.body.state, 'local');
  t.is(verified.nonce, claims.nonce as string);
  // Each start has a fresh nonce.
  const r2 = await call('GET', '/api/auth/oauth/LOCAL/start');
  t.not(decodeJwt(r2.body.state).nonce, claims.nonce);
});

test('the state expires, is bound to its provider, and cannot be forged or used as a bearer', async (t) => {
  const config = loadConfig();
  const r = await call('GET', '/api/auth/oauth/local/start');
  const later = new Date(Date.now() + (OAUTH_STATE_TTL_SECONDS + 5) * 1000);
  await t.throwsAsync(verifyOAuthState(config, r.body.state, 'local', later));
  await t.throwsAsync(verifyOAuthState(config, r.body.state, 'google'));
  const [h, p] = r.body.state.split('.');
  await t.throwsAsync(verifyOAuthState(config, `${h}.${p}.${'A'.repeat(43)}`, 'local'));
  const asBearer = await call('GET', '/api/users/me', { token: r.body.state });
  t.is(asBearer.status, 401);
});

test('unknown or unconfigured providers are 404 not_found', async (t) => {
  for (const p of ['google', 'nope', 'x'.repeat(80), '%2e%2e']) {
    const r = await call('GET', `/api/auth/oauth/${p}/start`);
    t.is(r.status, 404, p);
    t.is(r.body.error.code, 'not_found');
  }
});

test('configured providers come from the environment; the local one is then off', async (t) => {
  const env = {
    OAUTH_GOOGLE_CLIENT_ID: 'g-client',
    OAUTH_ACME_CLIENT_ID: 'acme-client',
    OAUTH_ACME_AUTHORIZE_URL: 'https://sso.acme.test/authorize',
    OAUTH_ACME_SCOPE: 'openid',
    OAUTH_ACME_REDIRECT_URI: 'https://app.acme.test/cb',
    OAUTH_PROVIDERS: 'acme',
    OAUTH_GITHUB_AUTHORIZE_URL: 'https://ignored.test', // no client id: not enabled
  };
  const providers = oauthProviders('https://api.example.test/', env);
  t.deepEqual([...providers.keys()].sort(), ['acme', 'google']);
  t.is(providers.get('google')!.authorizeUrl, 'https://accounts.google.com/o/oauth2/v2/auth');
  t.is(providers.get('google')!.redirectUri, 'https://api.example.test/api/auth/oauth/google/callback');
  const start = await startOAuth(loadConfig(), providers.get('acme')!);
  const url = new URL(start.authorizationUrl);
  t.is(url.origin + url.pathname, 'https://sso.acme.test/authorize');
  t.is(url.searchParams.get('client_id'), 'acme-client');
  t.is(url.searchParams.get('redirect_uri'), 'https://app.acme.test/cb');
  t.is(url.searchParams.get('scope'), 'openid');
  t.is((await verifyOAuthState(loadConfig(), start.state, 'acme')).redirectUri, 'https://app.acme.test/cb');
});
