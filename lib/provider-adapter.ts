// What choosing an adapter from configuration shares between lib/booking and lib/partner: base URLs
// checked at start-up (a typo fails the process, not the first request), and an OAuth client's
// settings with the authorize and token URLs defaulting to <base>/oauth/authorize and <base>/oauth/token.
import type { PartnerConfig } from './config.js';

/** `raw` as an absolute http(s) URL; else an error naming its variable `env`. */
export function absoluteUrl(env: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${env} must be an absolute http(s) URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`${env} must be an absolute http(s) URL`);
  return url.toString();
}

/** An OAuth provider's variables (lib/config.ts); one without a configurable token URL omits it. */
export type OAuthClientConfig = Pick<PartnerConfig, 'authorizeUrl' | 'clientId' | 'clientSecret' | 'scope'> &
  Partial<Pick<PartnerConfig, 'tokenUrl'>>;

/**
 * An OAuth provider's settings from its configuration; `env` names its variables (PARTNER →
 * PARTNER_BASE_URL, PARTNER_CLIENT_ID, ...). The client id and secret are required with a base URL.
 */
export function oauthClientSettings(env: string, baseUrl: string, conf: OAuthClientConfig) {
  if (!conf.clientId || !conf.clientSecret)
    throw new Error(`${env}_CLIENT_ID and ${env}_CLIENT_SECRET are required when ${env}_BASE_URL is set`);
  const base = absoluteUrl(`${env}_BASE_URL`, baseUrl);
  const under = (path: string) => new URL(path, base.endsWith('/') ? base : `${base}/`).toString();
  return {
    baseUrl: base,
    authorizeUrl: conf.authorizeUrl ? absoluteUrl(`${env}_AUTHORIZE_URL`, conf.authorizeUrl) : under('oauth/authorize'),
    tokenUrl: conf.tokenUrl ? absoluteUrl(`${env}_TOKEN_URL`, conf.tokenUrl) : under('oauth/token'),
    clientId: conf.clientId,
    clientSecret: conf.clientSecret,
    scope: conf.scope,
  };
}
