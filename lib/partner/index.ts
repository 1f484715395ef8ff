// The partner CRM a process uses: over HTTP when PARTNER_BASE_URL is set (with PARTNER_CLIENT_ID and
// PARTNER_CLIENT_SECRET; authorize and token URLs default to <base>/oauth/authorize and
// <base>/oauth/token), else the deterministic local one (docs/integrations.md "Configuration").
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import { oauthClientSettings } from '../provider-adapter.js';
import { HttpPartner } from './http.js';
import { LocalPartner } from './local.js';
import type { PartnerAdapter } from './types.js';

export * from './types.js';
export { HttpPartner } from './http.js';
export { LocalPartner, LOCAL_EDITED_TITLE, localDuplicateId, localAuthorizePath } from './local.js';

export function createPartner(
  config: Config['partner'],
  publicBaseUrl: string,
  orm: Pick<MikroORM, 'em'>,
): PartnerAdapter {
  if (!config.baseUrl) return new LocalPartner({ orm, publicBaseUrl });
  return new HttpPartner({ ...oauthClientSettings('PARTNER', config.baseUrl, config), timeoutMs: config.timeoutMs });
}
