// The partner CRM a process uses (docs/partner.md "Configuration"): HubSpot when
// PARTNER_PROVIDER=hubspot (with PARTNER_CLIENT_ID and PARTNER_CLIENT_SECRET), else the deterministic
// local one.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import { HubSpotPartner } from './hubspot.js';
import { LocalPartner } from './local.js';
import type { PartnerAdapter } from './types.js';

export * from './types.js';
export { HubSpotPartner } from './hubspot.js';
export { LocalPartner, LOCAL_EDITED_TITLE, localDuplicateId, localAuthorizePath } from './local.js';

export function createPartner(
  config: Config['partner'],
  publicBaseUrl: string,
  orm: Pick<MikroORM, 'em'>,
): PartnerAdapter {
  if (config.provider !== 'hubspot') return new LocalPartner({ orm, publicBaseUrl });
  return new HubSpotPartner({
    apiBaseUrl: config.apiBaseUrl!,
    authorizeUrl: config.authorizeUrl!,
    clientId: config.clientId!,
    clientSecret: config.clientSecret!,
    scope: config.scope!,
    timeoutMs: config.timeoutMs,
  });
}
