// The partner CRM a process uses: over HTTP when PARTNER_BASE_URL is set (with PARTNER_CLIENT_ID and
// PARTNER_CLIENT_SECRET; authorize and token URLs default to <base>/oauth/authorize and
// <base>/oauth/token), else the deterministic local one (docs/integrations.md "Configuration").
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import { HttpPartner } from './http.js';
import { LocalPartner } from './local.js';
import type { PartnerAdapter } from './types.js';

export * from './types.js';
export { HttpPartner } from './http.js';
export { LocalPartner, LOCAL_EDITED_TITLE, localDuplicateId, localAuthorizePath } from './local.js';

function absolute(env: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${env} must be an absolute http(s) URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`${env} must be an absolute http(s) URL`);
  return url.toString();
}

export function createPartner(config: Config['partner'], publicBaseUrl: string, orm: Pick<MikroORM, 'em'>): PartnerAdapter {
  if (!config.baseUrl) return new LocalPartner({ orm, publicBaseUrl });
  if (!config.clientId || !config.clientSecret) throw new Error('PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET are required when PARTNER_BASE_URL is set');
  const base = absolute('PARTNER_BASE_URL', config.baseUrl);
  const rel = (path: string) => new URL(path, base.endsWith('/') ? base : `${base}/`).toString();
  return new HttpPartner({
    baseUrl: base,
    authorizeUrl: config.authorizeUrl ? absolute('PARTNER_AUTHORIZE_URL', config.authorizeUrl) : rel('oauth/authorize'),
    tokenUrl: config.tokenUrl ? absolute('PARTNER_TOKEN_URL', config.tokenUrl) : rel('oauth/token'),
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    scope: config.scope,
    timeoutMs: config.timeoutMs,
  });
}
