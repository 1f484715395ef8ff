// OAuth sign-in providers and the signed `state` of an authorization request.
//
// A provider is enabled by `OAUTH_<NAME>_CLIENT_ID` (NAME: GOOGLE, MICROSOFT, GITHUB, or any other
// name together with `OAUTH_<NAME>_AUTHORIZE_URL`). Optional: `OAUTH_<NAME>_AUTHORIZE_URL`,
// `OAUTH_<NAME>_SCOPE`, `OAUTH_<NAME>_REDIRECT_URI` (default `<PUBLIC_BASE_URL>/api/auth/oauth/<name>/callback`).
// `OAUTH_PROVIDERS` may list extra names. When nothing is configured, a deterministic `local`
// provider is enabled so that the flow works offline (its authorize URL is on PUBLIC_BASE_URL).
import { SignJWT, jwtVerify } from 'jose';
import { randomBytes } from 'node:crypto';
import type { Config } from './config.js';
import { uuidv7 } from './ids.js';

export interface OAuthProvider {
  name: string;
  clientId: string;
  authorizeUrl: string;
  redirectUri: string;
  scope: string;
}

const KNOWN: Record<string, { authorizeUrl: string; scope: string }> = {
  google: { authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth', scope: 'openid email profile' },
  microsoft: {
    authorizeUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
    scope: 'openid email profile',
  },
  github: { authorizeUrl: 'https://github.com/login/oauth/authorize', scope: 'read:user user:email' },
};

export const OAUTH_STATE_TTL_SECONDS = 600;
const STATE_TYPE = 'oauth_state';

/** The enabled providers, read from `env`: the OAUTH_* settings (lib/config.ts `oauthEnv`). */
export function oauthProviders(
  publicBaseUrl: string,
  env: Record<string, string | undefined>,
): Map<string, OAuthProvider> {
  const names = new Set([
    ...Object.keys(KNOWN),
    ...(env.OAUTH_PROVIDERS ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  ]);
  const out = new Map<string, OAuthProvider>();
  const base = publicBaseUrl.replace(/\/+$/, '');
  for (const name of names) {
    if (!/^[a-z0-9][a-z0-9_-]{0,31}$/.test(name)) continue;
    const key = `OAUTH_${name.toUpperCase().replace(/-/g, '_')}_`;
    const clientId = env[`${key}CLIENT_ID`];
    const authorizeUrl = env[`${key}AUTHORIZE_URL`] || KNOWN[name]?.authorizeUrl;
    if (!clientId || !authorizeUrl) continue;
    out.set(name, {
      name,
      clientId,
      authorizeUrl,
      scope: env[`${key}SCOPE`] || KNOWN[name]?.scope || 'openid email profile',
      redirectUri: env[`${key}REDIRECT_URI`] || `${base}/api/auth/oauth/${name}/callback`,
    });
  }
  if (out.size === 0) {
    out.set('local', {
      name: 'local',
      clientId: 'local-client',
      authorizeUrl: `${base}/oauth/local/authorize`,
      scope: 'openid email profile',
      redirectUri: `${base}/api/auth/oauth/local/callback`,
    });
  }
  return out;
}

const stateAudience = (config: Config) => `${config.jwt.audience}:oauth-state`;

export interface OAuthStart {
  authorizationUrl: string;
  state: string;
  expiresAt: Date;
}

/** Builds the authorization URL with a signed, expiring `state` (HS256 JWT carrying a nonce). */
export async function startOAuth(config: Config, provider: OAuthProvider, now = new Date()): Promise<OAuthStart> {
  const iat = Math.floor(now.getTime() / 1000);
  const exp = iat + OAUTH_STATE_TTL_SECONDS;
  const state = await new SignJWT({
    typ: STATE_TYPE,
    provider: provider.name,
    nonce: randomBytes(16).toString('base64url'),
    redirect_uri: provider.redirectUri,
  })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(config.jwt.issuer)
    .setAudience(stateAudience(config))
    .setJti(uuidv7())
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(config.jwt.secret);
  const url = new URL(provider.authorizeUrl);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', provider.clientId);
  url.searchParams.set('redirect_uri', provider.redirectUri);
  url.searchParams.set('scope', provider.scope);
  url.searchParams.set('state', state);
  return { authorizationUrl: url.toString(), state, expiresAt: new Date(exp * 1000) };
}

/** Verifies a `state` for `provider` (for the callback); throws if it is forged, expired or for another provider. */
export async function verifyOAuthState(
  config: Config,
  state: string,
  provider: string,
  currentDate?: Date,
): Promise<{ nonce: string; redirectUri: string }> {
  const { payload } = await jwtVerify(state, config.jwt.secret, {
    algorithms: ['HS256'],
    issuer: config.jwt.issuer,
    audience: stateAudience(config),
    requiredClaims: ['exp', 'nonce'],
    currentDate,
  });
  if (payload.typ !== STATE_TYPE || payload.provider !== provider || typeof payload.nonce !== 'string')
    throw new Error('state is not for this provider');
  return { nonce: payload.nonce, redirectUri: String(payload.redirect_uri) };
}

/** The JWT settings a signed state needs (Config['jwt']). */
export type StateKeys = Pick<Config['jwt'], 'secret' | 'issuer' | 'audience'>;

/**
 * A signed, expiring `state` for an authorization request of `purpose` (HS256 JWT, its own audience
 * per purpose, a nonce): `claims` bind it to what started it (the account, workspace and user of a
 * mailbox connection). Verified with `readSignedState`.
 */
export async function signState(
  keys: StateKeys,
  purpose: string,
  claims: Record<string, string>,
  now = new Date(),
): Promise<{ state: string; expiresAt: Date }> {
  const iat = Math.floor(now.getTime() / 1000);
  const exp = iat + OAUTH_STATE_TTL_SECONDS;
  const state = await new SignJWT({ ...claims, typ: purpose, nonce: randomBytes(16).toString('base64url') })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(keys.issuer)
    .setAudience(`${keys.audience}:${purpose}`)
    .setJti(uuidv7())
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(keys.secret);
  return { state, expiresAt: new Date(exp * 1000) };
}

/** The claims of a state `signState` made for `purpose`; throws if it is forged, expired or for another purpose. */
export async function readSignedState(
  keys: StateKeys,
  purpose: string,
  state: string,
  currentDate?: Date,
): Promise<Record<string, unknown>> {
  const { payload } = await jwtVerify(state, keys.secret, {
    algorithms: ['HS256'],
    issuer: keys.issuer,
    audience: `${keys.audience}:${purpose}`,
    requiredClaims: ['exp', 'nonce'],
    currentDate,
  });
  if (payload.typ !== purpose) throw new Error('state is not for this purpose');
  return payload as Record<string, unknown>;
}
